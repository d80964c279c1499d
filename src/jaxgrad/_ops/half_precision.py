"""Half precision as torch's CPU kernels compute it: bfloat16/float16 operands computed in
float32 (torch's "opmath" type) and rounded where torch's kernels round, so results agree bit
for bit. Used by op rows (``in_float32`` kernels and formulas, ``Op(opmath=...)``), by formulas
(``times_scalar``) and by the fused optimizer steps (``add_scaled``, ``times_scalar``, ...), each
of which is torch's op of that name on arrays.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

HALF_DTYPES = frozenset({np.dtype(jnp.bfloat16), np.dtype(jnp.float16)})


def _is_half(a: Any) -> bool:
    return getattr(a, "dtype", None) in HALF_DTYPES


def _wide(x: Any) -> Any:
    return x.astype(jnp.float32) if _is_half(x) else x


def in_float32(fn: Callable) -> Callable:
    """``fn`` (a kernel or a formula) computed in float32 for bfloat16/float16 operands, its
    result rounded once to their dtype: torch's CPU kernels for activations convert half
    vectors to float, compute, and round the result once.

    >>> import jax.numpy as jnp
    >>> from jaxgrad._ops.half_precision import in_float32
    >>> in_float32(lambda x: x * 3 - x)(jnp.ones(1, jnp.bfloat16)).dtype
    dtype(bfloat16)
    """
    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        low = next((a.dtype for a in (*args, *kwargs.values()) if _is_half(a)), None)
        if low is None:
            return fn(*args, **kwargs)
        up = [a.astype(jnp.float32) if _is_half(a) else a for a in args]
        out = fn(*up, **{k: v.astype(jnp.float32) if _is_half(v) else v
                         for k, v in kwargs.items()})
        if isinstance(out, tuple):
            return tuple(o.astype(low) for o in out)
        return out.astype(low)

    return wrapped


def times_scalar(x, scalar):
    """``x * scalar`` in a formula as torch multiplies a tensor by a Scalar: a half-precision
    ``x`` in float32 with the Scalar in float32 (not rounded to ``x``'s dtype), rounded once.

    >>> import jax.numpy as jnp
    >>> from jaxgrad._ops.half_precision import times_scalar
    >>> times_scalar(jnp.ones(1, jnp.bfloat16) * 3, 0.9).tolist()  # bfloat16(0.9) * 3: 2.6875
    [2.703125]
    """
    if getattr(x, "dtype", None) in HALF_DTYPES:
        return (x.astype(jnp.float32) * jnp.asarray(scalar, jnp.float32)).astype(x.dtype)
    return x * _as_operand_of(x, scalar)


def _as_operand_of(x, scalar):
    """A Scalar as an operand that keeps ``x``'s dtype (a float64 number times a float32 tensor
    is float32, as a wrapped number in torch)."""
    s = jnp.asarray(scalar)
    if jnp.issubdtype(s.dtype, jnp.floating) and jnp.issubdtype(x.dtype, jnp.inexact):
        return s.astype(jnp.real(jnp.zeros((), x.dtype)).dtype)
    return s


def scalar_over(scalar, x):
    """``scalar / x`` in a formula as ATen's C++ ``Scalar / Tensor`` computes it:
    ``x.reciprocal() * scalar`` (see :func:`times_scalar`)."""
    return times_scalar(1 / x, scalar)




def add_scaled(x, y, alpha):
    """torch's ``x.add(y, alpha=alpha)``: for half ``x``, ``alpha`` rounded to its dtype, then
    ``x + alpha * y`` in float32, rounded once.

    >>> import jax.numpy as jnp
    >>> from jaxgrad._ops.half_precision import add_scaled
    >>> add_scaled(jnp.ones(1, jnp.bfloat16), jnp.ones(1, jnp.bfloat16), -0.1).tolist()
    [0.8984375]
    """
    alpha = jnp.asarray(alpha).astype(x.dtype)
    if _is_half(x):
        return (_wide(x) + _wide(alpha) * _wide(y)).astype(x.dtype)
    return x + alpha * y


def add_scalar(x, scalar):
    """torch's ``x.add(scalar)`` for a number: the number rounded to ``x``'s dtype, added."""
    return x + jnp.asarray(scalar).astype(x.dtype)


def div_scalar(x, scalar):
    """torch's ``x / scalar`` for a number: half ``x`` divided in float32, rounded once."""
    if _is_half(x):
        return (_wide(x) / jnp.asarray(scalar, jnp.float32)).astype(x.dtype)
    return x / jnp.asarray(scalar).astype(x.dtype)


def addcmul(x, t1, t2, value):
    """torch's ``x.addcmul(t1, t2, value=value)``: ``x + value * t1 * t2``, half precision in
    float32 rounded once."""
    if _is_half(x):
        out = _wide(x) + jnp.asarray(value, jnp.float32) * _wide(t1) * _wide(t2)
        return out.astype(x.dtype)
    return x + jnp.asarray(value).astype(x.dtype) * t1 * t2


def addcdiv(x, t1, t2, value):
    """torch's ``x.addcdiv(t1, t2, value=value)``: ``x + value * t1 / t2`` (see
    :func:`addcmul`)."""
    if _is_half(x):
        out = _wide(x) + jnp.asarray(value, jnp.float32) * _wide(t1) / _wide(t2)
        return out.astype(x.dtype)
    return x + jnp.asarray(value).astype(x.dtype) * t1 / t2


def lerp(x, end, weight):
    """ATen's lerp: exact at both ends (``|weight| < 0.5`` counts from ``x``, else from ``end``)."""
    weight = jnp.asarray(weight, x.dtype)
    return jnp.where(jnp.abs(weight) < 0.5, x + weight * (end - x),
                     end - (end - x) * (1 - weight))


def lerp_scalar(x, end, weight):
    """torch's ``x.lerp(end, weight)`` for a number ``weight``: half precision in float32 with
    the weight in float32, rounded once."""
    if _is_half(x):
        return lerp(_wide(x), _wide(end), jnp.asarray(weight, jnp.float32)).astype(x.dtype)
    return lerp(x, end, weight)
