"""Elementwise ops on a number's parts: copysign, ldexp, frexp (sign, exponent and mantissa of
floats), gcd, lcm and the bit shifts (integers). What each formula names is what torch saves
(derivatives.yaml): copysign saves ``self`` and ``result``, ldexp ``other`` and ``result``,
frexp only its ``exponent`` output.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes
from ._table import ELEMENTWISE, Op
from ._table import example_doc as _doc


def _no_kernel(kernel: str, dtype) -> NotImplementedError:
    name = _dtypes.scalar_type_name(_dtypes.from_numpy_dtype(dtype))
    return NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


def _integral(dtype) -> bool:
    return jnp.issubdtype(dtype, jnp.integer)


def _zeros_grad(grad):
    return jnp.zeros_like(grad)


# --- copysign -------------------------------------------------------------------------------------

def _copysign(x, other):
    return jnp.copysign(x, jnp.asarray(other, x.dtype))


def _copysign_grad(grad, self, result):
    """torch's copysign_tensor_self_backward: ``grad * result / self``, 0 where ``self`` is 0
    (computed as torch does, so its second derivative there is NaN as torch's is)."""
    ratio = result / self
    return grad * jnp.where(self == 0, jnp.zeros_like(ratio), ratio)


COPYSIGN = Op("copysign", "CopysignBackward0", _copysign, inputs=("self", "other"),
              promote="float", grads={"self": _copysign_grad, "other": _zeros_grad},
              tangent=lambda self_t, other_t, self, result: _copysign_grad(self_t, self, result),
              grad_nodes={"self": "MulBackward0"})
COPYSIGN_SCALAR = Op("copysign", "CopysignBackward1", _copysign, aux=("other",), promote="float",
                     grads={"self": _copysign_grad}, tangent=ELEMENTWISE,
                     grad_nodes={"self": "MulBackward0"})


# --- ldexp, frexp ---------------------------------------------------------------------------------

def _ldexp(x, other):
    return x * jnp.exp2(other.astype(x.dtype))


def _exp2(other, dtype):
    """``pow(2, other)`` as torch's ldexp formula computes it: in integers for an integral
    ``other`` (0 for a negative exponent, wrapping past the width)."""
    if not _integral(other.dtype):
        return jnp.exp2(other.astype(dtype))
    bits = np.iinfo(other.dtype).bits
    inside = (other >= 0) & (other < bits)
    shifted = jnp.left_shift(jnp.ones_like(other), jnp.where(inside, other, 0))
    return jnp.where(inside, shifted, jnp.zeros_like(other))


def _ldexp_row(name: str) -> Op:
    inplace = name.endswith("_")
    return Op("ldexp.Tensor(Tensor self, Tensor other) -> Tensor", "LdexpBackward0", _ldexp,
              promote="float", variants="" if inplace else "function method out",
              inplace="function method" if inplace else "",
              doc=_doc("``input * 2 ** other``.",
                       "jaxgrad.ldexp(jaxgrad.tensor([1.0, 3.0]), jaxgrad.tensor([2, -1]))",
                       "tensor([4.0000, 1.5000])"),
              grads={"self": lambda grad, other: grad * _exp2(other, grad.dtype),
                     "other": lambda grad, result: grad * result * np.log(2.0)},
              grad_nodes={"self": "MulBackward0", "other": "MulBackward1"})


LDEXP = _ldexp_row("ldexp")
LDEXP_INPLACE = _ldexp_row("ldexp_")


def _frexp(x):
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = jnp.frexp(x)
    return mantissa.astype(x.dtype), exponent.astype(jnp.int32)


FREXP = Op("frexp", "FrexpBackward0", _frexp, outputs=("mantissa", "exponent"),
           nondiff_outputs=(1,),
           grads={"self": lambda grad, exponent: grad / jnp.exp2(exponent.astype(grad.dtype))},
           tangent=lambda self_t, exponent: self_t / jnp.exp2(exponent.astype(self_t.dtype)),
           grad_nodes={"self": "DivBackward0"})


# --- gcd, lcm -------------------------------------------------------------------------------------

def _integers_only(fn, kernel: str):
    def forward(x, y):
        if not _integral(x.dtype):
            raise _no_kernel(kernel, x.dtype)
        return fn(x, y.astype(x.dtype))

    return forward


def _gcd(x, y):
    return jnp.gcd(x, y)


def _lcm(x, y):
    """``|x / gcd(x, y) * y|`` as torch's calc_lcm computes it (0 where the gcd is 0)."""
    g = jnp.gcd(x, y)
    safe = jnp.where(g == 0, jnp.ones_like(g), g)
    return jnp.where(g == 0, jnp.zeros_like(g), jnp.abs(x // safe * y))


def _integer_row(name: str, fn, summary: str, call: str, output: str) -> tuple[Op, Op]:
    kernel = name + "_cpu"
    schema = f"{name}(Tensor self, Tensor other) -> Tensor"
    doc = _doc(summary, call, output)
    return (Op(schema, None, _integers_only(fn, kernel), promote="common",
               variants="function method out", doc=doc),
            Op(schema, None, _integers_only(fn, kernel), inplace="function method", doc=doc))


GCD, GCD_INPLACE = _integer_row(
    "gcd", _gcd, "The greatest common divisor of integer elements (0 for two zeros).",
    "jaxgrad.gcd(jaxgrad.tensor([12, -18]), jaxgrad.tensor([8, 12]))", "tensor([4, 6])")
LCM, LCM_INPLACE = _integer_row(
    "lcm", _lcm, "The least common multiple of integer elements (0 where either is 0).",
    "jaxgrad.lcm(jaxgrad.tensor([4, -6]), jaxgrad.tensor([6, 4]))", "tensor([12, 12])")


# --- shifts ---------------------------------------------------------------------------------------

def _shift(left: bool):
    kernel = "lshift_cpu" if left else "rshift_cpu"

    def forward(x, other):
        if not _integral(x.dtype):
            raise _no_kernel(kernel, x.dtype)
        b = jnp.asarray(other).astype(x.dtype)
        bits = np.iinfo(x.dtype).bits
        signed = jnp.issubdtype(x.dtype, jnp.signedinteger)
        out_of_range = (b >= bits) | (b < 0) if signed else b >= bits
        b = jnp.where(out_of_range, jnp.zeros_like(b), b)
        if left:  # (shifted as unsigned: no overflow)
            return jnp.where(out_of_range, jnp.zeros_like(x), jnp.left_shift(x, b))
        fill = jnp.right_shift(x, bits - 1) if signed else jnp.zeros_like(x)
        return jnp.where(out_of_range, fill, jnp.right_shift(x, b))

    return forward


BITWISE_LEFT_SHIFT = Op("bitwise_left_shift", None, _shift(True), inputs=("self", "other"),
                        promote="common")
BITWISE_RIGHT_SHIFT = Op("bitwise_right_shift", None, _shift(False), inputs=("self", "other"),
                         promote="common")
