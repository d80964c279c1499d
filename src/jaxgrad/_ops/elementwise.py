"""Elementwise ops. What each formula names is what torch saves (derivatives.yaml):
add saves nothing, mul saves the other input, exp/tanh/sigmoid/relu/sqrt save their result.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes
from ._table import ELEMENTWISE, Op, identity_grad, sgn
from ._table import example_doc as _doc
from .half_precision import in_float32, lerp, scalar_over, times_scalar


def _c(x):
    """``x.conj()`` in a formula: torch's gradients are conjugate Wirtinger derivatives, so a
    holomorphic op's formula multiplies ``grad`` by its derivative's conjugate (no-op on reals)."""
    return jnp.conj(x)


# --- torch's argument checks (a row's ``checks``) ---------------------------------------------

def _common_dtype(*operands):
    """torch's common dtype of tensors (anything with ``dtype``/``ndim``) and numbers."""
    return _dtypes.result_type([(o.dtype, o.ndim) for o in operands if hasattr(o, "ndim")],
                               [o for o in operands if not hasattr(o, "ndim")])


def _scalar_kind(value) -> str:
    """What kind of ``Scalar`` torch makes of a number: bool, int, float or complex."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (complex, np.complexfloating)) and not isinstance(value, float):
        return "complex"
    return "float"


def check_alpha(self, other, alpha) -> None:
    """torch's ``alpha_check`` (add, sub, rsub) on the operands' common dtype."""
    if type(alpha) is int and -128 <= alpha <= 127:  # (the common case first: fits any dtype)
        return
    dtype, kind = _common_dtype(self, other), _scalar_kind(alpha)
    if kind == "bool" and dtype is not _dtypes.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if kind in ("float", "complex") and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if kind == "complex" and not dtype.is_complex:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")
    _dtypes.checked_scalar(alpha, dtype)  # (the kernel's alpha.to<scalar_t>())


def _integral_dtype(d) -> bool:
    return not (d.is_floating_point or d.is_complex)


def check_addcdiv(self, tensor1, tensor2, value=1) -> None:
    """torch's refusal of integer division in addcdiv (``tensor1`` and ``tensor2`` integral)."""
    if _integral_dtype(tensor1.dtype) and _integral_dtype(tensor2.dtype):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * jaxgrad.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")


def _check_lerp(kernel, self, end, weight) -> None:
    """lerp's checks: no type promotion (``end`` and a tensor ``weight`` of ``self``'s dtype),
    and no kernel for integral dtypes."""
    for name, other in (("end", end), ("weight", weight)):
        if hasattr(other, "ndim") and (name == "end" or other.ndim) and other.dtype != self.dtype:
            raise RuntimeError(f"expected dtype {_dtypes.c_type_name(self.dtype)} for `{name}` "
                               f"but got dtype {_dtypes.c_type_name(other.dtype)}")
    if _integral_dtype(self.dtype):
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dtypes.scalar_type_name(self.dtype)}'")


def check_lerp_scalar(self, end, weight) -> None:
    """lerp with a number ``weight`` (torch's ``lerp.Scalar``)."""
    _check_lerp("lerp_kernel_scalar", self, end, weight)


def check_lerp_tensor(self, end, weight) -> None:
    """lerp with a tensor ``weight`` (torch's ``lerp.Tensor``)."""
    _check_lerp("lerp_kernel_tensor", self, end, weight)


# --- arithmetic ---------------------------------------------------------------------------

ADD = Op("add", "AddBackward0", jnp.add, inputs=("self", "other"), promote="common",
         grads={"self": identity_grad, "other": identity_grad})
# Scalar factors (alpha, value, weight, a scalar ``other``) are ``aux`` arguments: traced, so a
# new value (a scheduled learning rate) reuses the compiled kernel, and saved like torch's Scalars
# (torch's add kernel rounds alpha to a half-precision operands' dtype, then computes in float32)
ADD_ALPHA = Op("add", "AddBackward0", in_float32(lambda x, y, alpha: x + alpha * y),
               inputs=("self", "other"), aux=("alpha",), saves=("alpha",), promote="common",
               opmath="backward", checks=check_alpha,
               grads={"self": identity_grad, "other": lambda grad, alpha: grad * _c(alpha)})
SUB = Op("sub", "SubBackward0", jnp.subtract, inputs=("self", "other"), promote="common",
         grads={"self": identity_grad, "other": lambda grad: -grad},
         grad_nodes={"other": "NegBackward0"})
SUB_ALPHA = Op("sub", "SubBackward0", in_float32(lambda x, y, alpha: x - alpha * y),
               inputs=("self", "other"), aux=("alpha",), saves=("alpha",), promote="common",
               opmath="backward", checks=check_alpha,
               grads={"self": identity_grad, "other": lambda grad, alpha: -grad * _c(alpha)},
               grad_nodes={"other": "MulBackward1"})
RSUB = Op("rsub", "RsubBackward1", in_float32(lambda x, other, alpha: other - alpha * x),
          aux=("other", "alpha"), saves=("alpha",), promote="common", opmath="backward",
          checks=check_alpha,
          grads={"self": lambda grad, alpha: -grad * _c(alpha)})
MUL = Op("mul.Tensor(Tensor self, Tensor other) -> Tensor", "MulBackward0", jnp.multiply,
         promote="common", opmath="forward backward", numbers_as_tensors=True, inplace="method",
         grads={"self": lambda grad, other: grad * _c(other),
                "other": lambda grad, self: grad * _c(self)},
         grad_nodes={"self": "MulBackward0", "other": "MulBackward0"})
def _true_divide(x, y):
    """IEEE division. XLA's CPU backend divides by a broadcast divisor as a multiplication by
    its reciprocal (an ulp off for a quarter of float32 quotients): there the quotient is
    computed in float64 and rounded once, which is the exactly rounded float32 quotient."""
    if x.dtype == jnp.float32 and jnp.size(y) == 1 and jax.default_backend() == "cpu":
        return (x.astype(jnp.float64) / jnp.asarray(y, jnp.float64)).astype(jnp.float32)
    return jnp.true_divide(x, y)


DIV = Op("div.Tensor(Tensor self, Tensor other) -> Tensor", "DivBackward0", _true_divide,
         promote="float", opmath="forward backward", numbers_as_tensors=True, inplace="method",
         grads={"self": lambda grad, other: _true_divide(grad, _c(other)),
                "other": lambda grad, self, other: -grad * _c(self / other / other)},
         grad_nodes={"self": "DivBackward0", "other": "MulBackward0"})
NEG = Op("neg", "NegBackward0", jnp.negative, grads={"self": lambda grad: -grad},
         grad_nodes={"self": "NegBackward0"})


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
        return jnp.zeros_like(grad) if e == 0 else grad * _c(e * jnp.power(self, e - 1))
    return jnp.where(exponent == 0, jnp.zeros_like(grad),
                     grad * _c(exponent * jnp.power(self, exponent - 1)))


def _pow_tensor_exponent_grad(grad, self, exponent, result):
    # torch masks log(0) where the exponent is >= 0 so that 0 ** positive has zero grad.
    safe = jnp.where((self == 0) & (exponent >= 0), jnp.zeros_like(result), result * jnp.log(self))
    return grad * _c(safe)


def _pow_scalar_base_grad(grad, result, base, exponent):
    # torch's pow_backward_exponent: a zero base has no gradient where the exponent is >= 0
    # (a real one), and ``result * log(0)`` (-inf) below it; log(1) keeps masked lanes finite
    zero_base = base == 0
    no_grad = zero_base & (jnp.real(exponent) >= 0)
    if jnp.iscomplexobj(exponent):
        no_grad = no_grad & (jnp.imag(exponent) == 0)
    safe_base = jnp.where(no_grad, jnp.ones_like(result), jnp.asarray(base, result.dtype))
    return jnp.where(no_grad, jnp.zeros_like(grad), grad * _c(result * jnp.log(safe_base)))


POW = Op("pow", "PowBackward0", _pow_scalar_fwd, aux=("exponent",), promote="common",
         grads={"self": _pow_scalar_grad}, tangent=ELEMENTWISE, grad_nodes={"self": "MulBackward0"})
POW_TENSOR = Op("pow", "PowBackward1", jnp.power, inputs=("self", "exponent"), promote="common",
                grads={"self": lambda grad, self, exponent: jnp.where(
                    exponent == 0, 0.0, grad * _c(exponent * jnp.power(self, exponent - 1))),
                    "exponent": _pow_tensor_exponent_grad}, tangent=ELEMENTWISE,
                grad_nodes={"self": "WhereBackward0", "exponent": "MulBackward0"})
POW_SCALAR_BASE = Op("pow", "PowBackward2", lambda exponent, base: jnp.power(base, exponent),
                     inputs=("exponent",), aux=("base",), promote="common",
                     grads={"exponent": _pow_scalar_base_grad}, tangent=ELEMENTWISE,
                     grad_nodes={"exponent": "MulBackward0"})

# --- unary math --------------------------------------------------------------------------------
# torch has these as functions and methods, each with an in-place ``exp_`` function and method

def _unary(schema: str, node: str, forward, formula, doc: str, call: str, output: str,
           promote: str | None = "float", variants: str = "function method out",
           grad_nodes: dict[str, str] | None = None) -> Op:
    return Op(schema, node, forward, promote=promote, grads={"self": formula},
              variants=variants, inplace="function method", tangent=ELEMENTWISE,
              grad_nodes=grad_nodes, doc=_doc(doc, call, output))


def _abs(x):
    if x.dtype == jnp.bool_:  # torch has no abs kernel for bool
        raise _no_kernel("abs_cpu", x.dtype)
    return jnp.abs(x)


ABS = _unary("abs(Tensor self) -> Tensor", "AbsBackward0", _abs,
             lambda grad, self: grad * sgn(self), "The absolute value of each element.",
             "jaxgrad.abs(jaxgrad.tensor([-1.5, 2.0]))", "tensor([1.5000, 2.0000])", promote=None,
             grad_nodes={"self": "MulBackward0"})
EXP = _unary("exp(Tensor self) -> Tensor", "ExpBackward0", jnp.exp,
             lambda grad, result: grad * _c(result), "The exponential of each element.",
             "jaxgrad.exp(jaxgrad.tensor([0.0, 1.0]))", "tensor([1.0000, 2.7183])",
             grad_nodes={"self": "MulBackward0"})
LOG = _unary("log(Tensor self) -> Tensor", "LogBackward0", jnp.log,
             lambda grad, self: grad / _c(self), "The natural logarithm of each element.",
             "jaxgrad.log(jaxgrad.tensor([1.0, 4.0]))", "tensor([0.0000, 1.3863])",
             grad_nodes={"self": "DivBackward0"})
SQRT = _unary("sqrt(Tensor self) -> Tensor", "SqrtBackward0", jnp.sqrt,
              lambda grad, result: grad / (2 * _c(result)), "The square root of each element.",
              "jaxgrad.sqrt(jaxgrad.tensor([4.0, 2.0]))", "tensor([2.0000, 1.4142])",
              grad_nodes={"self": "DivBackward0"})
SIN = _unary("sin(Tensor self) -> Tensor", "SinBackward0", jnp.sin,
             lambda grad, self: grad * _c(jnp.cos(self)), "The sine of each element.",
             "jaxgrad.sin(jaxgrad.tensor([0.0, 1.0]))", "tensor([0.0000, 0.8415])",
             grad_nodes={"self": "MulBackward0"})
COS = _unary("cos(Tensor self) -> Tensor", "CosBackward0", jnp.cos,
             lambda grad, self: -grad * _c(jnp.sin(self)), "The cosine of each element.",
             "jaxgrad.cos(jaxgrad.tensor([0.0, 1.0]))", "tensor([1.0000, 0.5403])",
             grad_nodes={"self": "MulBackward0"})
TANH = _unary("tanh(Tensor self) -> Tensor", "TanhBackward0", jnp.tanh,
              in_float32(lambda grad, result: grad * _c(1 - result * result)),
              "The hyperbolic tangent of each element.",
              "jaxgrad.tanh(jaxgrad.tensor([0.0, 1.0]))", "tensor([0.0000, 0.7616])",
              grad_nodes={"self": "TanhBackwardBackward0"})
SIGMOID = _unary("sigmoid(Tensor self) -> Tensor", "SigmoidBackward0", in_float32(jax.nn.sigmoid),
                 in_float32(lambda grad, result: grad * _c(result * (1 - result))),
                 "The logistic sigmoid ``1 / (1 + exp(-x))`` of each element.",
                 "jaxgrad.sigmoid(jaxgrad.tensor([0.0, 2.0]))", "tensor([0.5000, 0.8808])",
                 grad_nodes={"self": "SigmoidBackwardBackward0"})
RELU = _unary("relu(Tensor self) -> Tensor", "ReluBackward0",
              lambda x: jnp.maximum(x, jnp.zeros((), x.dtype)),
              lambda grad, result: jnp.where(result <= 0, jnp.zeros_like(grad), grad),
              "``max(x, 0)`` of each element.", "jaxgrad.relu(jaxgrad.tensor([-1.0, 2.0]))",
              "tensor([0., 2.])", promote=None, variants="function method",
              grad_nodes={"self": "ThresholdBackwardBackward0"})  # torch: no out=
LOG10 = _unary("log10(Tensor self) -> Tensor", "Log10Backward0", jnp.log10,
               lambda grad, self: grad / _c(self * 2.302585092994046),
               "The base-10 logarithm of each element.",
               "jaxgrad.log10(jaxgrad.tensor([1.0, 100.0]))", "tensor([0., 2.])",
               grad_nodes={"self": "DivBackward0"})
LOG2 = _unary("log2(Tensor self) -> Tensor", "Log2Backward0", jnp.log2,
              lambda grad, self: grad / _c(self * 0.6931471805599453),
              "The base-2 logarithm of each element.",
              "jaxgrad.log2(jaxgrad.tensor([1.0, 8.0]))", "tensor([0., 3.])",
              grad_nodes={"self": "DivBackward0"})
LOG1P = _unary("log1p(Tensor self) -> Tensor", "Log1PBackward0", jnp.log1p,
               lambda grad, self: grad / _c(self + 1), "``log(1 + x)``, accurate for small x.",
               "jaxgrad.log1p(jaxgrad.tensor([0.0, 1e-8]))", "tensor([0.0000e+00, 1.0000e-08])",
               grad_nodes={"self": "DivBackward0"})
EXPM1 = _unary("expm1(Tensor self) -> Tensor", "Expm1Backward0", jnp.expm1,
               lambda grad, result: grad * _c(result + 1), "``exp(x) - 1``, accurate for small x.",
               "jaxgrad.expm1(jaxgrad.tensor([0.0, 1e-8]))", "tensor([0.0000e+00, 1.0000e-08])",
               grad_nodes={"self": "MulBackward0"})
RECIPROCAL = _unary("reciprocal(Tensor self) -> Tensor", "ReciprocalBackward0", jnp.reciprocal,
                    lambda grad, result: -grad * _c(result * result), "``1 / x`` of each element.",
                    "jaxgrad.reciprocal(jaxgrad.tensor([2.0, 4.0]))", "tensor([0.5000, 0.2500])",
                    grad_nodes={"self": "MulBackward0"})


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
           grads={"self": _clamp_grad}, grad_nodes={"self": "WhereBackward0"})


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

# torch.fill (out of place): FillBackward0 with a number, FillBackward1 with a 0-d tensor
FILL_OUT = Op("fill", "FillBackward0", lambda x, value: jnp.full_like(x, value), aux=("value",),
              grads={"self": lambda grad: jnp.zeros_like(grad)})
FILL_OUT_TENSOR = Op("fill", "FillBackward1", lambda x, value: jnp.full_like(x, value),
                     inputs=("self", "value"),
                     grads={"self": lambda grad: jnp.zeros_like(grad),
                            "value": lambda grad: grad.sum()},
                     grad_nodes={"value": "SumBackward0"})
FILL = Op("fill", "FillBackward2", lambda x, value: jnp.full_like(x, value), aux=("value",),
          grads={"self": lambda grad: jnp.zeros_like(grad)}, overlap="allow")
FILL_TENSOR = Op("fill", "FillBackward3", lambda x, value: jnp.full_like(x, value),
                 inputs=("self", "value"),
                 grads={"self": lambda grad: jnp.zeros_like(grad),
                        "value": lambda grad: grad.sum()})
ZERO = Op("zero(Tensor self) -> Tensor", "ZeroBackward0", jnp.zeros_like,
          grads={"self": lambda grad: jnp.zeros_like(grad)}, inplace="function method",
          overlap="allow",
          doc=_doc("Fill with zeros, in place.", "jaxgrad.ones(2).zero_()", "tensor([0., 0.])"))
COPY = Op("copy", "CopyBackwards",
          lambda x, src: jnp.broadcast_to(jnp.asarray(src, x.dtype), x.shape),
          inputs=("self", "src"),
          grads={"self": lambda grad: jnp.zeros_like(grad), "src": identity_grad})
# ``t.copy_(t)``: torch's copy_ returns before its overlap check (an expanded ``t`` may)
COPY_SELF = Op("copy", "CopyBackwards", COPY.forward, inputs=("self", "src"), grads=COPY.grads,
               overlap="allow")

# addcmul/addcdiv/lerp: ATen's kernels' evaluation order (``value * t1 * t2``, ``value * t1 / t2``)
ADDCMUL = Op("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
             "AddcmulBackward0", lambda x, t1, t2, value: x + value * t1 * t2, saves=("value",),
             promote="common", opmath="forward", variants="function method out", inplace="method",
             doc=_doc("``input + value * tensor1 * tensor2`` (AddcmulBackward0).",
                      "jaxgrad.addcmul(jaxgrad.ones(2), jaxgrad.tensor([1.0, 2.0]), "
                      "jaxgrad.tensor([3.0, 4.0]), value=0.5)", "tensor([2.5000, 5.0000])"),
             grads={"self": identity_grad,
                    "tensor1": lambda grad, tensor2, value: grad * _c(times_scalar(tensor2,
                                                                                   value)),
                    "tensor2": lambda grad, tensor1, value: grad * _c(times_scalar(tensor1,
                                                                                   value))},
             grad_nodes={"tensor1": "MulBackward0", "tensor2": "MulBackward0"})
ADDCDIV = Op("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
             "AddcdivBackward0", lambda x, t1, t2, value: x + value * t1 / t2,
             # torch's codegen saves an input two formulas read whichever inputs require grad
             saves=("value", "tensor2"),
             promote="common", opmath="forward", variants="function method out", inplace="method",
             checks=check_addcdiv,
             doc=_doc("``input + value * tensor1 / tensor2`` (AddcdivBackward0).",
                      "jaxgrad.addcdiv(jaxgrad.ones(2), jaxgrad.tensor([1.0, 2.0]), "
                      "jaxgrad.tensor([4.0, 4.0]))", "tensor([1.2500, 1.5000])"),
             grads={"self": identity_grad,
                    "tensor1": lambda grad, tensor2, value: grad * _c(scalar_over(value,
                                                                                  tensor2)),
                    "tensor2": lambda grad, tensor1, tensor2, value:
                        -grad * _c(times_scalar(tensor1, value) / (tensor2 * tensor2))})
LERP = Op("lerp", "LerpBackward0", lerp, inputs=("self", "end"), aux=("weight",),
          saves=("weight",), promote="common", opmath="forward backward",
          checks=check_lerp_scalar,
          grads={"self": lambda grad, weight: grad * _c(1 - weight),
                 "end": lambda grad, weight: grad * _c(weight)},
          grad_nodes={"self": "MulBackward1", "end": "MulBackward1"})
LERP_TENSOR = Op("lerp", "LerpBackward1", lerp, inputs=("self", "end", "weight"),
                 promote="common", opmath="forward", checks=check_lerp_tensor,
                 saves=("weight",),  # (two formulas read it: torch saves it unconditionally)
                 grads={"self": lambda grad, weight: grad * _c(1 - weight),
                        "end": lambda grad, weight: grad * _c(weight),
                        "weight": lambda grad, self, end: grad * _c(end - self)},
                 grad_nodes={"self": "MulBackward0", "end": "MulBackward0",
                             "weight": "MulBackward0"})


# masked_fill: the mask is saved, never differentiated; a number value is a traced operand
MASKED_FILL = Op("masked_fill", "MaskedFillBackward0",
                 lambda x, mask, value: jnp.where(mask, jnp.asarray(value, x.dtype), x),
                 aux=("mask", "value"),
                 grads={"self": lambda grad, mask: jnp.where(mask, jnp.zeros_like(grad), grad)},
                 overlap="warn", grad_nodes={"self": "MaskedFillBackward0"})
MASKED_FILL_TENSOR = Op(
    "masked_fill", "MaskedFillBackward1",
    lambda x, value, mask: jnp.where(mask, value.astype(x.dtype), x),
    inputs=("self", "value"), aux=("mask",),
    grads={"self": lambda grad, mask: jnp.where(mask, jnp.zeros_like(grad), grad),
           "value": lambda grad, mask: jnp.where(mask, grad, jnp.zeros_like(grad)).sum()},
    overlap="warn")

WHERE = Op("where", "WhereBackward0", lambda x, y, condition: jnp.where(condition, x, y),
           inputs=("self", "other"), aux=("condition",), promote="common",
           grads={"self": lambda grad, condition: jnp.where(condition, grad, 0),
                  "other": lambda grad, condition: jnp.where(condition, 0, grad)},
           grad_nodes={"self": "WhereBackward0", "other": "WhereBackward0"})


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
           "other": lambda grad, self, other: _split_ties(grad, self, other, self < other)},
    grad_nodes={"self": "MaskedFillBackward0", "other": "MaskedFillBackward0"})

def _fmax_fmin(pick):
    """``jnp.fmax``/``jnp.fmin`` (a NaN loses to a number) on real tensors, torch's error on
    complex ones; bool stays bool."""
    def forward(x, y):
        if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
            raise RuntimeError(f"{pick.__name__} not implemented for complex tensors.")
        if x.dtype == jnp.bool_:
            return pick(x.astype(jnp.uint8), y.astype(jnp.uint8)).astype(jnp.bool_)
        return pick(x, y)
    return forward


def _kept(wins, other):
    """derivatives.yaml's fmax/fmin mask: ``self`` keeps the gradient where it wins (ties
    included) or ``other`` is NaN, ``other`` everywhere else."""
    return wins | jnp.isnan(other)


FMAX = Op(
    "fmax(Tensor self, Tensor other) -> Tensor", "FmaxBackward0", _fmax_fmin(jnp.fmax),
    promote="common", variants="function method out",
    doc=_doc("Elementwise maximum where a NaN loses to a number (NaN only where both are); "
             "ties give ``self`` the gradient, as in torch.",
             "jaxgrad.fmax(jaxgrad.tensor([1.0, float('nan')]), jaxgrad.tensor([3.0, 2.0]))",
             "tensor([3., 2.])"),
    grads={"self": lambda grad, self, other: jnp.where(
        _kept(self >= other, other), grad, jnp.zeros_like(grad)),
           "other": lambda grad, self, other: jnp.where(
        _kept(self >= other, other), jnp.zeros_like(grad), grad)},
    grad_nodes={"self": "MaskedFillBackward0", "other": "MaskedFillBackward0"})
FMIN = Op(
    "fmin(Tensor self, Tensor other) -> Tensor", "FminBackward0", _fmax_fmin(jnp.fmin),
    promote="common", variants="function method out",
    doc=_doc("Elementwise minimum where a NaN loses to a number (NaN only where both are); "
             "ties give ``self`` the gradient, as in torch.",
             "jaxgrad.fmin(jaxgrad.tensor([1.0, float('nan')]), jaxgrad.tensor([3.0, 2.0]))",
             "tensor([1., 2.])"),
    grads={"self": lambda grad, self, other: jnp.where(
        _kept(self <= other, other), grad, jnp.zeros_like(grad)),
           "other": lambda grad, self, other: jnp.where(
        _kept(self <= other, other), jnp.zeros_like(grad), grad)},
    grad_nodes={"self": "MaskedFillBackward0", "other": "MaskedFillBackward0"})


# --- non-differentiable -------------------------------------------------------------------------

def _zeros_grad(grad):
    return jnp.zeros_like(grad)


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


def _inplace_comparison(name: str, forward, symbol: str) -> Op:
    """``Tensor.eq_`` & co: the truth values written in self's dtype (whatever the operands'
    common dtype); torch's formulas give zero gradients (and zero the tangent)."""
    with_number = Op(f"{name}.Scalar(Tensor self, Scalar other) -> Tensor",
                     f"{name.capitalize()}Backward0", forward, grads={"self": _zeros_grad})
    return Op(f"{name}.Tensor(Tensor self, Tensor other) -> Tensor",
              f"{name.capitalize()}Backward1", forward, numbers_as_tensors=True,
              inplace="method", grads={"self": _zeros_grad, "other": _zeros_grad},
              scalar_overload=with_number,
              doc=_doc(f"In place: ``input {symbol} other`` as 1 or 0 in ``input``'s dtype (a "
                       "number broadcasts).",
                       f"jaxgrad.tensor([1.0, 2.0]).{name}_(2)",
                       {"eq": "tensor([0., 1.])", "ne": "tensor([1., 0.])",
                        "lt": "tensor([1., 0.])", "le": "tensor([1., 1.])",
                        "gt": "tensor([0., 0.])", "ge": "tensor([0., 1.])"}[name]))


EQ_INPLACE = _inplace_comparison("eq", jnp.equal, "==")
NE_INPLACE = _inplace_comparison("ne", jnp.not_equal, "!=")
LT_INPLACE = _inplace_comparison("lt", jnp.less, "<")
LE_INPLACE = _inplace_comparison("le", jnp.less_equal, "<=")
GT_INPLACE = _inplace_comparison("gt", jnp.greater, ">")
GE_INPLACE = _inplace_comparison("ge", jnp.greater_equal, ">=")
LOGICAL_NOT = Op("logical_not(Tensor self) -> Tensor", None, jnp.logical_not,
                 variants="function method out", inplace="method",
                 doc=_doc("True where the element is zero.",
                          "jaxgrad.logical_not(jaxgrad.tensor([0.0, 2.0]))",
                          "tensor([ True, False])"))
def _sign(x):
    """-1, 0 or 1 (a bool tensor as it is)."""
    return x if x.dtype == jnp.bool_ else jnp.sign(x)


SIGN = Op("sign(Tensor self) -> Tensor", "SignBackward0", _sign,
          grads={"self": lambda grad: jnp.zeros_like(grad)}, variants="function method out",
          inplace="method", doc=_doc("-1, 0 or 1: the sign of each element.",
                                     "jaxgrad.sign(jaxgrad.tensor([-2.0, 0.0, 3.0]))",
                                     "tensor([-1.,  0.,  1.])"))
CAST = Op("to", "ToCopyBackward0", lambda x, dtype: x.astype(dtype),
          grads={"self": identity_grad})

# --- rounding, special functions, remainders, logical and bitwise ops -----------------------------
# Rounding, trigonometric and hyperbolic functions, special functions, remainders, logical and
# bitwise ops. A dtype torch's CPU kernel has no loop for raises torch's NotImplementedError
# when the forward is traced (``"floor_vml_cpu" not implemented for 'Bool'``).

_SQRT_PI = 1.7724538509055159
_LN2 = 0.6931471805599453


def _no_kernel(kernel: str, dtype) -> NotImplementedError:
    name = _dtypes.scalar_type_name(_dtypes.from_numpy_dtype(dtype))
    return NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


def _integral(dtype) -> bool:
    return jnp.issubdtype(dtype, jnp.integer) or dtype == jnp.bool_


def _rounding(fn, kernel: str):
    """floor/ceil/round/trunc: an integral tensor comes back as it is; a bool one has no
    kernel."""

    def forward(x):
        if x.dtype == jnp.bool_:
            raise _no_kernel(kernel, x.dtype)
        return x if _integral(x.dtype) else fn(x)

    return forward


def _math(schema: str, node: str | None, forward, formula, doc: str, call: str, output: str,
          promote: str | None = "float", variants: str = "function method out",
          inplace: str = "function method", grad_nodes: dict[str, str] | None = None) -> Op:
    grads = {} if formula is None else {"self": formula}
    return Op(schema, node, forward, promote=promote, grads=grads, variants=variants,
              inplace=inplace, tangent=ELEMENTWISE if grads else None, grad_nodes=grad_nodes,
              doc=_doc(doc, call, output))


FLOOR = _math("floor(Tensor self) -> Tensor", "FloorBackward0",
              _rounding(jnp.floor, "floor_vml_cpu"), _zeros_grad,
              "The largest integer not above each element (an integral tensor as it is).",
              "jaxgrad.floor(jaxgrad.tensor([-1.5, 2.5]))", "tensor([-2.,  2.])", promote=None)
CEIL = _math("ceil(Tensor self) -> Tensor", "CeilBackward0", _rounding(jnp.ceil, "ceil_vml_cpu"),
             _zeros_grad, "The smallest integer not below each element.",
             "jaxgrad.ceil(jaxgrad.tensor([-1.5, 2.5]))", "tensor([-1.,  3.])", promote=None)
TRUNC = _math("trunc(Tensor self) -> Tensor", "TruncBackward0",
              _rounding(jnp.trunc, "trunc_vml_cpu"), _zeros_grad,
              "Each element rounded towards zero.", "jaxgrad.trunc(jaxgrad.tensor([-1.5, 2.5]))",
              "tensor([-1.,  2.])", promote=None)
ROUND = Op("round", "RoundBackward0", _rounding(jnp.round, "round_vml_cpu"),
           grads={"self": _zeros_grad})


def _round_decimals(x, decimals):
    """ATen's round with decimals: ``nearbyint(x * 10**d) / 10**d`` (``/``, ``*`` for d < 0)."""
    if _integral(x.dtype):
        raise _no_kernel("round_vml_cpu" if decimals == 0 else "round_cpu", x.dtype)
    ten = jnp.asarray(10.0 ** abs(decimals), x.dtype)
    return jnp.round(x / ten) * ten if decimals < 0 else jnp.round(x * ten) / ten


ROUND_DECIMALS = Op("round", "RoundBackward1", _round_decimals, grads={"self": _zeros_grad})


def _frac(x):
    if _integral(x.dtype):
        raise _no_kernel("frac_cpu", x.dtype)
    return x - jnp.trunc(x)


FRAC = _math("frac(Tensor self) -> Tensor", "FracBackward0", _frac, identity_grad,
             "The fractional part ``x - trunc(x)`` of each element.",
             "jaxgrad.frac(jaxgrad.tensor([-1.5, 2.25]))", "tensor([-0.5000,  0.2500])",
             promote=None)
# torch's sgn_backward: ``(grad - sgn * sgn * conj(grad)) / (2 |x|)``, 0 where x == 0 (0 for reals)
SGN = _math("sgn(Tensor self) -> Tensor", "SgnBackward0", _sign,
            lambda grad, self, result: jnp.where(
                self == 0, jnp.zeros_like(grad),
                (grad - result * result * jnp.conj(grad)) / (2 * jnp.abs(self))),
            "The sign of each element (for real tensors the same as ``sign``).",
            "jaxgrad.sgn(jaxgrad.tensor([-2.0, 0.0, 3.0]))", "tensor([-1.,  0.,  1.])",
            promote=None, inplace="method")
TAN = _math("tan(Tensor self) -> Tensor", "TanBackward0", jnp.tan,
            lambda grad, result: grad * _c(1 + result * result), "The tangent of each element.",
            "jaxgrad.tan(jaxgrad.tensor([0.0, 1.0]))", "tensor([0.0000, 1.5574])",
            grad_nodes={"self": "MulBackward0"})
SINH = _math("sinh(Tensor self) -> Tensor", "SinhBackward0", jnp.sinh,
             lambda grad, self: grad * _c(jnp.cosh(self)), "The hyperbolic sine of each element.",
             "jaxgrad.sinh(jaxgrad.tensor([0.0, 1.0]))", "tensor([0.0000, 1.1752])",
             grad_nodes={"self": "MulBackward0"})
COSH = _math("cosh(Tensor self) -> Tensor", "CoshBackward0", jnp.cosh,
             lambda grad, self: grad * _c(jnp.sinh(self)), "The hyperbolic cosine of each element.",
             "jaxgrad.cosh(jaxgrad.tensor([0.0, 1.0]))", "tensor([1.0000, 1.5431])",
             grad_nodes={"self": "MulBackward0"})
ASIN = _math("asin(Tensor self) -> Tensor", "AsinBackward0", jnp.arcsin,
             lambda grad, self: grad * _c(jax.lax.rsqrt(-self * self + 1)),
             "The arcsine of each element.", "jaxgrad.asin(jaxgrad.tensor([0.0, 0.5]))",
             "tensor([0.0000, 0.5236])", grad_nodes={"self": "MulBackward0"})
ACOS = _math("acos(Tensor self) -> Tensor", "AcosBackward0", jnp.arccos,
             lambda grad, self: grad * -_c(jax.lax.rsqrt(-self * self + 1)),
             "The arccosine of each element.", "jaxgrad.acos(jaxgrad.tensor([1.0, 0.5]))",
             "tensor([0.0000, 1.0472])", grad_nodes={"self": "MulBackward0"})
ATAN = _math("atan(Tensor self) -> Tensor", "AtanBackward0", jnp.arctan,
             lambda grad, self: grad / _c(self * self + 1), "The arctangent of each element.",
             "jaxgrad.atan(jaxgrad.tensor([0.0, 1.0]))", "tensor([0.0000, 0.7854])",
             grad_nodes={"self": "DivBackward0"})
ASINH = _math("asinh(Tensor self) -> Tensor", "AsinhBackward0", jnp.arcsinh,
              lambda grad, self: grad * _c(jax.lax.rsqrt(self * self + 1)),
              "The inverse hyperbolic sine of each element.",
              "jaxgrad.asinh(jaxgrad.tensor([0.0, 1.0]))", "tensor([0.0000, 0.8814])",
              inplace="",  # asinh_ & co are hand-written (torch refuses autograd)
              grad_nodes={"self": "MulBackward0"})
ACOSH = _math("acosh(Tensor self) -> Tensor", "AcoshBackward0", jnp.arccosh,
              lambda grad, self: grad * _c(jax.lax.rsqrt(self * self - 1)),
              "The inverse hyperbolic cosine of each element.",
              "jaxgrad.acosh(jaxgrad.tensor([1.0, 2.0]))", "tensor([0.0000, 1.3170])",
              inplace="",  # asinh_ & co are hand-written (torch refuses autograd)
              grad_nodes={"self": "MulBackward0"})
ATANH = _math("atanh(Tensor self) -> Tensor", "AtanhBackward0", jnp.arctanh,
              lambda grad, self: grad / _c(1 - self * self),
              "The inverse hyperbolic tangent of each element.",
              "jaxgrad.atanh(jaxgrad.tensor([0.0, 0.5]))", "tensor([0.0000, 0.5493])",
              inplace="",  # asinh_ & co are hand-written (torch refuses autograd)
              grad_nodes={"self": "DivBackward0"})
ERF = _math("erf(Tensor self) -> Tensor", "ErfBackward0", jax.scipy.special.erf,
            lambda grad, self: 2.0 / _SQRT_PI * jnp.exp(-(self * self)) * grad,
            "The error function of each element.", "jaxgrad.erf(jaxgrad.tensor([0.0, 1.0]))",
            "tensor([0.0000, 0.8427])", grad_nodes={"self": "MulBackward0"})
ERFC = _math("erfc(Tensor self) -> Tensor", "ErfcBackward0", jax.scipy.special.erfc,
             lambda grad, self: -2.0 / _SQRT_PI * jnp.exp(-(self * self)) * grad,
             "The complementary error function ``1 - erf(x)`` of each element.",
             "jaxgrad.erfc(jaxgrad.tensor([0.0, 1.0]))", "tensor([1.0000, 0.1573])",
             grad_nodes={"self": "MulBackward0"})
ERFINV = _math("erfinv(Tensor self) -> Tensor", "ErfinvBackward0", jax.scipy.special.erfinv,
               lambda grad, self: 0.5 * _SQRT_PI * jnp.exp(
                   jax.scipy.special.erfinv(self) ** 2) * grad,
               "The inverse error function of each element.",
               "jaxgrad.erfinv(jaxgrad.tensor([0.0, 0.5]))", "tensor([0.0000, 0.4769])",
               inplace="method", grad_nodes={"self": "MulBackward0"})
EXP2 = _math("exp2(Tensor self) -> Tensor", "Exp2Backward0", jnp.exp2,
             lambda grad, result: grad * _c(result * _LN2), "``2 ** x`` of each element.",
             "jaxgrad.exp2(jaxgrad.tensor([0.0, 3.0]))", "tensor([1., 8.])",
             grad_nodes={"self": "MulBackward1"})
def _lgamma(x):
    """log|gamma(x)|; lower float types are computed in float64 (XLA's float32 lgamma is off by
    ~5e-7 near its zeros at 1 and 2, where torch's is exact)."""
    if x.dtype == jnp.float64:
        return jax.scipy.special.gammaln(x)
    return jax.scipy.special.gammaln(x.astype(jnp.float64)).astype(x.dtype)


LGAMMA = _math("lgamma(Tensor self) -> Tensor", "LgammaBackward0", _lgamma,
               lambda grad, self: grad * _digamma(self),  # ATen's poles: -inf at +0
               "The log of the absolute value of the gamma function of each element.",
               "jaxgrad.lgamma(jaxgrad.tensor([1.0, 4.0]))", "tensor([0.0000, 1.7918])",
               inplace="method", grad_nodes={"self": "MulBackward0"})
def _derivative_not_implemented(what: str):
    """derivatives.yaml's ``not_implemented("...")``: the backward raises when it is needed."""

    def formula(grad):
        raise NotImplementedError(f"the derivative for '{what}' is not implemented.")

    return formula


def _regularized_gamma(fn, kernel: str, at_infinite_a: float):
    """``igamma``/``igammac``: JAX's regularized incomplete gamma functions, with torch's value
    at ``a = inf`` (and ``x`` finite) and its refusal of integral tensors."""

    def forward(a, x):
        if _integral(a.dtype):
            raise _no_kernel(kernel, a.dtype)
        a, x = jnp.asarray(a), jnp.asarray(x, a.dtype)
        return jnp.where(jnp.isposinf(a) & jnp.isfinite(x), at_infinite_a, fn(a, x))

    return forward


def _igamma_other_grad(sign: float):
    """d/dx of P(a, x) (igamma), or of Q(a, x) = 1 - P(a, x) (igammac): sign * x^(a-1) e^-x /
    gamma(a), as derivatives.yaml writes it."""

    def formula(grad, self, other):
        return sign * grad * jnp.exp((self - 1) * jnp.log(other) - other - _lgamma(self))

    return formula


IGAMMA = Op("igamma(Tensor self, Tensor other) -> Tensor", "IgammaBackward0",
            _regularized_gamma(jax.scipy.special.gammainc, "igamma_cpu", 0.0), promote="common",
            variants="function method out", inplace="method", forward_ad=False,
            grads={"self": _derivative_not_implemented("igamma: input"),
                   "other": _igamma_other_grad(1.0)},
            doc=_doc("The regularized lower incomplete gamma function P(input, other) "
                     "(differentiable in ``other`` only; no forward AD, as in torch).",
                     "jaxgrad.igamma(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([0.0, 2.0]))",
                     "tensor([0.0000, 0.5940])"))
IGAMMAC = Op("igammac(Tensor self, Tensor other) -> Tensor", "IgammacBackward0",
             _regularized_gamma(jax.scipy.special.gammaincc, "igammac_cpu", 1.0),
             promote="common", variants="function method out", inplace="method",
             forward_ad=False,
             grads={"self": _derivative_not_implemented("igammac: input"),
                    "other": _igamma_other_grad(-1.0)},
             doc=_doc("The regularized upper incomplete gamma function Q(input, other) = 1 - "
                      "P(input, other) (differentiable in ``other`` only; no forward AD).",
                      "jaxgrad.igammac(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([0.0, 2.0]))",
                      "tensor([1.0000, 0.4060])"))


def _trigamma(x):
    """ATen's trigamma (``polygamma(1, x)``): reflection below 1/2, six recurrence steps, then
    the asymptotic series."""
    small = x < 0.5
    reflected = (jnp.pi * jnp.pi) / jnp.sin(jnp.pi * x) ** 2
    x = jnp.where(small, 1 - x, x)
    result = jnp.zeros_like(x)
    for _ in range(6):
        result = result + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    result = result + (1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / x
    return jnp.where(small, reflected - result, result)


def _digamma(x):
    """ATen's digamma: -inf at +0 and +inf at -0 (a pole), NaN at the negative integers."""
    return jnp.where(x == 0, jnp.copysign(jnp.inf, -x).astype(x.dtype),
                     jax.scipy.special.digamma(x))


DIGAMMA = _math("digamma(Tensor self) -> Tensor", "DigammaBackward0", _digamma,
                lambda grad, self: grad * _trigamma(self),
                "The logarithmic derivative of the gamma function of each element.",
                "jaxgrad.digamma(jaxgrad.tensor([1.0, 2.0]))", "tensor([-0.5772,  0.4228])",
                inplace="method", grad_nodes={"self": "MulBackward0"})
RSQRT = _math("rsqrt(Tensor self) -> Tensor", "RsqrtBackward0", jax.lax.rsqrt,
              lambda grad, result: -0.5 * grad * _c(result ** 3),
              "``1 / sqrt(x)`` of each element.",
              "jaxgrad.rsqrt(jaxgrad.tensor([4.0, 0.25]))", "tensor([0.5000, 2.0000])",
              grad_nodes={"self": "MulBackward0"})
_DEG2RAD = 0.017453292519943295
_RAD2DEG = 57.29577951308232
DEG2RAD = _math("deg2rad(Tensor self) -> Tensor", "Deg2RadBackward0",
                lambda x: x * jnp.asarray(_DEG2RAD, x.dtype),
                lambda grad: grad * _DEG2RAD, "Degrees to radians.",
                "jaxgrad.deg2rad(jaxgrad.tensor([180.0, 90.0]))", "tensor([3.1416, 1.5708])",
                grad_nodes={"self": "MulBackward1"})
RAD2DEG = _math("rad2deg(Tensor self) -> Tensor", "Rad2DegBackward0",
                lambda x: x * jnp.asarray(_RAD2DEG, x.dtype),
                lambda grad: grad * _RAD2DEG, "Radians to degrees.",
                "jaxgrad.rad2deg(jaxgrad.tensor([3.14159265, 1.0]))",
                "tensor([180.0000,  57.2958])", grad_nodes={"self": "MulBackward1"})


def _nan_to_num(x, nan, posinf, neginf):
    if _integral(x.dtype):
        return x
    return jnp.nan_to_num(x, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)


NAN_TO_NUM = _math(
    "nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",
    "NanToNumBackward0", _nan_to_num,
    lambda grad, self: grad * jnp.isfinite(self),
    "NaN, +inf and -inf replaced by ``nan`` (0), ``posinf`` and ``neginf`` (the dtype's "
    "largest and lowest values by default).",
    "jaxgrad.nan_to_num(jaxgrad.tensor([float('nan'), 1.0]), nan=-1.0)", "tensor([-1.,  1.])",
    promote=None, grad_nodes={"self": "MulBackward0"})


def _predicate(name: str, fn, doc: str, call: str, output: str, variants: str) -> Op:
    return Op(f"{name}(Tensor self) -> Tensor", None, fn, variants=variants,
              doc=_doc(doc, call, output))


ISNAN = _predicate("isnan", jnp.isnan, "True where the element is NaN.",
                   "jaxgrad.isnan(jaxgrad.tensor([float('nan'), 1.0]))",
                   "tensor([ True, False])", "function method")
ISINF = _predicate("isinf", jnp.isinf, "True where the element is +inf or -inf.",
                   "jaxgrad.isinf(jaxgrad.tensor([float('-inf'), 1.0]))",
                   "tensor([ True, False])", "function method")
ISFINITE = _predicate("isfinite", jnp.isfinite, "True where the element is neither inf nor NaN.",
                      "jaxgrad.isfinite(jaxgrad.tensor([float('inf'), 1.0]))",
                      "tensor([False,  True])", "function method")
ISPOSINF = _predicate("isposinf", jnp.isposinf, "True where the element is +inf.",
                      "jaxgrad.isposinf(jaxgrad.tensor([float('inf'), float('-inf')]))",
                      "tensor([ True, False])", "function method out")
ISNEGINF = _predicate("isneginf", jnp.isneginf, "True where the element is -inf.",
                      "jaxgrad.isneginf(jaxgrad.tensor([float('inf'), float('-inf')]))",
                      "tensor([False,  True])", "function method out")
SIGNBIT = _predicate("signbit", lambda x: jnp.signbit(x) if not _integral(x.dtype) else x < 0,
                     "True where the sign bit is set (negative numbers and -0.0).",
                     "jaxgrad.signbit(jaxgrad.tensor([-0.0, 1.0]))", "tensor([ True, False])",
                     "function method out")


def _atan2_grad(sign: int):
    def formula(grad, self, other):
        recip = 1 / (self * self + other * other)
        recip = jnp.where(jnp.isinf(recip), 0, recip)  # torch's atan2_backward: 0 at (0, 0)
        return grad * (other if sign > 0 else -self) * recip

    return formula


ATAN2 = Op("atan2(Tensor self, Tensor other) -> Tensor", "Atan2Backward0", jnp.arctan2,
           promote="float", variants="function method out", inplace="method",
           doc=_doc("The angle of the point (other, input): ``atan(input / other)`` in the right "
                    "quadrant.", "jaxgrad.atan2(jaxgrad.tensor([1.0, -1.0]), "
                    "jaxgrad.tensor([1.0, 0.0]))", "tensor([ 0.7854, -1.5708])"),
           grads={"self": _atan2_grad(1), "other": _atan2_grad(-1)},
           tangent=lambda self_t, other_t, self, other: (other * self_t - self * other_t) / (
               self * self + other * other),
           grad_nodes={"self": "MulBackward0", "other": "MulBackward0"})


def _floating_only(fn, kernel: str):
    def forward(x, y):
        if _integral(x.dtype):
            raise _no_kernel(kernel, x.dtype)
        return fn(x, y)

    return forward


HYPOT = Op("hypot(Tensor self, Tensor other) -> Tensor", "HypotBackward0",
           _floating_only(jnp.hypot, "hypot_cpu"), promote="common",
           variants="function method out", inplace="method",
           doc=_doc("``sqrt(input ** 2 + other ** 2)``, without overflow.",
                    "jaxgrad.hypot(jaxgrad.tensor([3.0]), jaxgrad.tensor([4.0]))", "tensor([5.])"),
           grads={"self": lambda grad, self, result: grad * self / result,
                  "other": lambda grad, other, result: grad * other / result},
           grad_nodes={"self": "DivBackward0", "other": "DivBackward0"})
LOGADDEXP = Op("logaddexp(Tensor self, Tensor other) -> Tensor", "LogaddexpBackward0",
               _floating_only(jnp.logaddexp, "logaddexp_cpu"), promote="common",
               variants="function method out",
               doc=_doc("``log(exp(input) + exp(other))``, computed stably.",
                        "jaxgrad.logaddexp(jaxgrad.tensor([0.0]), jaxgrad.tensor([0.0]))",
                        "tensor([0.6931])"),
               grads={"self": lambda grad, self, other: grad / (1 + jnp.exp(other - self)),
                      "other": lambda grad, self, other: grad / (1 + jnp.exp(self - other))},
               grad_nodes={"self": "DivBackward0", "other": "DivBackward0"})
LOGADDEXP2 = Op("logaddexp2(Tensor self, Tensor other) -> Tensor", "Logaddexp2Backward0",
                _floating_only(jnp.logaddexp2, "logaddexp2_cpu"), promote="common",
                variants="function method out",
                doc=_doc("``log2(2 ** input + 2 ** other)``, computed stably.",
                         "jaxgrad.logaddexp2(jaxgrad.tensor([1.0]), jaxgrad.tensor([1.0]))",
                         "tensor([2.])"),
                grads={"self": lambda grad, self, other: grad / (1 + jnp.exp2(other - self)),
                       "other": lambda grad, self, other: grad / (1 + jnp.exp2(self - other))},
                grad_nodes={"self": "DivBackward0", "other": "DivBackward0"})



def _nextafter_row(name: str) -> Op:
    inplace = name.endswith("_")
    return Op("nextafter(Tensor self, Tensor other) -> Tensor", "NextafterBackward0",
              _floating_only(jnp.nextafter, "nextafter_cpu"), promote="common",
              variants="" if inplace else "function method out",
              inplace="method" if inplace else "",
              doc=_doc("The next floating-point value after ``input`` towards ``other``.",
                       "jaxgrad.nextafter(jaxgrad.tensor([1.0]), jaxgrad.tensor([2.0])) > 1",
                       "tensor([True])"),
              grads={"self": lambda grad, self, other: jnp.where(
                  self != other, grad, jnp.zeros((), grad.dtype)), "other": _zeros_grad})


NEXTAFTER = _nextafter_row("nextafter")
NEXTAFTER_INPLACE = _nextafter_row("nextafter_")

def _not_implemented(name: str):
    """The formula of torch's NotImplemented node: its backward raises."""

    def formula(grad):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return formula


def _heaviside(x, values):
    if x.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return jnp.where(x == 0, values, (x > 0).astype(x.dtype))


def _heaviside_row(name: str) -> Op:
    inplace = name.endswith("_")
    return Op("heaviside(Tensor self, Tensor values) -> Tensor", "NotImplemented", _heaviside,
              variants="" if inplace else "function method out",
              inplace="method" if inplace else "",
              doc=_doc("The Heaviside step: 0 below zero, 1 above, ``values`` at zero.",
                       "jaxgrad.heaviside(jaxgrad.tensor([-1.0, 0.0, 2.0]), jaxgrad.tensor([0.5]))",
                       "tensor([0.0000, 0.5000, 1.0000])"),
              grads={"self": _not_implemented(name), "values": _not_implemented(name)})


HEAVISIDE = _heaviside_row("heaviside")
HEAVISIDE_INPLACE = _heaviside_row("heaviside_")


# xlogy: ``x * log(y)``, 0 where x == 0 (also nn's KL divergence)
def xlogy(x, y):
    """``x * log(y)``, exactly 0 where ``x == 0`` (computed in the operands' common dtype)."""
    d = jnp.result_type(x, y)
    x, y = x.astype(d), y.astype(d)
    return jnp.where(x == 0, jnp.zeros((), jnp.result_type(x, y)), x * jnp.log(y))


XLOGY = Op("xlogy", "XlogyBackward0", xlogy, inputs=("self", "other"), promote="float",
           grads={"self": lambda grad, self, other: jnp.where(
               (self == 0) & (other <= 0), jnp.zeros((), grad.dtype), xlogy(grad, other)),
               "other": lambda grad, self, other: grad * self / other}, tangent=ELEMENTWISE,
           grad_nodes={"self": "MaskedFillBackward0", "other": "DivBackward0"})
XLOGY_SCALAR_SELF = Op("xlogy", "XlogyBackward1", lambda other, self: xlogy(self, other),
                       inputs=("other",), aux=("self",), promote="float",
                       grads={"other": lambda grad, self, other: grad * self / other},
                       tangent=ELEMENTWISE, grad_nodes={"other": "DivBackward0"})
XLOGY_SCALAR_OTHER = Op(
    "xlogy", "XlogyBackward2", xlogy, inputs=("self",), aux=("other",), promote="float",
    grads={"self": lambda grad, self, other: jnp.where(
        (other <= 0) & (self == 0), jnp.zeros((), grad.dtype), xlogy(grad, other))},
    tangent=ELEMENTWISE)


# clamp_min/clamp_max: a Scalar bound is traced (ClampMinBackward0), a tensor one an input
def _clamp_one(fn, scalar_kernel: str | None = None):
    def forward(x, bound):
        if scalar_kernel is not None and x.dtype == jnp.bool_:
            raise _no_kernel(scalar_kernel, x.dtype)
        return fn(x, jnp.asarray(bound, x.dtype))

    return forward


def _where(keep, grad):
    return jnp.where(keep, grad, jnp.zeros_like(grad))


CLAMP_MIN = Op("clamp_min", "ClampMinBackward0",
               _clamp_one(jnp.maximum, "clamp_min_scalar_cpu"), aux=("min",),
               promote="common", grads={"self": lambda grad, self, min: _where(self >= min, grad)},
               grad_nodes={"self": "WhereBackward0"})
CLAMP_MIN_TENSOR = Op("clamp_min", "ClampMinBackward1", _clamp_one(jnp.maximum),
                      inputs=("self", "min"), promote="common",
                      grads={"self": lambda grad, self, min: _where(self >= min, grad),
                             "min": lambda grad, self, min: _where(self < min, grad)})
CLAMP_MAX = Op("clamp_max", "ClampMaxBackward0",
               _clamp_one(jnp.minimum, "clamp_max_scalar_cpu"), aux=("max",),
               promote="common", grads={"self": lambda grad, self, max: _where(self <= max, grad)})
CLAMP_MAX_TENSOR = Op("clamp_max", "ClampMaxBackward1", _clamp_one(jnp.minimum),
                      inputs=("self", "max"), promote="common",
                      grads={"self": lambda grad, self, max: _where(self <= max, grad),
                             "max": lambda grad, self, max: _where(self > max, grad)},
                      grad_nodes={"self": "WhereBackward0", "max": "WhereBackward0"})


# fmod (C's remainder, sign of the dividend), remainder (Python's %, sign of the divisor),
# floor_divide (not differentiable: torch records a NotImplemented node)
def _divmod_kernel(fn, kernel: str):
    def forward(x, y):
        if x.dtype == jnp.bool_:
            raise _no_kernel(kernel, x.dtype)
        return fn(x, jnp.asarray(y, x.dtype))

    return forward


def _floor_divide(x, y):
    """torch's div_floor: ``a / b`` where b == 0 (inf or NaN for floats), else Python's //."""
    if _integral(x.dtype):
        return jnp.floor_divide(x, y)
    return jnp.where(y == 0, x / y, jnp.floor_divide(x, jnp.where(y == 0, 1, y)))


FMOD = Op("fmod", "FmodBackward0", _divmod_kernel(jnp.fmod, "fmod_cpu"), aux=("other",),
          promote="common", grads={"self": identity_grad})
FMOD_TENSOR = Op("fmod", "FmodBackward1", _divmod_kernel(jnp.fmod, "fmod_cpu"),
                 inputs=("self", "other"), promote="common",
                 grads={"self": identity_grad,
                        "other": lambda grad, self, other: -grad * jnp.trunc(self / other)})
REMAINDER = Op("remainder", "RemainderBackward0", _divmod_kernel(jnp.remainder, "remainder_cpu"),
               aux=("other",), promote="common", grads={"self": identity_grad})
REMAINDER_TENSOR = Op("remainder", "RemainderBackward1",
                      _divmod_kernel(jnp.remainder, "remainder_cpu"), inputs=("self", "other"),
                      promote="common",
                      grads={"self": identity_grad,
                             "other": lambda grad, self, other:
                                 -grad * _floor_divide(self, other)})
REMAINDER_SCALAR_SELF = Op("remainder", "NotImplemented",
                           lambda other, self: _divmod_kernel(jnp.remainder, "remainder_cpu")(
                               jnp.asarray(self, other.dtype), other),
                           inputs=("other",), aux=("self",), promote="common",
                           grads={"other": _not_implemented("remainder")})
_FLOOR_DIVIDE = _divmod_kernel(_floor_divide, "div_floor_cpu")

def _rounded_divide(x, y, rounding_mode):
    """torch's div_floor and div_trunc kernels (integers divide exactly, C's way for trunc)."""
    if x.dtype == jnp.bool_:
        raise _no_kernel(f"div_{rounding_mode}_cpu", x.dtype)
    if rounding_mode == "floor":
        return _floor_divide(x, y)
    if _integral(x.dtype):
        return jax.lax.div(x, jnp.asarray(y, x.dtype))
    return jnp.trunc(_true_divide(x, y))


def _rounded_divide_self_grad(grad, other, rounding_mode):
    return jnp.zeros_like(grad)  # (the arguments torch's formula names, and saves)


def _rounded_divide_other_grad(grad, self, other, rounding_mode):
    return jnp.zeros_like(grad)


# div with a rounding mode: piecewise constant, so torch's formulas (and tangent) are zeros
DIV_MODE = Op("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
              "DivBackward2", _rounded_divide, promote="common", numbers_as_tensors=True,
              grads={"self": _rounded_divide_self_grad, "other": _rounded_divide_other_grad})

# per form (out of place, in place: the backward's message names it): Tensor other, Scalar other
FLOOR_DIVIDE = tuple(
    Op("floor_divide", "NotImplemented", _FLOOR_DIVIDE, inputs=("self", "other"),
       promote="common",
       grads={"self": _not_implemented(name), "other": _not_implemented(name)})
    for name in ("floor_divide", "floor_divide_"))
FLOOR_DIVIDE_SCALAR = tuple(
    Op("floor_divide", "NotImplemented", _FLOOR_DIVIDE, aux=("other",), promote="common",
       grads={"self": _not_implemented(name)})
    for name in ("floor_divide", "floor_divide_"))
FLOOR_DIVIDE_SCALAR_SELF = Op(
    "floor_divide", "NotImplemented",
    lambda other, self: _FLOOR_DIVIDE(jnp.asarray(self, other.dtype), other),
    inputs=("other",), aux=("self",), promote="common",
    grads={"other": _not_implemented("floor_divide")})


# logical and bitwise ops: no autograd; bitwise ones only for integral and bool tensors
def _logical(name: str, fn, output: str) -> Op:
    return Op(f"{name}(Tensor self, Tensor other) -> Tensor", None, fn, promote="common",
              variants="function method out",
              doc=_doc(f"Elementwise logical {name.split('_')[1].upper()} of the elements' "
                       "truth values (nonzero is True), as a bool tensor.",
                       f"jaxgrad.{name}(jaxgrad.tensor([0.0, 1.0, 2.0]), "
                       "jaxgrad.tensor([1, 0, 3]))", output))


LOGICAL_AND = _logical("logical_and", jnp.logical_and, "tensor([False, False,  True])")
LOGICAL_OR = _logical("logical_or", jnp.logical_or, "tensor([True, True, True])")
LOGICAL_XOR = _logical("logical_xor", jnp.logical_xor, "tensor([ True,  True, False])")
# in place, the truth values are written in self's dtype whatever the operands' common dtype
LOGICAL_AND_INPLACE = Op("logical_and", None, jnp.logical_and, inputs=("self", "other"))
LOGICAL_OR_INPLACE = Op("logical_or", None, jnp.logical_or, inputs=("self", "other"))
LOGICAL_XOR_INPLACE = Op("logical_xor", None, jnp.logical_xor, inputs=("self", "other"))


def _bitwise(fn, kernel: str):
    def forward(x, *others):
        if not _integral(x.dtype):
            raise _no_kernel(kernel, x.dtype)
        return fn(x, *[jnp.asarray(o, x.dtype) for o in others])

    return forward


BITWISE_AND = Op("bitwise_and", None, _bitwise(jnp.bitwise_and, "bitwise_and_cpu"),
                 inputs=("self", "other"), promote="common")
BITWISE_OR = Op("bitwise_or", None, _bitwise(jnp.bitwise_or, "bitwise_or_cpu"),
                inputs=("self", "other"), promote="common")
BITWISE_XOR = Op("bitwise_xor", None, _bitwise(jnp.bitwise_xor, "bitwise_xor_cpu"),
                 inputs=("self", "other"), promote="common")
BITWISE_NOT = Op("bitwise_not(Tensor self) -> Tensor", None,
                 _bitwise(jnp.invert, "bitwise_not_cpu"), variants="function method out",
                 inplace="method",
                 doc=_doc("Bitwise NOT of an integral or bool tensor (``~x``).",
                          "jaxgrad.bitwise_not(jaxgrad.tensor([0, 5, -1]))",
                          "tensor([-1, -6,  0])"))


# --- complex numbers ----------------------------------------------------------------------------

def _angle(x):
    """The argument of each element; of a real one, pi for a negative number, else 0 (NaN kept)."""
    if jnp.iscomplexobj(x):
        return jnp.angle(x)
    return jnp.where(jnp.isnan(x), x, jnp.where(x < 0, jnp.asarray(jnp.pi, x.dtype),
                                                jnp.zeros_like(x)))


def _angle_grad(grad, self):
    """torch's angle_backward: ``grad * self / |self|^2 * i``, 0 at 0 (0 for real inputs)."""
    if not jnp.iscomplexobj(self):
        return jnp.zeros_like(grad)
    safe = jnp.where(self == 0, jnp.ones_like(self), self)
    return jnp.where(self == 0, jnp.zeros_like(safe), grad * safe / jnp.abs(safe) ** 2 * 1j)


ANGLE = _math("angle(Tensor self) -> Tensor", "AngleBackward0", _angle, _angle_grad,
              "The argument (phase) of each element: ``atan2(imag, real)``; for real elements "
              "pi where negative, else 0.",
              "jaxgrad.angle(jaxgrad.tensor([-1.0, 0.0]))", "tensor([3.1416, 0.0000])",
              inplace="")
# (a real tensor's conj_physical is the tensor itself: see _functions/complex_numbers)
CONJ_PHYSICAL = Op("conj_physical", "ConjPhysicalBackward0", jnp.conj,
                   grads={"self": lambda grad: jnp.conj(grad)}, tangent=ELEMENTWISE,
                   grad_nodes={"self": "ConjPhysicalBackward0"})


def _polar(abs, angle):
    return jax.lax.complex(abs * jnp.cos(angle), abs * jnp.sin(angle))


def _polar_grads(grad, result):
    """torch's polar_backward: ``real(conj(grad) * sgn(result))`` and
    ``real(conj(grad) * result * i)``."""
    return jnp.real(jnp.conj(grad) * sgn(result)), jnp.real(jnp.conj(grad) * result * 1j)


COMPLEX = Op("complex(Tensor real, Tensor imag) -> Tensor", "ComplexBackward0",
             lambda real, imag: jax.lax.complex(*jnp.broadcast_arrays(real, imag)),
             grads={"real": lambda grad: jnp.real(grad), "imag": lambda grad: jnp.imag(grad)})
POLAR = Op("polar(Tensor abs, Tensor angle) -> Tensor", "PolarBackward0", _polar,
           grads={"abs": lambda grad, result: _polar_grads(grad, result)[0],
                  "angle": lambda grad, result: _polar_grads(grad, result)[1]},
           # torch's forward formula: not polar_backward transposed where abs < 0
           tangent=lambda abs_t, angle_t, abs, angle: jax.lax.complex(
               abs_t * jnp.cos(angle) - angle_t * abs * jnp.sin(angle),
               abs_t * jnp.sin(angle) + angle_t * abs * jnp.cos(angle)))
