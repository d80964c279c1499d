"""Elementwise arithmetic and math: add, sub, mul, div, pow, clamp, lerp, round, fmod,
remainder, floor_divide, xlogy, bitwise and logical ops, and their in-place forms; the
rows of ``_ops/elementwise.py`` (exp, sin, eq, ...) are generated here whole, with torch's other
names for them (greater, arcsin, fix, ...).
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes
from .._core.grad_mode import is_grad_enabled
from .._core.tensor import Tensor
from .._core.typename import type_name
from .._engine.dispatch import apply, apply_inplace, check_overlap
from .._ops import elementwise as E
from .arguments import (
    broadcast_shapes,
    check_broadcast,
    check_inplace_broadcast,
    number_or_tensor,
    raw_shape,
    require_tensors,
    scalar,
)
from .opgen import FALLBACK, declare, declare_alias, generate
from .shapes import to_dtype

# The ops a row of ``_ops`` declares whole (``variants=``/``inplace=``) are generated here from
# their schemas (see ``opgen``).
globals().update(generate(E))


@declare(
    'add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor',
    numbers_as_tensors=True, variants='function method out')
def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input + alpha * other`` with broadcasting and type promotion.

    >>> import jaxgrad
    >>> jaxgrad.add(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([10.0, 20.0]), alpha=0.5)
    tensor([ 6., 12.])
    """
    if not isinstance(input, Tensor):
        if alpha == 1 and type(alpha) is int and isinstance(other, Tensor):
            return add(other, input)
        return add(tensor_like(input, other), other, alpha=alpha)
    check_broadcast(input, other)
    E.check_alpha(input, other, alpha)
    if alpha == 1:
        return apply(E.ADD, input, number_or_tensor(other))
    return apply(E.ADD_ALPHA, input, number_or_tensor(other), aux=(scalar(alpha),))


@declare(
    'sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor',
    numbers_as_tensors=True, variants='function method out')
def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input - alpha * other``.

    >>> import jaxgrad
    >>> jaxgrad.sub(jaxgrad.tensor([1.0, 2.0]), 1)
    tensor([0., 1.])
    """
    if not isinstance(input, Tensor):
        # (torch wraps the number as a 0-d tensor: SubBackward0, where ``2 - t`` is rsub's)
        return sub(tensor_like(input, other), other, alpha=alpha)
    _check_sub(input, other)
    other = number_or_tensor(other)
    check_broadcast(input, other)
    E.check_alpha(input, other, alpha)
    if alpha == 1:
        return apply(E.SUB, input, other)
    return apply(E.SUB_ALPHA, input, other, aux=(scalar(alpha),))


_BOOL = np.dtype(np.bool_)


def _is_bool(x: Any) -> bool:
    """Whether ``x`` is a bool tensor or a Python bool (torch wraps it as a bool tensor; a
    numpy bool is not one)."""
    return x._cell.array.dtype == _BOOL if isinstance(x, Tensor) else isinstance(x, bool)


def _check_sub(input: Tensor, other: Any) -> None:
    """torch's errors for subtraction involving bool tensors."""
    a, b = _is_bool(input), _is_bool(other)
    if a and b:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if a or b:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def _check_neg(input: Tensor) -> None:
    if _is_bool(input):
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")


def _check_pow_exponent(input: Tensor, exponent: Any) -> None:
    """torch's error for an integral tensor raised to a negative integral Python scalar."""
    if isinstance(exponent, int) and exponent < 0 and not (
            input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _promote_with_scalars(input: Tensor, *scalars: Any) -> Tensor:
    """Cast ``input`` to torch's result type with Python-scalar attributes (e.g. int ** 0.5)."""
    d = _dtypes.result_type([(input.dtype, input.ndim)], [s for s in scalars if s is not None])
    return input if d is input.dtype else to_dtype(input, d)


def with_scalar(row: Any, input: Tensor, value: Any, alpha: Any = 1) -> Tensor:
    """``row``, a Scalar overload (``mul.Scalar``: MulBackward1; ``_ops/scalar_overloads.py``),
    on ``input`` and the number ``value`` (and ``alpha``, for add's and sub's), in torch's result
    type: an integer tensor times a float is in the default float dtype, as torch's C++
    ``tensor * double`` is.

    >>> import jaxgrad
    >>> from jaxgrad._functions.pointwise import with_scalar
    >>> from jaxgrad._ops import scalar_overloads as SO
    >>> with_scalar(SO.MUL_SCALAR, jaxgrad.tensor([1, 2]), 0.5)
    tensor([0.5000, 1.0000])
    """
    aux = (value, alpha) if "alpha" in row.aux else (value,)
    return apply(row, _promote_with_scalars(input, *aux), aux=aux)


@declare(
    'rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor',
    variants='function',
    numbers_as_tensors=True)
def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * input``.

    >>> import jaxgrad
    >>> jaxgrad.rsub(jaxgrad.tensor([1.0, 2.0]), 5)
    tensor([4., 3.])
    """
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    _check_sub(input, other)
    other = number_or_tensor(other)
    alpha = scalar(alpha)
    E.RSUB.checks(input, other, alpha)
    return apply(E.RSUB, _promote_with_scalars(input, other, alpha), aux=(other, alpha))


@declare(
    'mul.Tensor(Tensor self, Tensor other) -> Tensor',
    numbers_as_tensors=True, variants='function method out')
def mul(input: Any, other: Any) -> Tensor:
    """Elementwise product.

    >>> import jaxgrad
    >>> jaxgrad.mul(jaxgrad.tensor([1.0, 2.0]), 3)
    tensor([3., 6.])
    """
    if not isinstance(input, Tensor):
        input, other = other, input
    check_broadcast(input, other)
    return apply(E.MUL, input, number_or_tensor(other))


@declare(
    'div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor',
    numbers_as_tensors=True, variants='function method out')
def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """True division, or rounded down (``rounding_mode='floor'``) or toward zero (``'trunc'``),
    whose gradients are zeros (DivBackward2).

    >>> import jaxgrad
    >>> jaxgrad.div(jaxgrad.tensor([5.0, -5.0]), 2, rounding_mode='floor')
    tensor([ 2., -3.])
    """
    if not isinstance(input, Tensor):
        # (torch wraps the number as a 0-d tensor: DivBackward0, where ``2 / t`` is
        # reciprocal's and mul's)
        return div(tensor_like(input, other), other, rounding_mode=rounding_mode)
    check_broadcast(input, other)
    if rounding_mode is not None:
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or "
                               f"'floor' but found '{rounding_mode}'")
        other = number_or_tensor(other)
        _check_zero_division(input, other)
        return apply(E.DIV_MODE, input, other, rounding_mode=rounding_mode)
    return apply(E.DIV, input, number_or_tensor(other))


@declare(
    'true_divide.Tensor(Tensor self, Tensor other) -> Tensor',
    numbers_as_tensors=True, variants='function method out')
def true_divide(input: Any, other: Any) -> Tensor:
    """``div`` without a rounding mode.

    >>> import jaxgrad
    >>> jaxgrad.true_divide(jaxgrad.tensor([1.0, 3.0]), 2)
    tensor([0.5000, 1.5000])
    """
    return div(input, other)


@declare('neg(Tensor self) -> Tensor', variants='function method out')
def neg(input: Tensor) -> Tensor:
    """``-input``.

    >>> import jaxgrad
    >>> jaxgrad.neg(jaxgrad.tensor([1.0, -2.0]))
    tensor([-1.,  2.])
    """
    _check_neg(input)
    return apply(E.NEG, input)


@declare(
    'pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor',
    numbers_as_tensors=True, variants='function method out')
def pow(input: Any, exponent: Any) -> Tensor:
    """``input ** exponent`` (tensor or scalar on either side).

    >>> import jaxgrad
    >>> jaxgrad.pow(jaxgrad.tensor([1.0, 2.0, 3.0]), 2)
    tensor([1., 4., 9.])
    """
    if not isinstance(input, Tensor):
        base = number_or_tensor(input)
        return apply(E.POW_SCALAR_BASE, _promote_with_scalars(exponent, base), aux=(base,))
    if isinstance(exponent, Tensor):
        check_broadcast(input, exponent)
        return apply(E.POW_TENSOR, input, exponent)
    exponent = number_or_tensor(exponent)
    _check_pow_exponent(input, exponent)
    input = _promote_with_scalars(input, exponent)
    return apply(E.POW, input, aux=(exponent,), _fast=_pow_fast(input, exponent))


def _pow_fast(input: Tensor, exponent: Any) -> tuple | None:
    """The static fast path of a Scalar exponent (see ``E.POW_FAST_EXPONENTS``), or None."""
    if type(exponent) in (int, float) and (exponent in E.POW_FAST_EXPONENTS
                                           or not input.dtype.is_floating_point):
        return type(exponent), exponent
    return None


def _check_inplace_result(input: Tensor, *scalars: Any, c_name: bool = False) -> None:
    """torch's error for an in-place op whose Scalar operands promote past ``input``'s dtype
    (clamp's kernel names the output type as C does: ``long int``)."""
    result = _dtypes.result_type([(input.dtype, input.ndim)], [s for s in scalars if s is not None])
    if not _dtypes.can_cast(result, input.dtype):
        out = (_dtypes.c_type_name if c_name else _dtypes.scalar_type_name)(input.dtype)
        raise RuntimeError(f"result type {_dtypes.scalar_type_name(result)} can't be cast to the "
                           f"desired output type {out}")


@declare(
    'clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor',
    numbers_as_tensors=('min', 'max'), variants='function method out')
def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """Clamp into [min, max]; scalar bounds give ClampBackward1, tensor bounds ClampBackward0.

    >>> import jaxgrad
    >>> jaxgrad.clamp(jaxgrad.tensor([-2.0, 0.5, 3.0]), min=0.0, max=1.0)
    tensor([0.0000, 0.5000, 1.0000])
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        broadcast_shapes(*[raw_shape(t) for t in (input, min, max) if isinstance(t, Tensor)])
        return apply(E.CLAMP_TENSOR, input, _as_tensor(min, input), _as_tensor(max, input))
    lo = None if min is None else number_or_tensor(min)
    hi = None if max is None else number_or_tensor(max)
    promoted = _promote_with_scalars(input, lo, hi)
    lo, hi = (None if v is None else _dtypes.checked_scalar(v, promoted.dtype) for v in (lo, hi))
    return apply(E.CLAMP, promoted, aux=(lo, hi))


clip = declare_alias("clip", "clamp")


def _as_tensor(x: Any, like: Tensor) -> Tensor | None:
    if x is None or isinstance(x, Tensor):
        return x
    return Tensor._make(jnp.asarray(x, like._value.dtype))


def typename(obj: Any) -> str:
    """torch.typename: ``jaxgrad.FloatTensor`` for a tensor; for a class or function its
    qualified name, for anything else its class's (``builtins`` names unqualified).

    >>> import jaxgrad
    >>> jaxgrad.typename(jaxgrad.ones(1)), jaxgrad.typename(3)
    ('jaxgrad.FloatTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if qualname is None:
        module, qualname = type(obj).__module__ or "", type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def tensor_like(value: Any, like: Any) -> Tensor:
    """The number ``value`` as torch wraps one passed where a Tensor is expected: a 0-d tensor
    of its result type with ``like`` (a tensor, or another number)."""
    dims = [(like.dtype, like.ndim)] if isinstance(like, Tensor) else []
    return Tensor._make(jnp.asarray(value, _dtypes.result_type(dims, [value]).np))


@declare(
    'lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor',
    numbers_as_tensors=('weight',), variants='function method out')
def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``input + weight * (end - input)``, computed as ATen does (exact at both ends).

    A number ``weight`` records LerpBackward0, a tensor one LerpBackward1.

    >>> import jaxgrad
    >>> jaxgrad.lerp(jaxgrad.zeros(2), jaxgrad.tensor([1.0, 4.0]), 0.25)
    tensor([0.2500, 1.0000])
    """
    require_tensors(end)
    check_broadcast(input, end)
    if isinstance(weight, Tensor):
        check_broadcast(end, weight)
        E.LERP_TENSOR.checks(input, end, weight)
        return apply(E.LERP_TENSOR, input, end, weight)
    E.LERP.checks(input, end, weight)
    return apply(E.LERP, input, end, aux=(number_or_tensor(weight),))


@declare('square(Tensor self) -> Tensor', variants='function method out')
def square(input: Tensor) -> Tensor:
    """``input ** 2`` (recorded as torch records it: PowBackward0).

    >>> import jaxgrad
    >>> jaxgrad.square(jaxgrad.tensor([1.0, -3.0]))
    tensor([1., 9.])
    """
    return pow(input, 2)


@declare(
    'add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)',
    variants='method',
    numbers_as_tensors=True)
def add_(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input += alpha * other``, in place.

    >>> import jaxgrad
    >>> jaxgrad.ones(2).add_(jaxgrad.tensor([1.0, 2.0]), alpha=2)
    tensor([3., 5.])
    """
    check_overlap(E.ADD, input, (other,))  # (before the shape check, as torch's)
    check_inplace_broadcast(input, other)
    E.check_alpha(input, other, alpha)
    if alpha == 1:
        return apply_inplace(E.ADD, input, number_or_tensor(other))
    return apply_inplace(E.ADD_ALPHA, input, number_or_tensor(other), aux=(scalar(alpha),))


@declare(
    'sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)',
    variants='method',
    numbers_as_tensors=True)
def sub_(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input -= alpha * other``, in place.

    >>> import jaxgrad
    >>> jaxgrad.ones(2).sub_(0.5)
    tensor([0.5000, 0.5000])
    """
    _check_sub(input, other)
    other = number_or_tensor(other)
    check_overlap(E.SUB, input, (other,))
    check_inplace_broadcast(input, other)
    E.check_alpha(input, other, alpha)
    if alpha == 1:
        return apply_inplace(E.SUB, input, other)
    return apply_inplace(E.SUB_ALPHA, input, other, aux=(scalar(alpha),))


@declare(
    'pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)',
    variants='method',
    numbers_as_tensors=True)
def pow_(input: Tensor, exponent: Any) -> Tensor:
    """``input **= exponent``, in place.

    >>> import jaxgrad
    >>> jaxgrad.tensor([2.0, 3.0]).pow_(2)
    tensor([4., 9.])
    """
    if isinstance(exponent, Tensor):
        check_overlap(E.POW_TENSOR, input, (exponent,))
        check_inplace_broadcast(input, exponent)
        return apply_inplace(E.POW_TENSOR, input, exponent)
    exponent = number_or_tensor(exponent)
    _check_pow_exponent(input, exponent)
    _check_inplace_result(input, exponent)
    return apply_inplace(E.POW, input, aux=(exponent,), _fast=_pow_fast(input, exponent))


def _check_fill_value(value: Any) -> None:
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.ndim} dimensions.")


@declare('fill.Tensor(Tensor self, Tensor value) -> Tensor', variants='function',
         numbers_as_tensors=('value',))
def fill(input: Tensor, value: Any) -> Tensor:
    """A tensor like ``input`` filled with ``value`` (a number or a 0-d tensor, which gets the
    gradient's sum); ``input`` gets a zero gradient.

    >>> import jaxgrad
    >>> jaxgrad.fill(jaxgrad.tensor([1, 2, 3]), 2.5)
    tensor([2, 2, 2])
    """
    _check_fill_value(value)
    if isinstance(value, Tensor):
        return apply(E.FILL_OUT_TENSOR, input, value)
    return apply(E.FILL_OUT, input, aux=(number_or_tensor(value),))


@declare('fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)', numbers_as_tensors=('value',))
def fill_(input: Tensor, value: Any) -> Tensor:
    """Fill with ``value`` (a number or a 0-d tensor), in place.

    >>> import jaxgrad
    >>> jaxgrad.zeros(3).fill_(2.5)
    tensor([2.5000, 2.5000, 2.5000])
    """
    _check_fill_value(value)
    if isinstance(value, Tensor):
        return apply_inplace(E.FILL_TENSOR, input, value)
    value = _dtypes.checked_scalar(value, input.dtype, input.numel())
    return apply_inplace(E.FILL, input, aux=(number_or_tensor(value),))


@declare(
    'lerp_.Tensor(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)',
    variants='method', numbers_as_tensors=('weight',))
def lerp_(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``lerp``, in place.

    >>> import jaxgrad
    >>> jaxgrad.zeros(2).lerp_(jaxgrad.tensor([1.0, 4.0]), 0.5)
    tensor([0.5000, 2.0000])
    """
    require_tensors(end)
    check_overlap(E.LERP, input, (end, weight))
    if isinstance(weight, Tensor):
        check_inplace_broadcast(input, end, weight)
        E.LERP_TENSOR.checks(input, end, weight)
        return apply_inplace(E.LERP_TENSOR, input, end, weight)
    check_inplace_broadcast(input, end)
    E.LERP.checks(input, end, weight)
    return apply_inplace(E.LERP, input, end, aux=(number_or_tensor(weight),))


@declare(
    'copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)',
    variants='method',
    numbers_as_tensors=('src',))
def copy_(input: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, cast) into this tensor, in place.

    >>> import jaxgrad
    >>> jaxgrad.zeros(2, 2).copy_(jaxgrad.tensor([1.0, 2.0]))
    tensor([[1., 2.],
            [1., 2.]])
    """
    if src is input:  # torch's copy_ returns at once (no overlap check), after the version bump
        return apply_inplace(E.COPY_SELF, input, input)
    check_overlap(E.COPY, input, (src,))
    check_inplace_broadcast(input, src)
    return apply_inplace(E.COPY, input, number_or_tensor(src))


@declare(
    'clamp_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)',
    numbers_as_tensors=('min', 'max'))
def clamp_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """``clamp``, in place.

    >>> import jaxgrad
    >>> jaxgrad.tensor([-2.0, 0.5, 3.0]).clamp_(max=1.0)
    tensor([-2.0000,  0.5000,  1.0000])
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        check_overlap(E.CLAMP_TENSOR, input, (min, max))
        check_inplace_broadcast(input, min, max)
        return apply_inplace(E.CLAMP_TENSOR, input, _as_tensor(min, input),
                             _as_tensor(max, input))
    bounds = tuple(None if bound is None else number_or_tensor(bound) for bound in (min, max))
    _check_inplace_result(input, *bounds, c_name=True)
    bounds = tuple(None if b is None else _dtypes.checked_scalar(b, input.dtype) for b in bounds)
    return apply_inplace(E.CLAMP, input, aux=bounds)


@declare('neg_(Tensor(a!) self) -> Tensor(a!)')
def neg_(input: Tensor) -> Tensor:
    """``-input``, in place.

    >>> import jaxgrad
    >>> jaxgrad.tensor([1.0, -2.0]).neg_()
    tensor([-1.,  2.])
    """
    _check_neg(input)
    return apply_inplace(E.NEG, input)


clip_ = declare_alias("clip_", "clamp_")


# torch's other names of the comparisons (Tensor.greater_ and friends are methods only)
greater = declare_alias("greater", "gt")


greater_equal = declare_alias("greater_equal", "ge")


less = declare_alias("less", "lt")


less_equal = declare_alias("less_equal", "le")


not_equal = declare_alias("not_equal", "ne")


true_divide_ = declare_alias("true_divide_", "div_")  # (Tensor.true_divide_ only)


for _alias, _target in (("greater_", "gt_"), ("greater_equal_", "ge_"), ("less_", "lt_"),
                        ("less_equal_", "le_"), ("not_equal_", "ne_")):
    declare_alias(_alias, _target)


@declare('round.decimals(Tensor self, *, int? decimals=None) -> Tensor',
         variants='function method out')
def round(input: Tensor, *, decimals: int | None = None) -> Tensor:
    """Each element rounded to the nearest integer (ties to even), or to ``decimals`` decimal
    places (RoundBackward1; torch has no such kernel for integral tensors).

    >>> import jaxgrad
    >>> jaxgrad.round(jaxgrad.tensor([0.5, 1.5, 2.345])), jaxgrad.round(
    ...     jaxgrad.tensor([2.3456]), decimals=2)
    (tensor([0., 2., 2.]), tensor([2.3500]))
    """
    if decimals is None:
        return apply(E.ROUND, input)
    return apply(E.ROUND_DECIMALS, input, decimals=_decimals(decimals))


def _decimals(decimals: Any) -> int:
    if isinstance(decimals, bool) or not isinstance(decimals, (int, np.integer)):
        raise TypeError(f"round(): argument 'decimals' must be int, not {type_name(decimals)}")
    return int(decimals)


@declare('round_.decimals(Tensor(a!) self, *, int? decimals=None) -> Tensor(a!)')
def round_(input: Tensor, *, decimals: int | None = None) -> Tensor:
    """``round``, in place.

    >>> import jaxgrad
    >>> jaxgrad.tensor([0.5, 1.5, 2.6]).round_()
    tensor([0., 2., 3.])
    """
    if decimals is None:
        return apply_inplace(E.ROUND, input)
    return apply_inplace(E.ROUND_DECIMALS, input, decimals=_decimals(decimals))


def _result_dtype(*operands: Any) -> _dtypes.dtype:
    return _dtypes.result_type([(t.dtype, t.ndim) for t in operands if isinstance(t, Tensor)],
                               [s for s in operands if not isinstance(s, Tensor)])


def _check_zero_division(input: Any, other: Any) -> None:
    """torch's integer division kernels refuse a zero divisor (bool ones have no kernel)."""
    d = _result_dtype(input, other)
    if d.is_floating_point or d.is_complex or d is _dtypes.bool_:
        return
    zero = bool(jnp.any(other._value == 0)) if isinstance(other, Tensor) else other == 0
    if zero:
        raise RuntimeError("ZeroDivisionError")


def _scalar_or_tensor(row: Any, tensor_row: Any, input: Tensor, other: Any,
                      inplace: bool = False, divides: bool = False,
                      c_name: bool = False) -> Tensor:
    """One call of an op with a ``Scalar other`` row and a ``Tensor other`` row."""
    require_tensors(input)
    if isinstance(other, Tensor):
        if inplace:
            check_inplace_broadcast(input, other)
        else:
            check_broadcast(input, other)
        if divides:
            _check_zero_division(input, other)
        return (apply_inplace if inplace else apply)(tensor_row, input, other)
    other = number_or_tensor(other)
    if inplace:
        _check_inplace_result(input, other, c_name=c_name)
    else:
        input = _promote_with_scalars(input, other)
    if divides:
        _check_zero_division(input, other)
    return (apply_inplace if inplace else apply)(row, input, aux=(other,))


@declare('fmod.Tensor(Tensor self, Tensor other) -> Tensor', numbers_as_tensors=('other',),
         variants='function method out')
def fmod(input: Tensor, other: Any) -> Tensor:
    """C's remainder of ``input / other``: it has the sign of ``input`` (FmodBackward0 for a
    number, FmodBackward1 for a tensor).

    >>> import jaxgrad
    >>> jaxgrad.fmod(jaxgrad.tensor([-3.0, 3.0]), 2)
    tensor([-1.,  1.])
    """
    return _scalar_or_tensor(E.FMOD, E.FMOD_TENSOR, input, other, divides=True)


@declare('fmod_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)',
         numbers_as_tensors=('other',), variants='method')
def fmod_(input: Tensor, other: Any) -> Tensor:
    """``fmod``, in place.

    >>> import jaxgrad
    >>> jaxgrad.tensor([-3.0, 3.0]).fmod_(2)
    tensor([-1.,  1.])
    """
    return _scalar_or_tensor(E.FMOD, E.FMOD_TENSOR, input, other, inplace=True, divides=True)


@declare('remainder.Tensor(Tensor self, Tensor other) -> Tensor', numbers_as_tensors=True,
         variants='function method out')
def remainder(input: Any, other: Any) -> Tensor:
    """Python's remainder (``input % other``): it has the sign of ``other``. ``input`` may be a
    number (torch's ``remainder.Scalar_Tensor``, not differentiable).

    >>> import jaxgrad
    >>> jaxgrad.remainder(jaxgrad.tensor([-3.0, 3.0]), 2), jaxgrad.remainder(5, jaxgrad.tensor([3]))
    (tensor([1., 1.]), tensor([2]))
    """
    if not isinstance(input, Tensor):
        require_tensors(other)
        input = number_or_tensor(input)
        _check_zero_division(input, other)
        return apply(E.REMAINDER_SCALAR_SELF, _promote_with_scalars(other, input), aux=(input,))
    return _scalar_or_tensor(E.REMAINDER, E.REMAINDER_TENSOR, input, other, divides=True)


@declare('remainder_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)',
         numbers_as_tensors=('other',), variants='method')
def remainder_(input: Tensor, other: Any) -> Tensor:
    """``remainder``, in place.

    >>> import jaxgrad
    >>> jaxgrad.tensor([-3.0, 3.0]).remainder_(2)
    tensor([1., 1.])
    """
    return _scalar_or_tensor(E.REMAINDER, E.REMAINDER_TENSOR, input, other, inplace=True,
                             divides=True)


@declare('floor_divide(Tensor self, Tensor other) -> Tensor', numbers_as_tensors=True,
         variants='function method out', differentiable=FALLBACK)
def floor_divide(input: Any, other: Any) -> Tensor:
    """``input // other``: the quotient rounded down, in the operands' common dtype (not
    differentiable: torch records a NotImplemented node).

    >>> import jaxgrad
    >>> jaxgrad.floor_divide(jaxgrad.tensor([7, -7]), 2)
    tensor([ 3, -4])
    """
    if not isinstance(input, Tensor):
        require_tensors(other)
        input = number_or_tensor(input)
        _check_zero_division(input, other)
        return apply(E.FLOOR_DIVIDE_SCALAR_SELF, _promote_with_scalars(other, input),
                     aux=(input,))
    return _floor_divide(input, other, 0)


def _floor_divide(input: Tensor, other: Any, form: int) -> Tensor:
    """floor_divide (``form`` 0) or floor_divide_ (1), by a tensor or a number."""
    other = number_or_tensor(other)
    if form:
        check_inplace_broadcast(input, other)
    else:
        check_broadcast(input, other)
    _check_zero_division(input, other)
    run = apply_inplace if form else apply
    if isinstance(other, Tensor):
        return run(E.FLOOR_DIVIDE[form], input, other)
    if form:
        _check_inplace_result(input, other)
    else:
        input = _promote_with_scalars(input, other)
    return run(E.FLOOR_DIVIDE_SCALAR[form], input, aux=(other,))


@declare('floor_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)',
         numbers_as_tensors=('other',), variants='method')
def floor_divide_(input: Tensor, other: Any) -> Tensor:
    """``floor_divide``, in place.

    >>> import jaxgrad
    >>> jaxgrad.tensor([7.0, -7.0]).floor_divide_(2)
    tensor([ 3., -4.])
    """
    return _floor_divide(input, other, 1)


@declare('xlogy.Tensor(Tensor self, Tensor other) -> Tensor', numbers_as_tensors=True,
         variants='function method out')
def xlogy(input: Any, other: Any) -> Tensor:
    """``input * log(other)``, exactly 0 where ``input`` is 0 (either may be a number:
    XlogyBackward1/XlogyBackward2).

    >>> import jaxgrad
    >>> jaxgrad.xlogy(jaxgrad.tensor([0.0, 2.0]), jaxgrad.tensor([0.0, 3.0]))
    tensor([0.0000, 2.1972])
    """
    if not isinstance(input, Tensor):
        require_tensors(other)
        input = number_or_tensor(input)
        return apply(E.XLOGY_SCALAR_SELF, _promote_with_scalars(other, input), aux=(input,))
    return _scalar_or_tensor(E.XLOGY_SCALAR_OTHER, E.XLOGY, input, other)


@declare('xlogy_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)',
         numbers_as_tensors=('other',))
def xlogy_(input: Tensor, other: Any) -> Tensor:
    """``xlogy``, in place.

    >>> import jaxgrad
    >>> jaxgrad.tensor([0.0, 2.0]).xlogy_(jaxgrad.tensor([0.0, 3.0]))
    tensor([0.0000, 2.1972])
    """
    return _scalar_or_tensor(E.XLOGY_SCALAR_OTHER, E.XLOGY, input, other, inplace=True)


@declare('clamp_min.Tensor(Tensor self, Tensor min) -> Tensor', numbers_as_tensors=('min',),
         variants='function method out')
def clamp_min(input: Tensor, min: Any) -> Tensor:
    """``max(input, min)`` (ClampMinBackward0 for a number, ClampMinBackward1 for a tensor).

    >>> import jaxgrad
    >>> jaxgrad.clamp_min(jaxgrad.tensor([-1.0, 2.0]), 0)
    tensor([0., 2.])
    """
    return _scalar_or_tensor(E.CLAMP_MIN, E.CLAMP_MIN_TENSOR, input, min)


@declare('clamp_min_.Tensor(Tensor(a!) self, Tensor min) -> Tensor(a!)',
         numbers_as_tensors=('min',))
def clamp_min_(input: Tensor, min: Any) -> Tensor:
    """``clamp_min``, in place.

    >>> import jaxgrad
    >>> jaxgrad.tensor([-1.0, 2.0]).clamp_min_(0)
    tensor([0., 2.])
    """
    return _scalar_or_tensor(E.CLAMP_MIN, E.CLAMP_MIN_TENSOR, input, min, inplace=True,
                             c_name=True)


@declare('clamp_max.Tensor(Tensor self, Tensor max) -> Tensor', numbers_as_tensors=('max',),
         variants='function method out')
def clamp_max(input: Tensor, max: Any) -> Tensor:
    """``min(input, max)`` (ClampMaxBackward0 for a number, ClampMaxBackward1 for a tensor).

    >>> import jaxgrad
    >>> jaxgrad.clamp_max(jaxgrad.tensor([-1.0, 2.0]), 1)
    tensor([-1.,  1.])
    """
    return _scalar_or_tensor(E.CLAMP_MAX, E.CLAMP_MAX_TENSOR, input, max)


@declare('clamp_max_.Tensor(Tensor(a!) self, Tensor max) -> Tensor(a!)',
         numbers_as_tensors=('max',))
def clamp_max_(input: Tensor, max: Any) -> Tensor:
    """``clamp_max``, in place.

    >>> import jaxgrad
    >>> jaxgrad.tensor([-1.0, 2.0]).clamp_max_(1)
    tensor([-1.,  1.])
    """
    return _scalar_or_tensor(E.CLAMP_MAX, E.CLAMP_MAX_TENSOR, input, max, inplace=True,
                             c_name=True)


def _bitwise(row: Any, input: Any, other: Any, inplace: bool = False) -> Tensor:
    if not isinstance(input, Tensor):  # the op is symmetric: torch's Scalar_Tensor overload
        require_tensors(other)
        input, other = other, input
    return binary_tensor_or_number(row, input, other, inplace)


def binary_tensor_or_number(row: Any, input: Tensor, other: Any, inplace: bool = False) -> Tensor:
    """``row`` of ``input`` and ``other`` (a number taken as a tensor), with torch's broadcast
    checks, in place when asked."""
    other = number_or_tensor(other)
    if inplace:
        check_inplace_broadcast(input, other)
        return apply_inplace(row, input, other)
    check_broadcast(input, other)
    return apply(row, input, other)


@declare('bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor', numbers_as_tensors=True,
         variants='function method out')
def bitwise_and(input: Any, other: Any) -> Tensor:
    """Bitwise AND of integral or bool tensors (``&``).

    >>> import jaxgrad
    >>> jaxgrad.bitwise_and(jaxgrad.tensor([12, 5]), 6)
    tensor([4, 4])
    """
    return _bitwise(E.BITWISE_AND, input, other)


@declare('bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor', numbers_as_tensors=True,
         variants='function method out')
def bitwise_or(input: Any, other: Any) -> Tensor:
    """Bitwise OR of integral or bool tensors (``|``).

    >>> import jaxgrad
    >>> jaxgrad.bitwise_or(jaxgrad.tensor([12, 5]), 6)
    tensor([14,  7])
    """
    return _bitwise(E.BITWISE_OR, input, other)


@declare('bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor', numbers_as_tensors=True,
         variants='function method out')
def bitwise_xor(input: Any, other: Any) -> Tensor:
    """Bitwise XOR of integral or bool tensors (``^``).

    >>> import jaxgrad
    >>> jaxgrad.bitwise_xor(jaxgrad.tensor([True, False]), jaxgrad.tensor([True, True]))
    tensor([False,  True])
    """
    return _bitwise(E.BITWISE_XOR, input, other)


@declare('bitwise_and_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)',
         numbers_as_tensors=('other',), variants='method')
def bitwise_and_(input: Tensor, other: Any) -> Tensor:
    """``bitwise_and``, in place (``&=``).

    >>> import jaxgrad
    >>> jaxgrad.tensor([12, 5]).bitwise_and_(6)
    tensor([4, 4])
    """
    return _bitwise(E.BITWISE_AND, input, other, inplace=True)


@declare('bitwise_or_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)',
         numbers_as_tensors=('other',), variants='method')
def bitwise_or_(input: Tensor, other: Any) -> Tensor:
    """``bitwise_or``, in place (``|=``).

    >>> import jaxgrad
    >>> jaxgrad.tensor([12, 5]).bitwise_or_(6)
    tensor([14,  7])
    """
    return _bitwise(E.BITWISE_OR, input, other, inplace=True)


@declare('bitwise_xor_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)',
         numbers_as_tensors=('other',), variants='method')
def bitwise_xor_(input: Tensor, other: Any) -> Tensor:
    """``bitwise_xor``, in place (``^=``).

    >>> import jaxgrad
    >>> jaxgrad.tensor([12, 5]).bitwise_xor_(6)
    tensor([10,  3])
    """
    return _bitwise(E.BITWISE_XOR, input, other, inplace=True)


def invert(input: Tensor) -> Tensor:
    """``~input`` (``Tensor.__invert__``): bitwise NOT, for integral and bool tensors only."""
    if input.dtype.is_floating_point or input.dtype.is_complex:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return apply(E.BITWISE_NOT, input)


@declare('square_(Tensor(a!) self) -> Tensor(a!)')
def square_(input: Tensor) -> Tensor:
    """``input ** 2``, in place (recorded as torch records it: PowBackward0).

    >>> import jaxgrad
    >>> jaxgrad.tensor([1.0, -3.0]).square_()
    tensor([1., 9.])
    """
    return pow_(input, 2)


def _no_inplace_derivative(row: Any, input: Tensor) -> Tensor:
    """asinh_/acosh_/atanh_: torch has no derivative for them (derivatives.yaml's
    ``not_implemented("inplace version of asinh")``), so it refuses them where autograd would
    record."""
    if is_grad_enabled() and input.requires_grad:
        raise NotImplementedError(
            f"the derivative for 'inplace version of {row.name}' is not implemented.")
    return apply_inplace(row, input)


@declare('asinh_(Tensor(a!) self) -> Tensor(a!)')
def asinh_(input: Tensor) -> Tensor:
    """``asinh``, in place (not differentiable, as in torch).

    >>> import jaxgrad
    >>> jaxgrad.tensor([0.0, 1.0]).asinh_()
    tensor([0.0000, 0.8814])
    """
    return _no_inplace_derivative(E.ASINH, input)


@declare('acosh_(Tensor(a!) self) -> Tensor(a!)')
def acosh_(input: Tensor) -> Tensor:
    """``acosh``, in place (not differentiable, as in torch).

    >>> import jaxgrad
    >>> jaxgrad.tensor([1.0, 2.0]).acosh_()
    tensor([0.0000, 1.3170])
    """
    return _no_inplace_derivative(E.ACOSH, input)


@declare('atanh_(Tensor(a!) self) -> Tensor(a!)')
def atanh_(input: Tensor) -> Tensor:
    """``atanh``, in place (not differentiable, as in torch).

    >>> import jaxgrad
    >>> jaxgrad.tensor([0.0, 0.5]).atanh_()
    tensor([0.0000, 0.5493])
    """
    return _no_inplace_derivative(E.ATANH, input)


@declare('logical_and_(Tensor(a!) self, Tensor other) -> Tensor(a!)', variants='method')
def logical_and_(input: Tensor, other: Tensor) -> Tensor:
    """``logical_and``, in place: the truth values in this tensor's dtype.

    >>> import jaxgrad
    >>> jaxgrad.tensor([0.0, 1.0, 2.0]).logical_and_(jaxgrad.tensor([1, 0, 3]))
    tensor([0., 0., 1.])
    """
    return _logical_(E.LOGICAL_AND_INPLACE, input, other)


@declare('logical_or_(Tensor(a!) self, Tensor other) -> Tensor(a!)', variants='method')
def logical_or_(input: Tensor, other: Tensor) -> Tensor:
    """``logical_or``, in place: the truth values in this tensor's dtype.

    >>> import jaxgrad
    >>> jaxgrad.tensor([0.0, 1.0, 0.0]).logical_or_(jaxgrad.tensor([1, 0, 0]))
    tensor([1., 1., 0.])
    """
    return _logical_(E.LOGICAL_OR_INPLACE, input, other)


@declare('logical_xor_(Tensor(a!) self, Tensor other) -> Tensor(a!)', variants='method')
def logical_xor_(input: Tensor, other: Tensor) -> Tensor:
    """``logical_xor``, in place: the truth values in this tensor's dtype.

    >>> import jaxgrad
    >>> jaxgrad.tensor([0.0, 1.0, 2.0]).logical_xor_(jaxgrad.tensor([1, 0, 3]))
    tensor([1., 1., 0.])
    """
    return _logical_(E.LOGICAL_XOR_INPLACE, input, other)


def _logical_(row: Any, input: Tensor, other: Tensor) -> Tensor:
    require_tensors(input, other)
    check_inplace_broadcast(input, other)
    return apply_inplace(row, input, other)


# torch's other names: numpy's arc- functions, ``fix`` and the spelled-out arithmetic (the
# same ops, nodes and forms)
for _alias, _target in (("fix", "trunc"), ("arcsin", "asin"), ("arccos", "acos"),
                        ("arctan", "atan"), ("arcsinh", "asinh"), ("arccosh", "acosh"),
                        ("arctanh", "atanh"), ("arctan2", "atan2"), ("multiply", "mul"),
                        ("divide", "div"), ("subtract", "sub"), ("negative", "neg"),
                        ("absolute", "abs")):
    globals()[_alias] = declare_alias(_alias, _target)
    globals()[_alias + "_"] = declare_alias(_alias + "_", _target + "_")
