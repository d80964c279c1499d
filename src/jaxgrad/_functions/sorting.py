"""Sorting and distinct values: sort, argsort, topk, unique, unique_consecutive.
"""

from __future__ import annotations

import builtins
from typing import Any

import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes
from .._core import return_types
from .._core.jax_setup import x64_scope
from .._core.tensor import Tensor, _wrap_dim
from .._core.tensor_repr import dynamic_shape_error, host_value
from .._engine.dispatch import apply
from .._ops import indexing as X
from .._ops import reductions as R
from .._ops._table import Op
from .arguments import size_of
from .opgen import declare


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
    if not 0 <= k <= size_of(input, dim):
        raise RuntimeError("selected index k out of range")
    if input.dtype is _dtypes.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    values, indices = apply(R.TOPK, input, k=int(k), dim=dim, largest=bool(largest),
                            sorted=bool(sorted))
    return return_types.topk(values, indices)


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


def _values(row: Op, input: Tensor) -> np.ndarray:
    """The input's values, which decide the output's shape (read on the host)."""
    return host_value(input._value, dynamic_shape_error(row.name),
                      what=row.name.strip("_").rstrip("2"))  # ('_unique2' -> 'unique')


def _unique_flat(row: Op, input: Tensor, sort: bool) -> tuple[Tensor, Tensor, Tensor]:
    """The distinct elements of the flattened input, with each element's group (in the input's
    shape) and each group's size."""
    flat = _values(row, input).reshape(-1, 1)
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
    arr = _values(row, input)
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
    with x64_scope():
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
