"""Reductions: sum, mean, prod, amax/amin, max/min, argmax, any/all, var/std, softmax,
logsumexp, cumulative ops (cumsum, cumprod, cummax, logcumsumexp), median, kthvalue, mode, nan-
reductions, aminmax; the rows of ``_ops/reductions.py`` are generated here.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .._core import dtypes as _dtypes
from .._core import return_types
from .._core.tensor import Tensor, _wrap_dim
from .._core.typename import type_name
from .._engine.dispatch import apply, apply_inplace, check_inplace
from .._ops import elementwise as E
from .._ops import reductions as R
from .arguments import broadcast_operands, cumulative_dim, dims_or_all, size_of, wrap_dims
from .opgen import declare, generate
from .pointwise import div
from .shapes import reshape, view

# The ops a row of ``_ops`` declares whole (``variants=``/``inplace=``) are generated here from
# their schemas (see ``opgen``).
globals().update(generate(R))


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


@declare('cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor',
         variants='function method out')
def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running products along ``dim`` (integer inputs multiply in int64, as in torch).

    >>> import jaxgrad
    >>> jaxgrad.cumprod(jaxgrad.tensor([1.0, 2.0, 3.0, 4.0]), 0)
    tensor([ 1.,  2.,  6., 24.])
    """
    return apply(R.CUMPROD, input, dim=cumulative_dim(input, dim),
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
    return apply_inplace(R.CUMPROD, input, dim=cumulative_dim(input, dim), dtype=None)


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
    return apply(R.LOGCUMSUMEXP, input, dim=cumulative_dim(input, dim))


def _cum_extreme(input: Tensor, dim: int, op: Any, name: str) -> Any:
    values, indices = apply(op, input, dim=cumulative_dim(input, dim))
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
    d = cumulative_dim(input, dim)
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
    d = cumulative_dim(input, dim)
    if not 1 <= k <= size_of(input, d):
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
    return apply(R.NANSUM, input, dim=dims_or_all(dim, input.ndim), keepdim=bool(keepdim),
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
