"""Gather and scatter by an index tensor: gather, scatter(_add/_reduce), index_select,
take_along_dim, index_add/copy/fill/reduce, and repeat_interleave (an index_select).
"""

from __future__ import annotations

import builtins
from typing import Any

import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor, _wrap_dim
from .._core.tensor_repr import host_value
from .._core.warn_once import warn_once
from .._engine.dispatch import apply, apply_inplace, check_overlap, warn_expanded_write
from .._ops import indexing as X
from .arguments import (
    broadcast_shapes,
    concrete_values,
    cumulative_dim,
    first_out_of_range,
    require_tensors,
    scalar,
    size_of,
    sizes_text,
    warn_once_as_jaxgrad,
)
from .opgen import declare
from .shapes import clone, expand, flatten, reshape, unsqueeze, view


def _check_index_range(index: Tensor, size: int, dim: int) -> None:
    """torch's kernel check of gather/scatter indices: each in ``[0, size)``."""
    values = concrete_values(index)
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
            if d != dim and size_of(index, d) > size_of(input, d):
                raise RuntimeError(
                    f"Size does not match at dimension {d} expected index {sizes_text(index)} to "
                    f"be no larger than self {sizes_text(input)} apart from dimension {dim}")
        _check_index_range(index, size_of(input, dim), dim)
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
    wrong = builtins.any(d != dim and size_of(index, d) > size_of(input, d) for d in range(ndim))
    if not wrong and src is not None:
        wrong = builtins.any(size_of(index, d) > size_of(src, d) for d in range(ndim))
    if src is not None:
        if builtins.max(src.ndim, 1) != builtins.max(index.ndim, 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
        if wrong:
            raise RuntimeError(f"Expected index {sizes_text(index)} to be no larger than self "
                               f"{sizes_text(input)} apart from dimension {dim} and to be no "
                               f"larger size than src {sizes_text(src)}")
    elif wrong:
        raise RuntimeError(f"Expected index {sizes_text(index)} to be no larger than self "
                           f"{sizes_text(input)} apart from dimension {dim}")
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
            _check_index_range(index, size_of(input, dim), dim)
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
        _check_index_range(index, size_of(input, dim), dim)
    value = _dtypes.checked_scalar(value, input.dtype)
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
        _check_index_range(index, size_of(input, dim), dim)
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
    values = concrete_values(index)
    size = size_of(input, dim)
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


def _check_index_add(input: Tensor, dim: int, index: Tensor, source: Tensor,
                     name: str = "index_add_", inplace: bool = False) -> int:
    """torch's index_add_ (and index_reduce_) checks, in its order; returns the wrapped dim."""
    require_tensors(index, source)
    dim = cumulative_dim(input, dim)
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
    if size_of(source, dim) != index.numel():
        raise RuntimeError(f"{name}(): Number of indices ({index.numel()}) should be equal "
                           f"to source.size(dim): ({size_of(source, dim)}), for dim: {dim}")
    if inplace:  # (torch's order: the checks above, the overlap, the index range)
        check_overlap(X.INDEX_ADD, input, (source,))
    bad = first_out_of_range(index, size_of(input, dim))
    if bad is not None:
        if name != "index_add_":
            raise IndexError("index out of range in self")
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size "
                           f"{size_of(input, dim)}")
    return dim


def _check_index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> int:
    """torch's index_copy_ checks, in its order; returns the wrapped dim."""
    require_tensors(index, source)
    dim = cumulative_dim(input, dim)
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if index.numel() != size_of(source, dim):
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal "
                         f"to source.size(dim) ({size_of(source, dim)})")
    if index.dtype is not _dtypes.int64:
        raise RuntimeError("index_copy_(): Expected a long tensor for index, but got "
                           f"{_dtypes.scalar_type_name(index.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {_dtypes.scalar_type_name(input.dtype)} and (source) "
                           f"{_dtypes.scalar_type_name(source.dtype)}")
    bad = first_out_of_range(index, size_of(input, dim))
    if bad is not None:
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {dim} with "
                         f"size {size_of(input, dim)}")
    return dim


def _check_index_fill(input: Tensor, dim: int, index: Tensor) -> int:
    """torch's index_fill_ checks, in its order; returns the wrapped dim."""
    require_tensors(index)
    dim = cumulative_dim(input, dim)
    if index.dtype is not _dtypes.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    bad = first_out_of_range(index, size_of(input, dim))
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size "
                         f"{size_of(input, dim)}")
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
    warn_once_as_jaxgrad("index_reduce() is in beta and the API may change at any time.")
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
    value = _dtypes.checked_scalar(value, input.dtype)
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


_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                    include_self: bool, inplace: bool) -> Tensor:
    require_tensors(src)
    if reduce not in _SCATTER_REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    dim = _check_scatter(input, dim, index, src)
    if index.numel():
        _check_index_range(index, size_of(input, dim), dim)
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
    values = host_value(counts._value, what="repeat_interleave")
    if (values < 0).any():
        raise RuntimeError("repeats can not be negative")
    return Tensor._make(jnp.asarray(np.repeat(np.arange(len(values)), values),
                                    dtype=counts._value.dtype))
