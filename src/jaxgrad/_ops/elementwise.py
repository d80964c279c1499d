"""Elementwise ops. What each formula names is what torch saves (derivatives.yaml):
add saves nothing, mul saves the other input, exp/tanh/sigmoid/relu/sqrt save their result.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._table import Op, identity_grad
from ._table import example_doc as _doc

# --- arithmetic ---------------------------------------------------------------------------

ADD = Op("add", "AddBackward0", jnp.add, inputs=("self", "other"), promote="common",
         grads={"self": identity_grad, "other": identity_grad})
# Scalar factors (alpha, value, weight, a scalar ``other``) are ``aux`` arguments: traced, so a
# new value (a scheduled learning rate) reuses the compiled kernel, and saved like torch's Scalars
ADD_ALPHA = Op("add", "AddBackward0", lambda x, y, alpha: x + alpha * y,
               inputs=("self", "other"), aux=("alpha",), saves=("alpha",), promote="common",
               grads={"self": identity_grad, "other": lambda grad, alpha: grad * alpha})
SUB = Op("sub", "SubBackward0", jnp.subtract, inputs=("self", "other"), promote="common",
         grads={"self": identity_grad, "other": lambda grad: -grad})
SUB_ALPHA = Op("sub", "SubBackward0", lambda x, y, alpha: x - alpha * y,
               inputs=("self", "other"), aux=("alpha",), saves=("alpha",), promote="common",
               grads={"self": identity_grad, "other": lambda grad, alpha: -grad * alpha})
RSUB = Op("rsub", "RsubBackward1", lambda x, other, alpha: other - alpha * x,
          aux=("other", "alpha"), saves=("alpha",), promote="common",
          grads={"self": lambda grad, alpha: -grad * alpha})
MUL = Op("mul.Tensor(Tensor self, Tensor other) -> Tensor", "MulBackward0", jnp.multiply,
         promote="common", numbers_as_tensors=True, inplace="method",
         grads={"self": lambda grad, other: grad * other,
                "other": lambda grad, self: grad * self})
DIV = Op("div.Tensor(Tensor self, Tensor other) -> Tensor", "DivBackward0", jnp.true_divide,
         promote="float", numbers_as_tensors=True, inplace="method",
         grads={"self": lambda grad, other: grad / other,
                "other": lambda grad, self, other: -grad * self / (other * other)})
NEG = Op("neg", "NegBackward0", jnp.negative, grads={"self": lambda grad: -grad})


# A Scalar exponent is a traced operand: a new value never compiles a new kernel. The exponents
# torch's pow kernel computes in closed form (x*x, x*x*x, sqrt, rsqrt, 1/x, 1/(x*x), ones, a copy)
# are also given as the static ``_fast`` (type, value), so they keep XLA's exact special cases, as
# is every exponent of an integral or complex tensor (torch has separate kernels for those; a
# traced integer power would also lose bits). A leading underscore keeps it out of ``_saved_*``.
POW_FAST_EXPONENTS = frozenset({0, 1, 2, 3, -1, -2, 0.5, -0.5})


def _pow_scalar_fwd(x, exponent, _fast):
    return jnp.power(x, exponent if _fast is None else _fast[1])


def _pow_scalar_grad(grad, self, exponent, _fast):
    if _fast is not None:
        e = _fast[1]
        return jnp.zeros_like(grad) if e == 0 else grad * e * jnp.power(self, e - 1)
    return jnp.where(exponent == 0, jnp.zeros_like(grad),
                     grad * exponent * jnp.power(self, exponent - 1))


def _pow_tensor_exponent_grad(grad, self, exponent, result):
    # torch masks log(0) where the exponent is >= 0 so that 0 ** positive has zero grad.
    safe = jnp.where((self == 0) & (exponent >= 0), jnp.zeros_like(result), result * jnp.log(self))
    return grad * safe


def _pow_scalar_base_grad(grad, result, base):
    # a zero base has no gradient (torch's pow_backward_exponent); log(1) keeps that branch finite
    safe_base = jnp.where(base == 0, jnp.ones_like(result), base.astype(result.dtype))
    return jnp.where(base == 0, jnp.zeros_like(grad), grad * result * jnp.log(safe_base))


POW = Op("pow", "PowBackward0", _pow_scalar_fwd, aux=("exponent",), promote="common",
         grads={"self": _pow_scalar_grad})
POW_TENSOR = Op("pow", "PowBackward1", jnp.power, inputs=("self", "exponent"), promote="common",
                grads={"self": lambda grad, self, exponent: jnp.where(
                    exponent == 0, 0.0, grad * exponent * jnp.power(self, exponent - 1)),
                    "exponent": _pow_tensor_exponent_grad})
POW_SCALAR_BASE = Op("pow", "PowBackward2", lambda exponent, base: jnp.power(base, exponent),
                     inputs=("exponent",), aux=("base",), promote="common",
                     grads={"exponent": _pow_scalar_base_grad})

# --- unary math --------------------------------------------------------------------------------
# torch has these as functions and methods, each with an in-place ``exp_`` function and method

def _unary(schema: str, node: str, forward, formula, doc: str, call: str, output: str,
           promote: str | None = "float", variants: str = "function method out") -> Op:
    return Op(schema, node, forward, promote=promote, grads={"self": formula},
              variants=variants, inplace="function method", doc=_doc(doc, call, output))


ABS = _unary("abs(Tensor self) -> Tensor", "AbsBackward0", jnp.abs,
             lambda grad, self: grad * jnp.sign(self), "The absolute value of each element.",
             "jaxgrad.abs(jaxgrad.tensor([-1.5, 2.0]))", "tensor([1.5000, 2.0000])", promote=None)
EXP = _unary("exp(Tensor self) -> Tensor", "ExpBackward0", jnp.exp,
             lambda grad, result: grad * result, "The exponential of each element.",
             "jaxgrad.exp(jaxgrad.tensor([0.0, 1.0]))", "tensor([1.0000, 2.7183])")
LOG = _unary("log(Tensor self) -> Tensor", "LogBackward0", jnp.log,
             lambda grad, self: grad / self, "The natural logarithm of each element.",
             "jaxgrad.log(jaxgrad.tensor([1.0, 4.0]))", "tensor([0.0000, 1.3863])")
SQRT = _unary("sqrt(Tensor self) -> Tensor", "SqrtBackward0", jnp.sqrt,
              lambda grad, result: grad / (2 * result), "The square root of each element.",
              "jaxgrad.sqrt(jaxgrad.tensor([4.0, 2.0]))", "tensor([2.0000, 1.4142])")
SIN = _unary("sin(Tensor self) -> Tensor", "SinBackward0", jnp.sin,
             lambda grad, self: grad * jnp.cos(self), "The sine of each element.",
             "jaxgrad.sin(jaxgrad.tensor([0.0, 1.0]))", "tensor([0.0000, 0.8415])")
COS = _unary("cos(Tensor self) -> Tensor", "CosBackward0", jnp.cos,
             lambda grad, self: -grad * jnp.sin(self), "The cosine of each element.",
             "jaxgrad.cos(jaxgrad.tensor([0.0, 1.0]))", "tensor([1.0000, 0.5403])")
TANH = _unary("tanh(Tensor self) -> Tensor", "TanhBackward0", jnp.tanh,
              lambda grad, result: grad * (1 - result * result),
              "The hyperbolic tangent of each element.",
              "jaxgrad.tanh(jaxgrad.tensor([0.0, 1.0]))", "tensor([0.0000, 0.7616])")
SIGMOID = _unary("sigmoid(Tensor self) -> Tensor", "SigmoidBackward0", jax.nn.sigmoid,
                 lambda grad, result: grad * result * (1 - result),
                 "The logistic sigmoid ``1 / (1 + exp(-x))`` of each element.",
                 "jaxgrad.sigmoid(jaxgrad.tensor([0.0, 2.0]))", "tensor([0.5000, 0.8808])")
RELU = _unary("relu(Tensor self) -> Tensor", "ReluBackward0",
              lambda x: jnp.maximum(x, jnp.zeros((), x.dtype)),
              lambda grad, result: jnp.where(result <= 0, jnp.zeros_like(grad), grad),
              "``max(x, 0)`` of each element.", "jaxgrad.relu(jaxgrad.tensor([-1.0, 2.0]))",
              "tensor([0., 2.])", promote=None, variants="function method")  # torch: no out=
LOG10 = _unary("log10(Tensor self) -> Tensor", "Log10Backward0", jnp.log10,
               lambda grad, self: grad / (self * 2.302585092994046),
               "The base-10 logarithm of each element.",
               "jaxgrad.log10(jaxgrad.tensor([1.0, 100.0]))", "tensor([0., 2.])")
LOG2 = _unary("log2(Tensor self) -> Tensor", "Log2Backward0", jnp.log2,
              lambda grad, self: grad / (self * 0.6931471805599453),
              "The base-2 logarithm of each element.",
              "jaxgrad.log2(jaxgrad.tensor([1.0, 8.0]))", "tensor([0., 3.])")
LOG1P = _unary("log1p(Tensor self) -> Tensor", "Log1PBackward0", jnp.log1p,
               lambda grad, self: grad / (self + 1), "``log(1 + x)``, accurate for small x.",
               "jaxgrad.log1p(jaxgrad.tensor([0.0, 1e-8]))", "tensor([0.0000e+00, 1.0000e-08])")
EXPM1 = _unary("expm1(Tensor self) -> Tensor", "Expm1Backward0", jnp.expm1,
               lambda grad, result: grad * (result + 1), "``exp(x) - 1``, accurate for small x.",
               "jaxgrad.expm1(jaxgrad.tensor([0.0, 1e-8]))", "tensor([0.0000e+00, 1.0000e-08])")
RECIPROCAL = _unary("reciprocal(Tensor self) -> Tensor", "ReciprocalBackward0", jnp.reciprocal,
                    lambda grad, result: -grad * result * result, "``1 / x`` of each element.",
                    "jaxgrad.reciprocal(jaxgrad.tensor([2.0, 4.0]))", "tensor([0.5000, 0.2500])")


def _clamp_fwd(x, min, max):
    if min is not None:
        x = jnp.maximum(x, jnp.asarray(min, x.dtype))
    if max is not None:
        x = jnp.minimum(x, jnp.asarray(max, x.dtype))
    return x


def _clamp_grad(grad, self, min, max):
    keep = jnp.ones(self.shape, bool)
    if min is not None:
        keep = keep & (self >= min)
    if max is not None:
        keep = keep & (self <= max)
    return jnp.where(keep, grad, jnp.zeros_like(grad))


# Scalar bounds are traced operands (None, "no bound", is part of the kernel's structure)
CLAMP = Op("clamp", "ClampBackward1", _clamp_fwd, aux=("min", "max"), promote="common",
           grads={"self": _clamp_grad})


def _clamp_min_grad(grad, self, min, max):
    below = self < min
    if max is not None:
        below = below & (min < max)
    return jnp.where(below, grad, jnp.zeros_like(grad))


def _clamp_max_grad(grad, self, min, max):
    above = self > max
    if min is not None:
        above = above | (max < min)
    return jnp.where(above, grad, jnp.zeros_like(grad))


CLAMP_TENSOR = Op("clamp", "ClampBackward0", _clamp_fwd, inputs=("self", "min", "max"),
                  promote="common",
                  grads={"self": _clamp_grad, "min": _clamp_min_grad, "max": _clamp_max_grad})

FILL = Op("fill", "FillBackward2", lambda x, value: jnp.full_like(x, value), aux=("value",),
          grads={"self": lambda grad: jnp.zeros_like(grad)})
FILL_TENSOR = Op("fill", "FillBackward3", lambda x, value: jnp.full_like(x, value),
                 inputs=("self", "value"),
                 grads={"self": lambda grad: jnp.zeros_like(grad),
                        "value": lambda grad: grad.sum()})
ZERO = Op("zero(Tensor self) -> Tensor", "ZeroBackward0", jnp.zeros_like,
          grads={"self": lambda grad: jnp.zeros_like(grad)}, inplace="function method",
          doc=_doc("Fill with zeros, in place.", "jaxgrad.ones(2).zero_()", "tensor([0., 0.])"))
COPY = Op("copy", "CopyBackwards",
          lambda x, src: jnp.broadcast_to(jnp.asarray(src, x.dtype), x.shape),
          inputs=("self", "src"),
          grads={"self": lambda grad: jnp.zeros_like(grad), "src": identity_grad})

def lerp(x, end, weight):
    """ATen's lerp: exact at both ends (``|weight| < 0.5`` counts from ``x``, else from ``end``)."""
    weight = jnp.asarray(weight, x.dtype)
    return jnp.where(jnp.abs(weight) < 0.5, x + weight * (end - x),
                     end - (end - x) * (1 - weight))


# addcmul/addcdiv/lerp: ATen's kernels' evaluation order (``value * t1 * t2``, ``value * t1 / t2``)
ADDCMUL = Op("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
             "AddcmulBackward0", lambda x, t1, t2, value: x + value * t1 * t2, saves=("value",),
             promote="common", variants="function method out", inplace="method",
             doc=_doc("``input + value * tensor1 * tensor2`` (AddcmulBackward0).",
                      "jaxgrad.addcmul(jaxgrad.ones(2), jaxgrad.tensor([1.0, 2.0]), "
                      "jaxgrad.tensor([3.0, 4.0]), value=0.5)", "tensor([2.5000, 5.0000])"),
             grads={"self": identity_grad,
                    "tensor1": lambda grad, tensor2, value: grad * (tensor2 * value),
                    "tensor2": lambda grad, tensor1, value: grad * (tensor1 * value)})
ADDCDIV = Op("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
             "AddcdivBackward0", lambda x, t1, t2, value: x + value * t1 / t2, saves=("value",),
             promote="common", variants="function method out", inplace="method",
             doc=_doc("``input + value * tensor1 / tensor2`` (AddcdivBackward0).",
                      "jaxgrad.addcdiv(jaxgrad.ones(2), jaxgrad.tensor([1.0, 2.0]), "
                      "jaxgrad.tensor([4.0, 4.0]))", "tensor([1.2500, 1.5000])"),
             grads={"self": identity_grad,
                    "tensor1": lambda grad, tensor2, value: grad * (value / tensor2),
                    "tensor2": lambda grad, tensor1, tensor2, value:
                        -grad * (value * tensor1 / (tensor2 * tensor2))})
LERP = Op("lerp", "LerpBackward0", lerp, inputs=("self", "end"), aux=("weight",),
          saves=("weight",), promote="common",
          grads={"self": lambda grad, weight: grad * (1 - weight),
                 "end": lambda grad, weight: grad * weight})
LERP_TENSOR = Op("lerp", "LerpBackward1", lerp, inputs=("self", "end", "weight"),
                 promote="common",
                 grads={"self": lambda grad, weight: grad * (1 - weight),
                        "end": lambda grad, weight: grad * weight,
                        "weight": lambda grad, self, end: grad * (end - self)})


# masked_fill: the mask is saved, never differentiated; a number value is a traced operand
MASKED_FILL = Op("masked_fill", "MaskedFillBackward0",
                 lambda x, mask, value: jnp.where(mask, jnp.asarray(value, x.dtype), x),
                 aux=("mask", "value"),
                 grads={"self": lambda grad, mask: jnp.where(mask, jnp.zeros_like(grad), grad)})
MASKED_FILL_TENSOR = Op(
    "masked_fill", "MaskedFillBackward1",
    lambda x, value, mask: jnp.where(mask, value.astype(x.dtype), x),
    inputs=("self", "value"), aux=("mask",),
    grads={"self": lambda grad, mask: jnp.where(mask, jnp.zeros_like(grad), grad),
           "value": lambda grad, mask: jnp.where(mask, grad, jnp.zeros_like(grad)).sum()})

WHERE = Op("where", "WhereBackward0", lambda x, y, condition: jnp.where(condition, x, y),
           inputs=("self", "other"), aux=("condition",), promote="common",
           grads={"self": lambda grad, condition: jnp.where(condition, grad, 0),
                  "other": lambda grad, condition: jnp.where(condition, 0, grad)})


def _split_ties(grad, self, other, drop):
    """derivatives.yaml's maximum/minimum: ties get half the gradient, ``drop`` gets none."""
    half = jnp.where(self == other, grad / 2, grad)
    return jnp.where(drop, jnp.zeros_like(half), half)


MAXIMUM = Op(
    "maximum(Tensor self, Tensor other) -> Tensor", "MaximumBackward0", jnp.maximum,
    promote="common", variants="function method out",
    doc=_doc("Elementwise maximum (NaN propagates; ties split the gradient, as in torch).",
             "jaxgrad.maximum(jaxgrad.tensor([1.0, 5.0]), jaxgrad.tensor([3.0, 2.0]))",
             "tensor([3., 5.])"),
    grads={"self": lambda grad, self, other: _split_ties(grad, self, other, self < other),
           "other": lambda grad, self, other: _split_ties(grad, self, other, self > other)})
MINIMUM = Op(
    "minimum(Tensor self, Tensor other) -> Tensor", "MinimumBackward0", jnp.minimum,
    promote="common", variants="function method out",
    doc=_doc("Elementwise minimum (NaN propagates; ties split the gradient, as in torch).",
             "jaxgrad.minimum(jaxgrad.tensor([1.0, 5.0]), jaxgrad.tensor([3.0, 2.0]))",
             "tensor([1., 2.])"),
    grads={"self": lambda grad, self, other: _split_ties(grad, self, other, self > other),
           "other": lambda grad, self, other: _split_ties(grad, self, other, self < other)})

# --- non-differentiable -------------------------------------------------------------------------

def _comparison(name: str, forward, symbol: str) -> Op:
    return Op(f"{name}.Tensor(Tensor self, Tensor other) -> Tensor", None, forward,
              promote="common", numbers_as_tensors=True, variants="function method out",
              doc=_doc(f"Elementwise ``input {symbol} other`` as a bool tensor (a number "
                       "broadcasts).", f"jaxgrad.{name}(jaxgrad.tensor([1.0, 2.0]), 2)",
                       {"eq": "tensor([False,  True])", "ne": "tensor([ True, False])",
                        "lt": "tensor([ True, False])", "le": "tensor([True, True])",
                        "gt": "tensor([False, False])", "ge": "tensor([False,  True])"}[name]))


EQ = _comparison("eq", jnp.equal, "==")
NE = _comparison("ne", jnp.not_equal, "!=")
LT = _comparison("lt", jnp.less, "<")
LE = _comparison("le", jnp.less_equal, "<=")
GT = _comparison("gt", jnp.greater, ">")
GE = _comparison("ge", jnp.greater_equal, ">=")
LOGICAL_NOT = Op("logical_not(Tensor self) -> Tensor", None, jnp.logical_not,
                 variants="function method out",
                 doc=_doc("True where the element is zero.",
                          "jaxgrad.logical_not(jaxgrad.tensor([0.0, 2.0]))",
                          "tensor([ True, False])"))
SIGN = Op("sign(Tensor self) -> Tensor", "SignBackward0", jnp.sign,
          grads={"self": lambda grad: jnp.zeros_like(grad)}, variants="function method out",
          inplace="method", doc=_doc("-1, 0 or 1: the sign of each element.",
                                     "jaxgrad.sign(jaxgrad.tensor([-2.0, 0.0, 3.0]))",
                                     "tensor([-1.,  0.,  1.])"))
CAST = Op("to", "ToCopyBackward0", lambda x, dtype: x.astype(dtype),
          grads={"self": identity_grad})
TO_DEVICE = Op("to", "ToCopyBackward0", lambda x, device: jax.device_put(x, device),
               grads={"self": identity_grad})
