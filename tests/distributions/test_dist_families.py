"""Exponential, Laplace, LogNormal, Gamma, Chi2, Beta, Dirichlet, Poisson, Binomial,
Geometric, Cauchy, Gumbel, StudentT, RelaxedBernoulli, RelaxedOneHotCategorical,
MixtureSameFamily and TransformedDistribution against torch.distributions."""

from __future__ import annotations

import numpy as np
import pytest

from differential import ok, raises
from distribution_checks import check_distribution

DTYPES = ["float32", "float64"]
A = np.array

CASES = {
    "exponential": (lambda D, r: D.Exponential(r), [A([0.5, 2.0])],
                    dict(values=[[0.3, 1.5]], icdf_values=[0.2, 0.7])),
    "laplace": (lambda D, loc, s: D.Laplace(loc, s), [A([0.0, 1.0]), A([1.0, 0.5])],
                dict(values=[[0.3, -1.5]], icdf_values=[0.2, 0.7])),
    "log_normal": (lambda D, loc, s: D.LogNormal(loc, s), [A([0.0, 1.0]), A([1.0, 0.5])],
                   dict(values=[[0.3, 1.5]], icdf_values=[0.2, 0.7])),
    "gamma": (lambda D, c, r: D.Gamma(c, r), [A([0.5, 9.0]), A([1.0, 3.0])],
              dict(values=[[0.3, 2.0]])),
    "chi2": (lambda D, df: D.Chi2(df), [A([1.0, 3.0])], dict(values=[[0.3, 1.5]])),
    "beta": (lambda D, a, b: D.Beta(a, b), [A([0.5, 2.0]), A([1.5, 3.0])],
             dict(values=[[0.3, 0.9]], methods=("log_prob",))),
    "dirichlet": (lambda D, c: D.Dirichlet(c), [A([[0.5, 2.0, 1.0], [3.0, 1.0, 1.0]])],
                  dict(values=[[0.2, 0.3, 0.5]], methods=("log_prob",))),
    "poisson": (lambda D, r: D.Poisson(r), [A([0.5, 4.0])],
                dict(values=[[0.0, 3.0]], methods=("log_prob",))),
    "binomial": (lambda D, p: D.Binomial(10, p), [A([0.2, 0.7])],
                 dict(values=[[3.0, 10.0]], methods=("log_prob",))),
    "binomial_logits": (lambda D, lg: D.Binomial(A([5.0, 5.0]).tolist() and 5, logits=lg),
                        [A([-1.0, 2.0])], dict(values=[[0.0, 4.0]], methods=("log_prob",))),
    "geometric": (lambda D, p: D.Geometric(p), [A([0.2, 0.7])],
                  dict(values=[[0.0, 4.0]], methods=("log_prob",))),
    "cauchy": (lambda D, loc, s: D.Cauchy(loc, s), [A([0.0, 1.0]), A([1.0, 0.5])],
               dict(values=[[0.3, -1.5]], icdf_values=[0.2, 0.7])),
    "gumbel": (lambda D, loc, s: D.Gumbel(loc, s), [A([0.0, 1.0]), A([1.0, 0.5])],
               dict(values=[[0.3, -1.5]], icdf_values=[0.2, 0.7])),
    "student_t": (lambda D, df, loc, s: D.StudentT(df, loc, s),
                  [A([0.5, 4.0]), A([0.0, -1.0]), A([1.0, 2.0])],
                  dict(values=[[0.3, 2.0]], methods=("log_prob",))),
    "relaxed_bernoulli": (lambda D, t, p: D.RelaxedBernoulli(t, probs=p),
                          [A(0.5), A([0.3, 0.8])], dict(values=[[0.4, 0.9]])),
    "relaxed_one_hot": (lambda D, t, lg: D.RelaxedOneHotCategorical(t, logits=lg),
                        [A(0.7), A([[0.3, -0.8, 1.0]])],
                        dict(values=[[0.2, 0.3, 0.5]], methods=("log_prob",))),
    "mixture": (lambda D, w, loc, s: D.MixtureSameFamily(D.Categorical(w), D.Normal(loc, s)),
                [A([[0.2, 0.8], [0.5, 0.5]]), A([[-1.0, 1.0], [0.0, 2.0]]),
                 A([[1.0, 0.5], [2.0, 1.0]])],
                dict(values=[[0.3, -1.5]], methods=("log_prob", "cdf"))),
    "transformed_tanh": (lambda D, loc, s: D.TransformedDistribution(
        D.Normal(loc, s), [D.TanhTransform(), D.AffineTransform(1.0, 2.0)]),
        [A([0.0, 1.0]), A([1.0, 0.5])], dict(values=[[0.3, 2.5]], methods=("log_prob",))),
    "transformed_sigmoid_exp": (lambda D, loc, s: D.TransformedDistribution(
        D.Normal(loc, s), [D.SigmoidTransform(), D.ExpTransform().inv]),
        [A([0.0, 1.0]), A([1.0, 0.5])], dict(values=[[-0.3, -1.5]], icdf_values=[0.3, 0.6])),
    "transformed_stick_breaking": (lambda D, loc: D.TransformedDistribution(
        D.Independent(D.Normal(loc, 1.0), 1), D.StickBreakingTransform()),
        [A([[0.0, 1.0], [0.5, -0.5]])], dict(values=[[0.2, 0.3, 0.5]], methods=("log_prob",))),
}


# compositions of distributions and transforms whose float32 kernels the other cases run: float64
# only (each dtype compiles every kernel again; the folder's runtime is mostly compiling)
FLOAT64_ONLY = {'chi2', 'gumbel', 'log_normal', 'relaxed_bernoulli', 'relaxed_one_hot', 'transformed_sigmoid_exp', 'transformed_stick_breaking', 'transformed_tanh', 'binomial_logits'}


@pytest.mark.parametrize(("name", "dtype"), [(n, d) for n in sorted(CASES) for d in
                                             ("float32", "float64")
                                             if d == "float64" or n not in FLOAT64_ONLY])
def test_distribution(name, dtype):
    make, arrays, kw = CASES[name]
    check_distribution(make, arrays, dtype, **kw)


def test_gamma_rsample_gradient_is_torchs_standard_gamma_grad():
    """Gamma.rsample's gradient is torch's ``_standard_gamma_grad`` at the drawn values,
    scaled by the rate (StandardGammaBackward0 then DivBackward0)."""
    import torch

    import jaxgrad
    jaxgrad.manual_seed(0)
    for dtype in ("float32", "float64"):
        c = jaxgrad.tensor([0.3, 1.0, 5.0, 30.0], dtype=getattr(jaxgrad, dtype),
                           requires_grad=True)
        r = jaxgrad.tensor([2.0, 1.0, 0.5, 3.0], dtype=getattr(jaxgrad, dtype),
                           requires_grad=True)
        x = jaxgrad.distributions.Gamma(c, r).rsample((50,))
        assert type(x.grad_fn).__name__ == "DivBackward0"
        assert type(x.grad_fn.next_functions[0][0]).__name__ == "StandardGammaBackward0"
        x.sum().backward()
        tc, tr = (torch.tensor(t.detach().numpy()) for t in (c, r))
        std = torch.tensor(x.detach().numpy()) * tr
        want_c = (torch._standard_gamma_grad(tc.expand(std.shape), std) / tr).sum(0)
        want_r = (-std / tr**2).sum(0)
        tol = 2e-5 if dtype == "float32" else 1e-11
        np.testing.assert_allclose(c.grad.numpy(), want_c.numpy(), rtol=tol)
        np.testing.assert_allclose(r.grad.numpy(), want_r.numpy(), rtol=tol)


def test_dirichlet_and_beta_rsample_gradient_is_torchs():
    """Dirichlet.rsample's backward is torch's ``_Dirichlet`` function: ``_dirichlet_grad`` of
    the draw; Beta selects its first component."""
    import torch
    from torch.distributions.dirichlet import _Dirichlet_backward

    import jaxgrad
    jaxgrad.manual_seed(1)
    conc = jaxgrad.tensor([[0.4, 2.0, 7.0], [3.0, 8.0, 9.0]], dtype=jaxgrad.float64,
                          requires_grad=True)
    x = jaxgrad.distributions.Dirichlet(conc).rsample((20,))
    assert type(x.grad_fn).__name__ == "_DirichletBackward"
    w = jaxgrad.arange(120.0, dtype=jaxgrad.float64).reshape(20, 2, 3) / 7
    (x * w).sum().backward()
    tconc = torch.tensor(conc.detach().numpy()).expand(20, 2, 3)
    want = _Dirichlet_backward(torch.tensor(x.detach().numpy()), tconc,
                               torch.tensor(w.numpy())).sum(0)
    np.testing.assert_allclose(conc.grad.numpy(), want.numpy(), rtol=1e-10)

    a = jaxgrad.tensor([0.5, 3.0], requires_grad=True)
    b = jaxgrad.tensor([2.0, 7.0], requires_grad=True)
    y = jaxgrad.distributions.Beta(a, b).rsample((10,))
    assert type(y.grad_fn).__name__ == "SelectBackward0"
    y.sum().backward()
    assert a.grad.shape == (2,) and bool((a.grad > 0).all()) and bool((b.grad < 0).all())


def test_gamma_kernels_match_torch():
    """``_standard_gamma_grad`` and ``_dirichlet_grad`` against torch's on a grid that reaches
    every branch of their approximations."""
    import torch

    import jaxgrad
    rs = np.random.RandomState(0)
    alpha = np.repeat([0.05, 0.3, 1.0, 2.0, 5.0, 9.0, 20.0, 200.0], 25)
    x = np.concatenate([rs.gamma(a, size=25) for a in [0.05, 0.3, 1.0, 2.0, 5.0, 9.0, 20.0,
                                                         200.0]])
    al, be = rs.uniform(0.1, 12, 300), rs.uniform(0.1, 12, 300)
    xb = rs.beta(al, be)
    for dtype, tol in (("float32", 1e-4), ("float64", 1e-10)):
        tj, tt = getattr(jaxgrad, dtype), getattr(torch, dtype)
        np.testing.assert_allclose(
            jaxgrad._standard_gamma_grad(jaxgrad.tensor(alpha, dtype=tj),
                                         jaxgrad.tensor(x, dtype=tj)).numpy(),
            torch._standard_gamma_grad(torch.tensor(alpha, dtype=tt),
                                       torch.tensor(x, dtype=tt)).numpy(), rtol=tol)
        np.testing.assert_allclose(
            jaxgrad._dirichlet_grad(*(jaxgrad.tensor(v, dtype=tj) for v in (xb, al, al + be)))
            .numpy(),
            torch._dirichlet_grad(*(torch.tensor(v, dtype=tt) for v in (xb, al, al + be)))
            .numpy(), rtol=tol)


def test_gamma_ops_nodes_and_errors():
    def program(T):
        a = T.tensor([0.5, 2.0], requires_grad=True)
        x = T._standard_gamma(a)
        g = T._standard_gamma_grad(a, x.detach())
        d = T._sample_dirichlet(a)
        return (x.shape, type(x.grad_fn).__name__, type(g.grad_fn).__name__,
                type(d.grad_fn).__name__, T._standard_gamma(T.tensor([-1.0, 0.0])))
    ok(program)
    raises(lambda T: T._standard_gamma(T.tensor([1, 2])))
    raises(lambda T: T._standard_gamma_grad(
        T.tensor([1.0], requires_grad=True), T.tensor([0.5])).sum().backward())
    raises(lambda T: T._sample_dirichlet(T.tensor([1.0, 2.0], requires_grad=True))
           .sum().backward())


def test_sample_statistics():
    import jaxgrad
    jaxgrad.manual_seed(0)
    D = jaxgrad.distributions
    n = 20000
    checks = [(D.Gamma(jaxgrad.tensor(3.0), jaxgrad.tensor(2.0)), 1.5, 0.75),
              (D.Beta(jaxgrad.tensor(2.0), jaxgrad.tensor(3.0)), 0.4, 0.04),
              (D.Exponential(jaxgrad.tensor(2.0)), 0.5, 0.25),
              (D.Laplace(jaxgrad.tensor(1.0), jaxgrad.tensor(2.0)), 1.0, 8.0),
              (D.Poisson(jaxgrad.tensor(3.0)), 3.0, 3.0),
              (D.Binomial(10, jaxgrad.tensor(0.3)), 3.0, 2.1),
              (D.Geometric(jaxgrad.tensor(0.3)), 7 / 3, 70 / 9),
              (D.Gumbel(jaxgrad.tensor(1.0), jaxgrad.tensor(2.0)), 1 + 2 * 0.5772, 6.58),
              (D.LogNormal(jaxgrad.tensor(0.0), jaxgrad.tensor(0.5)), 1.1331, 0.3647),
              (D.StudentT(jaxgrad.tensor(5.0)), 0.0, 5 / 3)]
    for d, mean, var in checks:
        x = d.sample((n,))
        assert abs(x.mean().item() - mean) < 4 * (var / n) ** 0.5 + 1e-3, d
        assert abs(x.var().item() - var) / var < 0.1, d
    dirichlet = D.Dirichlet(jaxgrad.tensor([1.0, 2.0, 3.0])).sample((n,))
    np.testing.assert_allclose(dirichlet.mean(0).numpy(), [1 / 6, 1 / 3, 1 / 2], atol=0.01)
    mix = D.MixtureSameFamily(D.Categorical(jaxgrad.tensor([0.3, 0.7])),
                              D.Normal(jaxgrad.tensor([-2.0, 2.0]), jaxgrad.tensor(0.5)))
    assert abs(mix.sample((n,)).mean().item() - 0.8) < 0.05


KL_PAIRS = {
    "beta": lambda D, T: (D.Beta(T.tensor([0.5, 2.0]), T.tensor([1.5, 3.0])),
                          D.Beta(T.tensor([1.0, 1.0]), T.tensor([2.0, 0.5]))),
    "binomial": lambda D, T: (D.Binomial(10, T.tensor([0.3, 0.6])),
                              D.Binomial(10, T.tensor([0.5, 0.2]))),
    "cauchy": lambda D, T: (D.Cauchy(T.tensor([0.0]), T.tensor([1.0])),
                            D.Cauchy(T.tensor([1.0]), T.tensor([2.0]))),
    "dirichlet": lambda D, T: (D.Dirichlet(T.tensor([0.5, 2.0, 1.0])),
                               D.Dirichlet(T.tensor([1.0, 1.0, 3.0]))),
    "exponential": lambda D, T: (D.Exponential(T.tensor([0.5])), D.Exponential(T.tensor([2.0]))),
    "gamma": lambda D, T: (D.Gamma(T.tensor([0.5, 3.0]), T.tensor([1.0, 2.0])),
                           D.Gamma(T.tensor([2.0, 1.0]), T.tensor([0.5, 1.0]))),
    "gumbel": lambda D, T: (D.Gumbel(T.tensor([0.0]), T.tensor([1.0])),
                            D.Gumbel(T.tensor([1.0]), T.tensor([2.0]))),
    "geometric": lambda D, T: (D.Geometric(T.tensor([0.3])), D.Geometric(T.tensor([0.6]))),
    "laplace": lambda D, T: (D.Laplace(T.tensor([0.0]), T.tensor([1.0])),
                             D.Laplace(T.tensor([1.0]), T.tensor([2.0]))),
    "poisson": lambda D, T: (D.Poisson(T.tensor([0.5])), D.Poisson(T.tensor([2.0]))),
    "log_normal": lambda D, T: (D.LogNormal(T.tensor([0.0]), T.tensor([1.0])),
                                D.LogNormal(T.tensor([1.0]), T.tensor([2.0]))),
    "normal_laplace": lambda D, T: (D.Normal(T.tensor([0.0]), T.tensor([1.0])),
                                    D.Laplace(T.tensor([1.0]), T.tensor([2.0]))),
    "normal_gumbel": lambda D, T: (D.Normal(T.tensor([0.0]), T.tensor([1.0])),
                                   D.Gumbel(T.tensor([1.0]), T.tensor([2.0]))),
    "gamma_normal": lambda D, T: (D.Gamma(T.tensor([2.0]), T.tensor([1.0])),
                                  D.Normal(T.tensor([1.0]), T.tensor([2.0]))),
    "beta_uniform": lambda D, T: (D.Beta(T.tensor([2.0]), T.tensor([1.0])),
                                  D.Uniform(T.tensor([-1.0, 0.5]), T.tensor([2.0, 2.0]))),
    "uniform_gamma": lambda D, T: (D.Uniform(T.tensor([0.5, -1.0]), T.tensor([2.0, 2.0])),
                                   D.Gamma(T.tensor([2.0]), T.tensor([1.0]))),
    "exponential_gumbel": lambda D, T: (D.Exponential(T.tensor([2.0])),
                                        D.Gumbel(T.tensor([1.0]), T.tensor([2.0]))),
    "bernoulli_poisson": lambda D, T: (D.Bernoulli(T.tensor([0.3])), D.Poisson(T.tensor([2.0]))),
    "poisson_binomial": lambda D, T: (D.Poisson(T.tensor([0.3])),
                                      D.Binomial(3, T.tensor([0.2]))),
}


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence(pair):
    def program(T):
        p, q = KL_PAIRS[pair](T.distributions, T)
        return T.distributions.kl_divergence(p, q)
    ok(program, rtol=1e-5)


def test_kl_gradients_and_errors():
    def program(T):
        D = T.distributions
        c = T.tensor([0.5, 3.0], dtype=T.float64, requires_grad=True)
        kl = D.kl_divergence(D.Gamma(c, 1.0), D.Gamma(T.tensor([2.0, 1.0], dtype=T.float64),
                                                      2.0))
        return kl, T.autograd.grad(kl.sum(), c)
    ok(program)
    raises(lambda T: T.distributions.kl_divergence(
        T.distributions.Binomial(3, T.tensor([0.3])),
        T.distributions.Binomial(5, T.tensor([0.3]))))


VALIDATION = {
    "gamma": lambda D, T: D.Gamma(T.tensor([-1.0]), 1.0),
    "gamma_support": lambda D, T: D.Gamma(T.tensor([1.0]), 1.0).log_prob(T.tensor([-1.0])),
    "beta": lambda D, T: D.Beta(T.tensor([1.0]), T.tensor([0.0])),
    "dirichlet_0d": lambda D, T: D.Dirichlet(T.tensor(1.0)),
    "dirichlet_support": lambda D, T: D.Dirichlet(T.ones(3)).log_prob(T.tensor([0.5, 0.6, 0.1])),
    "geometric_zero": lambda D, T: D.Geometric(T.tensor([0.0, 0.5])),
    "binomial_count": lambda D, T: D.Binomial(T.tensor([1.5]), T.tensor([0.3])),
    "binomial_entropy": lambda D, T: D.Binomial(T.tensor([2.0, 3.0]), T.tensor(0.3)).entropy(),
    "poisson_support": lambda D, T: D.Poisson(T.tensor([1.0])).log_prob(T.tensor([0.5])),
    "mixture_type": lambda D, T: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0)),
    "mixture_k": lambda D, T: D.MixtureSameFamily(D.Categorical(T.ones(3)),
                                                  D.Normal(T.zeros(2), 1.0)),
    "transforms_type": lambda D, T: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp"),
    "student_t_df": lambda D, T: D.StudentT(T.tensor([0.0])),
    "cache_size": lambda D, T: D.ExpTransform(cache_size=2),
}


@pytest.mark.parametrize("case", sorted(VALIDATION))
def test_validation_errors(case):
    raises(lambda T: VALIDATION[case](T.distributions, T))


def test_transforms():
    def program(T):
        D = T.distributions
        x = T.tensor([[0.3, -1.2], [2.0, 0.1]], dtype=T.float64, requires_grad=True)
        out = {}
        for name, t in [("exp", D.ExpTransform()), ("sigmoid", D.SigmoidTransform()),
                        ("tanh", D.TanhTransform()), ("softplus", D.SoftplusTransform()),
                        ("affine", D.AffineTransform(1.0, T.tensor([2.0, -3.0],
                                                                   dtype=T.float64))),
                        ("power", D.PowerTransform(T.tensor(2.0, dtype=T.float64))),
                        ("abs", D.AbsTransform()),
                        ("compose", D.ComposeTransform([D.AffineTransform(0.5, 2.0),
                                                        D.ExpTransform()])),
                        ("independent", D.IndependentTransform(D.ExpTransform(), 1)),
                        ("stick", D.StickBreakingTransform()),
                        ("softmax", D.SoftmaxTransform()),
                        ("reshape", D.ReshapeTransform((2,), (2, 1))),
                        ("lower_cholesky", D.LowerCholeskyTransform())]:
            xin = x.abs() + 0.1 if name == "power" else x
            y = t(xin)
            entry = {"y": y, "inv": t.inv(y), "repr": repr(t), "inv_repr": repr(t.inv),
                     "domain": repr(t.domain), "codomain": repr(t.codomain),
                     "bijective": t.bijective}
            try:
                entry["ladj"] = t.log_abs_det_jacobian(xin, y)
            except NotImplementedError:
                entry["ladj"] = "NotImplementedError"
            out[name] = entry
        out["shapes"] = (D.StickBreakingTransform().forward_shape((3, 4)),
                         D.StickBreakingTransform().inverse_shape((3, 4)),
                         D.ReshapeTransform((4,), (2, 2)).forward_shape((3, 4)))
        out["eq"] = (D.ExpTransform() == D.ExpTransform(), D.ExpTransform().inv == D.ExpTransform().inv,
                     D.AffineTransform(1.0, 2.0) == D.AffineTransform(1.0, 2.0),
                     D.identity_transform == D.ComposeTransform([]))
        cached = D.ExpTransform(cache_size=1)
        y = cached(x)
        out["cache"] = cached.inv(y) is x
        return out
    ok(program)


def test_dirichlet_rsample_is_once_differentiable():
    """torch's _Dirichlet backward is ``once_differentiable``: differentiating its gradient
    again raises torch's error."""
    def program(T):
        c = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x = T.distributions.Dirichlet(c).rsample()
        (g,) = T.autograd.grad((x * T.tensor([1.0, 2.0, 3.0])).sum(), c, create_graph=True)
        return T.autograd.grad(g.sum(), c)
    raises(program)
