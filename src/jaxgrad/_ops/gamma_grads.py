"""Rows of the gamma-family samplers torch.distributions reparameterises through:
``_standard_gamma`` (StandardGammaBackward0), ``_standard_gamma_grad``, ``_sample_dirichlet`` and
``_dirichlet_grad``, with the kernels of torch's reparameterised gradients
(``aten/src/ATen/native/Distributions.h``), so the gradient of a Gamma/Beta/Dirichlet
``rsample`` is torch's approximation, not JAX's.

The draws happen outside the kernels (``jaxgrad._functions.random_gamma``) and reach the rows as
traced operands. derivatives.yaml:

- ``_standard_gamma``: ``self: grad * _standard_gamma_grad(self, result)``;
- ``_standard_gamma_grad``: ``not_implemented("_standard_gamma_grad")``;
- ``_sample_dirichlet``, ``_dirichlet_grad``: no derivative (torch's NotImplemented node).

torch's CPU kernels compute in double (their ``accscalar_t``); the branches of the Dirichlet
gradient that torch writes in ``scalar_t`` are computed in the operand's dtype here too.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax.scipy.special import digamma

from ._table import Op


def standard_gamma_grad(alpha, x):
    """``-(d/dalpha cdf(x; alpha)) / pdf(x; alpha)`` for ``x`` drawn from ``Gamma(alpha, 1)``:
    a Taylor series for small ``x``, a Rice saddle-point expansion for large ``alpha``, a
    bivariate rational approximation elsewhere (torch's ``standard_gamma_grad_one``).

    >>> from jaxgrad._core.jax_setup import x64_scope
    >>> from jaxgrad._ops.gamma_grads import standard_gamma_grad
    >>> with x64_scope():
    ...     round(float(standard_gamma_grad(1.0, 0.5)), 4)
    0.807
    """
    out_dtype = jnp.result_type(alpha, x)
    a, x = jnp.asarray(alpha, jnp.float64), jnp.asarray(x, jnp.float64)
    # Taylor series for x < 0.8
    numer, denom = jnp.ones_like(x), a
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x**a
    gamma_pdf = x ** (a - 1) * jnp.exp(-x)
    gamma_cdf = pow_x_alpha * series1
    gamma_cdf_alpha = (jnp.log(x) - digamma(a)) * gamma_cdf - pow_x_alpha * series2
    taylor = -gamma_cdf_alpha / gamma_pdf
    taylor = jnp.where(jnp.isnan(taylor), 0.0, taylor)
    # Rice saddle point for alpha > 8: near the mode, then away from it
    near = (1 + 24 * a * (1 + 12 * a)) * (
        1440 * a * a + 6 * x * (53 - 120 * x) - 65 * x * x / a + a * (107 + 3600 * x)
    ) / (1244160 * a * a * a * a)
    denom_far = jnp.sqrt(8 * a)
    term2 = denom_far / (a - x)
    term3 = (x - a - a * jnp.log(x / a)) ** -1.5
    term23 = jnp.where(x < a, term2 - term3, term2 + term3)
    term1 = jnp.log(x / a) * term23 - jnp.sqrt(2 / a) * (a + x) / ((a - x) * (a - x))
    stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
    far = -stirling * (x * term1) / denom_far
    rice = jnp.where((0.9 * a <= x) & (x <= 1.1 * a), near, far)
    # bivariate rational approximation
    u, v = jnp.log(x / a), jnp.log(a)
    coef = [c0 + u * (c1 + u * c2) for c0, c1, c2 in zip(*_GAMMA_UV)]
    p = coef[0] + v * (coef[1] + v * (coef[2] + v * coef[3]))
    q = coef[4] + v * (coef[5] + v * (coef[6] + v * coef[7]))
    rational = jnp.exp(p / q)
    result = jnp.where(x < 0.8, taylor, jnp.where(a > 8.0, rice, rational))
    return result.astype(out_dtype)


# the rational approximation's coefficients, rows: constant, u, u**2 (torch's coef_uv)
_GAMMA_UV = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07),
)


def _digamma(x):
    """digamma computed in double and rounded to ``x``'s dtype (torch's ``digamma_one``
    with a double ``accscalar_t``)."""
    return digamma(jnp.asarray(x, jnp.float64)).astype(jnp.result_type(x))


def _beta_grad_alpha_small(x, alpha, beta):
    """Taylor expansion of the Beta gradient in alpha for ``x`` near 0."""
    factor = _digamma(alpha) - _digamma(alpha + beta) - jnp.log(x)
    numer = jnp.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * (1 - x) ** -beta * series
    return jnp.where(jnp.isnan(result), 0.0, result)


def _beta_grad_beta_small(x, alpha, beta):
    """Taylor expansion of the Beta gradient in beta for ``x`` near 0."""
    factor = _digamma(alpha + beta) - _digamma(beta)
    numer, betas, dbetas = jnp.ones_like(x), jnp.ones_like(x), jnp.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -((1 - x) ** (1 - beta)) * series
    return jnp.where(jnp.isnan(result), 0.0, result)


def _beta_grad_alpha_mid(x, alpha, beta):
    """Rice saddle-point expansion of the Beta gradient in alpha for large alpha and beta."""
    total = alpha + beta
    mean = alpha / total
    std = jnp.sqrt(alpha * beta / (total + 1)) / total
    poly = 47 * x * (beta * beta) * (beta * beta) + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                    8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    near = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / jnp.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1_den = jnp.sqrt(2 * alpha / beta) * total**1.5 * axbx * axbx
    term1 = term1_num / term1_den
    term2 = 0.5 * jnp.log(alpha / (total * x))
    term3 = jnp.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = (beta * jnp.log(beta / (total * (1 - x)))
             + alpha * jnp.log(alpha / (total * x))) ** -1.5
    term1234 = term1 + term2 * (term3 + jnp.where(x < mean, term4, -term4))
    far = stirling * prefactor * term1234
    return jnp.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), near, far)


def dirichlet_grad(x, alpha, total):
    """The reparameterised gradient of a Beta(alpha, total - alpha) draw ``x`` in alpha,
    divided by ``1 - x`` (torch's ``dirichlet_grad_one``): asymptotic expansions near 0, near 1
    and for large parameters, else a rational correction of an analytic approximation.

    >>> from jaxgrad._core.jax_setup import x64_scope
    >>> from jaxgrad._ops.gamma_grads import dirichlet_grad
    >>> with x64_scope():
    ...     round(float(dirichlet_grad(0.3, 1.0, 2.0)), 4)
    0.516
    """
    dtype = jnp.result_type(x, alpha, total)
    beta = total - alpha
    boundary = total * x * (1 - x)
    small = _beta_grad_alpha_small(x, alpha, beta)
    large = -_beta_grad_beta_small(1 - x, beta, alpha)
    x64, a64, t64 = (jnp.asarray(v, jnp.float64) for v in (x, alpha, total))
    b64 = t64 - a64
    mid = _beta_grad_alpha_mid(x64, a64, b64)
    u = jnp.log(x64)
    a = jnp.log(a64) - u
    b = jnp.log(t64) - a
    p = q = jnp.zeros_like(x64)
    for i, pu in enumerate((1.0, u, u * u)):
        for j, pa in enumerate((1.0, a, a * a)):
            c, d = _DIRICHLET_C[0][i][j], _DIRICHLET_C[1][i][j]
            p = p + pu * pa * (c[0] + b * (c[1] + b * (c[2] + b * c[3])))
            q = q + pu * pa * (d[0] + b * (d[1] + b * (d[2] + b * d[3])))
    approx = x64 * (digamma(t64) - digamma(a64)) / b64
    rational = p / q * approx
    result = jnp.where(
        (x <= 0.5) & (boundary < 2.5), small.astype(jnp.float64),
        jnp.where((x >= 0.5) & (boundary < 0.75), large.astype(jnp.float64),
                  jnp.where((alpha > 6) & (beta > 6), mid, rational)))
    return result.astype(dtype)


# torch's c[2][3][3][4]: numerator (0) and denominator (1) coefficients by powers of u, a, b
_DIRICHLET_C = (
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))),
)


def _standard_gamma_formula(grad, self, result):
    return grad * standard_gamma_grad(self, result)


def _gamma_grad_not_implemented(grad):
    raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")


def _not_implemented(op):
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{op} is not implemented")
    return formula


def _drawn(self, values):
    return values.astype(self.dtype)


STANDARD_GAMMA = Op("_standard_gamma", "StandardGammaBackward0", _drawn, aux=("values",),
                    grads={"self": _standard_gamma_formula})
STANDARD_GAMMA_GRAD = Op("_standard_gamma_grad", "StandardGammaGradBackward0",
                         lambda self, output: standard_gamma_grad(self, output),
                         inputs=("self", "output"),
                         grads={"self": _gamma_grad_not_implemented,
                                "output": _gamma_grad_not_implemented})
SAMPLE_DIRICHLET = Op("_sample_dirichlet", "NotImplemented", _drawn, aux=("values",),
                      grads={"self": _not_implemented("_sample_dirichlet")})
DIRICHLET_GRAD = Op("_dirichlet_grad", "NotImplemented", dirichlet_grad,
                    inputs=("x", "alpha", "total"),
                    grads={k: _not_implemented("_dirichlet_grad") for k in ("x", "alpha", "total")})
