"""numpy-style splitting and the scatters of views: ``tensor_split`` (and ``hsplit``,
``vsplit``, ``dsplit`` on it), ``ravel``, ``narrow_copy``, ``slice_scatter``,
``select_scatter`` and ``diagonal_scatter``.

``tensor_split`` is composite in torch: each piece is a ``slice`` of the input (a view,
SliceBackward0). The scatters are rows of ``_ops/views.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor, _wrap_dim
from .._core.typename import type_name
from .._engine.dispatch import apply
from .._ops import views as V
from .opgen import declare
from .shapes import contiguous, diagonal, narrow_slice, select, view


def _slice(input: Tensor, dim: int, start: int, stop: int) -> Tensor:
    """torch's ``at::slice`` with step 1: bounds wrapped and clamped, an empty piece where
    ``stop`` falls before ``start``."""
    return narrow_slice(input, dim, start, stop, 1)


def _split_value(args: tuple, kwargs: dict) -> tuple[Any, int]:
    """``tensor_split``'s (indices_or_sections, dim) from any of torch's three overloads'
    spellings (``sections=``, ``indices=``, ``tensor_indices_or_sections=``)."""
    kwargs = dict(kwargs)
    dim = kwargs.pop("dim", args[1] if len(args) > 1 else 0)
    if args:
        value = args[0]
    else:
        names = [k for k in ("sections", "indices", "tensor_indices_or_sections") if k in kwargs]
        if not names:
            raise TypeError("tensor_split() missing required argument 'indices_or_sections'")
        value = kwargs.pop(names[0])
    if kwargs:
        raise TypeError(f"tensor_split() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")
    return value, dim


@declare('tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[]')
def tensor_split(input: Tensor, *args: Any, **kwargs: Any) -> tuple[Tensor, ...]:
    """Split ``input`` along ``dim`` into ``sections`` nearly equal views (the first
    ``size % sections`` one element longer), or at the given indices (an int list or a 1-d
    int64 tensor; a 0-d one is a number of sections).

    >>> import jaxgrad
    >>> jaxgrad.tensor_split(jaxgrad.arange(7), 3)
    (tensor([0, 1, 2]), tensor([3, 4]), tensor([5, 6]))
    >>> jaxgrad.arange(6).tensor_split([1, 4])
    (tensor([0]), tensor([1, 2, 3]), tensor([4, 5]))
    """
    value, dim = _split_value(args, kwargs)
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    dim = _wrap_dim(dim, input.ndim)
    if isinstance(value, Tensor):
        if value.device.type != "cpu":
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be on cpu, "
                               f"but it's on {value.device}")
        if value.dtype is not _dtypes.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {_dtypes.scalar_type_name(value.dtype)}")
        if value.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {value.ndim} dims")
        value = int(value.item()) if value.ndim == 0 else [int(i) for i in value.tolist()]
    if isinstance(value, int):
        return _tensor_split_sections(input, value, dim)
    if not isinstance(value, Sequence):
        raise TypeError(f"tensor_split(): argument 'indices' must be tuple of ints, not "
                        f"{type_name(value)}")
    return _tensor_split_indices(input, [int(i) for i in value], dim)


def _tensor_split_sections(input: Tensor, sections: int, dim: int) -> tuple[Tensor, ...]:
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    size = input.shape[dim]
    base, extra = divmod(size, sections)
    pieces, start = [], 0
    for i in range(sections):
        stop = start + base + (1 if i < extra else 0)
        pieces.append(_slice(input, dim, start, stop))
        start = stop
    return tuple(pieces)


def _tensor_split_indices(input: Tensor, indices: list, dim: int) -> tuple[Tensor, ...]:
    pieces, start = [], 0
    for stop in indices:
        pieces.append(_slice(input, dim, start, stop))
        start = stop
    pieces.append(_slice(input, dim, start, input.shape[dim]))
    return tuple(pieces)


def _numpy_split(name: str, input: Tensor, indices_or_sections: Any, dim: int,
                 min_dims: int) -> tuple[Tensor, ...]:
    """hsplit/vsplit/dsplit: ``tensor_split`` along ``dim``, with torch's checks (an int must
    divide the dimension's size)."""
    if input.ndim < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, "
                           f"but got a tensor with {input.ndim} dimensions!")
    if isinstance(indices_or_sections, Tensor) or not isinstance(indices_or_sections,
                                                                 (int, Sequence)):
        raise TypeError(f"{name}(): argument 'sections' (position 2) must be int, not "
                        f"{type_name(indices_or_sections)}")
    if isinstance(indices_or_sections, int):
        size = input.shape[dim]
        if indices_or_sections == 0 or size % indices_or_sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                f"dimension {size} is not divisible by the split_size {indices_or_sections}!")
        return _tensor_split_sections(input, indices_or_sections, dim)
    return _tensor_split_indices(input, [int(i) for i in indices_or_sections], dim)


@declare('hsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]')
def hsplit(input: Tensor, sections: Any) -> tuple[Tensor, ...]:
    """Split along dim 1 (dim 0 of a 1-d tensor), as numpy's ``hsplit``: into ``sections``
    equal views, or at a list of indices.

    >>> import jaxgrad
    >>> [t.shape for t in jaxgrad.hsplit(jaxgrad.zeros(2, 4), 2)]
    [jaxgrad.Size([2, 2]), jaxgrad.Size([2, 2])]
    """
    return _numpy_split("hsplit", input, sections, 0 if input.ndim == 1 else 1, 1)


@declare('vsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]')
def vsplit(input: Tensor, sections: Any) -> tuple[Tensor, ...]:
    """Split along dim 0 of a tensor of 2 or more dims, as numpy's ``vsplit``.

    >>> import jaxgrad
    >>> [t.shape for t in jaxgrad.vsplit(jaxgrad.zeros(4, 2), [1])]
    [jaxgrad.Size([1, 2]), jaxgrad.Size([3, 2])]
    """
    return _numpy_split("vsplit", input, sections, 0, 2)


@declare('dsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]')
def dsplit(input: Tensor, sections: Any) -> tuple[Tensor, ...]:
    """Split along dim 2 of a tensor of 3 or more dims, as numpy's ``dsplit``.

    >>> import jaxgrad
    >>> [t.shape for t in jaxgrad.dsplit(jaxgrad.zeros(1, 2, 4), 2)]
    [jaxgrad.Size([1, 2, 2]), jaxgrad.Size([1, 2, 2])]
    """
    return _numpy_split("dsplit", input, sections, 2, 3)


@declare('ravel(Tensor(a) self) -> Tensor(a)')
def ravel(input: Tensor) -> Tensor:
    """``input`` flattened to 1-d: a view where it is contiguous, else a contiguous copy's view
    (torch's ``contiguous().view(-1)``).

    >>> import jaxgrad
    >>> jaxgrad.ravel(jaxgrad.tensor([[1, 2], [3, 4]]).t())
    tensor([1, 3, 2, 4])
    """
    return view(contiguous(input), -1)


@declare('narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor')
def narrow_copy(input: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """``narrow`` as a new tensor (NarrowCopyBackward0), not a view.

    >>> import jaxgrad
    >>> jaxgrad.arange(5).narrow_copy(0, 1, 3)
    tensor([1, 2, 3])
    """
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim]
    start = int(start.item()) if isinstance(start, Tensor) else int(start)
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return apply(V.NARROW_COPY, input, dim=dim, start=start, length=length)


def _check_src(src: Tensor, piece: Tensor) -> None:
    if tuple(src.shape) != tuple(piece.shape):
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(piece.shape)}")


@declare('slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, '
         'SymInt step=1) -> Tensor')
def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written into ``input[start:end:step]`` along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.slice_scatter(jaxgrad.zeros(4), jaxgrad.ones(2), start=1, end=3)
    tensor([0., 1., 1., 0.])
    """
    dim = _wrap_dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    size = input.shape[dim]
    start, stop, _ = slice(start, end).indices(size)
    stop = max(stop, start)
    _check_src(src, narrow_slice(input.detach(), dim, start, stop, step))
    return apply(V.SLICE_SCATTER, input, src, dim=dim, start=start, stop=stop, step=step)


@declare('select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor')
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``src`` written into ``input.select(dim, index)``.

    >>> import jaxgrad
    >>> jaxgrad.select_scatter(jaxgrad.zeros(2, 2), jaxgrad.ones(2), 0, 1)
    tensor([[0., 0.],
            [1., 1.]])
    """
    dim = _wrap_dim(dim, input.ndim)
    _check_src(src, select(input.detach(), dim, index))
    index = index % input.shape[dim]
    return apply(V.SELECT_SCATTER, input, src, dim=dim, index=index)


@declare('diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) '
         '-> Tensor')
def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written into ``input.diagonal(offset, dim1, dim2)``.

    >>> import jaxgrad
    >>> jaxgrad.diagonal_scatter(jaxgrad.zeros(2, 2), jaxgrad.ones(2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    _check_src(src, diagonal(input.detach(), offset, dim1, dim2))
    dim1, dim2 = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    return apply(V.DIAGONAL_SCATTER, input, src, offset=offset, dim1=dim1, dim2=dim2)
