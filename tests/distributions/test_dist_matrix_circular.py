"""VonMises, LKJCholesky and Wishart against torch.distributions, and their samplers'
statistics."""

from __future__ import annotations

import numpy as np
import pytest

import jaxgrad
from differential import captured_warnings, ok, raises
from distribution_checks import check_distribution

A = np.array
COV = A([[[2.0, 0.5], [0.5, 1.0]], [[1.0, 0.3], [0.3, 2.0]]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_von_mises(dtype):
    check_distribution(lambda D, loc, k: D.VonMises(loc, k), [A([0.0, 1.0]), A([0.5, 5.0])],
                       dtype, values=[[0.3, -2.5]], methods=("log_prob",))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lkj_cholesky(dtype):
    L = np.linalg.cholesky(A([[1.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.0]]))
    check_distribution(lambda D, c: D.LKJCholesky(3, c), [A([0.5, 2.0])], dtype,
                       values=[L], methods=("log_prob",))


# (float32 through the covariance only: the other parameterisations run the same kernels)
@pytest.mark.parametrize(("param", "dtype"), [("covariance_matrix", "float32"),
                                              ("covariance_matrix", "float64"),
                                              ("precision_matrix", "float64"),
                                              ("scale_tril", "float64")])
def test_wishart(param, dtype):
    matrix = np.linalg.cholesky(COV) if param == "scale_tril" else COV
    check_distribution(lambda D, df, m: D.Wishart(df, **{param: m}), [A([3.0, 4.5]), matrix],
                       dtype, values=[[[2.0, 0.3], [0.3, 1.5]]], methods=("log_prob",))


def test_wishart_warnings_and_errors():
    def draw(T):
        return T.distributions.Wishart(T.tensor(1.5), T.eye(2)).rsample().shape
    assert captured_warnings(draw, jaxgrad) == captured_warnings(draw, __import__("torch"))
    raises(lambda T: T.distributions.Wishart(T.tensor(0.5), T.eye(2)))
    raises(lambda T: T.distributions.Wishart(T.tensor(3.0), T.eye(2), scale_tril=T.eye(2)))
    raises(lambda T: T.distributions.LKJCholesky(1))
    ok(lambda T: T.distributions.Wishart(3.0, T.eye(2) * 2).mean)


def test_sample_statistics():
    jaxgrad.manual_seed(0)
    D = jaxgrad.distributions
    n = 4000
    vm = D.VonMises(jaxgrad.tensor(1.0), jaxgrad.tensor(4.0)).sample((n,))
    assert abs(jaxgrad.atan2(vm.sin().mean(), vm.cos().mean()).item() - 1.0) < 0.05
    assert bool((vm >= -np.pi).all()) and bool((vm < np.pi).all())
    lkj = D.LKJCholesky(3, jaxgrad.tensor(2.0)).sample((n,))
    corr = lkj @ lkj.mT
    np.testing.assert_allclose(corr.diagonal(dim1=-2, dim2=-1).numpy(), 1.0, atol=1e-5)
    assert abs(corr[:, 0, 1].mean().item()) < 0.05
    with pytest.warns(UserWarning, match="Singular sample detected"):
        w = D.Wishart(jaxgrad.tensor(5.0), jaxgrad.tensor([[2.0, 0.5], [0.5, 1.0]])).sample((n,))
    np.testing.assert_allclose(w.mean(0).numpy(), [[10.0, 2.5], [2.5, 5.0]], rtol=0.08)
