"""MultivariateNormal and LowRankMultivariateNormal against torch.distributions: the three
parameterisations, batched factors broadcast against batched values (``_batch_mahalanobis``),
gradients through the Cholesky factor and triangular solves, KL pairs, validation."""

from __future__ import annotations

import numpy as np
import pytest

from differential import ok, raises
from distribution_checks import check_distribution

DTYPES = ["float32", "float64"]
A = np.array
COV = A([[[2.0, 0.5, 0.1], [0.5, 1.0, -0.2], [0.1, -0.2, 0.7]],
         [[1.0, 0.3, 0.0], [0.3, 2.0, 0.4], [0.0, 0.4, 1.5]]], dtype=np.float32)
LOC = A([[0.5, -1.0, 0.0], [1.0, 0.0, 2.0]], dtype=np.float32)
VALUES = [[[0.1, 0.2, -0.3], [1.0, 0.5, 2.0]], [[[0.0, 0.0, 0.0]], [[1.0, 1.0, 1.0]]]]


# (float32 through the covariance only: the other parameterisations run the same kernels)
@pytest.mark.parametrize(("param", "dtype"), [("covariance_matrix", "float32"),
                                              ("covariance_matrix", "float64"),
                                              ("precision_matrix", "float64"),
                                              ("scale_tril", "float64")])
def test_multivariate_normal(param, dtype):
    matrix = np.linalg.cholesky(COV) if param == "scale_tril" else COV
    check_distribution(lambda D, loc, m: D.MultivariateNormal(loc, **{param: m}),
                       [LOC, matrix], dtype, values=VALUES, methods=("log_prob",))


@pytest.mark.parametrize("dtype", ["float64"])
def test_multivariate_normal_shared_factor(dtype):
    """One factor for a batch of locations: the broadcast path of ``_batch_mahalanobis``."""
    check_distribution(lambda D, loc, m: D.MultivariateNormal(loc, scale_tril=m),
                       [LOC, np.linalg.cholesky(COV[0])], dtype, values=VALUES,
                       methods=("log_prob",))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lowrank_multivariate_normal(dtype):
    factor = A([[[1.0, 0.2], [0.5, -0.3], [0.0, 1.0]], [[0.3, 0.1], [0.2, 0.4], [1.0, 0.0]]])
    check_distribution(lambda D, loc, w, d: D.LowRankMultivariateNormal(loc, w, d),
                       [LOC, factor, A([1.0, 0.5, 2.0])], dtype, values=VALUES,
                       methods=("log_prob",))


def test_lazy_matrices_and_rsample_path():
    def program(T):
        D = T.distributions
        loc = T.tensor(LOC, requires_grad=True)
        cov = T.tensor(COV, requires_grad=True)
        d = D.MultivariateNormal(loc, cov)
        low = D.LowRankMultivariateNormal(loc, T.tensor([[1.0], [0.5], [0.2]],
                                                         requires_grad=True), T.ones(3))
        r = d.rsample((4,))
        (g,) = T.autograd.grad(r.sum(), loc, retain_graph=True)
        return (d.scale_tril, d.precision_matrix, d.covariance_matrix, r.shape, g,
                type(r.grad_fn).__name__, low.scale_tril, low.covariance_matrix,
                low.precision_matrix, low.rsample((2,)).shape)
    ok(program, rtol=2e-5)


KL = {
    "mvn_mvn": lambda D, T: (D.MultivariateNormal(T.tensor(LOC), T.tensor(COV)),
                             D.MultivariateNormal(T.zeros(3), T.tensor(COV[1]))),
    "lowrank_lowrank": lambda D, T: (
        D.LowRankMultivariateNormal(T.tensor(LOC), T.tensor([[1.0], [0.5], [0.2]]), T.ones(3)),
        D.LowRankMultivariateNormal(T.zeros(3), T.tensor([[0.3], [0.1], [1.0]]),
                                    T.tensor([1.0, 2.0, 0.5]))),
    "mvn_lowrank": lambda D, T: (
        D.MultivariateNormal(T.tensor(LOC), T.tensor(COV)),
        D.LowRankMultivariateNormal(T.zeros(3), T.tensor([[0.3], [0.1], [1.0]]), T.ones(3))),
    "lowrank_mvn": lambda D, T: (
        D.LowRankMultivariateNormal(T.tensor(LOC), T.tensor([[1.0], [0.5], [0.2]]), T.ones(3)),
        D.MultivariateNormal(T.zeros(3), T.tensor(COV))),
}


@pytest.mark.parametrize("pair", sorted(KL))
def test_kl_divergence(pair):
    def program(T):
        p, q = KL[pair](T.distributions, T)
        return T.distributions.kl_divergence(p, q)
    ok(program, rtol=1e-5)


VALIDATION = {
    "not_pd": lambda D, T: D.MultivariateNormal(T.zeros(2), T.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "not_symmetric": lambda D, T: D.MultivariateNormal(T.zeros(2),
                                                       T.tensor([[1.0, 0.5], [0.0, 1.0]])),
    "scale_tril": lambda D, T: D.MultivariateNormal(T.zeros(2), scale_tril=-T.eye(2)),
    "two_params": lambda D, T: D.MultivariateNormal(T.zeros(2), T.eye(2), scale_tril=T.eye(2)),
    "loc_0d": lambda D, T: D.MultivariateNormal(T.tensor(0.0), T.eye(2)),
    "event_shape": lambda D, T: D.MultivariateNormal(T.zeros(2), T.eye(2)).log_prob(T.zeros(3)),
    "lowrank_factor": lambda D, T: D.LowRankMultivariateNormal(T.zeros(2), T.ones(3, 1),
                                                               T.ones(2)),
    "lowrank_diag": lambda D, T: D.LowRankMultivariateNormal(T.zeros(2), T.ones(2, 1),
                                                             -T.ones(2)),
    "kl_event": lambda D, T: D.kl_divergence(D.MultivariateNormal(T.zeros(2), T.eye(2)),
                                             D.MultivariateNormal(T.zeros(3), T.eye(3))),
}


@pytest.mark.parametrize("case", sorted(VALIDATION))
def test_validation_errors(case):
    raises(lambda T: VALIDATION[case](T.distributions, T))
