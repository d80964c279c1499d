"""torch's functional API (``jaxgrad.exp``, ``jaxgrad.matmul``, ...). Tensor methods call these.

Each function normalises torch's argument conventions (negative dims, ``dim=None``, keepdim,
Python scalars) and then calls ``apply``/``apply_view``/``apply_inplace`` with an op-table row.
Composite ops (matmul, reshape, indexing) decompose exactly as torch does, so their graphs have
torch's nodes.
"""

from __future__ import annotations

import builtins
import itertools
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import return_types
from .._core import dtypes as _dtypes
from .._core.epoch import changed as structure_changed
from .._core.grad_mode import is_grad_enabled, is_inference_mode_enabled
from .._core.storage import Layout, Storage, contiguous_strides, view_strides
from .._core.tensor import Size, Tensor, _wrap_dim
from .._core.typename import type_name
from .._core.warn_once import warn_at_user_line, warn_once
from .._engine.dispatch import (
    INFERENCE_INPLACE_MESSAGE,
    apply,
    apply_inplace,
    apply_inplace_view,
    apply_view,
    check_inplace,
    check_overlap,
    has_internal_overlap,
    make_view,
    share_storage,
    warn_expanded_write,
)
from .._ops import elementwise as E
from .._ops import indexing as X
from .._ops import linalg as L
from .._ops import reductions as R
from .._ops import views as V
from .._ops._table import Op
from . import creation as _creation
from .arguments import (
    broadcast_operands,
    broadcast_shapes,
    check_broadcast,
    check_inplace_broadcast,
    number_or_tensor,
    raw_shape,
    require_tensors,
    scalar,
    wrap_dims,
)
from .opgen import declare, declare_alias, generate

# The ops a row declares whole (``variants=``/``inplace=`` in ``_ops``): exp, exp_, mul_, maximum,
# eq, addcmul, ... are generated here from their schemas (see ``_opgen``).
globals().update(generate(E, R, L, V, X))


def _shape_arg(shape: tuple) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


# --- arithmetic ---------------------------------------------------------------------------------

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
        return add(other, input) if alpha == 1 else add(tensor_like(input, other), other,
                                                          alpha=alpha)
    check_broadcast(input, other)
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
        return rsub(other, input, alpha=alpha)
    _check_sub(input, other)
    other = number_or_tensor(other)
    check_broadcast(input, other)
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
    """True division (``rounding_mode='floor'``/``'trunc'`` are not differentiable).

    >>> import jaxgrad
    >>> jaxgrad.div(jaxgrad.tensor([5.0, -5.0]), 2, rounding_mode='floor')
    tensor([ 2., -3.])
    """
    if not isinstance(input, Tensor):
        return mul(apply(E.RECIPROCAL, other), input)
    check_broadcast(input, other)
    if rounding_mode is not None:
        q = div(input.detach(), other.detach() if isinstance(other, Tensor) else other)
        fn = jnp.floor if rounding_mode == "floor" else jnp.trunc
        out = Tensor._make(fn(q._value))
        common = _dtypes.result_type(
            [(input.dtype, input.ndim)] + ([(other.dtype, other.ndim)] if isinstance(
                other, Tensor) else []), [] if isinstance(other, Tensor) else [other])
        return out.to(common)
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
    return apply(E.CLAMP, _promote_with_scalars(input, lo, hi), aux=(lo, hi))


clip = declare_alias("clip", "clamp")


def _as_tensor(x: Any, like: Tensor) -> Tensor | None:
    if x is None or isinstance(x, Tensor):
        return x
    return Tensor._make(jnp.asarray(x, like._value.dtype))


def _check_masked_fill(mask: Tensor, value: Any) -> None:
    """torch's checks of masked_fill_, in its order: a 0-d value tensor, a bool mask."""
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    if mask.dtype is not _dtypes.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_dtypes.c_type_name(mask.dtype)}")


@declare('masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor',
         numbers_as_tensors=('value',))
def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``value`` where ``mask`` is True, else ``input`` (the result has their broadcast shape).

    >>> import jaxgrad
    >>> jaxgrad.masked_fill(jaxgrad.zeros(3), jaxgrad.tensor([True, False, True]), 5.0)
    tensor([5., 0., 5.])
    """
    _check_masked_fill(mask, value)
    broadcast_operands(mask, input)  # torch: expand_outplace(mask, self)
    if isinstance(value, Tensor):
        return apply(E.MASKED_FILL_TENSOR, input, value, aux=(mask,))
    return apply(E.MASKED_FILL, input, aux=(mask, number_or_tensor(value)))


@declare('masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)',
         variants='method', numbers_as_tensors=('value',))
def masked_fill_(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``masked_fill``, in place (``mask`` must broadcast to ``input``'s shape).

    >>> import jaxgrad
    >>> jaxgrad.zeros(3).masked_fill_(jaxgrad.tensor([True, False, True]), 5.0)
    tensor([5., 0., 5.])
    """
    _check_masked_fill(mask, value)
    warn_expanded_write(input, "masked_fill", (value,))
    check_inplace_broadcast(input, mask)
    if isinstance(value, Tensor):
        return apply_inplace(E.MASKED_FILL_TENSOR, input, value, aux=(mask,))
    return apply_inplace(E.MASKED_FILL, input, aux=(mask, number_or_tensor(value)))


@declare(
    'where.self(Tensor condition, Tensor self, Tensor other) -> Tensor',
    variants='function out',
    numbers_as_tensors=('input', 'other'))
def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """``input`` where ``condition`` holds, else ``other``.

    >>> import jaxgrad
    >>> jaxgrad.where(jaxgrad.tensor([True, False]), jaxgrad.tensor([1.0, 2.0]), 0.0)
    tensor([1., 0.])
    """
    require_tensors(condition)
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    broadcast_shapes(*[raw_shape(t) for t in (condition, input, other) if isinstance(t, Tensor)])
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = Tensor._make(jnp.asarray(input, _dtypes.scalar_dtype(input).np))
    if not isinstance(input, Tensor):
        input = Tensor._make(jnp.asarray(input, other._value.dtype))
    return apply(E.WHERE, input, number_or_tensor(other), aux=(condition,))


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


def tensor_like(value: Any, like: Tensor) -> Tensor:
    return Tensor._make(jnp.asarray(value, _dtypes.result_type(
        [(like.dtype, like.ndim)], [value]).np))


# --- properties as functions ---------------------------------------------------------------------


@declare('is_inference(Tensor self) -> bool', variants='function')
def is_inference(input: Tensor) -> bool:
    """Whether ``input`` is an inference tensor (made inside ``inference_mode``).

    >>> import jaxgrad
    >>> with jaxgrad.inference_mode():
    ...     t = jaxgrad.ones(1)
    >>> jaxgrad.is_inference(t), jaxgrad.is_inference(jaxgrad.ones(1))
    (True, False)
    """
    return input.is_inference()


# --- comparisons (no autograd) -------------------------------------------------------------------


@declare('equal(Tensor self, Tensor other) -> bool')
def equal(input: Tensor, other: Tensor) -> bool:
    """True if both have the same shape and elements.

    >>> import jaxgrad
    >>> jaxgrad.equal(jaxgrad.tensor([1, 2]), jaxgrad.tensor([1, 2]))
    True
    """
    return tuple(input.shape) == tuple(other.shape) and bool(jnp.all(input._value == other._value))


@declare(
    'allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, '
    'bool equal_nan=False) -> bool')
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True if every element is close: ``|input - other| <= atol + rtol * |other|``.

    >>> import jaxgrad
    >>> jaxgrad.allclose(jaxgrad.tensor([1.0]), jaxgrad.tensor([1.0 + 1e-9]))
    True
    """
    return bool(jnp.allclose(input._value, other._value, rtol=rtol, atol=atol,
                             equal_nan=equal_nan))


@declare(
    'isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, '
    'bool equal_nan=False) -> Tensor')
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Elementwise ``|input - other| <= atol + rtol * |other|``.

    >>> import jaxgrad
    >>> jaxgrad.isclose(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([1.0, 2.1]))
    tensor([ True, False])
    """
    check_broadcast(input, other)
    return Tensor._make(jnp.isclose(input._value, other._value, rtol=rtol, atol=atol,
                                    equal_nan=equal_nan))


@declare('nonzero(Tensor self, *, bool as_tuple=False) -> Tensor')
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """Indices of the non-zero elements (a tuple of index tensors with ``as_tuple``).

    >>> import jaxgrad
    >>> jaxgrad.nonzero(jaxgrad.tensor([0.0, 3.0, 0.0, 4.0]))
    tensor([[1],
            [3]])
    """
    idx = np.nonzero(np.asarray(input._value))
    if as_tuple:
        return tuple(Tensor._make(jnp.asarray(i, jnp.int64)) for i in idx)
    return Tensor._make(jnp.asarray(np.stack(idx, axis=1), jnp.int64))


# --- reductions -----------------------------------------------------------------------------------

def _reduce_dtype(input: Tensor, dtype: Any):
    if dtype is not None:
        return _dtypes.to_dtype(dtype).np
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        return np.dtype(np.int64)
    return None


class _DimOmitted:
    """The default of ``sum``/``mean``'s ``dim``: not given, which is torch's overload without
    a dim (SumBackward0); ``dim=None`` given is its ``dim_IntList`` one (SumBackward1)."""

    def __repr__(self) -> str:
        return "None"


_DIM_OMITTED = _DimOmitted()


def _reduced_dims(input: Tensor, dim: Any) -> tuple[int, ...]:
    """The dims a ``dim_IntList`` reduction sums over: ``dim``, or all for None or ``[]``."""
    dims = None if dim is None else wrap_dims(dim, input.ndim)
    return dims if dims else tuple(range(input.ndim))


@declare(
    'sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, '
    'ScalarType? dtype=None) -> Tensor')
def sum(input: Tensor, dim: Any = _DIM_OMITTED, keepdim: bool = False, *,
        dtype: Any = None) -> Tensor:
    """Sum of all elements, or over ``dim`` (``dim=None`` given: over all, as torch's
    ``sum.dim_IntList``, whose node is SumBackward1).

    >>> import jaxgrad
    >>> jaxgrad.sum(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=0)
    tensor([4., 6.])
    """
    d = _reduce_dtype(input, dtype)
    if dim is _DIM_OMITTED:
        return apply(R.SUM, input, dtype=d)
    return apply(R.SUM_DIM, input, dim=_reduced_dims(input, dim), keepdim=keepdim, dtype=d)


@declare('sum_to_size(Tensor self, SymInt[] size) -> Tensor', variants='method')
def sum_to_size(input: Tensor, *size: Any) -> Tensor:
    """Sum ``input`` down to ``size``, which must broadcast to its shape (torch's sum_to).

    >>> import jaxgrad
    >>> jaxgrad.ones(3, 2).sum_to_size(2)
    tensor([3., 3.])
    """
    shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
    if not is_expandable_to(shape, tuple(input.shape)):
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size "
                           f"{{{list(input.shape)}}}.")
    lead = input.ndim - len(shape)
    dims = [*range(lead), *(i + lead for i, n in enumerate(shape)
                            if n == 1 and input.shape[i + lead] != 1)]
    out = sum(input, dims, keepdim=True) if dims else input
    return view(out, shape) if lead > 0 else out


@declare(
    'cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor',
    variants='function method out')
def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running sums along ``dim`` (integer inputs sum in int64, as in torch).

    >>> import jaxgrad
    >>> jaxgrad.cumsum(jaxgrad.tensor([[1.0, 2.0, 3.0]]), dim=-1)
    tensor([[1., 3., 6.]])
    """
    _wrap_dim(dim, input.ndim)  # torch's IndexError; the node saves ``dim`` as given
    return apply(R.CUMSUM, input, dim=dim, dtype=_reduce_dtype(input, dtype))


@declare('cumsum_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)',
         variants='method')
def cumsum_(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """``cumsum``, in place.

    >>> import jaxgrad
    >>> jaxgrad.tensor([1.0, 2.0, 3.0]).cumsum_(0)
    tensor([1., 3., 6.])
    """
    _check_cumulative_(input, dim, dtype, "cumsum")
    return apply_inplace(R.CUMSUM, input, dim=dim, dtype=None)


@declare('outer(Tensor self, Tensor vec2) -> Tensor', variants='function method out')
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two 1-d tensors, as torch computes it:
    ``input.reshape(n, 1) * vec2``.

    >>> import jaxgrad
    >>> jaxgrad.outer(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([1.0, 10.0, 100.0]))
    tensor([[  1.,  10., 100.],
            [  2.,  20., 200.]])
    """
    require_tensors(vec2)
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return mul(reshape(input, (input.shape[0], 1)), vec2)


def is_expandable_to(shape: tuple, target: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``target`` (torch's is_expandable_to)."""
    if len(shape) > len(target):
        return False
    return builtins.all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


@declare(
    'mean.dim(Tensor self, int[1]? dim=None, bool keepdim=False, *, '
    'ScalarType? dtype=None) -> Tensor', variants='function method out')
def mean(input: Tensor, dim: Any = _DIM_OMITTED, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """Mean of all elements, or over ``dim`` (floating inputs only, as in torch).

    >>> import jaxgrad
    >>> jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]).mean(1, keepdim=True)
    tensor([[1.5000],
            [3.5000]])
    """
    d = _dtypes.to_dtype(dtype) if dtype is not None else input.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {_dtypes.scalar_type_name(d)}")
    nd = d.np if dtype is not None else None
    if dim is _DIM_OMITTED:
        return apply(R.MEAN, input, dtype=nd)
    return apply(R.MEAN_DIM, input, dim=_reduced_dims(input, dim), keepdim=keepdim, dtype=nd)


@declare(
    'prod.dim_int(Tensor self, int? dim=None, bool keepdim=False, *, '
    'ScalarType? dtype=None) -> Tensor')
def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """Product of all elements, or along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.prod(jaxgrad.tensor([1.0, 2.0, 3.0]))
    tensor(6.)
    """
    d = _reduce_dtype(input, dtype)
    if dim is None:
        return apply(R.PROD, input, dtype=d)
    return apply(R.PROD_DIM, input, dim=wrap_dims(dim, input.ndim), keepdim=keepdim, dtype=d)


@declare(
    'amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor',
    variants='function method out')
def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Maximum over ``dim`` (all dims by default); ties share the gradient.

    >>> import jaxgrad
    >>> jaxgrad.amax(jaxgrad.tensor([[1.0, 5.0], [3.0, 2.0]]), dim=1)
    tensor([5., 3.])
    """
    dims = wrap_dims(dim, input.ndim) if dim not in ((), []) else tuple(range(input.ndim))
    return apply(R.AMAX, input, dim=dims, keepdim=keepdim)


@declare(
    'amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor',
    variants='function method out')
def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Minimum over ``dim`` (all dims by default); ties share the gradient.

    >>> import jaxgrad
    >>> jaxgrad.amin(jaxgrad.tensor([[1.0, 5.0], [3.0, 2.0]]), dim=0)
    tensor([1., 2.])
    """
    dims = wrap_dims(dim, input.ndim) if dim not in ((), []) else tuple(range(input.ndim))
    return apply(R.AMIN, input, dim=dims, keepdim=keepdim)


def _extreme(input: Tensor, dim: Any, keepdim: bool, name: str, full, along):
    if isinstance(dim, Tensor):
        broadcast_operands(input, dim)
        return apply(E.MAXIMUM if name == "max" else E.MINIMUM, input, dim)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument.")
        return apply(full, input)
    values, indices = apply(along, input, dim=wrap_dims(dim, input.ndim), keepdim=keepdim)
    return getattr(return_types, name)(values, indices)


@declare('max(Tensor self, int? dim=None, bool keepdim=False) -> (Tensor values, Tensor indices)')
def max(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """The maximum, or ``(values, indices)`` along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.max(jaxgrad.tensor([[1.0, 5.0], [3.0, 2.0]]), dim=1)
    jaxgrad.return_types.max(
    values=tensor([5., 3.]),
    indices=tensor([1, 0]))
    """
    return _extreme(input, dim, keepdim, "max", R.MAX_ALL, R.MAX_DIM)


@declare('min(Tensor self, int? dim=None, bool keepdim=False) -> (Tensor values, Tensor indices)')
def min(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """The minimum, or ``(values, indices)`` along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.min(jaxgrad.tensor([1.0, 5.0, -3.0]))
    tensor(-3.)
    """
    return _extreme(input, dim, keepdim, "min", R.MIN_ALL, R.MIN_DIM)


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
        return apply(E.LERP_TENSOR, input, end, weight)
    return apply(E.LERP, input, end, aux=(number_or_tensor(weight),))


@declare('square(Tensor self) -> Tensor', variants='function method out')
def square(input: Tensor) -> Tensor:
    """``input ** 2`` (recorded as torch records it: PowBackward0).

    >>> import jaxgrad
    >>> jaxgrad.square(jaxgrad.tensor([1.0, -3.0]))
    tensor([1., 9.])
    """
    return pow(input, 2)


@declare('argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor')
def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the maximum (of the flattened tensor without ``dim``).

    >>> import jaxgrad
    >>> jaxgrad.argmax(jaxgrad.tensor([[1.0, 5.0], [3.0, 2.0]]), dim=1)
    tensor([1, 0])
    """
    return _arg_extreme(R.ARGMAX, input, dim, keepdim)


@declare('argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor')
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the minimum (of the flattened tensor without ``dim``).

    >>> import jaxgrad
    >>> jaxgrad.argmin(jaxgrad.tensor([[1.0, 5.0], [3.0, 2.0]]))
    tensor(0)
    """
    return _arg_extreme(R.ARGMIN, input, dim, keepdim)


def _arg_extreme(op, input: Tensor, dim: int | None, keepdim: bool) -> Tensor:
    """argmax/argmin: over the flattened tensor without ``dim`` (keepdim keeps every dim as 1)."""
    if dim is None:
        out = apply(op, input, dim=None, keepdim=False)
        return reshape(out, (1,) * input.ndim) if keepdim else out
    dim = _wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return apply(op, input, dim=None, keepdim=False)
    return apply(op, input, dim=dim, keepdim=keepdim)


@declare('any.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor')
def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """True if any element (over ``dim``) is non-zero.

    >>> import jaxgrad
    >>> jaxgrad.any(jaxgrad.tensor([[0.0, 1.0], [0.0, 0.0]]), dim=1)
    tensor([ True, False])
    """
    return apply(R.ANY, input, dim=None if dim is None else wrap_dims(dim, input.ndim),
                 keepdim=keepdim)


@declare('all.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor')
def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """True if every element (over ``dim``) is non-zero.

    >>> import jaxgrad
    >>> jaxgrad.all(jaxgrad.tensor([[1.0, 1.0], [0.0, 1.0]]), dim=1)
    tensor([ True, False])
    """
    return apply(R.ALL, input, dim=None if dim is None else wrap_dims(dim, input.ndim),
                 keepdim=keepdim)


def _correction(unbiased: Any, correction: Any) -> int:
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


@declare(
    'norm(Tensor self, Any p="fro", int[1]? dim=None, bool keepdim=False, '
    'ScalarType? dtype=None) -> Tensor',
    variants='function method out', python_level=True)
def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: Any = None) -> Tensor:
    """torch.norm: the vector p-norm over ``dim`` (all elements by default; ``"fro"`` is the
    2-norm), or with ``p="nuc"`` or a ``"fro"`` over more than two dims, ``linalg.matrix_norm``.

    >>> import jaxgrad
    >>> jaxgrad.tensor([3.0, 4.0]).norm()
    tensor(5.)
    """
    dims = [dim] if isinstance(dim, int) else dim
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return linalg_vector_norm(input, 2, dims, keepdim, dtype=dtype)
        return linalg_matrix_norm(input, p, list(range(input.ndim)) if dims is None else dims,
                                  keepdim, dtype=dtype)
    return linalg_vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype)


def _norm_dtype(input: Tensor, dtype: Any, name: str) -> Any:
    """torch's dtype checks of the linalg norms: floating inputs, a floating ``dtype=``."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{_dtypes.scalar_type_name(input.dtype)}")
    if dtype is None:
        return None
    d = _dtypes.to_dtype(dtype)
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{_dtypes.scalar_type_name(d)}")
    return None if d is input.dtype else d.np


def _format_scalar(x: Any) -> str:
    """A number as torch's messages print a Scalar (``-1``, ``inf``, ``0.5``)."""
    return f"{x:g}" if isinstance(x, float) else str(x)


@declare(
    'linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, '
    'ScalarType? dtype=None) -> Tensor', variants='out')
def linalg_vector_norm(input: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                       dtype: Any = None) -> Tensor:
    """The vector ``ord``-norm of ``input`` over ``dim`` (all dims by default):
    ``sum(|x| ** ord) ** (1 / ord)``; ``inf``/``-inf`` the largest/smallest ``|x|``, 0 the number
    of non-zeros.

    >>> import jaxgrad
    >>> jaxgrad.linalg.vector_norm(jaxgrad.tensor([[3.0, -4.0], [0.0, 1.0]]), ord=1, dim=1)
    tensor([7., 1.])
    """
    ord = scalar(ord)
    if isinstance(ord, complex):
        raise TypeError("ord must be a real number")
    compute = _norm_dtype(input, dtype, "linalg.vector_norm")
    dims = tuple(range(input.ndim)) if dim is None or (
        not isinstance(dim, int) and not len(dim)) else wrap_dims(dim, input.ndim)
    if (ord < 0 or math.isinf(ord)) and not input.numel():
        if dim is None or not input.ndim:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_format_scalar(ord)} norm "
                               "on an empty tensor because the operation does not have an "
                               "identity")
        for d in ([dim] if isinstance(dim, int) else dim):
            if input.shape[d] == 0:  # torch's message lacks the space before "because"
                raise RuntimeError(f"linalg.vector_norm cannot compute the {_format_scalar(ord)} "
                                   f"norm on the dimension {_wrap_dim(d, input.ndim)}because this "
                                   "dimension is empty and the operation does not have an "
                                   "identity")
    return apply(R.VECTOR_NORM, input, ord=float(ord), dim=dims, keepdim=bool(keepdim),
                 dtype=compute)


@declare(
    'linalg_matrix_norm(Tensor self, Any ord="fro", int[] dim=[-2, -1], bool keepdim=False, *, '
    'ScalarType? dtype=None) -> Tensor', variants='out')
def linalg_matrix_norm(input: Tensor, ord: Any = "fro", dim: Any = (-2, -1),
                       keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The matrix norm over the two dims ``dim``: ``"fro"`` (Frobenius), 1/-1 (largest/smallest
    column sum of ``|x|``), ``inf``/``-inf`` (largest/smallest row sum), composed as torch
    composes them.

    >>> import jaxgrad
    >>> jaxgrad.linalg.matrix_norm(jaxgrad.tensor([[1.0, -2.0], [3.0, 4.0]]), ord=1)
    tensor(6.)
    """
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif builtins.abs(ord) not in (1, 2, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_format_scalar(ord)} not supported.")
    dims = [dim] if isinstance(dim, int) else list(dim)
    if input.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    _norm_dtype(input, None, "linalg.matrix_norm")
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dims)}")
    dims = [_wrap_dim(d, input.ndim) for d in dims]
    if dims[0] == dims[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, "
                           f"{dims[1]})")
    _norm_dtype(input, dtype, "linalg.matrix_norm")
    if ord == "fro":
        return linalg_vector_norm(input, 2, dims, keepdim, dtype=dtype)
    if ord == "nuc" or builtins.abs(ord) == 2:
        raise RuntimeError(f"linalg.matrix_norm: ord={ord!r} needs singular values, which "
                           "jaxgrad does not compute")
    if math.isinf(ord):
        dims.reverse()
    if not keepdim and dims[0] < dims[1]:
        dims[1] -= 1
    rows = linalg_vector_norm(input, 1.0, [dims[0]], keepdim, dtype=dtype)
    return (amax if ord > 0 else amin)(rows, dims[1], keepdim)


@declare(
    'linalg_norm(Tensor self, Any ord=None, int[1]? dim=None, bool keepdim=False, *, '
    'ScalarType? dtype=None) -> Tensor', variants='out')
def linalg_norm(input: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """A vector norm (``dim`` an int, or a 1-d input) or a matrix norm (``dim`` a 2-tuple, or a
    2-d input with ``ord`` given); with neither ``ord`` nor ``dim``, the 2-norm of all elements.

    >>> import jaxgrad
    >>> jaxgrad.linalg.norm(jaxgrad.tensor([[3.0, 4.0], [0.0, 0.0]]))
    tensor(5.)
    """
    dims = [dim] if isinstance(dim, int) else dim
    if dims is not None:
        if len(dims) not in (1, 2):
            raise RuntimeError("linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {list(dims)}")
    elif ord is not None and input.ndim not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {input.ndim}D.")
    if isinstance(ord, str):
        return linalg_matrix_norm(input, ord, [0, 1] if dims is None else dims, keepdim,
                                  dtype=dtype)
    if ord is not None and (len(dims) == 2 if dims is not None else input.ndim == 2):
        return linalg_matrix_norm(input, ord, [0, 1] if dims is None else dims, keepdim,
                                  dtype=dtype)
    return linalg_vector_norm(input, 2.0 if ord is None else ord, dims, keepdim, dtype=dtype)


@declare(
    'var(Tensor self, int[1]? dim=None, bool? unbiased=None, bool keepdim=False, *, '
    'Scalar? correction=None) -> Tensor', variants='function method out')
def var(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:
    """Variance (Bessel-corrected by default, as in torch).

    >>> import jaxgrad
    >>> jaxgrad.var(jaxgrad.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor(1.6667)
    """
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    dims = None if dim is None else wrap_dims(dim, input.ndim)
    return apply(R.VAR, input, dim=dims, correction=_correction(unbiased, correction),
                 keepdim=keepdim)


@declare(
    'std(Tensor self, int[1]? dim=None, bool? unbiased=None, bool keepdim=False, *, '
    'Scalar? correction=None) -> Tensor', variants='function method out')
def std(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:
    """Standard deviation (Bessel-corrected by default).

    >>> import jaxgrad
    >>> jaxgrad.std(jaxgrad.tensor([1.0, 2.0, 3.0, 4.0]), correction=0)
    tensor(1.1180)
    """
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    dims = None if dim is None else wrap_dims(dim, input.ndim)
    return apply(R.STD, input, dim=dims, correction=_correction(unbiased, correction),
                 keepdim=keepdim)


@declare(
    'softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor',
    variants='function method out')
def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``exp(x) / exp(x).sum(dim)``, computed stably.

    >>> import jaxgrad
    >>> jaxgrad.softmax(jaxgrad.tensor([1.0, 2.0, 3.0]), dim=0)
    tensor([0.0900, 0.2447, 0.6652])
    """
    if dtype is not None:
        input = input.to(dtype)
    return apply(R.SOFTMAX, input, dim=_wrap_dim(dim, input.ndim))


@declare(
    'log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor',
    variants='function method out')
def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``log(softmax(x, dim))``, computed stably.

    >>> import jaxgrad
    >>> jaxgrad.log_softmax(jaxgrad.tensor([1.0, 2.0, 3.0]), dim=0)
    tensor([-2.4076, -1.4076, -0.4076])
    """
    if dtype is not None:
        input = input.to(dtype)
    return apply(R.LOG_SOFTMAX, input, dim=_wrap_dim(dim, input.ndim))


@declare('cat(Tensor[] tensors, int dim=0) -> Tensor', variants='function out')
def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenate along an existing dimension.

    >>> import jaxgrad
    >>> jaxgrad.cat([jaxgrad.ones(1, 2), jaxgrad.zeros(1, 2)])
    tensor([[1., 1.],
            [0., 0.]])
    """
    tensors = list(tensors)
    if not tensors:
        raise ValueError("jaxgrad.cat(): expected a non-empty list of Tensors")
    shapes = [t.shape for t in tensors]
    for i, shape in enumerate(shapes):
        if not shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    dim = _wrap_dim(dim, len(shapes[0]))
    _check_cat_shapes(shapes, dim)
    return apply(R.CAT, *tensors, dim=dim)


def _check_cat_shapes(shapes: list, dim: int) -> None:
    """torch's errors for tensors that differ in rank or in a size other than ``dim``'s."""
    first = shapes[0]
    for i, shape in enumerate(shapes[1:], 1):
        if len(shape) != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(first)} "
                               f"and {len(shape)}")
        for d, (expected, got) in enumerate(zip(first, shape)):
            if d != dim and expected != got:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size "
                    f"{expected} but got size {got} for tensor number {i} in the list.")


concat = declare_alias("concat", "cat")


@declare('stack(Tensor[] tensors, int dim=0) -> Tensor', variants='function out')
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Stack along a new dimension.

    >>> import jaxgrad
    >>> jaxgrad.stack([jaxgrad.ones(2), jaxgrad.zeros(2)], dim=1)
    tensor([[1., 0.],
            [1., 0.]])
    """
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tuple(tensors[0].shape)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(t.shape)} at entry {i}")
    return apply(R.STACK, *tensors, dim=_wrap_dim(dim, len(shape) + 1))


@declare('unbind.int(Tensor self, int dim=0) -> Tensor[]')
def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """Slices along ``dim``, as views of ``input``.

    >>> import jaxgrad
    >>> jaxgrad.unbind(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    (tensor([1., 2.]), tensor([3., 4.]))
    """
    dim = _wrap_dim(dim, input.ndim)
    outs = apply(R.UNBIND, input, dim=dim)
    outs = outs if isinstance(outs, tuple) else (outs,)
    geometry = input._geometry()
    return _as_views(outs, input, [V.select_geometry(geometry, dim, i) for i in range(len(outs))])


def _as_views(outs: tuple, input: Tensor, geometries: list) -> tuple[Tensor, ...]:
    """Make the outputs of a multi-output view op (unbind, split) views of ``input``."""
    for out, layout in zip(outs, geometries):
        make_view(out, input, layout, multi_output=True)
    return outs


@declare('split(Tensor(a -> *) self, SymInt[] split_size_or_sections, int dim=0) -> Tensor(a)[]',
         python_level=True)
def split(input: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into views along ``dim``: chunks of ``split_size_or_sections`` elements (the last
    may be smaller), or of the sizes in a list.

    >>> import jaxgrad
    >>> jaxgrad.split(jaxgrad.arange(5), 2)
    (tensor([0, 1]), tensor([2, 3]), tensor([4]))
    """
    if input.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    size = input.shape[_wrap_dim(dim, input.ndim)]  # the nodes save ``dim`` as given
    if isinstance(split_size_or_sections, int):
        return _split_by_size(input, split_size_or_sections, dim, size)
    return _split_with_sizes(input, [int(s) for s in split_size_or_sections], dim, size)


def _split_with_sizes(input: Tensor, sizes: list, dim: int, size: int,
                      op: Op = R.SPLIT_WITH_SIZES) -> tuple[Tensor, ...]:
    if builtins.any(s < 0 for s in sizes):
        raise RuntimeError("split_with_sizes expects split_sizes have only non-negative entries, "
                           f"but got split_sizes={sizes}")
    if builtins.sum(sizes) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input "
                           f"tensor's size at dimension {dim}), but got split_sizes={sizes}")
    outs = apply(op, input, split_sizes=tuple(sizes), dim=dim, self_sym_sizes=tuple(input.shape))
    return _split_views(input, outs, sizes, dim, unsafe=op is R.UNSAFE_SPLIT_WITH_SIZES)


def _split_by_size(input: Tensor, split_size: int, dim: int, size: int,
                   op: Op = R.SPLIT) -> tuple[Tensor, ...]:
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={split_size}")
    if split_size == 0 and size != 0:
        raise RuntimeError("split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {size}")
    outs = apply(op, input, split_size=split_size, dim=dim, self_sym_sizes=tuple(input.shape))
    return _split_views(input, outs, R.split_sizes(split_size, size), dim,
                        unsafe=op is R.UNSAFE_SPLIT)


def _split_size_of(input: Tensor, dim: int) -> int:
    """The size of the dimension a split cuts (torch's check of a 0-d input first)."""
    if input.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    return input.shape[_wrap_dim(dim, input.ndim)]


@declare('split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]')
def split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into views along ``dim`` of the given sizes (which sum to that dim's size).

    >>> import jaxgrad
    >>> jaxgrad.arange(5).split_with_sizes([1, 4])
    (tensor([0]), tensor([1, 2, 3, 4]))
    """
    return _split_with_sizes(input, [int(s) for s in split_sizes], dim,
                             _split_size_of(input, dim))


@declare('unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]')
def unsafe_split(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``split``, whose pieces share ``input``'s storage but are not views for autograd: each
    has its own version counter and history (UnsafeSplitBackward0), and may be modified in
    place.

    >>> import jaxgrad
    >>> a, b = jaxgrad.arange(4.0).unsafe_split(2)
    >>> a._is_view(), b
    (False, tensor([2., 3.]))
    """
    return _split_by_size(input, split_size, dim, _split_size_of(input, dim), R.UNSAFE_SPLIT)


@declare('unsafe_split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]')
def unsafe_split_with_sizes(input: Tensor, split_sizes: Any,
                            dim: int = 0) -> tuple[Tensor, ...]:
    """``split_with_sizes`` as :func:`unsafe_split` makes its pieces (not views for autograd).

    >>> import jaxgrad
    >>> jaxgrad.arange(4.0).unsafe_split_with_sizes([3, 1])
    (tensor([0., 1., 2.]), tensor([3.]))
    """
    return _split_with_sizes(input, [int(s) for s in split_sizes], dim,
                             _split_size_of(input, dim), R.UNSAFE_SPLIT_WITH_SIZES)


@declare('unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]')
def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``chunk`` as :func:`unsafe_split` makes its pieces (not views for autograd).

    >>> import jaxgrad
    >>> jaxgrad.arange(5.0).unsafe_chunk(2)
    (tensor([0., 1., 2.]), tensor([3., 4.]))
    """
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = input.shape[_wrap_dim(dim, input.ndim)]
    if size == 0:
        return _split_with_sizes(input, [0] * chunks, dim, size, R.UNSAFE_SPLIT_WITH_SIZES)
    return _split_by_size(input, (size + chunks - 1) // chunks, dim, size, R.UNSAFE_SPLIT)


def _split_views(input: Tensor, outs: Any, sizes: list, dim: int,
                 unsafe: bool = False) -> tuple[Tensor, ...]:
    outs = outs if isinstance(outs, tuple) else (outs,)
    dim = _wrap_dim(dim, input.ndim)
    geometry, starts = input._geometry(), [0]
    for s in sizes:
        starts.append(starts[-1] + s)
    layouts = [V.slice_geometry(geometry, dim, a, b, 1) for a, b in itertools.pairwise(starts)]
    if unsafe:
        for out, layout in zip(outs, layouts):
            share_storage(out, input, layout)
        return outs
    return _as_views(outs, input, layouts)


@declare('chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]')
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into ``chunks`` views along ``dim`` (torch's ``split`` with
    ``ceil(size / chunks)`` elements each; there may be fewer chunks).

    >>> import jaxgrad
    >>> jaxgrad.chunk(jaxgrad.arange(5), 2)
    (tensor([0, 1, 2]), tensor([3, 4]))
    """
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = input.shape[_wrap_dim(dim, input.ndim)]
    if size == 0:  # torch: ``chunks`` empty views
        return _split_with_sizes(input, [0] * chunks, dim, size)
    return _split_by_size(input, (size + chunks - 1) // chunks, dim, size)


# --- shapes and views -----------------------------------------------------------------------------

def _infer_shape(shape: tuple, numel: int) -> tuple:
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


@declare('view(Tensor(a) self, SymInt[] size) -> Tensor(a)', variants='method')
def view(input: Tensor, *shape: Any) -> Tensor:
    """A view with a new shape; errors if the strides do not allow it (use reshape)."""
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list, Size)):
        return input.to(shape[0])
    shape = _infer_shape(_shape_arg(shape), input.numel())
    g = input._geometry()
    if view_strides(g.shape, g.strides, shape) is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return apply_view(V.VIEW, V.view_geometry, input, shape=shape)


@declare('reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)')
def reshape(input: Tensor, *shape: Any) -> Tensor:
    """torch's reshape: ``view`` of a contiguous tensor, ``_reshape_alias`` (a view too) when the
    strides allow it, else a copy (CloneBackward0 + UnsafeViewBackward0).

    >>> import jaxgrad
    >>> jaxgrad.reshape(jaxgrad.arange(6), (2, 3))
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    shape = _infer_shape(_shape_arg(shape), input.numel())
    if input.is_contiguous():
        return apply_view(V.VIEW, V.view_geometry, input, shape=shape)
    g = input._geometry()
    if view_strides(g.shape, g.strides, shape) is not None:
        return apply_view(V.RESHAPE_ALIAS, V.view_geometry, input, shape=shape)
    return _unsafe_view(clone(input), shape)


@declare('flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)')
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Flatten dims ``start_dim..end_dim`` into one.

    >>> import jaxgrad
    >>> jaxgrad.flatten(jaxgrad.ones(2, 3, 4), start_dim=1).shape
    jaxgrad.Size([2, 12])
    """
    if input.ndim == 0:
        return reshape(input, (1,))
    start, end = _wrap_dim(start_dim, input.ndim), _wrap_dim(end_dim, input.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    shape = tuple(input.shape)
    return reshape(input, shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:])


@declare('squeeze.dims(Tensor(a) self, int[]? dim=None) -> Tensor(a)')
def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """Drop dims of size 1 (all, or those in ``dim``); a view.

    >>> import jaxgrad
    >>> jaxgrad.squeeze(jaxgrad.ones(2, 1, 3)).shape
    jaxgrad.Size([2, 3])
    """
    if dim is None:
        return apply_view(V.SQUEEZE, V.squeeze_geometry, input, dims=tuple(range(input.ndim)))
    if isinstance(dim, int):
        return apply_view(V.SQUEEZE_DIM, V.squeeze_geometry, input,
                          dims=(_wrap_dim(dim, input.ndim),))
    return apply_view(V.SQUEEZE_DIMS, V.squeeze_geometry, input, dims=wrap_dims(dim, input.ndim))


@declare('unsqueeze(Tensor(a) self, int dim) -> Tensor(a)')
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a dim of size 1 at ``dim``; a view.

    >>> import jaxgrad
    >>> jaxgrad.unsqueeze(jaxgrad.ones(2, 3), 0).shape
    jaxgrad.Size([1, 2, 3])
    """
    return apply_view(V.UNSQUEEZE, V.unsqueeze_geometry, input,
                      dim=_wrap_dim(dim, input.ndim + 1))


@declare('transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)')
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap dims ``dim0`` and ``dim1``; a view.

    >>> import jaxgrad
    >>> jaxgrad.transpose(jaxgrad.ones(2, 3), 0, 1).shape
    jaxgrad.Size([3, 2])
    """
    n = input.ndim
    return apply_view(V.TRANSPOSE, V.transpose_geometry, input, dim0=_wrap_dim(dim0, n),
                      dim1=_wrap_dim(dim1, n))


swapaxes = declare_alias("swapaxes", "transpose")


@declare('t(Tensor(a) self) -> Tensor(a)')
def t(input: Tensor) -> Tensor:
    """Transpose a matrix (a 0-d or 1-d tensor is returned as a view of itself).

    >>> import jaxgrad
    >>> jaxgrad.t(jaxgrad.tensor([[1.0, 2.0]]))
    tensor([[1.],
            [2.]])
    """
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    return apply_view(V.T, V.t_geometry, input)


@declare('permute(Tensor(a) self, int[] dims) -> Tensor(a)')
def permute(input: Tensor, *dims: Any) -> Tensor:
    """Reorder the dims; a view.

    >>> import jaxgrad
    >>> jaxgrad.permute(jaxgrad.ones(2, 3, 4), (2, 0, 1)).shape
    jaxgrad.Size([4, 2, 3])
    """
    dims = tuple(_wrap_dim(d, input.ndim) for d in _shape_arg(dims))
    if sorted(dims) != list(range(input.ndim)):
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does "
                           "not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {input.ndim} is not equal to len(dims) = {len(dims)}"
                           if len(dims) != input.ndim else "permute(): duplicate dims are not "
                           "allowed.")
    return apply_view(V.PERMUTE, V.permute_geometry, input, dims=dims)


@declare(
    'expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)',
    variants='method')
def expand(input: Tensor, *sizes: Any) -> Tensor:
    shape = _expanded_shape(input, _shape_arg(sizes))
    return apply_view(V.EXPAND, V.expand_geometry, input, shape=shape)


def _expanded_shape(input: Tensor, sizes: Sequence[int]) -> tuple[int, ...]:
    """The shape ``input.expand(*sizes)`` has (``-1`` keeps a dim), with torch's errors."""
    if len(sizes) < input.ndim:
        raise RuntimeError(
            f"expand(jaxgrad.{_dtypes.type_name(input.dtype)}{{{list(input.shape)}}}, "
            f"size={list(sizes)}): the number of sizes provided ({len(sizes)}) must be greater "
            f"or equal to the number of dimensions in the tensor ({input.ndim})")
    lead = len(sizes) - input.ndim
    shape = list(sizes)
    for i, old in reversed(list(enumerate(input.shape))):  # torch checks from the last dim
        target = sizes[lead + i]
        if target == -1:
            shape[lead + i] = old
        elif old != 1 and old != target:
            raise RuntimeError(
                f"The expanded size of the tensor ({target}) must match the existing size "
                f"({old}) at non-singleton dimension {lead + i}.  Target sizes: {list(sizes)}.  "
                f"Tensor sizes: {list(input.shape)}")
    return tuple(shape)


@declare('clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor')
def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy with its own storage that stays in the graph (CloneBackward0).

    >>> import jaxgrad
    >>> jaxgrad.clone(jaxgrad.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """
    return apply(V.CLONE, input)


@declare(
    'contiguous(Tensor(a) self, MemoryFormat? memory_format=None) -> Tensor(a)',
    variants='method')
def contiguous(input: Tensor, memory_format: Any = None) -> Tensor:
    """``input`` itself if its elements are laid out contiguously, else a contiguous copy.

    >>> import jaxgrad
    >>> t = jaxgrad.ones(2, 3).t()
    >>> t.is_contiguous(), t.contiguous().is_contiguous()
    (False, True)
    """
    return input if input.is_contiguous() else clone(input)


def alias(input: Tensor) -> Tensor:
    return apply_view(V.ALIAS, V.alias_geometry, input)


@declare('diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)')
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The ``offset``-th diagonal of the matrices in dims ``dim1``/``dim2``, as a view whose last
    dim runs along it.

    >>> import jaxgrad
    >>> jaxgrad.diagonal(jaxgrad.arange(9).reshape(3, 3), 1)
    tensor([1, 5])
    """
    d1, d2 = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply_view(V.DIAGONAL, V.diagonal_geometry, input, offset=offset, dim1=d1, dim2=d2)


@declare('select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)')
def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice ``index`` of dim ``dim``, without that dim; a view.

    >>> import jaxgrad
    >>> jaxgrad.select(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]), 1, 0)
    tensor([1., 3.])
    """
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {dim}")
    return _select(input, dim, index % size)


def _select(input: Tensor, dim: int, index: int) -> Tensor:
    return apply_view(V.SELECT, V.select_geometry, input, dim=dim, index=index)


def narrow_slice(input: Tensor, dim: int, start: Any, stop: Any, step: Any) -> Tensor:
    size = input.shape[dim]
    step = 1 if step is None else step
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    start, stop, _ = slice(start, stop).indices(size)
    stop = builtins.max(stop, start)
    return apply_view(V.SLICE, V.slice_geometry, input, dim=dim, start=start, stop=stop, step=step)


# --- indexing -------------------------------------------------------------------------------------

def _is_int_index(i: Any) -> bool:
    if isinstance(i, bool):
        return False
    if isinstance(i, (int, np.integer)):
        return True
    return (isinstance(i, Tensor) and i.ndim == 0 and not i.dtype.is_floating_point
            and i.dtype is not _dtypes.bool_)


def _is_sequence(i: Any) -> bool:
    """What torch's indexing treats as a sequence: lists, tuples, ranges, numpy arrays."""
    return isinstance(i, (list, tuple, range, np.ndarray))


def _treat_as_tuple(index: Any) -> bool:
    """torch's (numpy's legacy) treatSequenceAsTuple: a short non-tuple sequence holding a
    tensor, a sequence, a slice, ``...`` or None is a tuple of indices (``x[[0, slice(None)]]``
    is ``x[0, :]``); any other sequence is one index array."""
    if isinstance(index, tuple):
        return True
    if not _is_sequence(index) or isinstance(index, np.ndarray) or len(index) >= 32:
        return False
    return builtins.any(isinstance(i, (Tensor, slice)) or _is_sequence(i) or i is None
                        or i is Ellipsis for i in index)


def _index_array(i: Any) -> np.ndarray:
    """The values of an index tensor, or a sequence made into torch's indexing tensor (bool if
    all its entries are bools, else int64: floats are truncated). A traced index tensor (under
    ``jax.jit`` or ``jaxgrad.func``) stays its tracer: only its shape and dtype are known."""
    if isinstance(i, Tensor):
        return i._value if isinstance(i._value, jax.core.Tracer) else np.asarray(i._value)
    arr = np.asarray(_plain(i))
    return arr if arr.dtype == np.bool_ else arr.astype(np.int64)


def _plain(i: Any) -> Any:
    """Nested sequences with 0-d tensors replaced by their Python values."""
    if isinstance(i, Tensor):
        return i.item()
    if isinstance(i, (list, tuple, range)):
        return [_plain(v) for v in i]
    return i


_MASK_DTYPES = (np.dtype(np.bool_), np.dtype(np.uint8))  # a uint8 index tensor is a mask


def _warn_uint8_indices(indices: Any) -> None:
    """torch's deprecation warning, once per uint8 index tensor (where it expands the masks)."""
    for i in indices:
        if isinstance(i, Tensor) and i.dtype is _dtypes.uint8:
            warn_at_user_line(f"indexing with dtype {_dtypes.uint8} is now deprecated, please use "
                              f"a dtype {_dtypes.bool_} instead.")


def _refuse_uint8_masked_fill(indices: list, value: Tensor, accumulate: bool) -> None:
    """torch's index_put_ hands one mask index with a one-element value to masked_fill_, which
    refuses a uint8 mask (``indices``: the defined indices)."""
    if (not accumulate and len(indices) == 1 and value.numel() == 1
            and isinstance(indices[0], Tensor) and indices[0].dtype is _dtypes.uint8):
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           "unsigned char")


def _advanced(i: Any) -> Any:
    """An integer index array for a list/array/tensor index (bool and uint8 masks become
    positions)."""
    arr = _index_array(i)
    if arr.dtype in _MASK_DTYPES:
        if isinstance(arr, jax.core.Tracer):
            raise IndexError("indexing with a boolean mask needs the mask's values (the result's "
                             "shape depends on them), which a JAX trace does not have; use "
                             "jaxgrad.where(mask, x, 0) or index outside the transformation")
        return [jnp.asarray(a, dtype=a.dtype) for a in np.nonzero(arr)]
    if arr.dtype.kind not in "iu":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return [jnp.asarray(arr, dtype=arr.dtype)]


def getitem(input: Tensor, index: Any) -> Tensor:
    """``input[index]``: basic indexing as views (select/slice/unsqueeze), then IndexBackward0."""
    if input.ndim == 0:
        _check_zero_dim_index(index)
    if isinstance(index, slice):  # torch slices even x[:] (no full-slice shortcut here)
        return narrow_slice(input, 0, index.start, index.stop, index.step)
    _warn_uint8_indices(tuple(index) if _treat_as_tuple(index) else (index,))
    out, advanced = _basic_index(input, index)
    if advanced:
        return apply(X.INDEX, out, aux=(advanced,))
    return alias(out) if out is input else out  # x[...], x[:, :], x[()]: a shallow copy


def _check_zero_dim_index(index: Any) -> None:
    """torch's errors for a bare int or slice indexing a 0-dim tensor (its fast paths)."""
    if _is_int_index(index) and not isinstance(index, Tensor):
        if int(index) == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"index {int(index)} is out of bounds for dimension 0 with size 0")
    if isinstance(index, slice):
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")


def _basic_index(input: Tensor, index: Any) -> tuple[Tensor, tuple]:
    """torch's applySlicing: the basic items of ``index`` applied as views (full slices are
    skipped), and the advanced indices per dimension of that view (empty if there are none)."""
    items = tuple(index) if _treat_as_tuple(index) else (index,)
    out, dim, advanced = input, 0, []
    n_real = builtins.sum(_dims_consumed(i) for i in items)
    real_dim = 0  # the item's position, counting an ellipsis as the dims it spans (torch's)
    for item in items:
        flag = _bool_index(item)
        if item is None:
            out = unsqueeze(out, dim)
            advanced.append(None)
            dim += 1
            real_dim += 1
        elif item is Ellipsis:
            skip = input.ndim - n_real
            advanced.extend([None] * skip)
            dim += skip
            real_dim += skip
        elif flag is not None:  # a new dim of size 1, indexed by [0] (True) or [] (False)
            out = unsqueeze(out, dim)
            advanced.append(jnp.zeros((int(flag),), jnp.int64))
            dim += 1
            real_dim += 1
        elif _is_int_index(item):
            if dim >= out.ndim:
                raise IndexError(f"too many indices for tensor of dimension {input.ndim}")
            out = _select_index(out, dim, int(item), real_dim)
            real_dim += 1
        elif isinstance(item, slice):
            if dim >= out.ndim:
                raise IndexError(f"too many indices for tensor of dimension {input.ndim}")
            size = out.shape[dim]
            if item != slice(None) and item.indices(size) != (0, size, 1):
                out = narrow_slice(out, dim, item.start, item.stop, item.step)
            advanced.append(None)
            dim += 1
            real_dim += 1
        elif isinstance(item, Tensor) or _is_sequence(item):
            arrays = _advanced(item)
            if dim >= out.ndim and _index_array(item).dtype not in _MASK_DTYPES:
                raise IndexError(f"too many indices for tensor of dimension {input.ndim}")
            _check_mask_shape(item, tuple(out.shape[dim:]))
            advanced.extend(arrays)
            dim += len(arrays)
            real_dim += len(arrays)
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"byte Variables are valid indices (got {type_name(item)})")
    if not builtins.any(a is not None for a in advanced):
        return out, ()
    _check_index_bounds(tuple(out.shape), advanced)
    while advanced[-1] is None:
        advanced.pop()
    return out, tuple(advanced)


def _bool_index(item: Any) -> bool | None:
    """A Python bool or 0-d bool tensor index as a bool, else None."""
    if isinstance(item, bool):
        return item
    if isinstance(item, Tensor) and item.ndim == 0 and item.dtype is _dtypes.bool_:
        return bool(item.item())
    return None


def _select_index(input: Tensor, dim: int, index: int, real_dim: int) -> Tensor:
    """``input[..., index]`` at ``dim``; errors name the indexed tensor's ``real_dim``."""
    size = input.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {real_dim} with size "
                         f"{size}")
    return _select(input, dim, index % size)


def _check_mask_shape(item: Any, sizes: tuple) -> None:
    """torch's IndexError for a bool mask whose shape does not fit the dims it indexes."""
    raw = _index_array(item)
    if raw.dtype in _MASK_DTYPES and raw.shape != sizes[:raw.ndim]:
        bad = next(i for i, (a, b) in enumerate(zip(raw.shape, sizes)) if a != b)
        raise IndexError(
            f"The shape of the mask {list(raw.shape)} at index {bad} does not match the "
            f"shape of the indexed tensor {list(sizes)} at index {bad}")


def _check_index_bounds(sizes: tuple, advanced: Any) -> None:
    """torch's IndexError for an index out of range (``advanced``: None or an integer array per
    dim of a tensor of ``sizes``). torch's indexer walks the broadcast index elements in order
    and names the index's position among the defined indices, not the dim it indexes."""
    defined = [(k, a) for k, a in enumerate(advanced) if a is not None]
    if not defined or builtins.any(isinstance(a, jax.core.Tracer) for _, a in defined):
        return  # values unknown under a trace: JAX clamps, as jit does
    try:
        arrays = np.broadcast_arrays(*[np.asarray(a) for _, a in defined])
    except ValueError:  # (the shape mismatch is reported later)
        return
    limits = np.array([sizes[k] if k < len(sizes) else 0 for k, _ in defined])
    flat = np.stack([a.reshape(-1) for a in arrays], axis=-1)
    bad = np.argwhere((flat >= limits) | (flat < -limits))
    if bad.size:
        e, j = bad[0]
        raise IndexError(f"index {int(flat[e, j])} is out of bounds for dimension {int(j)} with "
                         f"size {int(limits[j])}")


def _dims_consumed(item: Any) -> int:
    """How many dimensions of the indexed tensor one index item consumes."""
    if item is None or item is Ellipsis or isinstance(item, bool):
        return 0
    if isinstance(item, Tensor) or _is_sequence(item):
        raw = _index_array(item)
        return raw.ndim if raw.dtype in _MASK_DTYPES else 1
    return 1


def setitem(input: Tensor, index: Any, value: Any) -> None:
    """``input[index] = value`` as torch's set_item: the basic items select a view (full slices
    skipped, so ``y[...] = v`` writes ``y`` itself), then copy_to, or index_put_ for advanced
    indices."""
    value = _setitem_value(input, value)
    if index is False:  # torch's shortcut: no write, so no version bump, no autograd checks
        return
    if input.ndim == 0:
        _check_zero_dim_index(index)
    target, advanced = _basic_index(input, index)
    if not advanced:
        _copy_to(target, value)
        return
    if not isinstance(value, Tensor):
        value = Tensor._make(jnp.asarray(value, input._value.dtype))
    elif value.shape[:1] == (1,):
        value = _without_leading_ones(value)
    items = tuple(index) if _treat_as_tuple(index) else (index,)
    _refuse_uint8_masked_fill([i for i in items if _bool_index(i) is not None or (
        isinstance(i, Tensor) and i.ndim) or _is_sequence(i)], value, False)
    _warn_uint8_indices(items)
    if has_internal_overlap(target):  # (a mask's shape was checked by _basic_index)
        indices = [i for i in items if (isinstance(i, Tensor) and i.ndim) or _is_sequence(i)]
        if not indices:  # ``t[True] = v``: torch's unsqueeze and copy_ (nothing for t[False])
            if builtins.all(a is None or a.size for a in advanced):
                check_overlap(E.COPY, target, (value,))
        else:
            _warn_expanded_index_put(target, indices, value, False, None)
    apply_inplace(X.INDEX_PUT, target, value, aux=(advanced,), accumulate=False)


def _warn_expanded_index_put(target: Tensor, indices: list, value: Tensor, accumulate: bool,
                             dim: int | None) -> None:
    """torch's warnings for index_put_ into an expanded ``target``: its own, then masked_fill_'s
    where it hands the write to masked_fill_ (one index, a bool or uint8 mask whose shape fits
    ``target`` at ``dim`` (None: known to fit), a one-element value: canDispatchToMaskedFill)."""
    warn_expanded_write(target, "index_put", (value,))
    if accumulate or value.numel() != 1 or len(indices) != 1:
        return
    mask = _index_array(indices[0])
    if mask.dtype in (np.bool_, np.uint8) and (
            dim is None or mask.shape == tuple(target.shape[dim:dim + mask.ndim])):
        warn_expanded_write(target, "masked_fill", (value,))


def _setitem_value(input: Tensor, value: Any) -> Any:
    """torch's valueToTensor: a Tensor or a Python number (numpy integers count as ints)."""
    if isinstance(value, (Tensor, bool, int, float, complex)):
        return value
    if isinstance(value, np.integer):
        return int(value)
    kind = type(value).__name__
    if isinstance(value, (np.ndarray, np.generic)):
        kind = f"numpy.{kind}"
    raise TypeError(f"can't assign a {kind} to a jaxgrad.{_dtypes.type_name(input.dtype)}")


def _copy_to(dst: Tensor, value: Any) -> None:
    """torch's indexing copy_to: copy_ when the shapes match, fill_ from a 0-d CPU value (a
    Python scalar is one), else copy_ from the value without leading 1s, expanded."""
    if not isinstance(value, Tensor):
        if dst.ndim == 0:
            copy_(dst, value)
        else:
            apply_inplace(E.FILL_TENSOR, dst, value)
    elif dst.shape == value.shape:
        copy_(dst, value)
    elif value.ndim == 0 and value.device.type == "cpu":
        fill_(dst, value)
    else:
        src = _without_leading_ones(value)
        copy_(dst, src if src.shape == dst.shape else expand(src, tuple(dst.shape)))


def _without_leading_ones(value: Tensor) -> Tensor:
    """``value`` viewed without its leading size-1 dims (torch's slicePrefix1sSize)."""
    shape = tuple(value.shape)
    lead = next((i for i, size in enumerate(shape) if size != 1), len(shape))
    return view(value, shape[lead:])


# --- matrix products ------------------------------------------------------------------------------

def _same_dtype(a: Tensor, b: Tensor) -> None:
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype.name} != {b.dtype.name}".replace("float32", "float")
                           .replace("float64", "double"))


@declare('mm(Tensor self, Tensor mat2) -> Tensor', variants='function method out')
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Matrix product of two 2-d tensors.

    >>> import jaxgrad
    >>> jaxgrad.mm(jaxgrad.ones(2, 3), jaxgrad.ones(3, 1))
    tensor([[3.],
            [3.]])
    """
    if input.ndim != 2 or mat2.ndim != 2:
        bad = input if input.ndim != 2 else mat2
        raise RuntimeError(f"{'self' if bad is input else 'mat2'} must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})")
    _same_dtype(input, mat2)
    return apply(L.MM, input, mat2)


@declare('bmm(Tensor self, Tensor mat2) -> Tensor', variants='function method out')
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product of two 3-d tensors.

    >>> import jaxgrad
    >>> jaxgrad.bmm(jaxgrad.ones(4, 2, 3), jaxgrad.ones(4, 3, 5)).shape
    jaxgrad.Size([4, 2, 5])
    """
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if input.ndim != 3
                           else "batch2 must be a 3D tensor")
    batch, _, m = input.shape
    if tuple(mat2.shape[:2]) != (batch, m):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch}, {m}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    if input.dtype is not mat2.dtype:
        raise RuntimeError(f"expected scalar type {_dtypes.scalar_type_name(input.dtype)} but "
                           f"found {_dtypes.scalar_type_name(mat2.dtype)}")
    return apply(L.BMM, input, mat2)


@declare('mv(Tensor self, Tensor vec) -> Tensor', variants='function method out')
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product.

    >>> import jaxgrad
    >>> jaxgrad.mv(jaxgrad.ones(2, 3), jaxgrad.tensor([1.0, 2.0, 3.0]))
    tensor([6., 6.])
    """
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    rows, cols = input.shape
    if cols != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{cols}), vec "
                           f"({vec.shape[0]})")
    if input.dtype is not vec.dtype:
        # torch's mv is addmv into a result of vec's dtype: (result, mat, vec)
        names = [_dtypes.scalar_type_name(d) for d in (vec.dtype, input.dtype, vec.dtype)]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {names[0]}, "
                           f"{names[1]}, and {names[2]}")
    return apply(L.MV, input, vec)


@declare('dot(Tensor self, Tensor tensor) -> Tensor', variants='function method out')
def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Dot product of two 1-d tensors.

    >>> import jaxgrad
    >>> jaxgrad.dot(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([3.0, 4.0]))
    tensor(11.)
    """
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D "
                           "tensors")
    if input.shape[0] != tensor.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
            f"[{tensor.shape[0]}] to have the same number of elements, but got {input.shape[0]} "
            f"and {tensor.shape[0]} elements respectively")
    if input.dtype is not tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_dtypes.scalar_type_name(input.dtype)} and "
                           f"{_dtypes.scalar_type_name(tensor.dtype)}")
    return apply(L.DOT, input, tensor)


@declare('matmul(Tensor self, Tensor other) -> Tensor', variants='function method out')
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """torch.matmul, composed of dot/mv/mm/bmm and views exactly as torch's ``_matmul_impl``.

    >>> import jaxgrad
    >>> jaxgrad.matmul(jaxgrad.ones(5, 2, 3), jaxgrad.ones(3)).shape
    jaxgrad.Size([5, 2])
    """
    d1, d2 = input.ndim, other.ndim
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(input, other)
    if d1 == 2 and d2 == 1:
        return mv(input, other)
    if d1 == 1 and d2 == 2:
        return apply_inplace(V.SQUEEZE_INPLACE, mm(unsqueeze(input, 0), other), dims=(0,))
    if d1 == 2 and d2 == 2:
        return mm(input, other)
    if _should_fold(input, other):
        return _folded_matmul(input, other)
    return _batched_matmul(input, other)


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """torch's should_fold: can the larger operand be folded into a matrix for mm/mv?"""
    a_larger = a.ndim >= b.ndim
    big, small = (a, b) if a_larger else (b, a)
    if big.ndim < 3 or small.ndim > 2:
        return False
    if small._requires_grad:  # folding keeps the gradient of the small operand small
        return True
    if a.ndim == 2:
        return False
    if big.numel() == 0:
        return True
    g = big._geometry()
    shape, strides = list(g.shape), list(g.strides)
    if not a_larger:  # torch checks the strides of b.mT
        shape[-2], shape[-1] = shape[-1], shape[-2]
        strides[-2], strides[-1] = strides[-1], strides[-2]
    return builtins.all(strides[i] == strides[i + 1] * shape[i + 1]
                        for i in range(len(shape) - 2))


def _folded_matmul(a: Tensor, b: Tensor) -> Tensor:
    """N-D @ 1-D/2-D as one mm/mv on the folded N-D operand (b.mT when b is the larger)."""
    transposed = b.ndim > a.ndim
    t1 = transpose(b, -2, -1) if transposed else a
    t2 = (t(a) if a.ndim == 2 else a) if transposed else b
    lead = tuple(t1.shape[:-1])
    folded = reshape(t1, (math.prod(lead), t1.shape[-1]))
    if t2.ndim == 1:
        return _unsafe_view(mv(folded, t2), lead)
    out = _unsafe_view(mm(folded, t2), lead + (t2.shape[1],))
    return contiguous(transpose(out, -2, -1)) if transposed else out


def _batched_matmul(a: Tensor, b: Tensor) -> Tensor:
    """Broadcast batch dims, then one bmm (torch's last matmul case)."""
    d1, d2 = a.ndim, b.ndim
    batch1, batch2 = tuple(a.shape[:-2]), tuple(b.shape[:-2])
    if d1 == 3 and d2 == 3 and batch1[0] != batch2[0]:
        if batch1[0] == 1 and a._requires_grad:
            return matmul(squeeze(a, 0), b)
        if batch2[0] == 1 and b._requires_grad:
            return matmul(a, squeeze(b, 0))
    n, m1 = (a.shape[-2] if d1 > 1 else 1), a.shape[-1]
    m2, p = (b.shape[-2], b.shape[-1]) if d2 > 1 else (b.shape[0], 1)
    batch = broadcast_shapes(batch1, batch2)
    size = math.prod(batch)
    if m1 != m2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size}, {m1}] but got: [{size}, {m2}].")
    a3 = reshape(expand(a, batch + (n, m1)), (size, n, m1))
    shape = batch + ((n,) if d1 > 1 else ()) + ((p,) if d2 > 1 else ())
    if d2 == 1:
        b3 = unsqueeze(reshape(expand(b, batch + (m2,)), (size, m2)), 2)
        return _unsafe_view(squeeze(bmm(a3, b3), -1), shape)
    b3 = reshape(expand(b, batch + (m2, p)), (size, m2, p))
    return _unsafe_view(bmm(a3, b3), shape)


def _unsafe_view(input: Tensor, shape: tuple) -> Tensor:
    """torch's ``_unsafe_view``: a reshape recorded as a copy (UnsafeViewBackward0)."""
    return apply(V.UNSAFE_VIEW, input, shape=shape)


# --- in-place -------------------------------------------------------------------------------------

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


@declare('fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)', numbers_as_tensors=('value',))
def fill_(input: Tensor, value: Any) -> Tensor:
    """Fill with ``value`` (a number or a 0-d tensor), in place.

    >>> import jaxgrad
    >>> jaxgrad.zeros(3).fill_(2.5)
    tensor([2.5000, 2.5000, 2.5000])
    """
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
        return apply_inplace(E.FILL_TENSOR, input, value)
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
        return apply_inplace(E.LERP_TENSOR, input, end, weight)
    check_inplace_broadcast(input, end)
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


# --- dtype / device -------------------------------------------------------------------------------

def to_dtype(input: Tensor, dtype: Any) -> Tensor:
    """A copy in ``dtype`` (ToCopyBackward0), or ``input`` itself if it already has it."""
    d = _dtypes.to_dtype(dtype)
    if d is input.dtype:
        return input
    return apply(E.CAST, input, dtype=d.np)


clip_ = declare_alias("clip_", "clamp_")

# torch's other names of the comparisons (Tensor.greater_ and friends are methods only)
greater = declare_alias("greater", "gt")
greater_equal = declare_alias("greater_equal", "ge")
less = declare_alias("less", "lt")
less_equal = declare_alias("less_equal", "le")
not_equal = declare_alias("not_equal", "ne")
for _alias, _target in (("greater_", "gt_"), ("greater_equal_", "ge_"), ("less_", "lt_"),
                        ("less_equal_", "le_"), ("not_equal_", "ne_")):
    declare_alias(_alias, _target)


# --- gather / scatter / index_select / take_along_dim ---------------------------------------------

def _sizes(t: Tensor) -> str:
    return str(list(t.shape))


def _size_of(t: Tensor, d: int) -> int:
    """torch's ensure_nonempty_size: a 0-d tensor counts as size 1 (other dims: size(d))."""
    return 1 if t.ndim == 0 else t.shape[_wrap_dim(d, t.ndim)]


def _concrete(t: Tensor) -> np.ndarray | None:
    """The values of ``t`` when they are known now (not while ``jaxgrad.compile`` traces)."""
    value = t._value
    return None if isinstance(value, jax.core.Tracer) else np.asarray(value)


def _check_index_range(index: Tensor, size: int, dim: int) -> None:
    """torch's kernel check of gather/scatter indices: each in ``[0, size)``."""
    values = _concrete(index)
    if values is None or not values.size:
        return
    bad = values[(values < 0) | (values >= size)]
    if bad.size:
        raise RuntimeError(f"index {int(bad.flat[0])} is out of bounds for dimension {dim} with "
                           f"size {size}")


def _check_index_dtype(name: str, index: Tensor) -> None:
    require_tensors(index)
    if index.numel() and index.dtype not in (_dtypes.int64, _dtypes.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


@declare(
    'gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor',
    variants='function method out')
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """Values of ``input`` along ``dim`` at ``index``: ``out[i][j] = input[i][index[i][j]]``
    (for ``dim=1``); ``index`` may be smaller than ``input`` in the other dims.

    >>> import jaxgrad
    >>> t = jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> jaxgrad.gather(t, 1, jaxgrad.tensor([[0, 0], [1, 0]]))
    tensor([[1., 1.],
            [4., 3.]])
    """
    dim = _wrap_dim(dim, input.ndim)
    _check_index_dtype("gather", index)
    if index.numel():
        if builtins.max(input.ndim, 1) != builtins.max(index.ndim, 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as input "
                               "tensor")
        for d in range(builtins.max(input.ndim, 1)):
            if d != dim and _size_of(index, d) > _size_of(input, d):
                raise RuntimeError(
                    f"Size does not match at dimension {d} expected index {_sizes(index)} to be "
                    f"no larger than self {_sizes(input)} apart from dimension {dim}")
        _check_index_range(index, _size_of(input, dim), dim)
    return apply(X.GATHER, input, aux=(index,), dim=dim, sparse_grad=sparse_grad)


def _check_scatter(input: Tensor, dim: int, index: Tensor, src: Tensor | None) -> int:
    """torch's scatter checks, in its order: dim, dtypes, shapes, index range."""
    dim = _wrap_dim(dim, input.ndim)
    _check_index_dtype("scatter", index)
    if src is not None and src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if not index.numel():
        return dim
    ndim = builtins.max(input.ndim, 1)
    if ndim != builtins.max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    wrong = builtins.any(d != dim and _size_of(index, d) > _size_of(input, d) for d in range(ndim))
    if not wrong and src is not None:
        wrong = builtins.any(_size_of(index, d) > _size_of(src, d) for d in range(ndim))
    if src is not None:
        if builtins.max(src.ndim, 1) != builtins.max(index.ndim, 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
        if wrong:
            raise RuntimeError(f"Expected index {_sizes(index)} to be no larger than self "
                               f"{_sizes(input)} apart from dimension {dim} and to be no larger "
                               f"size than src {_sizes(src)}")
    elif wrong:
        raise RuntimeError(f"Expected index {_sizes(index)} to be no larger than self "
                           f"{_sizes(input)} apart from dimension {dim}")
    return dim


def _scatter_reduce_check(reduce: str, src_is_tensor: bool) -> None:
    if src_is_tensor:
        warn_once("The reduce argument of jaxgrad.scatter with Tensor src is deprecated and will "
                  "be removed in a future PyTorch release. Use jaxgrad.scatter_reduce instead for "
                  "more reduction options.")
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")


def _scatter(input: Tensor, dim: int, index: Tensor, src: Any, value: Any, reduce: Any,
             inplace: bool) -> Tensor:
    """scatter/scatter_: ``src`` (a tensor) or ``value`` (a number) at ``index`` along ``dim``."""
    if src is None:
        src = value
    run = apply_inplace if inplace else apply
    if isinstance(src, Tensor):
        dim = _check_scatter(input, dim, index, src)
        if reduce is not None:
            _scatter_reduce_check(reduce, True)
        if inplace:  # (after the argument checks, before the index range's, as torch's)
            check_overlap(X.SCATTER_SRC, input, (src,))
        if index.numel():
            _check_index_range(index, _size_of(input, dim), dim)
        if reduce is not None:
            return run(X.SCATTER_REDUCE_SRC[inplace], input, src, aux=(index,), dim=dim,
                       reduce=reduce)
        return run(X.SCATTER_SRC, input, src, aux=(index,), dim=dim)
    value = scalar(src)
    dim = _check_scatter(input, dim, index, None)
    if reduce is not None:
        _scatter_reduce_check(reduce, False)
    if inplace:
        check_overlap(X.SCATTER_VALUE, input)
    if index.numel():
        _check_index_range(index, _size_of(input, dim), dim)
    if reduce is not None:
        return run(X.SCATTER_REDUCE_VALUE[inplace], input, aux=(index, value), dim=dim,
                   reduce=reduce)
    return run(X.SCATTER_VALUE, input, aux=(index, value), dim=dim)


@declare(
    'scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor',
    variants='function method out', numbers_as_tensors=('src',))
def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
            reduce: str | None = None) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor, or a number) written at ``index`` along
    ``dim``: ``out[i][index[i][j]] = src[i][j]`` (for ``dim=1``). ``reduce='add'`` or
    ``'multiply'`` combines instead of overwriting (not differentiable, as in torch).

    >>> import jaxgrad
    >>> jaxgrad.scatter(jaxgrad.zeros(2, 3), 1, jaxgrad.tensor([[2], [0]]), 5.0)
    tensor([[0., 0., 5.],
            [5., 0., 0.]])
    """
    return _scatter(input, dim, index, src, value, reduce, inplace=False)


@declare(
    'scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)',
    variants='method', numbers_as_tensors=('src',))
def scatter_(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
             reduce: str | None = None) -> Tensor:
    """``scatter``, in place.

    >>> import jaxgrad
    >>> jaxgrad.zeros(3).scatter_(0, jaxgrad.tensor([1]), jaxgrad.tensor([7.0]))
    tensor([0., 7., 0.])
    """
    return _scatter(input, dim, index, src, value, reduce, inplace=True)


def _scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor, inplace: bool) -> Tensor:
    require_tensors(src)
    dim = _check_scatter(input, dim, index, src)
    if index.numel():
        _check_index_range(index, _size_of(input, dim), dim)
    return (apply_inplace if inplace else apply)(X.SCATTER_ADD, input, src, aux=(index,), dim=dim)


@declare('scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor',
         variants='function method out')
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (repeated indices
    add up).

    >>> import jaxgrad
    >>> jaxgrad.scatter_add(jaxgrad.zeros(3), 0, jaxgrad.tensor([0, 0, 2]), jaxgrad.ones(3))
    tensor([2., 0., 1.])
    """
    return _scatter_add(input, dim, index, src, inplace=False)


@declare('scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)',
         variants='method')
def scatter_add_(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``scatter_add``, in place.

    >>> import jaxgrad
    >>> jaxgrad.ones(3).scatter_add_(0, jaxgrad.tensor([2, 2]), jaxgrad.ones(2))
    tensor([1., 1., 3.])
    """
    return _scatter_add(input, dim, index, src, inplace=True)


@declare('index_select(Tensor self, int dim, Tensor index) -> Tensor',
         variants='function method out')
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The entries of ``input`` along ``dim`` at the positions in the 1-d ``index``.

    >>> import jaxgrad
    >>> jaxgrad.index_select(jaxgrad.tensor([[1, 2, 3], [4, 5, 6]]), 1, jaxgrad.tensor([2, 0]))
    tensor([[3, 1],
            [6, 4]])
    """
    require_tensors(index)
    dim = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if input.ndim == 0 and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{index.numel()} value(s)")
    if index.dtype not in (_dtypes.int64, _dtypes.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    values = _concrete(index)
    size = _size_of(input, dim)
    if values is not None and ((values < 0) | (values >= size)).any():
        if input.ndim == 0 or dim == 0:
            raise IndexError("index out of range in self")
        bad = values[(values < 0) | (values >= size)]
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(bad.flat[0])} "
                           f"axis_dim={size}")
    return apply(X.INDEX_SELECT, input, aux=(index,), dim=dim)


@declare('take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor',
         variants='function method out')
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``gather`` with ``input`` and ``indices`` broadcast against each other (all dims but
    ``dim``); without ``dim``, of the flattened ``input``.

    >>> import jaxgrad
    >>> t = jaxgrad.tensor([[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]])
    >>> jaxgrad.take_along_dim(t, t.argmax(1, keepdim=True), dim=1)
    tensor([[30.],
            [60.]])
    """
    require_tensors(indices)
    if dim is None:
        return gather(view(input, -1), 0, view(indices, -1))
    if input.ndim != indices.ndim:
        raise RuntimeError(
            "jaxgrad.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {input.ndim} dimensions for input, and {indices.ndim} "
            "dimensions for indices")
    if indices.dtype is not _dtypes.int64:
        raise RuntimeError("jaxgrad.take_along_dim(): dtype of indices should be Long but got "
                           f"{_dtypes.scalar_type_name(indices.dtype)}")
    dim = _wrap_dim(dim, input.ndim)
    self_sizes = list(input.shape)
    self_sizes[dim] = indices.shape[dim]
    indices = _broadcast_to(indices, broadcast_shapes(tuple(self_sizes), tuple(indices.shape)))
    index_sizes = list(indices.shape)
    index_sizes[dim] = input.shape[dim]
    input = _broadcast_to(input, broadcast_shapes(tuple(index_sizes), tuple(input.shape)))
    return gather(input, dim, indices)


def _broadcast_to(input: Tensor, shape: tuple) -> Tensor:
    """torch's broadcast_to (an expand, recorded even when the shape does not change)."""
    return expand(input, shape)


# --- sorting --------------------------------------------------------------------------------------

def _check_sort_dim(input: Tensor, dim: int) -> int:
    return _wrap_dim(dim, input.ndim) if input.ndim else 0


@declare('sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)')
def sort(input: Tensor, dim: int = -1, descending: bool = False, *,
         stable: bool | None = None) -> Any:
    """``(values, indices)``: ``input`` sorted along ``dim`` (stably; NaN sorts as the largest
    value, as in torch). With ``stable=`` given, torch's other overload (SortBackward1).

    >>> import jaxgrad
    >>> jaxgrad.sort(jaxgrad.tensor([3.0, 1.0, 2.0]), descending=True)
    jaxgrad.return_types.sort(
    values=tensor([3., 2., 1.]),
    indices=tensor([0, 2, 1]))
    """
    dim = _check_sort_dim(input, dim)
    op = R.SORT if stable is None else R.SORT_STABLE
    values, indices = apply(op, input, dim=dim, descending=bool(descending))
    return return_types.sort(values, indices)


@declare('argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor')
def argsort(input: Tensor, dim: int = -1, descending: bool = False, *,
            stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim`` (``sort(...).indices``).

    >>> import jaxgrad
    >>> jaxgrad.argsort(jaxgrad.tensor([[3.0, 1.0, 2.0]]))
    tensor([[1, 2, 0]])
    """
    return apply(R.ARGSORT, input, dim=_check_sort_dim(input, dim), descending=bool(descending))


@declare(
    'topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> '
    '(Tensor values, Tensor indices)')
def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) entries along
    ``dim``, largest first.

    >>> import jaxgrad
    >>> jaxgrad.topk(jaxgrad.tensor([1.0, 5.0, 3.0, 4.0]), 2)
    jaxgrad.return_types.topk(
    values=tensor([5., 4.]),
    indices=tensor([1, 3]))
    """
    dim = _check_sort_dim(input, dim)
    if not 0 <= k <= _size_of(input, dim):
        raise RuntimeError("selected index k out of range")
    if input.dtype is _dtypes.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    values, indices = apply(R.TOPK, input, k=int(k), dim=dim, largest=bool(largest),
                            sorted=bool(sorted))
    return return_types.topk(values, indices)


# --- beta * input + alpha * (products) ------------------------------------------------------------

def _expand_input(input: Tensor, shape: tuple) -> None:
    """torch's expand_size check of addmm-like ops' ``input`` against the result's shape."""
    _expanded_shape(input, shape)


def _check_inplace_size(input: Tensor, shape: tuple) -> None:
    if tuple(input.shape) != tuple(shape):
        raise RuntimeError(f"Bad in-place call: input tensor size {_sizes(input)} and output "
                           f"tensor size {list(shape)} should match")


def _addmm(input: Tensor, mat1: Tensor, mat2: Tensor, beta: Any, alpha: Any,
           inplace: bool) -> Tensor:
    require_tensors(mat1, mat2)
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    shape = (mat1.shape[0], mat2.shape[1])
    if inplace:
        _check_inplace_size(input, shape)
    else:
        _expand_input(input, shape)
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})")
    for name, a in (("self", input), ("mat1", mat1)):
        if a.dtype is not mat2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                               f"{_dtypes.scalar_type_name(a.dtype)} and "
                               f"{_dtypes.scalar_type_name(mat2.dtype)}")
    run = apply_inplace if inplace else apply
    return run(L.ADDMM, input, mat1, mat2, aux=(scalar(beta), scalar(alpha)))


@declare(
    'addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor',
    variants='function method out')
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` (``input`` broadcasts to the product's shape).

    >>> import jaxgrad
    >>> jaxgrad.addmm(jaxgrad.ones(2), jaxgrad.ones(3, 2), jaxgrad.ones(2, 2), alpha=2)
    tensor([[5., 5.],
            [5., 5.],
            [5., 5.]])
    """
    return _addmm(input, mat1, mat2, beta, alpha, inplace=False)


@declare(
    'addmm_(Tensor(a!) self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> '
    'Tensor(a!)', variants='method')
def addmm_(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``addmm``, in place.

    >>> import jaxgrad
    >>> jaxgrad.ones(1, 1).addmm_(jaxgrad.ones(1, 2), jaxgrad.ones(2, 1), beta=0.5)
    tensor([[2.5000]])
    """
    return _addmm(input, mat1, mat2, beta, alpha, inplace=True)


def _check_batches(input: Tensor, batch1: Tensor, batch2: Tensor) -> None:
    """torch's baddbmm checks after the input's expand: 3-d batches of matching sizes/dtypes."""
    for name, b in (("batch1", batch1), ("batch2", batch2)):
        if b.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    bs, _, contraction = batch1.shape
    if tuple(batch2.shape[:2]) != (bs, contraction):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{bs}, {contraction}] but got: [{batch2.shape[0]}, "
                           f"{batch2.shape[1]}].")
    if batch1.dtype is not batch2.dtype:
        raise RuntimeError(f"expected scalar type {_dtypes.scalar_type_name(batch1.dtype)} but "
                           f"found {_dtypes.scalar_type_name(batch2.dtype)}")
    if input.dtype is not batch1.dtype:
        names = [_dtypes.c_type_name(t.dtype) for t in (input, batch1, batch2)]
        raise RuntimeError(f"Input dtypes must be the same, got: input {names[0]}, batch1: "
                           f"{names[1]}, batch2: {names[2]}")


def _baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, beta: Any, alpha: Any,
             inplace: bool) -> Tensor:
    require_tensors(batch1, batch2)
    shape = (_size_of(batch1, 0), _size_of(batch1, 1), _size_of(batch2, 2))
    if inplace:
        _check_inplace_size(input, shape)
    else:
        _expand_input(input, shape)
    _check_batches(input, batch1, batch2)
    run = apply_inplace if inplace else apply
    return run(L.BADDBMM, input, batch1, batch2, aux=(scalar(beta), scalar(alpha)))


@declare(
    'baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> '
    'Tensor', variants='function method out')
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` for 3-d batches of matrices.

    >>> import jaxgrad
    >>> jaxgrad.baddbmm(jaxgrad.zeros(1), jaxgrad.ones(2, 1, 3), jaxgrad.ones(2, 3, 1))
    tensor([[[3.]],
    <BLANKLINE>
            [[3.]]])
    """
    return _baddbmm(input, batch1, batch2, beta, alpha, inplace=False)


@declare(
    'baddbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) '
    '-> Tensor(a!)', variants='method')
def baddbmm_(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
             alpha: Any = 1) -> Tensor:
    """``baddbmm``, in place.

    >>> import jaxgrad
    >>> jaxgrad.ones(1, 1, 1).baddbmm_(jaxgrad.ones(1, 1, 2), jaxgrad.ones(1, 2, 1), alpha=3)
    tensor([[[7.]]])
    """
    return _baddbmm(input, batch1, batch2, beta, alpha, inplace=True)


def _addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, beta: Any, alpha: Any,
            inplace: bool) -> Tensor:
    require_tensors(batch1, batch2)
    shape = (_size_of(batch1, 1), _size_of(batch2, 2))
    if inplace:
        _check_inplace_size(input, shape)
    else:
        _expand_input(input, shape)
    for name, b in (("batch1", batch1), ("batch2", batch2)):
        if b.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
    for a, b in ((input, batch2), (batch1, batch2)):
        if a.dtype is not b.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                               f"{_dtypes.scalar_type_name(a.dtype)} and "
                               f"{_dtypes.scalar_type_name(b.dtype)}")
    run = apply_inplace if inplace else apply
    return run(L.ADDBMM, input, batch1, batch2, aux=(scalar(beta), scalar(alpha)))


@declare(
    'addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> '
    'Tensor', variants='function method out')
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
           alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``.

    >>> import jaxgrad
    >>> jaxgrad.addbmm(jaxgrad.zeros(1), jaxgrad.ones(2, 1, 3), jaxgrad.ones(2, 3, 1))
    tensor([[6.]])
    """
    return _addbmm(input, batch1, batch2, beta, alpha, inplace=False)


@declare(
    'addbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) '
    '-> Tensor(a!)', variants='method')
def addbmm_(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Tensor:
    """``addbmm``, in place.

    >>> import jaxgrad
    >>> jaxgrad.ones(1, 1).addbmm_(jaxgrad.ones(2, 1, 2), jaxgrad.ones(2, 2, 1))
    tensor([[5.]])
    """
    return _addbmm(input, batch1, batch2, beta, alpha, inplace=True)


# --- einsum (torch's algorithm: align the operands, then contract pairs with bmm) -----------------

_ELLIPSIS = 52  # subscripts 0-25 are A-Z, 26-51 a-z


def _subscript(label: str) -> int:
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + 26


def _label(subscript: int) -> str:
    return chr(subscript + ord("A")) if subscript < 26 else chr(subscript - 26 + ord("a"))


def _is_label(c: str) -> bool:
    return c.isascii() and c.isalpha()


def _parse_operand_labels(lhs: str, num_ops: int) -> list[list[int]]:
    labels: list[list[int]] = [[] for _ in range(num_ops)]
    ellipsis, current, i = False, 0, 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if ellipsis:
                raise RuntimeError(f"einsum(): found '.' for operand {current} for which an "
                                   "ellipsis was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {current} that is not part "
                                   "of any ellipsis")
            i += 2
            labels[current].append(_ELLIPSIS)
            ellipsis = True
        elif c == ",":
            current += 1
            if current >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                                   "equation")
            ellipsis = False
        elif c != " ":
            if not _is_label(c):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                                   "equation string, subscripts must be in [a-zA-Z]")
            labels[current].append(_subscript(c))
        i += 1
    if current != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return labels


def _einsum(equation: str, operands: list) -> Tensor:
    """torch's native einsum (no contraction path: pairs are contracted left to right)."""
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    num_ops = len(operands)
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_operand_labels(lhs, num_ops)
    label_count, ell_num_dim = [0] * 52, 0
    for i, (t, labels) in enumerate(zip(operands, op_labels)):
        n, has_ellipsis = len(labels), _ELLIPSIS in labels
        for s in labels:
            if s == _ELLIPSIS:
                n -= 1
                ell_num_dim = builtins.max(ell_num_dim, t.ndim - n)
            else:
                label_count[s] += 1
        if not (n <= t.ndim if has_ellipsis else n == t.ndim):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({n}) "
                f"{'is more than' if has_ellipsis else 'does not match'} the number of dimensions "
                f"({t.ndim}) for operand {i}{'' if has_ellipsis else ' and no ellipsis was given'}")
    # where each label goes: output dims first, then the dims to sum out
    perm, perm_index, ell_index, ell_in_output = [-1] * 52, 0, 0, False
    if arrow < 0:
        perm_index, ell_in_output = ell_num_dim, True
        for s in range(52):
            if label_count[s] == 1:
                perm[s], perm_index = perm_index, perm_index + 1
    else:
        rhs, i = equation[arrow + 2:], 0
        while i < len(rhs):
            c = rhs[i]
            if c == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was "
                                       "already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                       "ellipsis (...)")
                i += 2
                ell_index, perm_index, ell_in_output = perm_index, perm_index + ell_num_dim, True
            elif c != " ":
                if not _is_label(c):
                    raise RuntimeError(f"einsum(): invalid subscript given at index "
                                       f"{len(lhs) + 2 + i} in the equation string, subscripts "
                                       "must be in [a-zA-Z]")
                s = _subscript(c)
                if not (label_count[s] > 0 and perm[s] == -1):
                    why = ("appears more than once in the output" if perm[s] > -1
                           else "does not appear in the equation for any input operand")
                    raise RuntimeError(f"einsum(): output subscript {c} {why}")
                perm[s], perm_index = perm_index, perm_index + 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index, perm_index = perm_index, perm_index + ell_num_dim
    for s in range(52):
        if label_count[s] > 0 and perm[s] == -1:
            perm[s], perm_index = perm_index, perm_index + 1
    ops, dim_counts = _align_operands(operands, op_labels, perm, perm_index, ell_index,
                                      ell_num_dim)
    while len(ops) > 1:
        a, b = ops.pop(0), ops.pop(0)
        sum_dims, a_sums, b_sums = [], [], []
        for d in range(out_num_dim, perm_index):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_sums.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_sums.append(d)
                    dim_counts[d] = 0
        if a_sums:
            a = sum(a, a_sums, True)
        if b_sums:
            b = sum(b, b_sums, True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))
    if perm_index > out_num_dim:
        if num_ops > 1:  # the summed dims have size 1 by now
            return view(ops[0], tuple(ops[0].shape)[:out_num_dim])
        return sum(ops[0], list(range(out_num_dim, perm_index)))
    return ops[0]


def _align_operands(operands: list, op_labels: list, perm: list, perm_index: int,
                    ell_index: int, ell_num_dim: int) -> tuple[list, list]:
    """Each operand with repeated labels reduced to diagonals, missing dims unsqueezed and its
    dims permuted to ``perm``'s order; and per dim, how many operands have it larger than 1."""
    label_size, ell_sizes, dim_counts, ops = [1] * 52, [1] * ell_num_dim, [0] * perm_index, []
    for i, (t, labels) in enumerate(zip(operands, op_labels)):
        op, permutation, dim = t, [-1] * perm_index, 0
        for s in labels:
            if s == _ELLIPSIS:
                covered = t.ndim - (len(labels) - 1)
                for j in range(ell_num_dim - covered, ell_num_dim):
                    size = op.shape[dim]
                    if size != 1:
                        if ell_sizes[j] not in (1, size):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}has "
                                f"size {size} which does not broadcast with previously seen "
                                f"ellipsis with size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[perm[s]] == -1:
                size = op.shape[dim]
                if size != 1:
                    if label_size[s] not in (1, size):
                        raise RuntimeError(
                            f"einsum(): subscript {_label(s)} has size {size} for operand {i} "
                            f"which does not broadcast with previously seen size {label_size[s]}")
                    label_size[s] = size
                    dim_counts[perm[s]] += 1
                permutation[perm[s]] = dim
                dim += 1
            else:  # a repeated label: its diagonal, where the label first appeared
                prev = permutation[perm[s]]
                if op.shape[dim] != op.shape[prev]:
                    raise RuntimeError(
                        f"einsum(): subscript {_label(s)} is repeated for operand {i} but the "
                        f"sizes don't match, {op.shape[dim]} != {op.shape[prev]}")
                op = _movedim(diagonal(op, 0, prev, dim), -1, prev)
        for k in range(perm_index):
            if permutation[k] == -1:
                op = unsqueeze(op, dim)
                permutation[k] = dim
                dim += 1
        ops.append(permute(op, permutation))
    return ops, dim_counts


def _movedim(input: Tensor, source: int, destination: int) -> Tensor:
    """torch's movedim of one dim: a permute."""
    source, destination = _wrap_dim(source, input.ndim), _wrap_dim(destination, input.ndim)
    order = [d for d in range(input.ndim) if d != source]
    order.insert(destination, source)
    return permute(input, order)


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list) -> Tensor:
    """torch's sumproduct_pair (keepdim): multiply two aligned operands and sum ``sum_dims``,
    as one bmm between permuted reshapes."""
    if not sum_dims:
        return mul(left, right)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = sum(left, i, True)
            elif sr:
                right = sum(right, i, True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims)
                + [right.shape[d] for d in ro])
    order = lro + lo + sum_dims + ro
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    left = reshape(permute(left, order), (lro_size, lo_size, sum_size))
    right = reshape(permute(right, lro + sum_dims + ro + lo), (lro_size, sum_size, ro_size))
    return permute(view(bmm(left, right), tuple(out_size)), inverse)


@declare('einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor',
         variants='function', python_level=True)
def einsum(*args: Any) -> Tensor:
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``. Operands come as
    arguments or as one list; ``...`` stands for broadcast dims; without ``->`` the output has
    the labels seen once, in alphabetical order. Composed of views, ``sum``, ``mul`` and ``bmm``
    as torch composes it.

    >>> import jaxgrad
    >>> a, b = jaxgrad.ones(2, 3), jaxgrad.ones(3, 4)
    >>> jaxgrad.einsum("ij,jk->ik", a, b).shape, jaxgrad.einsum("ii", jaxgrad.eye(3))
    (jaxgrad.Size([2, 4]), tensor(3.))
    """
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    equation, operands = args[0], list(args[1:])
    if isinstance(equation, Tensor):
        raise NotImplementedError("jaxgrad.einsum: the sublist format (operand, subscripts, "
                                  "...) is not supported; pass an equation string")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = list(operands[0])
    require_tensors(*operands)
    return _einsum(equation, operands)


# --- reductions and indexing (issue 10) ---

def _dims_or_all(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """torch's reduction dims: None or an empty list reduce every dim."""
    if dim is None or (isinstance(dim, (list, tuple)) and not dim):
        return None
    return wrap_dims(dim, ndim)


@declare('logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor',
         variants='function method out')
def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input)))`` over ``dim``, computed stably (integers become floats).

    >>> import jaxgrad
    >>> jaxgrad.logsumexp(jaxgrad.tensor([[0.0, 0.0], [1.0, 2.0]]), dim=1)
    tensor([0.6931, 2.3133])
    """
    dims = wrap_dims(dim, input.ndim) if dim not in ((), []) else tuple(range(input.ndim))
    return apply(R.LOGSUMEXP, input, dim=dims, keepdim=bool(keepdim))


def _cumulative_dim(input: Tensor, dim: int) -> int:
    return _wrap_dim(dim, input.ndim) if input.ndim else 0


@declare('cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor',
         variants='function method out')
def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running products along ``dim`` (integer inputs multiply in int64, as in torch).

    >>> import jaxgrad
    >>> jaxgrad.cumprod(jaxgrad.tensor([1.0, 2.0, 3.0, 4.0]), 0)
    tensor([ 1.,  2.,  6., 24.])
    """
    return apply(R.CUMPROD, input, dim=_cumulative_dim(input, dim),
                 dtype=_reduce_dtype(input, dtype))


@declare('cumprod_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)',
         variants='method')
def cumprod_(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """``cumprod``, in place.

    >>> import jaxgrad
    >>> jaxgrad.tensor([1.0, 2.0, 3.0]).cumprod_(0)
    tensor([1., 2., 6.])
    """
    _check_cumulative_(input, dim, dtype, "cumprod")
    return apply_inplace(R.CUMPROD, input, dim=_cumulative_dim(input, dim), dtype=None)


def _check_cumulative_(input: Tensor, dim: int, dtype: Any, name: str) -> None:
    """torch's checks of ``cumsum_``/``cumprod_``, in its order: autograd's, the dim, the
    ``dtype`` (it must be ``input``'s), bool (no CPU kernel)."""
    check_inplace(input)
    if isinstance(dim, (str, float)):
        raise TypeError(f"{name}_(): argument 'dim' (position 1) must be int, not "
                        f"{type_name(dim)}")
    _wrap_dim(dim, input.ndim)
    d = input.dtype if dtype is None else _dtypes.to_dtype(dtype)
    if d is not input.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype "
                           f"{_dtypes.c_type_name(input.dtype)} and output tensor dtype "
                           f"{_dtypes.c_type_name(d)} should match")
    if input.dtype is _dtypes.bool_:
        raise NotImplementedError(f'"{name}_out_cpu" not implemented for \'Bool\'')


@declare('logcumsumexp(Tensor self, int dim) -> Tensor', variants='function method out')
def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """Running ``log(sum(exp(...)))`` along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.logcumsumexp(jaxgrad.tensor([0.0, 0.0, 0.0]), 0)
    tensor([0.0000, 0.6931, 1.0986])
    """
    return apply(R.LOGCUMSUMEXP, input, dim=_cumulative_dim(input, dim))


def _cum_extreme(input: Tensor, dim: int, op: Any, name: str) -> Any:
    values, indices = apply(op, input, dim=_cumulative_dim(input, dim))
    return getattr(return_types, name)(values, indices)


@declare('cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)')
def cummax(input: Tensor, dim: int) -> Any:
    """``(values, indices)`` of the running maximum along ``dim`` (a later equal value takes
    over the index, as in torch).

    >>> import jaxgrad
    >>> jaxgrad.cummax(jaxgrad.tensor([1.0, 3.0, 2.0, 3.0]), 0)
    jaxgrad.return_types.cummax(
    values=tensor([1., 3., 3., 3.]),
    indices=tensor([0, 1, 1, 3]))
    """
    return _cum_extreme(input, dim, R.CUMMAX, "cummax")


@declare('cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)')
def cummin(input: Tensor, dim: int) -> Any:
    """``(values, indices)`` of the running minimum along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.cummin(jaxgrad.tensor([3.0, 1.0, 2.0]), 0)
    jaxgrad.return_types.cummin(
    values=tensor([3., 1., 1.]),
    indices=tensor([0, 1, 1]))
    """
    return _cum_extreme(input, dim, R.CUMMIN, "cummin")


def _selecting(input: Tensor, dim: Any, keepdim: bool, op: Any, name: str, **static: Any) -> Any:
    """A ``(values, indices)`` reduction along one dim (torch's empty-dim error first)."""
    d = _cumulative_dim(input, dim)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    values, indices = apply(op, input, **static, dim=d, keepdim=bool(keepdim))
    return getattr(return_types, name)(values, indices)


@declare('median(Tensor self, int? dim=None, bool keepdim=False) -> '
         '(Tensor values, Tensor indices)')
def median(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """The median (the lower of the two middle values; NaN if there is one), or
    ``(values, indices)`` along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.median(jaxgrad.tensor([4.0, 1.0, 3.0, 2.0]))
    tensor(2.)
    """
    if dim is None:
        return apply(R.MEDIAN_ALL, input)
    return _selecting(input, dim, keepdim, R.MEDIAN_DIM, "median")


@declare('nanmedian(Tensor self, int? dim=None, bool keepdim=False) -> '
         '(Tensor values, Tensor indices)')
def nanmedian(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """``median`` of the values that are not NaN.

    >>> import jaxgrad
    >>> jaxgrad.nanmedian(jaxgrad.tensor([4.0, float("nan"), 3.0, 2.0]))
    tensor(3.)
    """
    if dim is None:
        return apply(R.NANMEDIAN_ALL, input)
    return _selecting(input, dim, keepdim, R.NANMEDIAN_DIM, "nanmedian")


@declare('kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> '
         '(Tensor values, Tensor indices)')
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """``(values, indices)`` of the ``k``-th smallest entries along ``dim`` (``k`` from 1).

    >>> import jaxgrad
    >>> jaxgrad.kthvalue(jaxgrad.tensor([4.0, 1.0, 3.0]), 2)
    jaxgrad.return_types.kthvalue(
    values=tensor(3.),
    indices=tensor(2))
    """
    d = _cumulative_dim(input, dim)
    if not 1 <= k <= _size_of(input, d):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    values, indices = apply(R.KTHVALUE, input, k=int(k), dim=d, keepdim=bool(keepdim))
    return return_types.kthvalue(values, indices)


@declare('mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)')
def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest of equally
    frequent ones) and the last position holding it.

    >>> import jaxgrad
    >>> jaxgrad.mode(jaxgrad.tensor([2.0, 1.0, 2.0, 1.0, 1.0]))
    jaxgrad.return_types.mode(
    values=tensor(1.),
    indices=tensor(4))
    """
    return _selecting(input, dim, keepdim, R.MODE, "mode")


@declare('nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) '
         '-> Tensor', variants='function method out')
def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """``sum`` with NaNs counted as zero.

    >>> import jaxgrad
    >>> jaxgrad.nansum(jaxgrad.tensor([1.0, float("nan"), 2.0]))
    tensor(3.)
    """
    if input.dtype.is_complex:
        raise RuntimeError("nansum does not support complex inputs")
    return apply(R.NANSUM, input, dim=_dims_or_all(dim, input.ndim), keepdim=bool(keepdim),
                 dtype=_reduce_dtype(input, dtype))


@declare('nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) '
         '-> Tensor', variants='function method out')
def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """``mean`` of the values that are not NaN (as torch: ``nansum`` divided by their count).

    >>> import jaxgrad
    >>> jaxgrad.nanmean(jaxgrad.tensor([1.0, float("nan"), 2.0]))
    tensor(1.5000)
    """
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_dtypes.scalar_type_name(input.dtype)}")
    present = apply(E.LOGICAL_NOT, apply(E.NE, input, input))  # not NaN
    counted = sum(present) if dim is None else sum(present, dim, keepdim)
    return div(nansum(input, dim, keepdim, dtype=dtype), counted)


def _var_mean(input: Tensor, dim: Any, unbiased: Any, keepdim: bool, correction: Any,
              op: Any) -> tuple[Tensor, Tensor]:
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    dims = None if dim is None else wrap_dims(dim, input.ndim)
    return tuple(apply(op, input, dim=dims, correction=_correction(unbiased, correction),
                       keepdim=bool(keepdim)))


@declare(
    'var_mean(Tensor self, int[1]? dim=None, bool? unbiased=None, bool keepdim=False, *, '
    'Scalar? correction=None) -> (Tensor, Tensor)', variants='function')
def var_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:
    """``(var, mean)`` in one op (one ``VarMeanBackward0`` node for both).

    >>> import jaxgrad
    >>> jaxgrad.var_mean(jaxgrad.tensor([1.0, 2.0, 3.0, 4.0]))
    (tensor(1.6667), tensor(2.5000))
    """
    return _var_mean(input, dim, unbiased, keepdim, correction, R.VAR_MEAN)


@declare(
    'std_mean(Tensor self, int[1]? dim=None, bool? unbiased=None, bool keepdim=False, *, '
    'Scalar? correction=None) -> (Tensor, Tensor)', variants='function')
def std_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:
    """``(std, mean)`` in one op (one ``StdMeanBackward0`` node for both).

    >>> import jaxgrad
    >>> jaxgrad.std_mean(jaxgrad.tensor([1.0, 2.0, 3.0, 4.0]), correction=0)
    (tensor(1.1180), tensor(2.5000))
    """
    return _var_mean(input, dim, unbiased, keepdim, correction, R.STD_MEAN)


@declare('aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)')
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> Any:
    """``(min, max)`` over ``dim`` (all dims by default); ties share the gradient.

    >>> import jaxgrad
    >>> jaxgrad.aminmax(jaxgrad.tensor([[1.0, 5.0], [3.0, 2.0]]), dim=1)
    jaxgrad.return_types.aminmax(
    min=tensor([1., 2.]),
    max=tensor([5., 3.]))
    """
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        dims = None
    else:
        dims = wrap_dims(dim, input.ndim)
        if input.ndim and input.shape[dims[0]] == 0:
            raise IndexError(f"aminmax(): Expected reduction dim {dims[0]} to have non-zero "
                             "size.")
    low, high = apply(R.AMINMAX, input, dim=dims, keepdim=bool(keepdim))
    return return_types.aminmax(low, high)


@declare('count_nonzero(Tensor self, int[1]? dim=None) -> Tensor')
def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """How many elements are not zero, over ``dim`` (all dims by default), as int64.

    >>> import jaxgrad
    >>> jaxgrad.count_nonzero(jaxgrad.tensor([[0.0, 1.0], [2.0, 3.0]]), dim=1)
    tensor([1, 2])
    """
    return apply(R.COUNT_NONZERO, input, dim=_dims_or_all(dim, input.ndim))


@declare('argwhere(Tensor self) -> Tensor')
def argwhere(input: Tensor) -> Tensor:
    """The indices of the non-zero elements, one row each (``nonzero(input)``).

    >>> import jaxgrad
    >>> jaxgrad.argwhere(jaxgrad.tensor([[0.0, 1.0], [2.0, 0.0]]))
    tensor([[0, 1],
            [1, 0]])
    """
    return nonzero(input)


# masked_select / masked_scatter / take

@declare('masked_select(Tensor self, Tensor mask) -> Tensor', variants='function method out')
def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of ``input`` where the bool ``mask`` holds (broadcast together), as a 1-d
    tensor.

    >>> import jaxgrad
    >>> jaxgrad.masked_select(jaxgrad.tensor([1.0, 2.0, 3.0]), jaxgrad.tensor([True, False, True]))
    tensor([1., 3.])
    """
    require_tensors(mask)
    if mask.dtype is not _dtypes.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    count = int(np.broadcast_to(np.asarray(mask._value), shape).sum())
    return apply(X.MASKED_SELECT, input, aux=(mask,), _count=count)


def _check_masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> None:
    require_tensors(mask, source)
    if mask.dtype is not _dtypes.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_dtypes.scalar_type_name(mask.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f" {_dtypes.scalar_type_name(input.dtype)} and "
                           f"{_dtypes.scalar_type_name(source.dtype)}")


def _check_masked_count(mask: Any, shape: tuple, source: Tensor) -> None:
    values = _concrete(mask)
    if values is not None and int(np.broadcast_to(values, shape).sum()) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")


@declare('masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor',
         variants='function method')
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` with the elements of ``source``, in order, where ``mask`` holds.

    >>> import jaxgrad
    >>> jaxgrad.zeros(4).masked_scatter(jaxgrad.tensor([True, False, True, False]),
    ...                                 jaxgrad.tensor([7.0, 8.0, 9.0]))
    tensor([7., 0., 8., 0.])
    """
    _check_masked_scatter(input, mask, source)
    shape = broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    _check_masked_count(mask, shape, source)
    return apply(X.MASKED_SCATTER, input, source, aux=(mask,))


@declare('masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> Tensor(a!)',
         variants='method')
def masked_scatter_(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``masked_scatter``, in place (``mask`` must broadcast to ``input``'s shape).

    >>> import jaxgrad
    >>> jaxgrad.zeros(3).masked_scatter_(jaxgrad.tensor([False, True, True]),
    ...                                  jaxgrad.tensor([1.0, 2.0]))
    tensor([0., 1., 2.])
    """
    check_overlap(X.MASKED_SCATTER, input, (source,))  # (before the dtype checks, as torch's)
    _check_masked_scatter(input, mask, source)
    check_inplace_broadcast(input, mask)
    _check_masked_count(mask, tuple(input.shape), source)
    return apply_inplace(X.MASKED_SCATTER, input, source, aux=(mask,))


@declare('take(Tensor self, Tensor index) -> Tensor', variants='function method out')
def take(input: Tensor, index: Tensor) -> Tensor:
    """The elements of the flattened ``input`` at ``index`` (negative indices count from the
    end), in ``index``'s shape.

    >>> import jaxgrad
    >>> jaxgrad.take(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]), jaxgrad.tensor([0, -1]))
    tensor([1., 4.])
    """
    require_tensors(index)
    if index.dtype is not _dtypes.int64:
        raise RuntimeError("take(): Expected a long tensor for index, but got "
                           f"{_dtypes.scalar_type_name(index.dtype)}")
    values = _concrete(index)
    n = input.numel()
    if values is not None and values.size:
        bad = values[(values < -n) | (values >= n)]
        if bad.size:
            raise IndexError(f"out of range: tried to access index {int(bad.flat[0])} on a tensor "
                             f"of {n} elements.")
    return apply(X.TAKE, input, aux=(index,))


def _put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool,
         inplace: bool) -> Tensor:
    """torch's put_: its checks in its order (autograd's first when in place)."""
    require_tensors(index, source)
    if inplace:
        check_inplace(input, (source,))
    if index.dtype is not _dtypes.int64:
        raise RuntimeError("put_(): Expected a long tensor for index, but got "
                           f"{_dtypes.scalar_type_name(index.dtype)}")
    if input.dtype is not source.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_dtypes.scalar_type_name(input.dtype)} and "
                           f"source.dtype = {_dtypes.scalar_type_name(source.dtype)}")
    if source.numel() != index.numel():
        raise IndexError("put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, "
                         f"index.numel() = {index.numel()}")
    if inplace:
        check_overlap(X.PUT, input, (source,))
    values = _concrete(index)
    n = input.numel()
    if values is not None and values.size:
        bad = values[(values < -n) | (values >= n)]
        if bad.size:
            raise IndexError(f"out of range: tried to access index {int(bad.flat[0])} on a tensor "
                             f"of {n} elements.")
    run = apply_inplace if inplace else apply
    return run(X.PUT, input, source, aux=(index,), accumulate=bool(accumulate))


@declare('put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor',
         variants='function method')
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``source`` written (``accumulate``: added) at ``index`` of the
    flattened ``input`` (negative indices count from the end).

    >>> import jaxgrad
    >>> jaxgrad.put(jaxgrad.zeros(2, 2), jaxgrad.tensor([0, -1]), jaxgrad.tensor([1.0, 2.0]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    return _put(input, index, source, accumulate, inplace=False)


@declare('put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) -> '
         'Tensor(a!)', variants='method')
def put_(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``put``, in place.

    >>> import jaxgrad
    >>> jaxgrad.zeros(3).put_(jaxgrad.tensor([1, 1]), jaxgrad.tensor([1.0, 2.0]),
    ...                       accumulate=True)
    tensor([0., 3., 0.])
    """
    return _put(input, index, source, accumulate, inplace=True)


# index_add / index_copy / index_fill / index_put

def _first_out_of_range(index: Tensor, size: int) -> int | None:
    values = _concrete(index)
    if values is None or not values.size:
        return None
    bad = values[(values < 0) | (values >= size)]
    return int(bad.flat[0]) if bad.size else None


def _check_index_add(input: Tensor, dim: int, index: Tensor, source: Tensor,
                     name: str = "index_add_", inplace: bool = False) -> int:
    """torch's index_add_ (and index_reduce_) checks, in its order; returns the wrapped dim."""
    require_tensors(index, source)
    dim = _cumulative_dim(input, dim)
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {_dtypes.scalar_type_name(index.dtype)} and "
                         f"size: {list(index.shape)}")
    if index.dtype not in (_dtypes.int64, _dtypes.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: "
                           f"{_dtypes.scalar_type_name(index.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{name}(): self ({_dtypes.scalar_type_name(input.dtype)}) and "
                           f"source ({_dtypes.scalar_type_name(source.dtype)}) must have the "
                           "same scalar type")
    if _size_of(source, dim) != index.numel():
        raise RuntimeError(f"{name}(): Number of indices ({index.numel()}) should be equal "
                           f"to source.size(dim): ({_size_of(source, dim)}), for dim: {dim}")
    if inplace:  # (torch's order: the checks above, the overlap, the index range)
        check_overlap(X.INDEX_ADD, input, (source,))
    bad = _first_out_of_range(index, _size_of(input, dim))
    if bad is not None:
        if name != "index_add_":
            raise IndexError("index out of range in self")
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size "
                           f"{_size_of(input, dim)}")
    return dim


def _check_index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> int:
    """torch's index_copy_ checks, in its order; returns the wrapped dim."""
    require_tensors(index, source)
    dim = _cumulative_dim(input, dim)
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if index.numel() != _size_of(source, dim):
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal "
                         f"to source.size(dim) ({_size_of(source, dim)})")
    if index.dtype is not _dtypes.int64:
        raise RuntimeError("index_copy_(): Expected a long tensor for index, but got "
                           f"{_dtypes.scalar_type_name(index.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {_dtypes.scalar_type_name(input.dtype)} and (source) "
                           f"{_dtypes.scalar_type_name(source.dtype)}")
    bad = _first_out_of_range(index, _size_of(input, dim))
    if bad is not None:
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {dim} with "
                         f"size {_size_of(input, dim)}")
    return dim


def _check_index_fill(input: Tensor, dim: int, index: Tensor) -> int:
    """torch's index_fill_ checks, in its order; returns the wrapped dim."""
    require_tensors(index)
    dim = _cumulative_dim(input, dim)
    if index.dtype is not _dtypes.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    bad = _first_out_of_range(index, _size_of(input, dim))
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size "
                         f"{_size_of(input, dim)}")
    return dim


def _index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, alpha: Any,
               inplace: bool) -> Tensor:
    dim = _check_index_add(input, dim, index, source, inplace=inplace)
    return (apply_inplace if inplace else apply)(X.INDEX_ADD, input, source,
                                                 aux=(index, scalar(alpha)), dim=dim)


@declare('index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> '
         'Tensor', variants='function method out')
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
              alpha: Any = 1) -> Tensor:
    """A copy of ``input`` with ``alpha * source`` added at the positions ``index`` along
    ``dim`` (repeated indices add up).

    >>> import jaxgrad
    >>> jaxgrad.index_add(jaxgrad.zeros(3), 0, jaxgrad.tensor([0, 0, 2]), jaxgrad.ones(3))
    tensor([2., 0., 1.])
    """
    return _index_add(input, dim, index, source, alpha, inplace=False)


@declare('index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) '
         '-> Tensor(a!)', variants='method')
def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
               alpha: Any = 1) -> Tensor:
    """``index_add``, in place.

    >>> import jaxgrad
    >>> jaxgrad.ones(2, 2).index_add_(1, jaxgrad.tensor([1]), jaxgrad.ones(2, 1), alpha=3)
    tensor([[1., 4.],
            [1., 4.]])
    """
    return _index_add(input, dim, index, source, alpha, inplace=True)


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def _index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str,
                  include_self: bool, inplace: bool) -> Tensor:
    if inplace:  # (torch's kernel refuses it before its warning)
        check_overlap(X.INDEX_REDUCE, input, (source,))
    _warn_once("index_reduce() is in beta and the API may change at any time.")
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    dim = _check_index_add(input, dim, index, source, name="index_reduce_")
    return (apply_inplace if inplace else apply)(
        X.INDEX_REDUCE, input, source, aux=(index,), dim=dim, reduce=reduce,
        include_self=bool(include_self))


@declare('index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, '
         'bool include_self=True) -> Tensor', variants='function method out')
def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """A copy of ``input`` with the slices of ``source`` combined, by ``reduce`` ("prod",
    "mean", "amax", "amin"), into the slices at ``index`` along ``dim``;
    ``include_self=False`` leaves ``input``'s own values at those slices out.

    >>> import jaxgrad, warnings
    >>> warnings.simplefilter("ignore")
    >>> jaxgrad.index_reduce(jaxgrad.ones(2), 0, jaxgrad.tensor([1, 1]),
    ...                      jaxgrad.tensor([2.0, 4.0]), "amax")
    tensor([1., 4.])
    """
    return _index_reduce(input, dim, index, source, reduce, include_self, inplace=False)


@declare('index_reduce_(Tensor(a!) self, int dim, Tensor index, Tensor source, str reduce, *, '
         'bool include_self=True) -> Tensor(a!)', variants='method')
def index_reduce_(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    """``index_reduce``, in place.

    >>> import jaxgrad, warnings
    >>> warnings.simplefilter("ignore")
    >>> jaxgrad.ones(2).index_reduce_(0, jaxgrad.tensor([0]), jaxgrad.tensor([3.0]), "prod")
    tensor([3., 1.])
    """
    return _index_reduce(input, dim, index, source, reduce, include_self, inplace=True)


def _index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor, inplace: bool) -> Tensor:
    dim = _check_index_copy(input, dim, index, source)
    return (apply_inplace if inplace else apply)(X.INDEX_COPY, input, source, aux=(index,),
                                                 dim=dim)


@declare('index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor',
         variants='function method out')
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` with the slices of ``source`` written at ``index`` along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.index_copy(jaxgrad.zeros(3), 0, jaxgrad.tensor([2, 0]), jaxgrad.tensor([5.0, 6.0]))
    tensor([6., 0., 5.])
    """
    return _index_copy(input, dim, index, source, inplace=False)


@declare('index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> Tensor(a!)',
         variants='method')
def index_copy_(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``index_copy``, in place.

    >>> import jaxgrad
    >>> jaxgrad.zeros(3).index_copy_(0, jaxgrad.tensor([1]), jaxgrad.tensor([4.0]))
    tensor([0., 4., 0.])
    """
    return _index_copy(input, dim, index, source, inplace=True)


def _index_fill(input: Tensor, dim: int, index: Tensor, value: Any, inplace: bool) -> Tensor:
    run = apply_inplace if inplace else apply
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    if inplace and isinstance(index, Tensor) and index.dtype is _dtypes.int64:
        warn_expanded_write(input, "index_fill", (value,))  # (after the index's dtype check)
    complex_value = value.is_complex() if isinstance(value, Tensor) else isinstance(value, complex)
    if (complex_value and not input.is_complex() and isinstance(index, Tensor)
            and index.dtype is _dtypes.int64):
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not "
                           "supported")
    dim = _check_index_fill(input, dim, index)
    if isinstance(value, Tensor):
        return run(X.INDEX_FILL_TENSOR, input, value, aux=(index,), dim=dim)
    return run(X.INDEX_FILL, input, aux=(index, scalar(value)), dim=dim)


@declare('index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor',
         variants='function method', numbers_as_tensors=('value',))
def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """A copy of ``input`` with ``value`` written in the slices at ``index`` along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.index_fill(jaxgrad.zeros(2, 3), 1, jaxgrad.tensor([0, 2]), -1.0)
    tensor([[-1.,  0., -1.],
            [-1.,  0., -1.]])
    """
    return _index_fill(input, dim, index, value, inplace=False)


@declare('index_fill_.int_Tensor(Tensor(a!) self, int dim, Tensor index, Tensor value) -> '
         'Tensor(a!)', variants='method', numbers_as_tensors=('value',))
def index_fill_(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """``index_fill``, in place.

    >>> import jaxgrad
    >>> jaxgrad.zeros(3).index_fill_(0, jaxgrad.tensor([1]), 2.0)
    tensor([0., 2., 0.])
    """
    return _index_fill(input, dim, index, value, inplace=True)


def _index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool,
               inplace: bool) -> Tensor:
    require_tensors(values)
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not "
                        f"{type_name(indices)}")
    if len(indices) > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim} (got "
                         f"{len(indices)})")
    if inplace and has_internal_overlap(input):
        defined = [k for k, i in enumerate(indices) if i is not None]
        _warn_expanded_index_put(input, [indices[k] for k in defined], values, accumulate,
                                 defined[0] if defined else None)
    if values.dtype is not input.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{_dtypes.scalar_type_name(input.dtype)} for the destination and "
                           f"{_dtypes.scalar_type_name(values.dtype)} for the source.")
    _refuse_uint8_masked_fill([i for i in indices if i is not None], values, accumulate)
    _warn_uint8_indices(indices)
    arrays: list = []
    for i in indices:
        if i is None:
            arrays.append(None)
        else:
            arrays.extend(_advanced(i))
    _check_index_bounds(tuple(input.shape), arrays)
    run = apply_inplace if inplace else apply
    return run(X.INDEX_PUT, input, values, aux=(tuple(arrays),), accumulate=bool(accumulate))


@declare('index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> '
         'Tensor')
def index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``values`` written (``accumulate``: added) at
    ``input[indices]`` (a tuple of index tensors, one per leading dim).

    >>> import jaxgrad
    >>> jaxgrad.index_put(jaxgrad.zeros(3), (jaxgrad.tensor([0, 0]),), jaxgrad.ones(2),
    ...                   accumulate=True)
    tensor([2., 0., 0.])
    """
    return _index_put(input, indices, values, accumulate, inplace=False)


@declare('index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) '
         '-> Tensor(a!)')
def index_put_(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """``index_put``, in place.

    >>> import jaxgrad
    >>> jaxgrad.zeros(3).index_put_((jaxgrad.tensor([2]),), jaxgrad.tensor(5.0))
    tensor([0., 0., 5.])
    """
    return _index_put(input, indices, values, accumulate, inplace=True)


# scatter_reduce

_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                    include_self: bool, inplace: bool) -> Tensor:
    require_tensors(src)
    if reduce not in _SCATTER_REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    dim = _check_scatter(input, dim, index, src)
    if index.numel():
        _check_index_range(index, _size_of(input, dim), dim)
    return (apply_inplace if inplace else apply)(
        X.SCATTER_REDUCE_TWO, input, src, aux=(index,), dim=dim, reduce=reduce,
        include_self=bool(include_self))


@declare('scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, '
         'bool include_self=True) -> Tensor', variants='function method out')
def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """``input`` with ``src`` combined in at ``index`` along ``dim`` by ``reduce`` ("sum",
    "prod", "mean", "amax", "amin"); ``include_self=False`` leaves ``input``'s own values at the
    written positions out.

    >>> import jaxgrad
    >>> jaxgrad.scatter_reduce(jaxgrad.zeros(2), 0, jaxgrad.tensor([0, 0, 1]),
    ...                        jaxgrad.tensor([1.0, 3.0, 2.0]), "amax", include_self=False)
    tensor([3., 2.])
    """
    return _scatter_reduce(input, dim, index, src, reduce, include_self, inplace=False)


@declare('scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, str reduce, *, '
         'bool include_self=True) -> Tensor(a!)', variants='method')
def scatter_reduce_(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    """``scatter_reduce``, in place.

    >>> import jaxgrad
    >>> jaxgrad.ones(2).scatter_reduce_(0, jaxgrad.tensor([1, 1]), jaxgrad.tensor([2.0, 4.0]),
    ...                                 "mean")
    tensor([1.0000, 2.3333])
    """
    return _scatter_reduce(input, dim, index, src, reduce, include_self, inplace=True)

# --- shapes, views and sampling (issue 10) ---

def _int_arg(value: Any) -> int:
    return int(value.item()) if isinstance(value, Tensor) else int(value)


@declare('narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)')
def narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """``length`` elements of dim ``dim`` from ``start`` on, as a view (torch's slice:
    SliceBackward0); ``start`` may be a 0-d integer tensor.

    >>> import jaxgrad
    >>> jaxgrad.narrow(jaxgrad.arange(6).reshape(2, 3), 1, 1, 2)
    tensor([[1, 2],
            [4, 5]])
    """
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    dim = _wrap_dim(dim, input.ndim)
    size, start = input.shape[dim], _int_arg(start)
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return apply_view(V.SLICE, V.slice_geometry, input, dim=dim, start=start,
                      stop=start + length, step=1)


def _dim_list(dims: Any) -> list:
    return [dims] if isinstance(dims, int) else [int(d) for d in dims]


@declare('movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)')
def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    """Move dims ``source`` to positions ``destination`` (the others keep their order); a view
    (PermuteBackward0).

    >>> import jaxgrad
    >>> jaxgrad.movedim(jaxgrad.ones(2, 3, 4), 0, -1).shape
    jaxgrad.Size([3, 4, 2])
    """
    src, dst, n = _dim_list(source), _dim_list(destination), input.ndim
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    src = [_wrap_dim(d, n) for d in src]
    dst = [_wrap_dim(d, n) for d in dst]
    for name, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({_dim_list(given)})")
    order = [-1] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    order = [next(rest) if o == -1 else o for o in order]
    return apply_view(V.PERMUTE, V.permute_geometry, input, dims=tuple(order))


moveaxis = declare_alias("moveaxis", "movedim")


@declare('unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)')
def unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:
    """Split dim ``dim`` into ``sizes`` (one may be -1); a view.

    >>> import jaxgrad
    >>> jaxgrad.unflatten(jaxgrad.ones(2, 6), 1, (2, -1)).shape
    jaxgrad.Size([2, 2, 3])
    """
    dim = _wrap_dim(dim, input.ndim)
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = input.shape[dim]
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten got an unexpected error:\nonly one dimension can be "
                           "inferred")
    known = math.prod(s for s in sizes if s != -1)
    if (-1 in sizes and (known == 0 or size % known)) or (-1 not in sizes and known != size):
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of "
                           f"dim {dim} ({size}) in the input tensor")
    sizes = [size // known if s == -1 else s for s in sizes]
    shape = tuple(input.shape[:dim]) + tuple(sizes) + tuple(input.shape[dim + 1:])
    return view(input, shape)


@declare('unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)',
         variants='method')
def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """The windows of ``size`` elements ``step`` apart along ``dimension``, as a view with a
    new last dim (UnfoldBackward0).

    >>> import jaxgrad
    >>> jaxgrad.arange(5).unfold(0, 2, 2)
    tensor([[0, 1],
            [2, 3]])
    """
    dim = _wrap_dim(dimension, input.ndim)
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    most = input.shape[dim] if input.ndim else 1
    if size > most:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {most} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return apply_view(V.UNFOLD, V.unfold_geometry, input, dimension=dim, size=size, step=step)


@declare('as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None)'
         ' -> Tensor(a)')
def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given sizes, strides (in elements) and offset
    (by default ``input``'s own).

    >>> import jaxgrad
    >>> jaxgrad.as_strided(jaxgrad.arange(6), (2, 2), (1, 2))
    tensor([[0, 2],
            [1, 3]])
    """
    layout, relative = _strided_layouts(input, size, stride, storage_offset)
    if relative is None:  # reaches past input's own elements, or input is not contiguous
        storage = Tensor._make(input._cell.array)
        out = apply(V.AS_STRIDED_OF_STORAGE, input, aux=(storage,),
                    input_layout=input._geometry(), layout_out=layout)
    else:
        out = apply(V.AS_STRIDED, input, layout_out=relative)
    return make_view(out, input, layout)


def _strided_layouts(input: Tensor, size: Any, stride: Any,
                     storage_offset: int | None) -> tuple[V.Layout, V.Layout]:
    """as_strided's layout in ``input``'s storage, and the same relative to ``input``'s own
    elements (what the op's kernel reads; None: it reaches past them or ``input`` is not
    contiguous), after torch's bounds check."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    g = input._geometry()
    offset = g.offset if storage_offset is None else int(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    needed = 0 if 0 in size else offset + 1 + builtins.sum((n - 1) * s
                                                           for n, s in zip(size, stride))
    storage = input._cell.array.size
    if needed > storage:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {input.element_size()} requiring a storage size of "
            f"{needed * input.element_size()} are out of bounds for storage of size "
            f"{storage * input.element_size()}")
    layout = V.Layout(size, stride, offset)
    if not input.is_contiguous() or (needed and offset < g.offset) or (
            needed > g.offset + input.numel()):
        return layout, None
    return layout, V.Layout(size, stride, offset - g.offset)


@declare('as_strided_(Tensor(a!) self, SymInt[] size, SymInt[] stride, '
         'SymInt? storage_offset=None) -> Tensor(a!)')
def as_strided_(input: Tensor, size: Any, stride: Any,
                storage_offset: int | None = None) -> Tensor:
    """``as_strided`` in place: ``input`` itself takes the sizes, strides and offset over its
    storage (AsStridedBackward1).

    >>> import jaxgrad
    >>> t = jaxgrad.arange(6.0); _ = t.as_strided_((2, 2), (1, 2), 1)
    >>> t, t.storage_offset()
    (tensor([[1., 3.],
            [2., 4.]]), 1)
    """
    layout, relative = _strided_layouts(input, size, stride, storage_offset)
    if relative is None:
        raise NotImplementedError("jaxgrad.as_strided_: only views within a contiguous input's "
                                  "own elements are supported")
    return apply_inplace_view(V.AS_STRIDED_INPLACE, lambda _, layout_out: layout, input,
                              layout_out=relative)


@declare('resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) '
         '-> Tensor(a!)', variants='method')
def resize_(input: Tensor, *size: Any, memory_format: Any = None) -> Tensor:
    """Give ``input`` the shape ``size``, contiguous from its storage offset, keeping its
    elements in storage order (new ones, past the storage's end, are zeros here; torch leaves
    them uninitialized). The same shape is no change (no version bump).

    >>> import jaxgrad
    >>> t = jaxgrad.arange(6.0); _ = t.resize_(2, 2)
    >>> t, t._version
    (tensor([[0., 1.],
            [2., 3.]]), 1)
    """
    if not size:
        raise TypeError('resize_() missing 1 required positional arguments: "size"')
    shape = _shape_arg(size)
    if builtins.any(n < 0 for n in shape):
        raise RuntimeError("numel: integer multiplication overflow")
    refused = input._inference and not is_inference_mode_enabled()  # raised after the change
    if input.requires_grad and not is_inference_mode_enabled() and not refused:
        raise RuntimeError("cannot resize variables that require grad")
    if shape != tuple(input.shape):
        input._resize_storage(shape)
    if refused:
        raise RuntimeError(INFERENCE_INPLACE_MESSAGE)
    return input


_ISIN = Op("isin", None, lambda elements, test, invert: jnp.isin(elements, test, invert=invert),
             aux=("test_elements",))


@declare('isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, '
         'bool invert=False) -> Tensor', variants='function',
         numbers_as_tensors=('elements', 'test_elements'))
def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """True where an element of ``elements`` is among ``test_elements`` (``invert``: is not).

    >>> import jaxgrad
    >>> jaxgrad.isin(jaxgrad.tensor([1, 2, 3]), jaxgrad.tensor([2, 5]))
    tensor([False,  True, False])
    """
    elements, test_elements = (t if isinstance(t, Tensor) else _creation.tensor(t)
                               for t in (elements, test_elements))
    return apply(_ISIN, elements, aux=(test_elements,), invert=bool(invert))


def _search(sequence, values, sorter, right, out_int32):
    """torch's searchsorted kernel: the insertion points of ``values`` in each innermost row
    of ``sequence`` (one row for all values when ``sequence`` is 1-D)."""
    side = "right" if right else "left"
    if sorter is not None:
        sequence = jnp.take_along_axis(sequence, sorter, axis=-1)
    dtype = jnp.int32 if out_int32 else jnp.int64
    if sequence.ndim == 1:
        return jnp.searchsorted(sequence, values, side=side).astype(dtype)
    rows = sequence.reshape(-1, sequence.shape[-1])
    found = jax.vmap(lambda row, v: jnp.searchsorted(row, v, side=side))(
        rows, values.reshape(rows.shape[0], -1))
    return found.reshape(values.shape).astype(dtype)


_SEARCHSORTED = Op("searchsorted", None, _search, inputs=("sorted_sequence",),
                   aux=("input", "sorter"))


@declare('searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, '
         'bool right=False, str? side=None, Tensor? sorter=None) -> Tensor', variants='function',
         numbers_as_tensors=('input',))
def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None,
                 sorter: Tensor | None = None) -> Tensor:
    """Where each value of ``input`` would be inserted in the innermost rows of
    ``sorted_sequence`` to keep them sorted (``right``/``side='right'``: after equal values).

    >>> import jaxgrad
    >>> jaxgrad.searchsorted(jaxgrad.tensor([1.0, 3.0, 5.0]), jaxgrad.tensor([3.0, 6.0]))
    tensor([1, 3])
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    values = input if isinstance(input, Tensor) else _creation.tensor(input)
    return apply(_SEARCHSORTED, sorted_sequence, aux=(values, sorter), right=bool(right),
                 out_int32=bool(out_int32))


@declare('bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, '
         'bool right=False) -> Tensor', variants='function', numbers_as_tensors=('input',))
def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False,
              right: bool = False) -> Tensor:
    """The bucket of each element of ``input`` among the sorted 1-D ``boundaries``
    (``right``: a value equal to a boundary goes to the bucket after it).

    >>> import jaxgrad
    >>> jaxgrad.bucketize(jaxgrad.tensor([1.0, 4.0]), jaxgrad.tensor([1.0, 3.0, 5.0]))
    tensor([0, 2])
    """
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


@declare('set_(Tensor(a!) self, Tensor? source=None) -> Tensor(a!)', variants='method')
def set_(input: Tensor, source: Tensor | None = None) -> Tensor:
    """Make ``input`` look at ``source``'s storage, with its shape, strides and offset (no
    ``source``: a new empty storage); one version bump, and a leaf gets a new grad accumulator.

    >>> import jaxgrad
    >>> base = jaxgrad.arange(4.0); t = jaxgrad.zeros(2)
    >>> t.set_(base[1:]), t.data_ptr() - base.data_ptr(), t._version
    (tensor([1., 2., 3.]), 4, 1)
    """
    refused = input._inference and not is_inference_mode_enabled()  # raised after the change
    check_inplace(input, inference=False)
    if source is None:
        cell, layout = Storage(jnp.zeros((0,), input.dtype.np)), None
    else:
        require_tensors(source)
        if source.dtype is not input.dtype:
            raise RuntimeError(f"Could not set tensor of type {_dtypes.c_type_name(source.dtype)} "
                               f"to a tensor of type {_dtypes.c_type_name(input.dtype)}")
        cell, layout = source._cell, source._geometry()
    input._cell = cell
    input._layout = None if layout is None or layout == Layout(
        tuple(cell.array.shape), contiguous_strides(tuple(cell.array.shape)), 0) else layout
    input._arr, input._lazy = None, None
    input._grad_acc = None
    structure_changed()
    if refused:
        raise RuntimeError(INFERENCE_INPLACE_MESSAGE)
    input._vc.value += 1
    return input


@declare('empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, '
         'Device? device=None, bool requires_grad=False) -> Tensor', variants='function')
def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None,
                  device: Any = None, requires_grad: bool = False, layout: Any = None,
                  pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor (zeros here) of shape ``size`` laid out with strides
    ``stride`` in a storage just large enough.

    >>> import jaxgrad
    >>> jaxgrad.empty_strided((2, 2), (4, 2)).stride()
    (4, 2)
    """
    shape, strides = tuple(int(n) for n in size), tuple(int(n) for n in stride)
    if len(shape) != len(strides):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality "
                           f"of strides ({len(strides)})")
    extent = 0 if 0 in shape else 1 + builtins.sum((n - 1) * s for n, s in zip(shape, strides))
    storage = _creation.empty(extent, dtype=dtype, device=device)
    out = Tensor._make(None, cell=storage._cell)
    out._layout = Layout(shape, strides, 0)
    return out.requires_grad_(requires_grad) if requires_grad else out


@declare('resize_as_(Tensor(a!) self, Tensor the_template, *, MemoryFormat? memory_format=None) '
         '-> Tensor(a!)')
def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """:meth:`Tensor.resize_` to the shape of ``the_template``.

    >>> import jaxgrad
    >>> jaxgrad.zeros(4).resize_as_(jaxgrad.ones(2, 2)).shape
    jaxgrad.Size([2, 2])
    """
    return resize_(input, tuple(the_template.shape), memory_format=memory_format)


@declare('unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)', variants='method')
def unsqueeze_(input: Tensor, dim: int) -> Tensor:
    """``unsqueeze`` in place: ``input`` itself takes the new shape (UnsqueezeBackward1).

    >>> import jaxgrad
    >>> t = jaxgrad.ones(2); _ = t.unsqueeze_(0); t.shape, t._version
    (jaxgrad.Size([1, 2]), 1)
    """
    return apply_inplace_view(V.UNSQUEEZE_INPLACE, V.unsqueeze_geometry, input,
                              dim=_wrap_dim(dim, input.ndim + 1))


@declare('squeeze_.dims(Tensor(a!) self, int[]? dim=None) -> Tensor(a!)', variants='method')
def squeeze_(input: Tensor, dim: Any = None) -> Tensor:
    """``squeeze`` in place: ``input`` itself loses its dims of size 1.

    >>> import jaxgrad
    >>> jaxgrad.ones(1, 2, 1).squeeze_().shape
    jaxgrad.Size([2])
    """
    if dim is None:
        return apply_inplace_view(V.SQUEEZE_ALL_INPLACE, V.squeeze_geometry, input,
                                  dims=tuple(range(input.ndim)))
    if isinstance(dim, int):
        return apply_inplace_view(V.SQUEEZE_INPLACE, V.squeeze_geometry, input,
                                  dims=(_wrap_dim(dim, input.ndim),))
    return apply_inplace_view(V.SQUEEZE_DIMS_INPLACE, V.squeeze_geometry, input,
                              dims=wrap_dims(dim, input.ndim))


@declare('t_(Tensor(a!) self) -> Tensor(a!)', variants='method')
def t_(input: Tensor) -> Tensor:
    """``t`` in place: ``input`` itself becomes its transpose (TBackward1).

    >>> import jaxgrad
    >>> jaxgrad.ones(2, 3).t_().shape
    jaxgrad.Size([3, 2])
    """
    if input.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    return apply_inplace_view(V.T_INPLACE, V.t_geometry, input)


@declare('transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)', variants='method')
def transpose_(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """``transpose`` in place: ``input`` itself swaps dims ``dim0`` and ``dim1``.

    >>> import jaxgrad
    >>> jaxgrad.ones(2, 3, 4).transpose_(0, 2).shape
    jaxgrad.Size([4, 3, 2])
    """
    n = input.ndim
    return apply_inplace_view(V.TRANSPOSE_INPLACE, V.transpose_geometry, input,
                              dim0=_wrap_dim(dim0, n), dim1=_wrap_dim(dim1, n))


swapdims = declare_alias("swapdims", "transpose")
swapaxes_ = declare_alias("swapaxes_", "transpose_")
swapdims_ = declare_alias("swapdims_", "transpose_")


@declare('broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)')
def broadcast_to(input: Tensor, size: Any) -> Tensor:
    """``input`` expanded to ``size`` (``expand``: a view, ExpandBackward0).

    >>> import jaxgrad
    >>> jaxgrad.broadcast_to(jaxgrad.tensor([1, 2]), (2, 2))
    tensor([[1, 2],
            [1, 2]])
    """
    return expand(input, tuple(size))


@declare('broadcast_tensors(Tensor[] tensors) -> Tensor[]', variants='function')
def broadcast_tensors(*tensors: Any) -> tuple[Tensor, ...]:
    """The tensors expanded to their common shape (a tensor already of that shape is returned
    as it is).

    >>> import jaxgrad
    >>> a, b = jaxgrad.broadcast_tensors(jaxgrad.ones(2, 1), jaxgrad.zeros(3))
    >>> a.shape, b.shape
    (jaxgrad.Size([2, 3]), jaxgrad.Size([2, 3]))
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    require_tensors(*tensors)
    shape = broadcast_shapes(*[tuple(t.shape) for t in tensors]) if tensors else ()
    return tuple(t if tuple(t.shape) == shape else expand(t, shape) for t in tensors)


def _dims_args(args: tuple, dims: Any) -> tuple:
    if dims is not None:
        return tuple(_dim_list(dims))
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        return tuple(int(d) for d in args[0])
    return tuple(int(d) for d in args)


@declare('flip(Tensor self, int[] dims) -> Tensor')
def flip(input: Tensor, *args: Any, dims: Any = None) -> Tensor:
    """Reverse the order of the elements along ``dims`` (a copy: FlipBackward0).

    >>> import jaxgrad
    >>> jaxgrad.flip(jaxgrad.arange(4).reshape(2, 2), (0, 1))
    tensor([[3, 2],
            [1, 0]])
    """
    return apply(V.FLIP, input, dims=wrap_dims(_dims_args(args, dims), input.ndim))


@declare('fliplr(Tensor self) -> Tensor')
def fliplr(input: Tensor) -> Tensor:
    """Reverse the columns (dim 1) of a tensor with at least 2 dims.

    >>> import jaxgrad
    >>> jaxgrad.fliplr(jaxgrad.tensor([[1, 2]]))
    tensor([[2, 1]])
    """
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return apply(V.FLIP, input, dims=(1,))


@declare('flipud(Tensor self) -> Tensor')
def flipud(input: Tensor) -> Tensor:
    """Reverse the rows (dim 0).

    >>> import jaxgrad
    >>> jaxgrad.flipud(jaxgrad.tensor([1, 2, 3]))
    tensor([3, 2, 1])
    """
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return apply(V.FLIP, input, dims=(0,))


@declare('roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor')
def roll(input: Tensor, shifts: Any, dims: Any = ()) -> Tensor:
    """Shift the elements along ``dims`` circularly by ``shifts`` (without dims: of the
    flattened tensor, keeping its shape); RollBackward0.

    >>> import jaxgrad
    >>> jaxgrad.roll(jaxgrad.arange(4), 1)
    tensor([3, 0, 1, 2])
    """
    shifts, dims = tuple(_dim_list(shifts)), tuple(_dim_list(dims))
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        if input.numel() == 0:
            return clone(input)
        return apply(V.ROLL, input, shifts=shifts, dims=())
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    dims = tuple(_wrap_dim(d, input.ndim) for d in dims)
    if input.numel() == 0:
        return clone(input)
    return apply(V.ROLL, input, shifts=shifts, dims=dims)


@declare('rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor')
def rot90(input: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    """Rotate by ``k`` quarter turns in the plane of ``dims`` (from the first towards the
    second); Rot90Backward0.

    >>> import jaxgrad
    >>> jaxgrad.rot90(jaxgrad.tensor([[1, 2], [3, 4]]))
    tensor([[2, 4],
            [1, 3]])
    """
    dims = _dim_list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = _wrap_dim(dims[0], input.ndim), _wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    return apply(V.ROT90, input, k=k % 4, dims=(d0, d1))


@declare('repeat(Tensor self, SymInt[] repeats) -> Tensor', variants='method')
def repeat(input: Tensor, *repeats: Any) -> Tensor:
    """Tile ``input`` ``repeats[i]`` times along each dim (new leading dims when ``repeats`` is
    longer); RepeatBackward0.

    >>> import jaxgrad
    >>> jaxgrad.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    if not repeats:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    repeats = _shape_arg(repeats)
    if len(repeats) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    padded = (1,) * (len(repeats) - input.ndim) + tuple(input.shape)
    target = [r * s for r, s in zip(repeats, padded)]
    if builtins.any(r < 0 for r in repeats):
        bad = next(t for t in target if t < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {target}")
    return apply(V.REPEAT, input, repeats=repeats)


@declare('tile(Tensor self, SymInt[] dims) -> Tensor')
def tile(input: Tensor, *dims: Any) -> Tensor:
    """``repeat`` with ``dims`` padded with leading 1s to ``input``'s number of dims.

    >>> import jaxgrad
    >>> jaxgrad.tile(jaxgrad.tensor([1, 2]), (2,))
    tensor([1, 2, 1, 2])
    """
    dims = _shape_arg(dims)
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


@declare('repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, '
         'SymInt? output_size=None) -> Tensor')
def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Repeat each element ``repeats`` times (an int, or a tensor of counts per element) along
    ``dim`` (without ``dim``: of the flattened tensor). ``repeat_interleave(counts)`` alone gives
    each index ``counts[i]`` times.

    >>> import jaxgrad
    >>> jaxgrad.repeat_interleave(jaxgrad.tensor([1, 2]), 2)
    tensor([1, 1, 2, 2])
    >>> jaxgrad.repeat_interleave(jaxgrad.tensor([2, 1]))
    tensor([0, 0, 1])
    """
    if repeats is None:
        return _repeat_indices(input, output_size)
    if dim is None:
        input, dim = flatten(input), 0
    dim = _wrap_dim(dim, input.ndim)
    if isinstance(repeats, Tensor):
        size = input.shape[dim]
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats.ndim == 1 and repeats.shape[0] not in (1, size):
            raise RuntimeError("repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats.shape[0]} and input.size({dim}) = "
                               f"{size}")
        counts = repeats if repeats.ndim == 1 and repeats.shape[0] == size else expand(
            reshape(repeats, (1,)), (size,))
        return index_select(input, dim, _repeat_indices(counts, output_size))
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    shape = list(input.shape)
    expanded = expand(unsqueeze(input, dim + 1), shape[:dim + 1] + [repeats] + shape[dim + 1:])
    shape[dim] *= repeats
    return view(clone(expanded), tuple(shape))


def _repeat_indices(counts: Tensor, output_size: int | None) -> Tensor:
    if counts.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if counts.dtype not in (_dtypes.int64, _dtypes.int32):
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                  f"'{_dtypes.scalar_type_name(counts.dtype)}'")
    values = np.asarray(counts._value)
    if (values < 0).any():
        raise RuntimeError("repeats can not be negative")
    return Tensor._make(jnp.asarray(np.repeat(np.arange(len(values)), values),
                                    dtype=counts._value.dtype))


def _warn_once(message: str) -> None:
    """A warning torch gives once per process (its TORCH_WARN_ONCE), named for jaxgrad."""
    warn_once(message.replace("torch", "jaxgrad"))


_MESHGRID_WARNING = ("torch.meshgrid: in an upcoming release, it will be required to pass the "
                     "indexing argument.")


@declare('meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]', variants='function',
         python_level=True)
def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids of 1-d tensors: output ``i`` varies along dim ``i`` (``"ij"``) or, with
    ``"xy"``, the first two dims swap roles. Each output is a view (ExpandBackward0).

    >>> import jaxgrad
    >>> x, y = jaxgrad.meshgrid(jaxgrad.arange(2), jaxgrad.arange(3), indexing="ij")
    >>> x.shape, y[1].tolist()
    (jaxgrad.Size([2, 3]), [0, 1, 2])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        _warn_once(_MESHGRID_WARNING)
        indexing = "ij"
    require_tensors(*tensors)
    if not tensors:
        raise RuntimeError("torch.meshgrid: Expected at least one tensor in the tensor "
                           "list".replace("torch", "jaxgrad"))
    for t in tensors[1:]:
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"jaxgrad.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t._value}")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'jaxgrad.meshgrid: indexing must be one of "xy" or "ij", but '
                           f"received: {indexing}")
    order = list(tensors)
    swap = indexing == "xy" and len(order) >= 2
    if swap:
        order[0], order[1] = order[1], order[0]
    shape = tuple(t.numel() for t in order)
    grids = []
    for i, t in enumerate(order):
        view_shape = [1] * len(order)
        view_shape[i] = -1
        grids.append(expand(view(t, tuple(view_shape)), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


@declare('atleast_1d(Tensor self) -> Tensor', variants='function')
def atleast_1d(input: Tensor) -> Tensor:
    """``input`` with at least one dim (a 0-d tensor becomes shape ``(1,)``).

    >>> import jaxgrad
    >>> jaxgrad.atleast_1d(jaxgrad.tensor(1.0))
    tensor([1.])
    """
    return reshape(input, (1,)) if input.ndim == 0 else input


@declare('atleast_2d(Tensor self) -> Tensor', variants='function')
def atleast_2d(input: Tensor) -> Tensor:
    """``input`` with at least two dims (new leading dims of size 1).

    >>> import jaxgrad
    >>> jaxgrad.atleast_2d(jaxgrad.tensor([1.0, 2.0])).shape
    jaxgrad.Size([1, 2])
    """
    if input.ndim == 0:
        return reshape(input, (1, 1))
    return unsqueeze(input, 0) if input.ndim == 1 else input


@declare('atleast_3d(Tensor self) -> Tensor', variants='function')
def atleast_3d(input: Tensor) -> Tensor:
    """``input`` with at least three dims (a vector of n becomes ``(1, n, 1)``, a matrix
    ``(m, n, 1)``).

    >>> import jaxgrad
    >>> jaxgrad.atleast_3d(jaxgrad.ones(2, 3)).shape
    jaxgrad.Size([2, 3, 1])
    """
    if input.ndim == 0:
        return reshape(input, (1, 1, 1))
    if input.ndim == 1:
        return unsqueeze(unsqueeze(input, 0), -1)
    return unsqueeze(input, -1) if input.ndim == 2 else input


def _stack_list(name: str, tensors: Any) -> list:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    require_tensors(*tensors)
    return tensors


@declare('vstack(Tensor[] tensors) -> Tensor', variants='function out')
def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stack along dim 0 after making every tensor at least 2-d.

    >>> import jaxgrad
    >>> jaxgrad.vstack([jaxgrad.tensor([1, 2]), jaxgrad.tensor([3, 4])])
    tensor([[1, 2],
            [3, 4]])
    """
    return cat([atleast_2d(t) for t in _stack_list("vstack", tensors)], 0)


row_stack = declare_alias("row_stack", "vstack")


@declare('hstack(Tensor[] tensors) -> Tensor', variants='function out')
def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate along dim 1 (dim 0 for vectors) after making every tensor at least 1-d.

    >>> import jaxgrad
    >>> jaxgrad.hstack([jaxgrad.tensor([1, 2]), jaxgrad.tensor([3])])
    tensor([1, 2, 3])
    """
    parts = [atleast_1d(t) for t in _stack_list("hstack", tensors)]
    return cat(parts, 0 if parts[0].ndim == 1 else 1)


@declare('dstack(Tensor[] tensors) -> Tensor', variants='function out')
def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stack along dim 2 after making every tensor at least 3-d.

    >>> import jaxgrad
    >>> jaxgrad.dstack([jaxgrad.tensor([1, 2]), jaxgrad.tensor([3, 4])]).shape
    jaxgrad.Size([1, 2, 2])
    """
    return cat([atleast_3d(t) for t in _stack_list("dstack", tensors)], 2)


@declare('column_stack(Tensor[] tensors) -> Tensor', variants='function out')
def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate along dim 1, vectors (and scalars) becoming columns.

    >>> import jaxgrad
    >>> jaxgrad.column_stack([jaxgrad.tensor([1, 2]), jaxgrad.tensor([3, 4])])
    tensor([[1, 3],
            [2, 4]])
    """
    parts = [reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t
             for t in _stack_list("column_stack", tensors)]
    return cat(parts, 1)


@declare('diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor')
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices (in dims ``dim1``/``dim2``) whose ``offset``-th diagonal holds the last dim of
    ``input``, zero elsewhere; DiagEmbedBackward0.

    >>> import jaxgrad
    >>> jaxgrad.diag_embed(jaxgrad.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    n = input.ndim + 1
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(V.DIAG_EMBED, input, offset=offset, dim1=d1, dim2=d2)


@declare('diag(Tensor self, int diagonal=0) -> Tensor', variants='function method out')
def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A vector's square matrix with it on the ``diagonal``-th diagonal, or a matrix's
    ``diagonal``-th diagonal (a copy).

    >>> import jaxgrad
    >>> jaxgrad.diag(jaxgrad.tensor([[1, 2], [3, 4]]))
    tensor([1, 4])
    """
    if input.ndim == 1:
        return apply(V.DIAG_EMBED, input, offset=diagonal, dim1=0, dim2=1)
    if input.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    return apply(V.DIAGONAL_COPY, input, offset=diagonal, dim1=0, dim2=1)


@declare('trace(Tensor self) -> Tensor')
def trace(input: Tensor) -> Tensor:
    """The sum of a matrix's diagonal (integers sum to int64); TraceBackward0.

    >>> import jaxgrad
    >>> jaxgrad.trace(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor(5.)
    """
    if input.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim "
                           f"{input.ndim}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        input = to_dtype(input, _dtypes.int64)
    return apply(V.TRACE, input)


def _indices(name: str, row: int, col: int, offset: int, dtype: Any, device: Any,
             lower: bool) -> Tensor:
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    d = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes.int64
    if d not in (_dtypes.int64, _dtypes.int32):
        raise NotImplementedError(f"\"{name}\" not implemented for '{_dtypes.scalar_type_name(d)}'")
    mask = np.tri(row, col, offset, dtype=bool) if lower else ~np.tri(row, col, offset - 1,
                                                                         dtype=bool)
    out = Tensor._make(jnp.asarray(np.stack(np.nonzero(mask)), dtype=d.np).reshape(2, -1))
    return out if device is None else out.to(device)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (row, column) indices of the lower triangle (on and below the ``offset``-th
    diagonal) of a ``row`` x ``col`` matrix, as a 2 x N int64 tensor.

    >>> import jaxgrad
    >>> jaxgrad.tril_indices(2, 2)
    tensor([[0, 1, 1],
            [0, 0, 1]])
    """
    return _indices("tril_indices", row, col, offset, dtype, device, lower=True)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (row, column) indices of the upper triangle (on and above the ``offset``-th
    diagonal) of a ``row`` x ``col`` matrix, as a 2 x N int64 tensor.

    >>> import jaxgrad
    >>> jaxgrad.triu_indices(2, 2)
    tensor([[0, 0, 1],
            [0, 1, 1]])
    """
    return _indices("triu_indices", row, col, offset, dtype, device, lower=False)


@declare('block_diag(Tensor[] tensors) -> Tensor', variants='function', python_level=True)
def block_diag(*tensors: Any) -> Tensor:
    """A block-diagonal matrix of the given matrices (vectors count as one row, scalars as
    1 x 1); BlockDiagBackward0.

    >>> import jaxgrad
    >>> jaxgrad.block_diag(jaxgrad.tensor([[1, 2]]), jaxgrad.tensor(3))
    tensor([[1, 2, 0],
            [0, 0, 3]])
    """
    require_tensors(*tensors)
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"jaxgrad.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
    if not tensors:
        return Tensor._make(jnp.zeros((1, 0), _dtypes.get_default_dtype().np))
    return apply(V.BLOCK_DIAG, *tensors)


@declare('cartesian_prod(Tensor[] tensors) -> Tensor', variants='function', python_level=True)
def cartesian_prod(*tensors: Any) -> Tensor:
    """Every combination of one element of each 1-d tensor, as rows (itertools.product).

    >>> import jaxgrad
    >>> jaxgrad.cartesian_prod(jaxgrad.tensor([1, 2]), jaxgrad.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    require_tensors(*tensors)
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


@declare('kron(Tensor self, Tensor other) -> Tensor', variants='function method out')
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: blocks ``input[i, j] * other``.

    >>> import jaxgrad
    >>> jaxgrad.kron(jaxgrad.tensor([1, 2]), jaxgrad.tensor([1, 10]))
    tensor([ 1, 10,  2, 20])
    """
    n = builtins.max(input.ndim, other.ndim)
    a_shape = (1,) * (n - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (n - other.ndim) + tuple(other.shape)
    a_view = tuple(x for s in a_shape for x in (s, 1))
    b_view = tuple(x for s in b_shape for x in (1, s))
    product = mul(_unsafe_view(input, a_view), _unsafe_view(other, b_view))
    return _unsafe_view(product, tuple(a * b for a, b in zip(a_shape, b_shape)))


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
    """Contract dims of ``a`` with dims of ``b``: the last ``dims`` of ``a`` with the first
    ``dims`` of ``b``, or the two lists in ``dims``.

    >>> import jaxgrad
    >>> jaxgrad.tensordot(jaxgrad.ones(2, 3), jaxgrad.ones(3, 4), 1).shape
    jaxgrad.Size([2, 4])
    """
    require_tensors(a, b)
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > builtins.min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        dims_a, dims_b = _dim_list(dims[0]), _dim_list(dims[1])
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    result = _tensordot(a, b, dims_a, dims_b)
    return result if out is None else out.copy_(result)


def _tensordot(a: Tensor, b: Tensor, dims_a: list, dims_b: list) -> Tensor:
    csize, t1, t2 = 1, a, b
    for da, db in zip(dims_a, dims_b):
        s1, s2 = a.shape[_wrap_dim(da, a.ndim)], b.shape[_wrap_dim(db, b.ndim)]
        if s2 == 1:
            t1 = sum(t1, da, True)
        elif s1 == 1:
            t2 = sum(t2, db, True)
        else:
            if s1 != s2:
                raise RuntimeError(f"contracted dimensions need to match, but first has size "
                                   f"{s1} in dim {da} and second has size {s2} in dim {db}")
            csize *= s1
    wrapped_a = wrap_dims(dims_a, a.ndim) if dims_a else ()
    wrapped_b = wrap_dims(dims_b, b.ndim) if dims_b else ()
    p1 = [i for i in range(a.ndim) if i not in wrapped_a] + dims_a
    p2 = dims_b + [i for i in range(b.ndim) if i not in wrapped_b]
    size1 = math.prod(t1.shape[i] for i in range(a.ndim) if i not in wrapped_a)
    size2 = math.prod(t2.shape[i] for i in range(b.ndim) if i not in wrapped_b)
    rsizes = ([t1.shape[i] for i in range(a.ndim) if i not in wrapped_a]
              + [t2.shape[i] for i in range(b.ndim) if i not in wrapped_b])
    if size1 != 1 or size2 != 1:
        t1 = reshape(permute(t1, tuple(p1)), (size1, csize))
        t2 = reshape(permute(t2, tuple(p2)), (csize, size2))
        return reshape(mm(t1, t2), tuple(rsizes))
    t1, t2 = permute(t1, tuple(p1)), permute(t2, tuple(p2))
    if t1.is_contiguous() and t2.is_contiguous():
        return reshape(dot(flatten(t1), flatten(t2)), tuple(rsizes))
    return reshape(sum(mul(squeeze(t1), squeeze(t2)), dtype=t1.dtype), tuple(rsizes))


@declare('inner(Tensor self, Tensor other) -> Tensor', variants='function method out')
def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sum of products over the last dims of both (a product when one is a scalar).

    >>> import jaxgrad
    >>> jaxgrad.inner(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([3.0, 4.0]))
    tensor(11.)
    """
    if input.ndim == 0 or other.ndim == 0:
        return mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(input.shape)} and {list(other.shape)}")
    return _tensordot(input, other, [-1], [-1])


def _linalg_cross(input: Tensor, other: Tensor, dim: int) -> Tensor:
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    shape = broadcast_shapes(tuple(input.shape), tuple(other.shape))
    d = _wrap_dim(dim, len(shape))
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    return apply(V.LINALG_CROSS, input, other, dim=d)


@declare('linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor', variants='out')
def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (broadcasting the other dims);
    LinalgCrossBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.cross(jaxgrad.tensor([1.0, 0.0, 0.0]), jaxgrad.tensor([0.0, 1.0, 0.0]))
    tensor([0., 0., 1.])
    """
    return _linalg_cross(input, other, dim)


_CROSS_WARNING = (
    "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
    "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
    "with that of linalg.cross in a future release.")


@declare('cross(Tensor self, Tensor other, int? dim=None) -> Tensor',
         variants='function method out')
def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (by default, with torch's deprecation
    warning, the first dim of size 3).

    >>> import jaxgrad
    >>> jaxgrad.cross(jaxgrad.tensor([1.0, 0.0, 0.0]), jaxgrad.tensor([0.0, 1.0, 0.0]), dim=0)
    tensor([0., 0., 1.])
    """
    if dim is None:
        _warn_once(_CROSS_WARNING)
        shape = broadcast_shapes(tuple(input.shape), tuple(other.shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return _linalg_cross(input, other, dim)


@declare('diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) '
         '-> Tensor', variants='function method out')
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (after concatenating ``prepend`` and
    ``append``); booleans differ by xor.

    >>> import jaxgrad
    >>> jaxgrad.diff(jaxgrad.tensor([1, 4, 9, 16]))
    tensor([3, 5, 7])
    """
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.ndim)
    if n == 0:  # torch: an empty_like copy of the input
        return copy_(Tensor._make(jnp.zeros_like(input._value)), input)
    parts = [t for t in (prepend, input, append) if t is not None]
    out = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        length = out.shape[d]
        if length == 0:
            break
        hi, lo = narrow(out, d, 1, length - 1), narrow(out, d, 0, length - 1)
        out = apply(E.NE, hi, lo) if out.dtype == _dtypes.bool_ else sub(hi, lo)
    return out

# --- elementwise math (issue 10) ---
# Rounding with decimals, the ops with a Scalar overload (fmod, remainder, floor_divide, xlogy,
# clamp_min/clamp_max, the bitwise ops) and torch's other names for the generated rows.

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
         variants='function method out')
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


# torch's other names: numpy's arc- functions and ``fix`` (the same ops, nodes and forms)
for _alias, _target in (("fix", "trunc"), ("arcsin", "asin"), ("arccos", "acos"),
                        ("arctan", "atan"), ("arcsinh", "asinh"), ("arccosh", "acosh"),
                        ("arctanh", "atanh"), ("arctan2", "atan2")):
    globals()[_alias] = declare_alias(_alias, _target)
    globals()[_alias + "_"] = declare_alias(_alias + "_", _target + "_")


# --- unique ---------------------------------------------------------------------------------------
# The distinct values are found on the host (their number decides the output's shape); a row of
# ``_ops/indexing`` then gathers them from the input, so the result carries torch's node.

def _check_unique_dtype(input: Tensor, kernel: str) -> None:
    if input.dtype.is_complex:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dtypes.scalar_type_name(input.dtype)}'")


def _groups(rows: np.ndarray, sort: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(picks, inverse, counts)`` of the distinct rows of a 2-d array: the row each group is
    picked from, each row's group, each group's size. Sorted groups come in lexicographic order
    (NaN last, every NaN its own group, as torch's sort-based kernel); otherwise runs of equal
    consecutive rows form the groups."""
    n = rows.shape[0]
    if sort and n:
        order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(n)
    else:
        order = np.arange(n)
    ordered = rows[order]
    starts = np.ones(n, dtype=bool)
    if n:
        starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    group = np.cumsum(starts) - 1
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = group
    first = np.flatnonzero(starts)
    counts = np.diff(np.append(first, n)).astype(np.int64)
    return order[first], inverse, counts


def _unique_flat(row: Op, input: Tensor, sort: bool) -> tuple[Tensor, Tensor, Tensor]:
    """The distinct elements of the flattened input, with each element's group (in the input's
    shape) and each group's size."""
    flat = np.asarray(input._value).reshape(-1, 1)
    picks, inverse, counts = _groups(flat, sort)
    values = apply(row, input, aux=(Tensor._make(jnp.asarray(picks, jnp.int64)),))
    return (values, Tensor._make(jnp.asarray(inverse.reshape(input.shape), jnp.int64)),
            Tensor._make(jnp.asarray(counts, jnp.int64)))


def _unique_slices(row: Op, input: Tensor, dim: int, sort: bool) -> tuple[Tensor, Tensor, Tensor]:
    """The distinct slices of the input along ``dim``, each slice's group and each group's
    size."""
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = _wrap_dim(dim, input.ndim)
    arr = np.asarray(input._value)
    if arr.shape[dim] and not arr.size:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    count = arr.shape[dim]
    rows = np.moveaxis(arr, dim, 0).reshape(count, arr.size // builtins.max(count, 1))
    picks, inverse, counts = _groups(rows, sort)
    values = apply(row, input, aux=(Tensor._make(jnp.asarray(picks, jnp.int64)),), dim=dim)
    return (values, Tensor._make(jnp.asarray(inverse, jnp.int64)),
            Tensor._make(jnp.asarray(counts, jnp.int64)))


def _requested(values: Tensor, inverse: Tensor, counts: Tensor, return_inverse: bool,
               return_counts: bool) -> Any:
    """torch.unique's result: the values alone, or a tuple with what was asked for."""
    extra = ([inverse] if return_inverse else []) + ([counts] if return_counts else [])
    return (values, *extra) if extra else values


def _no_result() -> Tensor:
    """What torch's native unique ops return for an output not asked for: an empty int64."""
    return Tensor._make(jnp.zeros((0,), jnp.int64))


@declare('unique(Tensor self, bool sorted=True, bool return_inverse=False, '
         'bool return_counts=False, int? dim=None) -> Tensor', python_level=True)
def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct elements of ``input`` (or, with ``dim``, its distinct slices along ``dim``),
    in ascending order; with ``return_inverse`` also each element's index in that result, with
    ``return_counts`` how often each occurs. Only the values carry autograd history (whose
    backward torch does not implement).

    >>> import jaxgrad
    >>> jaxgrad.unique(jaxgrad.tensor([3, 1, 3, 2]), return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    if dim is None:
        _check_unique_dtype(input, "unique")
        found = _unique_flat(X.UNIQUE2, input, True)
    else:
        _check_unique_dtype(input, "unique_dim")
        found = _unique_slices(X.UNIQUE_DIM, input, dim, True)
    return _requested(*found, return_inverse, return_counts)


@declare('unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, '
         'int? dim=None) -> Tensor', python_level=True)
def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """``input`` with each run of equal consecutive elements (with ``dim``: slices along
    ``dim``) kept once; ``return_inverse``/``return_counts`` as in :func:`unique`.

    >>> import jaxgrad
    >>> jaxgrad.unique_consecutive(jaxgrad.tensor([1, 1, 2, 2, 1]), return_counts=True)
    (tensor([1, 2, 1]), tensor([2, 2, 1]))
    """
    _check_unique_dtype(input, "unique")
    if dim is None:
        found = _unique_flat(X.UNIQUE_CONSECUTIVE, input, False)
    else:
        found = _unique_slices(X.UNIQUE_CONSECUTIVE_DIM, input, dim, False)
    return _requested(*found, return_inverse, return_counts)


@declare('_unique(Tensor self, bool sorted=True, bool return_inverse=False) -> (Tensor, Tensor)',
         variants='function')
def _unique(input: Tensor, sorted: bool = True, return_inverse: bool = False) -> Any:
    """torch's native unique behind :func:`unique`: ``(values, inverse)``, the inverse empty
    unless asked for.

    >>> import jaxgrad
    >>> jaxgrad._unique(jaxgrad.tensor([2, 1, 2]), return_inverse=True)
    (tensor([1, 2]), tensor([1, 0, 1]))
    """
    _check_unique_dtype(input, "unique")
    values, inverse, _ = _unique_flat(X.UNIQUE, input, True)
    return values, inverse if return_inverse else _no_result()


@declare('_unique2(Tensor self, bool sorted=True, bool return_inverse=False, '
         'bool return_counts=False) -> (Tensor, Tensor, Tensor)', variants='function')
def _unique2(input: Tensor, sorted: bool = True, return_inverse: bool = False,
             return_counts: bool = False) -> Any:
    """torch's native unique behind :func:`unique` without ``dim``: ``(values, inverse,
    counts)``, each of the last two empty unless asked for.

    >>> import jaxgrad
    >>> jaxgrad._unique2(jaxgrad.tensor([2, 1, 2]), return_counts=True)
    (tensor([1, 2]), tensor([], dtype=jaxgrad.int64), tensor([1, 2]))
    """
    _check_unique_dtype(input, "unique")
    values, inverse, counts = _unique_flat(X.UNIQUE2, input, True)
    return (values, inverse if return_inverse else _no_result(),
            counts if return_counts else _no_result())


@declare('unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, '
         'bool return_counts=False) -> (Tensor, Tensor, Tensor)', variants='')
def unique_dim(input: Tensor, dim: int, sorted: bool = True, return_inverse: bool = False,
               return_counts: bool = False) -> Any:
    """torch's native unique along ``dim`` (reached as ``torch._VF.unique_dim``; torch removes
    it from its namespace): ``(values, inverse, counts)``, all three always computed.

    >>> import jaxgrad
    >>> jaxgrad._VF.unique_dim(jaxgrad.tensor([[1, 2], [1, 2]]), 0)
    (tensor([[1, 2]]), tensor([0, 0]), tensor([2]))
    """
    _check_unique_dtype(input, "unique_dim")
    return _unique_slices(X.UNIQUE_DIM, input, dim, True)


def unique_consecutive_native(input: Tensor, return_inverse: bool = False,
                              return_counts: bool = False, dim: int | None = None) -> Any:
    """torch's native unique_consecutive (``torch._VF.unique_consecutive``): ``(values,
    inverse, counts)``, each of the last two empty unless asked for.

    >>> import jaxgrad
    >>> jaxgrad._VF.unique_consecutive(jaxgrad.tensor([1, 1, 2]), return_counts=True)
    (tensor([1, 2]), tensor([], dtype=jaxgrad.int64), tensor([2, 1]))
    """
    values, inverse, counts = unique_consecutive(input, True, True, dim)
    return (values, inverse if return_inverse else _no_result(),
            counts if return_counts else _no_result())
