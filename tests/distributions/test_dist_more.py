"""HalfNormal, HalfCauchy, Pareto, Weibull, Kumaraswamy, InverseGamma, NegativeBinomial,
Multinomial, LogisticNormal, FisherSnedecor, ContinuousBernoulli, GeneralizedPareto and
their KL pairs against torch.distributions."""

from __future__ import annotations

import numpy as np
import pytest

from differential import ok, raises
from distribution_checks import check_distribution

A = np.array

CASES = {
    "half_normal": (lambda D, s: D.HalfNormal(s), [A([1.0, 0.5])],
                    dict(values=[[0.3, 1.5]], icdf_values=[0.2, 0.7])),
    "half_cauchy": (lambda D, s: D.HalfCauchy(s), [A([1.0, 0.5])],
                    dict(values=[[0.3, 1.5]], icdf_values=[0.2, 0.7])),
    "pareto": (lambda D, s, a: D.Pareto(s, a), [A([1.0, 0.5]), A([0.7, 3.0])],
               dict(values=[[1.3, 2.5]], icdf_values=[0.2, 0.7])),
    "weibull": (lambda D, s, c: D.Weibull(s, c), [A([1.0, 0.5]), A([0.7, 3.0])],
                dict(values=[[1.3, 0.2]], methods=("log_prob",))),
    "kumaraswamy": (lambda D, a, b: D.Kumaraswamy(a, b), [A([0.5, 2.0]), A([0.7, 3.0])],
                    dict(values=[[0.3, 0.6]], icdf_values=[0.2, 0.7])),
    "inverse_gamma": (lambda D, c, r: D.InverseGamma(c, r), [A([0.5, 3.0]), A([0.7, 2.0])],
                      dict(values=[[0.3, 1.6]], methods=("log_prob",))),
    "negative_binomial": (lambda D, p: D.NegativeBinomial(3.0, p), [A([0.3, 0.6])],
                          dict(values=[[0.0, 4.0]], methods=("log_prob",))),
    "negative_binomial_logits": (lambda D, n, lg: D.NegativeBinomial(n, logits=lg),
                                 [A([0.0, 2.5]), A([-1.0, 0.5])],
                                 dict(values=[[0.0, 4.0]], methods=("log_prob",))),
    "multinomial": (lambda D, p: D.Multinomial(5, p), [A([[0.2, 0.3, 0.5], [1.0, 1.0, 2.0]])],
                    dict(values=[[[1.0, 1.0, 3.0], [0.0, 5.0, 0.0]]], methods=("log_prob",))),
    "logistic_normal": (lambda D, loc, s: D.LogisticNormal(loc, s),
                        [A([[0.0, 1.0], [0.5, -0.5]]), A([[1.0, 0.5], [2.0, 1.0]])],
                        dict(values=[[0.2, 0.3, 0.5]], methods=("log_prob",))),
    "fisher_snedecor": (lambda D, a, b: D.FisherSnedecor(a, b), [A([1.5, 3.0]), A([3.0, 6.0])],
                        dict(values=[[0.3, 1.6]], methods=("log_prob",))),
    "continuous_bernoulli": (lambda D, p: D.ContinuousBernoulli(p), [A([0.2, 0.4995, 0.9])],
                             dict(values=[[0.3, 0.6, 0.95]], icdf_values=[0.2, 0.5, 0.7])),
    "continuous_bernoulli_logits": (lambda D, lg: D.ContinuousBernoulli(logits=lg),
                                    [A([-1.0, 0.001, 2.0])],
                                    dict(values=[[0.3, 0.6, 0.95]])),
    "generalized_pareto": (lambda D, loc, s, c: D.GeneralizedPareto(loc, s, c),
                           [A([0.0, 1.0, 0.5]), A([1.0, 0.5, 2.0]), A([0.5, 0.0, -0.2])],
                           dict(values=[[0.3, 1.6, 2.0]], icdf_values=[0.2, 0.5, 0.7])),
}


# compositions of distributions and transforms whose float32 kernels the other cases run: float64
# only (each dtype compiles every kernel again; the folder's runtime is mostly compiling)
FLOAT64_ONLY = {'half_cauchy', 'half_normal', 'inverse_gamma', 'kumaraswamy', 'logistic_normal', 'pareto', 'weibull', 'negative_binomial_logits', 'continuous_bernoulli_logits', 'fisher_snedecor'}


@pytest.mark.parametrize(("name", "dtype"), [(n, d) for n in sorted(CASES) for d in
                                             ("float32", "float64")
                                             if d == "float64" or n not in FLOAT64_ONLY])
def test_distribution(name, dtype):
    make, arrays, kw = CASES[name]
    check_distribution(make, arrays, dtype, **kw)


KL_PAIRS = {
    "half_normal": lambda D, T: (D.HalfNormal(T.tensor([1.0])), D.HalfNormal(T.tensor([2.0]))),
    "pareto": lambda D, T: (D.Pareto(T.tensor([1.0, 0.5]), T.tensor([2.0, 3.0])),
                            D.Pareto(T.tensor([0.8, 1.0]), T.tensor([1.0, 3.0]))),
    "continuous_bernoulli": lambda D, T: (D.ContinuousBernoulli(T.tensor([0.2, 0.4999])),
                                          D.ContinuousBernoulli(T.tensor([0.7, 0.3]))),
    "pareto_exponential": lambda D, T: (D.Pareto(T.tensor([1.0, 1.0]), T.tensor([2.0, 0.5])),
                                        D.Exponential(T.tensor([1.5]))),
    "pareto_gamma": lambda D, T: (D.Pareto(T.tensor([1.0, 1.0]), T.tensor([2.0, 0.5])),
                                  D.Gamma(T.tensor([2.0]), T.tensor([1.0]))),
    "pareto_normal": lambda D, T: (D.Pareto(T.tensor([1.0, 1.0]), T.tensor([3.0, 1.5])),
                                   D.Normal(T.tensor([0.5]), T.tensor([2.0]))),
    "uniform_pareto": lambda D, T: (D.Uniform(T.tensor([1.5, 0.5]), T.tensor([2.0, 2.0])),
                                    D.Pareto(T.tensor([1.0]), T.tensor([2.0]))),
    "cb_normal": lambda D, T: (D.ContinuousBernoulli(T.tensor([0.2])),
                               D.Normal(T.tensor([0.5]), T.tensor([2.0]))),
    "cb_exponential": lambda D, T: (D.ContinuousBernoulli(T.tensor([0.2])),
                                    D.Exponential(T.tensor([2.0]))),
    "cb_uniform": lambda D, T: (D.ContinuousBernoulli(T.tensor([0.2, 0.6])),
                                D.Uniform(T.tensor([-1.0, 0.5]), T.tensor([2.0, 2.0]))),
    "beta_cb": lambda D, T: (D.Beta(T.tensor([2.0]), T.tensor([3.0])),
                             D.ContinuousBernoulli(T.tensor([0.3]))),
    "uniform_cb": lambda D, T: (D.Uniform(T.tensor([0.2]), T.tensor([0.6])),
                                D.ContinuousBernoulli(T.tensor([0.3]))),
    "normal_pareto": lambda D, T: (D.Normal(T.tensor([0.0]), T.tensor([1.0])),
                                   D.Pareto(T.tensor([1.0]), T.tensor([2.0]))),
}


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence(pair):
    def program(T):
        p, q = KL_PAIRS[pair](T.distributions, T)
        return T.distributions.kl_divergence(p, q)
    ok(program, rtol=1e-5)


VALIDATION = {
    "continuous_bernoulli_probs": lambda D, T: D.ContinuousBernoulli(T.tensor([1.5]),
                                                                     validate_args=True),
    "multinomial_count": lambda D, T: D.Multinomial(2.5, T.ones(3)),
    "multinomial_support": lambda D, T: D.Multinomial(3, T.ones(3)).log_prob(
        T.tensor([1.0, 1.0, 2.0])),
    "pareto_support": lambda D, T: D.Pareto(T.tensor([1.0]), T.tensor([2.0])).log_prob(
        T.tensor([0.5])),
    "negative_binomial_probs": lambda D, T: D.NegativeBinomial(3.0, T.tensor([1.0])),
}


@pytest.mark.parametrize("case", sorted(VALIDATION))
def test_validation_errors(case):
    raises(lambda T: VALIDATION[case](T.distributions, T))


def test_isclose_refuses_mixed_dtypes():
    """GeneralizedPareto's float64 log_prob meets torch's ``isclose`` refusal of a float32
    zero (``Double did not match Float``); jaxgrad's isclose refuses as torch's."""
    raises(lambda T: T.isclose(T.ones(2, dtype=T.float64), T.ones(3)))
    raises(lambda T: T.isclose(T.ones(2), T.ones(2, dtype=T.int64)))
