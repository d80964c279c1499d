"""``torch.special``'s ops and the top-level ones torch shares with it (``i0``, ``sinc``,
``logit``, ``polygamma``, ``mvlgamma``): one row each, with torch's schema, node and the
formulas of derivatives.yaml. Rows torch has only in ``torch.special`` (``special_entr``) ask
for the ``out`` variant alone: their function lives in ``jaxgrad.special``, not at the top.

Where XLA's float32 kernel is less accurate than torch's (zeta, which ATen computes in double),
the forward computes in float64 and rounds once, as ``_lgamma`` does.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

from ._table import ELEMENTWISE, Op, sgn
from ._table import example_doc as _doc
from .elementwise import _derivative_not_implemented, _digamma, _lgamma, _trigamma
from .half_precision import in_float32

_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT1_2 = math.sqrt(0.5)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _unary(schema: str, node: str, forward, formula, doc: str, call: str, output: str,
           variants: str = "out", inplace: str = "", grad_nodes: dict | None = None) -> Op:
    """An elementwise row of one tensor; integral inputs compute in the default float dtype."""
    return Op(schema, node, in_float32(forward), promote="float", grads={"self": formula},
              variants=variants, inplace=inplace, tangent=ELEMENTWISE, grad_nodes=grad_nodes,
              doc=_doc(doc, call, output))


def _in_float64(fn):
    """``fn`` computed in float64 and rounded once to the operands' dtype (ATen's ``acc_type``
    for float on CPU is double)."""

    def forward(*arrays):
        dtype = jnp.result_type(*arrays)
        if dtype == jnp.float64:
            return fn(*arrays)
        return fn(*(jnp.asarray(a, jnp.float64) for a in arrays)).astype(dtype)

    return forward


# --- modified Bessel functions of the first kind -----------------------------------------------

def _tiny_limit(grad, self, result, lead, shift):
    """``grad * (lead(x) - result * shift(x))``, with the limit 1/2 where ``|x| <= eps`` (torch's
    i1_backward/i1e_backward: the formula is 0/0 there)."""
    eps = jnp.finfo(self.dtype).eps
    tiny = jnp.abs(self) <= eps
    safe = jnp.where(tiny, jnp.asarray(eps, self.dtype), self)
    slope = lead(safe) - result * shift(safe)
    return grad * jnp.where(tiny, jnp.asarray(0.5, self.dtype), slope)


I0 = _unary("i0(Tensor self) -> Tensor", "I0Backward0", jss.i0,
            lambda grad, self: grad * jss.i1(self),
            "The modified Bessel function of the first kind of order 0, of each element.",
            "jaxgrad.i0(jaxgrad.tensor([0.0, 1.0]))", "tensor([1.0000, 1.2661])",
            variants="function method out", inplace="function method",
            grad_nodes={"self": "MulBackward0"})
SPECIAL_I0E = _unary(
    "special_i0e(Tensor self) -> Tensor", "SpecialI0EBackward0", jss.i0e,
    lambda grad, self, result: grad * (jss.i1e(self) - sgn(self) * result),
    "The exponentially scaled modified Bessel function of order 0: ``exp(-|x|) * i0(x)``.",
    "jaxgrad.special.i0e(jaxgrad.tensor([0.0, 1.0]))", "tensor([1.0000, 0.4658])",
                  grad_nodes={"self": "MulBackward0"})
SPECIAL_I1 = _unary(
    "special_i1(Tensor self) -> Tensor", "SpecialI1Backward0", jss.i1,
    lambda grad, self, result: _tiny_limit(grad, self, result, jss.i0, jnp.reciprocal),
    "The modified Bessel function of the first kind of order 1, of each element.",
    "jaxgrad.special.i1(jaxgrad.tensor([0.0, 1.0]))", "tensor([0.0000, 0.5652])",
                 grad_nodes={"self": "MulBackward0"})
SPECIAL_I1E = _unary(
    "special_i1e(Tensor self) -> Tensor", "SpecialI1EBackward0", jss.i1e,
    lambda grad, self, result: _tiny_limit(grad, self, result, jss.i0e,
                                           lambda x: sgn(x) + jnp.reciprocal(x)),
    "The exponentially scaled modified Bessel function of order 1: ``exp(-|x|) * i1(x)``.",
    "jaxgrad.special.i1e(jaxgrad.tensor([0.0, 1.0]))", "tensor([0.0000, 0.2079])",
                  grad_nodes={"self": "MulBackward0"})


# --- error function, normal distribution, entropy ------------------------------------------------

def _entr(x):
    """``-x * log(x)``: 0 at 0, -inf below (NaN kept), as ATen's kernel."""
    safe = jnp.where(x > 0, x, jnp.ones_like(x))
    return jnp.where(jnp.isnan(x), x, jnp.where(
        x > 0, -safe * jnp.log(safe), jnp.where(x == 0, jnp.zeros_like(x),
                                                 jnp.full_like(x, -jnp.inf))))


def _log_ndtr(x):
    """ATen's calc_log_ndtr: ``log(erfcx(-t) / 2) - t * t`` below -1, ``log1p(-erfc(t) / 2)``
    above (t = x / sqrt(2))."""
    t = x * jnp.asarray(_SQRT1_2, x.dtype)
    low = jnp.log(jss.erfcx(-t) / 2) - t * t
    high = jnp.log1p(-jss.erfc(t) / 2)
    return jnp.where(x < -1, low, high)


SPECIAL_ENTR = _unary(
    "special_entr(Tensor self) -> Tensor", "SpecialEntrBackward0", _entr,
    lambda grad, self: grad * -(1 + jnp.log(self)),
    "The elementwise entropy ``-x * log(x)`` (0 at 0, -inf for negative x).",
    "jaxgrad.special.entr(jaxgrad.tensor([0.0, 0.5]))", "tensor([0.0000, 0.3466])",
                   grad_nodes={"self": "MulBackward0"})
SPECIAL_ERFCX = _unary(
    "special_erfcx(Tensor self) -> Tensor", "SpecialErfcxBackward0", jss.erfcx,
    lambda grad, self, result: (2.0 * self * result - _TWO_OVER_SQRT_PI) * grad,
    "The scaled complementary error function ``exp(x ** 2) * erfc(x)``.",
    "jaxgrad.special.erfcx(jaxgrad.tensor([0.0, 1.0]))", "tensor([1.0000, 0.4276])",
                    grad_nodes={"self": "MulBackward0"})
SPECIAL_NDTRI = _unary(
    "special_ndtri(Tensor self) -> Tensor", "SpecialNdtriBackward0", jss.ndtri,
    lambda grad, result: grad * _SQRT_2PI * jnp.exp(result * result / 2),
    "The inverse of the standard normal distribution function (the probit).",
    "jaxgrad.special.ndtri(jaxgrad.tensor([0.5, 0.975]))", "tensor([0.0000, 1.9600])",
                    grad_nodes={"self": "MulBackward0"})
SPECIAL_LOG_NDTR = _unary(
    "special_log_ndtr(Tensor self) -> Tensor", "SpecialLogNdtrBackward0", _log_ndtr,
    lambda grad, self, result: grad / _SQRT_2PI * jnp.exp(-(result + self * self / 2)),
    "The log of the standard normal distribution function, accurate in the lower tail.",
    "jaxgrad.special.log_ndtr(jaxgrad.tensor([0.0, -10.0]))", "tensor([ -0.6931, -53.2312])")


# --- sinc, logit -------------------------------------------------------------------------------

def _sinc(x):
    """ATen's sinc: 1 at 0, else ``sin(pi x) / (pi x)``."""
    product = jnp.asarray(math.pi, x.dtype) * x
    safe = jnp.where(x == 0, jnp.ones_like(product), product)
    return jnp.where(x == 0, jnp.ones_like(x), jnp.sin(safe) / safe)


def _sinc_grad(grad, self):
    """torch's sinc_backward: ``(pi x cos(pi x) - sin(pi x)) / (pi x^2)``, 0 at 0."""
    self_pi = self * math.pi
    self_squared_pi = self * self * math.pi
    out = grad * jnp.conj((self_pi * jnp.cos(self_pi) - jnp.sin(self_pi)) / self_squared_pi)
    return jnp.where(self_squared_pi == 0, jnp.zeros_like(out), out)


SINC = _unary("sinc(Tensor self) -> Tensor", "SincBackward0", _sinc, _sinc_grad,
              "The normalized sinc ``sin(pi x) / (pi x)`` of each element (1 at 0).",
              "jaxgrad.sinc(jaxgrad.tensor([0.0, 0.5]))", "tensor([1.0000, 0.6366])",
              variants="function method out", inplace="function method",
              grad_nodes={"self": "WhereBackward0"})


def _logit(x, eps):
    if eps is not None:
        x = jnp.clip(x, jnp.asarray(eps, x.dtype), jnp.asarray(1 - eps, x.dtype))
    return jnp.log(x / (1 - x))


def _logit_grad(grad, self, eps):
    """torch's (infinitely differentiable) logit backward: ``grad / (x (1 - x))`` inside
    [eps, 1 - eps] (or [0, 1]), 0 outside it with ``eps`` (NaN without)."""
    lo = 0.0 if eps is None else eps
    inside = (self >= jnp.asarray(lo, self.dtype)) & (self <= jnp.asarray(1.0 - lo, self.dtype))
    outside = jnp.zeros((), grad.dtype) if eps is not None else jnp.full((), jnp.nan, grad.dtype)
    return jnp.where(inside, grad / (self * (1.0 - self)), outside)


LOGIT = Op("logit(Tensor self, float? eps=None) -> Tensor", "LogitBackward0", in_float32(_logit),
           promote="float", grads={"self": _logit_grad}, variants="function method out",
           inplace="function method", tangent=ELEMENTWISE,
           doc=_doc("The log-odds ``log(p / (1 - p))`` of each element, with ``p`` clamped to "
                    "[eps, 1 - eps] when ``eps`` is given.",
                    "jaxgrad.logit(jaxgrad.tensor([0.25, 0.5]))", "tensor([-1.0986,  0.0000])"),
           grad_nodes={"self": "WhereBackward0"})


# --- zeta, polygamma, multivariate log-gamma --------------------------------------------------

def _zeta64(x, q):
    """The Hurwitz zeta function as ATen's (Cephes') ``zeta``: inf at x == 1, NaN below, inf
    at the poles q = 0, -1, -2, ..."""
    value = jss.zeta(x, q)
    pole = (q <= 0) & (q == jnp.floor(q)) & (x > 1)
    return jnp.where(pole, jnp.inf, value)


_zeta = _in_float64(_zeta64)


def _zeta_forward(x, q):
    return _zeta(x, jnp.asarray(q, jnp.result_type(x)))


def _zeta_other_grad(grad, self, other):
    return grad * -self * _zeta(self + 1.0, other)


SPECIAL_ZETA = Op("special_zeta(Tensor self, Tensor other) -> Tensor", "SpecialZetaBackward0",
                  _zeta_forward, promote="float", forward_ad=False,
                  grads={"self": _derivative_not_implemented("zeta"),
                         "other": _zeta_other_grad}, grad_nodes={"other": "MulBackward0"})
SPECIAL_ZETA_SCALAR_SELF = Op(
    "special_zeta", "SpecialZetaBackward1", lambda other, self: _zeta_forward(
        jnp.asarray(self, other.dtype), other), inputs=("other",), aux=("self",), promote="float",
    forward_ad=False, grads={"other": lambda grad, self, other: grad * -self * _zeta(
        jnp.asarray(self, other.dtype) + 1.0, other)}, grad_nodes={"other": "MulBackward0"})
SPECIAL_ZETA_SCALAR_OTHER = Op(
    "special_zeta", "SpecialZetaBackward2", lambda self, other: _zeta_forward(
        self, jnp.asarray(other, self.dtype)), inputs=("self",), aux=("other",), promote="float",
    forward_ad=False, grads={"self": _derivative_not_implemented("zeta")})


def _polygamma_value(n: int, x):
    if n == 0:
        return _digamma(x)
    if n == 1:
        return _trigamma(x)
    factor = (1.0 if n % 2 else -1.0) * math.exp(math.lgamma(n + 1.0))
    return (factor * _zeta(jnp.full_like(x, n + 1.0), x)).astype(x.dtype)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _polygamma(n: int, x):
    """The n-th derivative of digamma (ATen's: digamma, trigamma, then ``(-1)^(n+1) n!
    zeta(n + 1, x)``); JAX differentiates it as ``polygamma(n + 1, x)``, to any order."""
    return _polygamma_value(n, x)


@_polygamma.defjvp
def _polygamma_jvp(n, primals, tangents):
    (x,), (t,) = primals, tangents
    return _polygamma(n, x), _polygamma(n + 1, x) * t


def _polygamma_forward(x, n):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _polygamma(n, x)


def _polygamma_grad(grad, self, n):
    return grad * _polygamma(n + 1, self)


POLYGAMMA = Op("polygamma(int n, Tensor self) -> Tensor", "PolygammaBackward0",
               in_float32(_polygamma_forward), promote="float",
               grads={"self": _polygamma_grad}, variants="function out", tangent=ELEMENTWISE,
               doc=_doc("The ``n``-th derivative of the digamma function of each element.",
                        "jaxgrad.polygamma(1, jaxgrad.tensor([1.0, 2.0]))",
                        "tensor([1.6449, 0.6449])"))
# ``Tensor.polygamma_(n)``: self first (PolygammaBackward1)
POLYGAMMA_INPLACE = Op("polygamma(Tensor self, int n) -> Tensor", "PolygammaBackward1",
                       in_float32(_polygamma_forward), promote="float",
                       grads={"self": _polygamma_grad}, inplace="method", tangent=ELEMENTWISE,
                       doc=_doc("``polygamma(n, self)``, in place.",
                                "jaxgrad.tensor([1.0, 2.0]).polygamma_(1)",
                                "tensor([1.6449, 0.6449])"))


def _mvlgamma_args(x, p):
    """torch's ``arange(-p / 2 + 0.5, 0.5, 0.5) + x.unsqueeze(-1)``."""
    offsets = jnp.arange(p, dtype=x.dtype) * jnp.asarray(0.5, x.dtype) + jnp.asarray(
        -p / 2 + 0.5, x.dtype)
    return x[..., None] + offsets


def _mvlgamma(x, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    constant = p * (p - 1) * math.log(math.pi) / 4
    return jnp.sum(_lgamma(_mvlgamma_args(x, p)), axis=-1) + jnp.asarray(constant, x.dtype)


MVLGAMMA = Op("mvlgamma(Tensor self, int p) -> Tensor", "MvlgammaBackward0", in_float32(_mvlgamma),
              promote="float", variants="function method out", inplace="method",
              tangent=ELEMENTWISE,
              grads={"self": lambda grad, self, p: grad * jnp.sum(
                  _digamma(_mvlgamma_args(self, p)), axis=-1)},
              doc=_doc("The multivariate log-gamma function of dimension ``p`` of each element.",
                       "jaxgrad.mvlgamma(jaxgrad.tensor([2.5, 3.0]), 2)",
                       "tensor([0.8570, 1.5502])"), grad_nodes={"self": "MulBackward0"})


# --- xlog1py -----------------------------------------------------------------------------------

def _xlog1py(x, y):
    """``x * log1p(y)``: NaN where y is NaN, else 0 where x == 0 (ATen's order)."""
    d = jnp.result_type(x, y)
    x, y = jnp.asarray(x, d), jnp.asarray(y, d)
    return jnp.where(jnp.isnan(y), y, jnp.where(x == 0, jnp.zeros((), d), x * jnp.log1p(y)))


def _xlog1py_self_grad(grad, self, other):
    return jnp.where((self == 0) & (other <= -1), jnp.zeros((), grad.dtype),
                     _xlog1py(grad, other))


SPECIAL_XLOG1PY = Op(
    "special_xlog1py(Tensor self, Tensor other) -> Tensor", "SpecialXlog1PyBackward0", _xlog1py,
    promote="float", tangent=ELEMENTWISE,
    grads={"self": _xlog1py_self_grad,
           "other": lambda grad, self, other: grad * self / (other + 1)},
                      grad_nodes={"self": "MaskedFillBackward0", "other": "DivBackward0"})
SPECIAL_XLOG1PY_SCALAR_SELF = Op(
    "special_xlog1py", "SpecialXlog1PyBackward1", lambda other, self: _xlog1py(self, other),
    inputs=("other",), aux=("self",), promote="float", tangent=ELEMENTWISE,
    grads={"other": lambda grad, self, other: grad * self / (other + 1)},
                                  grad_nodes={"other": "DivBackward0"})
SPECIAL_XLOG1PY_SCALAR_OTHER = Op(
    "special_xlog1py", "SpecialXlog1PyBackward2", _xlog1py, inputs=("self",), aux=("other",),
    promote="float", tangent=ELEMENTWISE, grads={"self": _xlog1py_self_grad})
