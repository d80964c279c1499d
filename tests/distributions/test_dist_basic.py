"""Normal, Uniform, Bernoulli, Categorical, OneHotCategorical, Independent against
torch.distributions: values, gradients, shapes, reprs, validation errors."""

from __future__ import annotations

import numpy as np
import pytest

import jaxgrad
from differential import ok, raises
from distribution_checks import check_distribution

DTYPES = ["float32", "float64"]
A = np.array


@pytest.mark.parametrize("dtype", DTYPES)
def test_normal(dtype):
    check_distribution(lambda D, loc, scale: D.Normal(loc, scale),
                       [A([0.5, -1.0, 2.0]), A([1.0, 0.5, 3.0])], dtype,
                       values=[[0.1, 0.2, -3.0], [[1.0], [2.0]]], methods=("log_prob", "cdf"),
                       icdf_values=[0.1, 0.5, 0.9])


@pytest.mark.parametrize("dtype", DTYPES)
def test_normal_scalar_params_and_broadcast(dtype):
    check_distribution(lambda D, scale: D.Normal(1.5, scale), [A([[1.0], [2.0]])], dtype,
                       values=[[0.0, 1.0]])
    ok(lambda T: (repr(T.distributions.Normal(0.0, 1.0)),
                  T.distributions.Normal(0.0, 1.0).batch_shape,
                  T.distributions.Normal(0.0, 1.0).log_prob(T.tensor(0.5))))


@pytest.mark.parametrize("dtype", DTYPES)
def test_uniform(dtype):
    check_distribution(lambda D, low, high: D.Uniform(low, high),
                       [A([0.0, -1.0]), A([2.0, 3.0])], dtype,
                       values=[[0.5, 2.5], [[1.0], [-0.5]]], icdf_values=[0.25, 0.75])


@pytest.mark.parametrize("dtype", DTYPES)
def test_bernoulli(dtype):
    check_distribution(lambda D, p: D.Bernoulli(probs=p), [A([0.2, 0.5, 0.9])], dtype,
                       values=[[0.0, 1.0, 1.0]])
    check_distribution(lambda D, lg: D.Bernoulli(logits=lg), [A([-2.0, 0.0, 3.0])], dtype,
                       values=[[1.0, 0.0, 1.0]])


@pytest.mark.parametrize("dtype", DTYPES)
def test_categorical(dtype):
    check_distribution(lambda D, p: D.Categorical(probs=p), [A([[0.2, 0.3, 0.5], [1.0, 2.0, 1.0]])],
                       dtype, values=[A([0, 2]), A([[1], [2]])], methods=("log_prob",))
    check_distribution(lambda D, lg: D.Categorical(logits=lg), [A([0.5, -1.0, 2.0, 0.0])], dtype,
                       values=[A([3, 0, 1])], methods=("log_prob",))


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_hot_categorical(dtype):
    check_distribution(lambda D, p: D.OneHotCategorical(probs=p),
                       [A([[0.2, 0.3, 0.5], [1.0, 2.0, 1.0]])], dtype,
                       values=[[[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]], methods=("log_prob",))


@pytest.mark.parametrize("dtype", DTYPES)
def test_independent(dtype):
    check_distribution(lambda D, loc, scale: D.Independent(D.Normal(loc, scale), 1),
                       [A([[0.5, -1.0], [2.0, 0.0]]), A([[1.0, 0.5], [3.0, 1.0]])], dtype,
                       values=[[[0.1, 0.2], [-3.0, 1.0]]], methods=("log_prob",))


def test_enumerate_support_and_straight_through():
    def program(T):
        D = T.distributions
        p = T.tensor([[0.2, 0.8], [0.6, 0.4]], requires_grad=True)
        st = D.OneHotCategoricalStraightThrough(p)
        s = st.rsample((3,))
        (g,) = T.autograd.grad((s * T.arange(12.0).reshape(3, 2, 2)).sum(), p)
        return (D.Bernoulli(p[:, 0]).enumerate_support(), D.Categorical(p).enumerate_support(),
                D.Categorical(p).enumerate_support(expand=False),
                D.OneHotCategorical(p).enumerate_support(), s.shape, g,
                D.Bernoulli(T.tensor([0.5, 0.7])).mode, D.OneHotCategorical(p).mode,
                D.Categorical(p).mode)
    ok(program)


KL_PAIRS = {
    "normal": lambda D, T: (D.Normal(T.tensor([0.0, 1.0], requires_grad=True), T.tensor([1.0, 2.0])),
                            D.Normal(T.tensor([0.5, -1.0]), T.tensor([2.0, 0.5], requires_grad=True))),
    "bernoulli": lambda D, T: (D.Bernoulli(T.tensor([0.2, 0.0, 1.0], requires_grad=True)),
                               D.Bernoulli(T.tensor([0.5, 0.5, 0.3]))),
    "categorical": lambda D, T: (D.Categorical(T.tensor([[0.2, 0.8, 0.0]], requires_grad=True)),
                                 D.Categorical(logits=T.tensor([[0.5, -1.0, 0.0]]))),
    "one_hot": lambda D, T: (D.OneHotCategorical(T.tensor([0.2, 0.8], requires_grad=True)),
                             D.OneHotCategorical(T.tensor([0.5, 0.5]))),
    "uniform": lambda D, T: (D.Uniform(T.tensor([0.0, -1.0], requires_grad=True), T.tensor([1.0, 2.0])),
                             D.Uniform(T.tensor([-1.0, 0.0]), T.tensor([2.0, 3.0]))),
    "independent": lambda D, T: (D.Independent(D.Normal(T.zeros(2, 3, requires_grad=True), 1.0), 1),
                                 D.Independent(D.Normal(T.ones(2, 3), 2.0), 1)),
    "uniform_normal": lambda D, T: (D.Uniform(T.tensor([0.0], requires_grad=True), T.tensor([1.0])),
                                    D.Normal(T.tensor([0.5]), T.tensor([2.0]))),
    "normal_uniform": lambda D, T: (D.Normal(T.tensor([0.0]), T.tensor([1.0])),
                                    D.Uniform(T.tensor([0.0]), T.tensor([1.0]))),
}


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence(pair):
    def program(T):
        p, q = KL_PAIRS[pair](T.distributions, T)
        kl = T.distributions.kl_divergence(p, q)
        leaves = [t for t in (getattr(p, n, None) for n in ("loc", "low", "probs", "logits"))
                  if isinstance(t, T.Tensor) and t.is_leaf and t.requires_grad]
        grads = T.autograd.grad(kl.sum(), leaves) if kl.requires_grad and leaves else None
        return kl, grads
    ok(program)


def _my_bernoulli(D):
    class MyBernoulli(D.Bernoulli):
        pass
    return MyBernoulli


def test_kl_expfamily_fallback():
    """A subclass with no registered pair of its own: torch's Bregman-divergence fallback
    (dispatch prefers ExponentialFamily pairs only when nothing more specific matches)."""
    def program(T):
        D = T.distributions
        p = D.Normal(T.tensor([0.3, 1.0], requires_grad=True), T.tensor([1.0, 2.0]))
        q = D.Normal(T.tensor([0.0, 0.5]), T.tensor([2.0, 1.0]))
        kl = D.kl._kl_expfamily_expfamily(p, q)
        return kl
    ok(program, rtol=1e-5)
    raises(lambda T: T.distributions.kl_divergence(_my_bernoulli(T.distributions)(0.3),
                                                   T.distributions.Normal(0.0, 1.0)))


VALIDATION = {
    "normal_scale": lambda D, T: D.Normal(T.tensor([0.0, 1.0]), T.tensor([1.0, -1.0])),
    "normal_loc_nan": lambda D, T: D.Normal(T.tensor(float("nan")), 1.0),
    "uniform_order": lambda D, T: D.Uniform(T.tensor([1.0]), T.tensor([0.0])),
    "bernoulli_probs": lambda D, T: D.Bernoulli(T.tensor([1.5])),
    "bernoulli_both": lambda D, T: D.Bernoulli(0.5, 0.0),
    "categorical_neg": lambda D, T: D.Categorical(T.tensor([-1.0, 2.0])),
    "categorical_0d": lambda D, T: D.Categorical(T.tensor(1.0)),
    "categorical_none": lambda D, T: D.Categorical(),
    "independent_ndims": lambda D, T: D.Independent(D.Normal(T.zeros(2), 1.0), 2),
    "normal_value_shape": lambda D, T: D.Normal(T.zeros(3), 1.0).log_prob(T.zeros(2)),
    "normal_value_type": lambda D, T: D.Normal(T.zeros(3), 1.0).log_prob(1.0),
    "bernoulli_support": lambda D, T: D.Bernoulli(T.tensor([0.5])).log_prob(T.tensor([0.5])),
    "categorical_support": lambda D, T: D.Categorical(T.ones(3)).log_prob(T.tensor(3)),
    "one_hot_event": lambda D, T: D.OneHotCategorical(T.ones(3)).log_prob(T.tensor([1.0, 0.0])),
    "uniform_support": lambda D, T: D.Uniform(0.0, 1.0).log_prob(T.tensor(2.0)),
    "broadcast_all": lambda D, T: D.Normal("a", 1.0),
    "no_validation": lambda D, T: D.Normal(T.tensor([0.0]), T.tensor([-1.0]),
                                           validate_args=False).log_prob(T.tensor([1.0])),
    "kl_missing": lambda D, T: D.kl_divergence(D.Categorical(T.ones(2)), D.Normal(0.0, 1.0)),
}


@pytest.mark.parametrize("case", sorted(VALIDATION))
def test_validation_errors(case):
    program = lambda T: VALIDATION[case](T.distributions, T)
    if case == "no_validation":
        ok(program)
    else:
        raises(program)


def test_set_default_validate_args():
    D = jaxgrad.distributions
    try:
        D.Distribution.set_default_validate_args(False)
        d = D.Normal(jaxgrad.tensor([0.0]), jaxgrad.tensor([-1.0]))
        assert not d._validate_args
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(3)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.Normal(jaxgrad.tensor([0.0]), jaxgrad.tensor([-1.0]))


def test_rsample_gradient_is_the_reparameterised_path():
    """Normal.rsample is ``loc + eps * scale``: its gradient is 1 in loc and eps in scale, as
    torch's, given the noise it drew."""
    loc = jaxgrad.tensor([0.5, -1.0], requires_grad=True)
    scale = jaxgrad.tensor([2.0, 0.5], requires_grad=True)
    jaxgrad.manual_seed(0)
    x = jaxgrad.distributions.Normal(loc, scale).rsample((4,))
    assert type(x.grad_fn).__name__ == "AddBackward0"
    x.sum().backward()
    eps = (x.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(loc.grad.numpy(), [4.0, 4.0])
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-5)


def test_sample_statistics():
    jaxgrad.manual_seed(0)
    D = jaxgrad.distributions
    n = 20000
    x = D.Normal(jaxgrad.tensor(2.0), jaxgrad.tensor(3.0)).sample((n,))
    assert abs(x.mean().item() - 2.0) < 0.1 and abs(x.std().item() - 3.0) < 0.1
    u = D.Uniform(-1.0, 3.0).sample((n,))
    assert u.min().item() >= -1.0 and u.max().item() < 3.0 and abs(u.mean().item() - 1) < 0.05
    b = D.Bernoulli(jaxgrad.tensor(0.3)).sample((n,))
    assert abs(b.mean().item() - 0.3) < 0.02
    c = D.Categorical(jaxgrad.tensor([0.1, 0.2, 0.7])).sample((n,))
    assert c.dtype == jaxgrad.int64
    freq = np.bincount(c.numpy(), minlength=3) / n
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.02)
