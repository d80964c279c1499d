"""Joining and splitting: cat, stack, unbind, split, chunk, the stack family (vstack, hstack,
dstack, column_stack, atleast_*d), meshgrid, cartesian_prod, block_diag, broadcast_tensors and
``diff`` (built on cat).
"""

from __future__ import annotations

import builtins
import itertools
from collections.abc import Sequence
from typing import Any

import jax.numpy as jnp

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor, _wrap_dim
from .._engine.dispatch import apply, make_view, share_storage
from .._ops import elementwise as E
from .._ops import reductions as R
from .._ops import views as V
from .._ops._table import Op
from .arguments import broadcast_shapes, require_tensors, warn_once_as_jaxgrad
from .opgen import declare, declare_alias
from .pointwise import copy_, sub
from .shapes import expand, narrow, reshape, unsqueeze, view


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
concatenate = declare_alias("concatenate", "cat")  # (numpy's name, torch's alias)


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
    if input.shape[dim] == 0:  # no slices: no node (torch's unbind of an empty dim)
        return ()
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
        warn_once_as_jaxgrad(_MESHGRID_WARNING)
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


def _one_atleast_1d(t: Tensor) -> Tensor:
    return reshape(t, (1,)) if t.ndim == 0 else t


def _one_atleast_2d(t: Tensor) -> Tensor:
    if t.ndim == 0:
        return reshape(t, (1, 1))
    return unsqueeze(t, 0) if t.ndim == 1 else t


def _one_atleast_3d(t: Tensor) -> Tensor:
    if t.ndim == 0:
        return reshape(t, (1, 1, 1))
    if t.ndim == 1:
        return unsqueeze(unsqueeze(t, 0), -1)
    return unsqueeze(t, -1) if t.ndim == 2 else t


def _atleast(name: str, one: Any, tensors: tuple) -> Any:
    """torch's atleast_*d: one tensor gives a tensor; several (or one list or tuple of them)
    give a tuple."""
    given = tensors[0] if len(tensors) == 1 else tensors
    if isinstance(given, Tensor):
        return one(given)
    if isinstance(given, (list, tuple)) and all(isinstance(t, Tensor) for t in given):
        return tuple(one(t) for t in given)
    got = ", ".join(type(t).__name__ for t in tensors)
    raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but "
                    "expected one of:\n * (Tensor input)\n * (tuple of Tensors tensors)")


@declare('atleast_1d(Tensor[] tensors) -> Tensor[]', variants='function')
def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least one dim (a 0-d tensor becomes shape ``(1,)``); one tensor
    gives a tensor, several a tuple.

    >>> import jaxgrad
    >>> jaxgrad.atleast_1d(jaxgrad.tensor(1.0))
    tensor([1.])
    >>> jaxgrad.atleast_1d(jaxgrad.tensor(2.0), jaxgrad.ones(2))
    (tensor([2.]), tensor([1., 1.]))
    """
    return _atleast("atleast_1d", _one_atleast_1d, tensors)


@declare('atleast_2d(Tensor[] tensors) -> Tensor[]', variants='function')
def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least two dims (new leading dims of size 1).

    >>> import jaxgrad
    >>> jaxgrad.atleast_2d(jaxgrad.tensor([1.0, 2.0])).shape
    jaxgrad.Size([1, 2])
    """
    return _atleast("atleast_2d", _one_atleast_2d, tensors)


@declare('atleast_3d(Tensor[] tensors) -> Tensor[]', variants='function')
def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least three dims (a vector of n becomes ``(1, n, 1)``, a matrix
    ``(m, n, 1)``).

    >>> import jaxgrad
    >>> jaxgrad.atleast_3d(jaxgrad.ones(2, 3)).shape
    jaxgrad.Size([2, 3, 1])
    """
    return _atleast("atleast_3d", _one_atleast_3d, tensors)


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
