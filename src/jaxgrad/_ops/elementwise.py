"""Elementwise ops. What each formula names is what torch saves (derivatives.yaml):
add saves nothing, mul saves the other input, exp/tanh/sigmoid/relu/sqrt save their result.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._table import Op, identity_grad

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
MUL = Op("mul", "MulBackward0", jnp.multiply, inputs=("self", "other"), promote="common",
         grads={"self": lambda grad, other: grad * other,
                "other": lambda grad, self: grad * self})
DIV = Op("div", "DivBackward0", jnp.true_divide, inputs=("self", "other"), promote="float",
         grads={"self": lambda grad, other: grad / other,
                "other": lambda grad, self, other: -grad * self / (other * other)})
NEG = Op("neg", "NegBackward0", jnp.negative, grads={"self": lambda grad: -grad})
RECIPROCAL = Op("reciprocal", "ReciprocalBackward0", jnp.reciprocal, promote="float",
                grads={"self": lambda grad, result: -grad * result * result})


def _pow_scalar_grad(grad, self, exponent):
    if exponent == 0:
        return jnp.zeros_like(grad)
    return grad * exponent * jnp.power(self, exponent - 1)


def _pow_tensor_exponent_grad(grad, self, exponent, result):
    # torch masks log(0) where the exponent is >= 0 so that 0 ** positive has zero grad.
    safe = jnp.where((self == 0) & (exponent >= 0), jnp.zeros_like(result), result * jnp.log(self))
    return grad * safe


POW = Op("pow", "PowBackward0", lambda x, exponent: jnp.power(x, exponent), promote="common",
         grads={"self": _pow_scalar_grad})
POW_TENSOR = Op("pow", "PowBackward1", jnp.power, inputs=("self", "exponent"), promote="common",
                grads={"self": lambda grad, self, exponent: jnp.where(
                    exponent == 0, 0.0, grad * exponent * jnp.power(self, exponent - 1)),
                    "exponent": _pow_tensor_exponent_grad})
POW_SCALAR_BASE = Op(
    "pow", "PowBackward2", lambda exponent, base: jnp.power(base, exponent),
    inputs=("exponent",), promote="common",
    grads={"exponent": lambda grad, result, base: grad * result * jnp.log(jnp.asarray(
        base, result.dtype)) if base != 0 else jnp.zeros_like(grad)})

# --- unary math --------------------------------------------------------------------------------

ABS = Op("abs", "AbsBackward0", jnp.abs, grads={"self": lambda grad, self: grad * jnp.sign(self)})
EXP = Op("exp", "ExpBackward0", jnp.exp, promote="float",
         grads={"self": lambda grad, result: grad * result})
LOG = Op("log", "LogBackward0", jnp.log, promote="float",
         grads={"self": lambda grad, self: grad / self})
SQRT = Op("sqrt", "SqrtBackward0", jnp.sqrt, promote="float",
          grads={"self": lambda grad, result: grad / (2 * result)})
SIN = Op("sin", "SinBackward0", jnp.sin, promote="float",
         grads={"self": lambda grad, self: grad * jnp.cos(self)})
COS = Op("cos", "CosBackward0", jnp.cos, promote="float",
         grads={"self": lambda grad, self: -grad * jnp.sin(self)})
TANH = Op("tanh", "TanhBackward0", jnp.tanh, promote="float",
          grads={"self": lambda grad, result: grad * (1 - result * result)})
SIGMOID = Op("sigmoid", "SigmoidBackward0", jax.nn.sigmoid, promote="float",
             grads={"self": lambda grad, result: grad * result * (1 - result)})
RELU = Op("relu", "ReluBackward0", lambda x: jnp.maximum(x, jnp.zeros((), x.dtype)),
          grads={"self": lambda grad, result: jnp.where(result <= 0, jnp.zeros_like(grad), grad)})


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


CLAMP = Op("clamp", "ClampBackward1", _clamp_fwd, grads={"self": _clamp_grad})


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
ZERO = Op("zero", "ZeroBackward0", jnp.zeros_like,
          grads={"self": lambda grad: jnp.zeros_like(grad)})
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
ADDCMUL = Op("addcmul", "AddcmulBackward0", lambda x, t1, t2, value: x + value * t1 * t2,
             inputs=("self", "tensor1", "tensor2"), aux=("value",), saves=("value",),
             promote="common",
             grads={"self": identity_grad,
                    "tensor1": lambda grad, tensor2, value: grad * (tensor2 * value),
                    "tensor2": lambda grad, tensor1, value: grad * (tensor1 * value)})
ADDCDIV = Op("addcdiv", "AddcdivBackward0", lambda x, t1, t2, value: x + value * t1 / t2,
             inputs=("self", "tensor1", "tensor2"), aux=("value",), saves=("value",),
             promote="common",
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


WHERE = Op("where", "WhereBackward0", lambda x, y, condition: jnp.where(condition, x, y),
           inputs=("self", "other"), aux=("condition",), promote="common",
           grads={"self": lambda grad, condition: jnp.where(condition, grad, 0),
                  "other": lambda grad, condition: jnp.where(condition, 0, grad)})


def _split_ties(grad, self, other, drop):
    """derivatives.yaml's maximum/minimum: ties get half the gradient, ``drop`` gets none."""
    half = jnp.where(self == other, grad / 2, grad)
    return jnp.where(drop, jnp.zeros_like(half), half)


MAXIMUM = Op(
    "maximum", "MaximumBackward0", jnp.maximum, inputs=("self", "other"), promote="common",
    grads={"self": lambda grad, self, other: _split_ties(grad, self, other, self < other),
           "other": lambda grad, self, other: _split_ties(grad, self, other, self > other)})
MINIMUM = Op(
    "minimum", "MinimumBackward0", jnp.minimum, inputs=("self", "other"), promote="common",
    grads={"self": lambda grad, self, other: _split_ties(grad, self, other, self > other),
           "other": lambda grad, self, other: _split_ties(grad, self, other, self < other)})

# --- non-differentiable -------------------------------------------------------------------------

EQ = Op("eq", None, jnp.equal, inputs=("self", "other"), promote="common")
NE = Op("ne", None, jnp.not_equal, inputs=("self", "other"), promote="common")
LT = Op("lt", None, jnp.less, inputs=("self", "other"), promote="common")
LE = Op("le", None, jnp.less_equal, inputs=("self", "other"), promote="common")
GT = Op("gt", None, jnp.greater, inputs=("self", "other"), promote="common")
GE = Op("ge", None, jnp.greater_equal, inputs=("self", "other"), promote="common")
LOGICAL_NOT = Op("logical_not", None, jnp.logical_not)
SIGN = Op("sign", "SignBackward0", jnp.sign, grads={"self": lambda grad: jnp.zeros_like(grad)})
CAST = Op("to", "ToCopyBackward0", lambda x, dtype: x.astype(dtype),
          grads={"self": identity_grad})
TO_DEVICE = Op("to", "ToCopyBackward0", lambda x, device: jax.device_put(x, device),
               grads={"self": identity_grad})
