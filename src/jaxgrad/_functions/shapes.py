"""Shapes and views: view, reshape, squeeze, transpose, permute, expand, narrow, select,
movedim, unfold, as_strided, flip, roll, repeat, tile, broadcast_to, resize_/set_, dtype casts.

View ops record torch's view nodes and share the base's storage (Note [Views and CopySlices]
in ``_engine/dispatch.py``); the rows are in ``_ops/views.py``.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import jax.numpy as jnp

from .._core import dtypes as _dtypes
from .._core.epoch import changed as structure_changed
from .._core.grad_mode import is_inference_mode_enabled
from .._core.layout import check_strided
from .._core.storage import Layout, Storage, contiguous_strides, view_strides
from .._core.tensor import Size, Tensor, _wrap_dim, dispatch_modes, dispatches_in_python
from .._engine.dispatch import (
    INFERENCE_INPLACE_MESSAGE,
    apply,
    apply_inplace_view,
    apply_view,
    check_inplace,
    make_view,
)
from .._ops import elementwise as E
from .._ops import views as V
from . import creation as _creation
from .arguments import require_tensors, shape_arg, wrap_dims
from .opgen import declare, declare_alias, generate

# The ops a row of ``_ops`` declares whole (``variants=``/``inplace=``) are generated here from
# their schemas (see ``opgen``).
globals().update(generate(V))


@declare('is_floating_point(Tensor self) -> bool', variants='function')
def is_floating_point(input: Tensor) -> bool:
    """Whether ``input``'s dtype is a floating point one (``float16``, ``bfloat16``,
    ``float32``, ``float64``...).

    >>> import jaxgrad
    >>> x = jaxgrad.tensor([1.0])
    >>> jaxgrad.is_floating_point(x), jaxgrad.is_floating_point(x.long())
    (True, False)
    """
    return input.is_floating_point()


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
    shape = _infer_shape(shape_arg(shape), input.numel())
    g = input._geometry()
    if view_strides(g.shape, g.strides, shape) is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return apply_view(V.VIEW, V.view_geometry, input, shape=shape)


@declare('reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)')
def reshape(input: Tensor, *shape: Any) -> Tensor:
    """torch's reshape: ``view`` of a contiguous tensor, ``_reshape_alias`` (a view too) when the
    strides allow it (``view`` again under a dispatch mode or for a subclass), else a copy
    (CloneBackward0 + UnsafeViewBackward0).

    >>> import jaxgrad
    >>> jaxgrad.reshape(jaxgrad.arange(6), (2, 3))
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    shape = _infer_shape(shape_arg(shape), input.numel())
    if input.is_contiguous():
        return apply_view(V.VIEW, V.view_geometry, input, shape=shape)
    g = input._geometry()
    if view_strides(g.shape, g.strides, shape) is not None:
        # (torch's view for a "subclass-like" tensor: a dispatch mode is on, or it is a subclass)
        subclass_like = bool(dispatch_modes()) or dispatches_in_python(input)
        return apply_view(V.VIEW if subclass_like else V.RESHAPE_ALIAS, V.view_geometry, input,
                          shape=shape)
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
    dims = tuple(_wrap_dim(d, input.ndim) for d in shape_arg(dims))
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
    shape = _expanded_shape(input, shape_arg(sizes))
    return apply_view(V.EXPAND, V.expand_geometry, input, shape=shape)


def _expanded_shape(input: Tensor, sizes: Sequence[int]) -> tuple[int, ...]:
    """The shape ``input.expand(*sizes)`` has (``-1`` keeps a dim), with torch's errors."""
    if len(sizes) < input.ndim:
        raise RuntimeError(
            f"expand(jaxgrad.{_dtypes.legacy_type_name(input.dtype)}{{{list(input.shape)}}}, "
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


def _unsafe_view(input: Tensor, shape: tuple) -> Tensor:
    """torch's ``_unsafe_view``: a reshape recorded as a copy (UnsafeViewBackward0)."""
    return apply(V.UNSAFE_VIEW, input, shape=shape)


def to_dtype(input: Tensor, dtype: Any) -> Tensor:
    """A copy in ``dtype`` (ToCopyBackward0), or ``input`` itself if it already has it."""
    d = _dtypes.to_dtype(dtype)
    if d is input.dtype:
        return input
    return apply(E.CAST, input, dtype=d.np)


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
    shape = shape_arg(size)
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
    check_strided(layout)
    shape, strides = tuple(int(n) for n in size), tuple(int(n) for n in stride)
    if len(shape) != len(strides):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality "
                           f"of strides ({len(strides)})")
    extent = 0 if 0 in shape else 1 + builtins.sum((n - 1) * s for n, s in zip(shape, strides))
    storage = _creation.empty(extent, dtype=dtype, device=device)
    out = Tensor._make(None, cell=storage._cell)
    out._layout = Layout(shape, strides, 0)
    return out.requires_grad_(requires_grad) if requires_grad else out


@declare('empty_permuted(SymInt[] size, int[] physical_layout, *, ScalarType? dtype=None, '
         'Device? device=None, bool requires_grad=False) -> Tensor', variants='function')
def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: Any = None,
                   device: Any = None, requires_grad: bool = False, layout: Any = None,
                   pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor (zeros here) of shape ``size`` whose dimensions lie in memory in
    the order ``physical_layout`` (outermost first): torch's ``empty_permuted``.

    >>> import jaxgrad
    >>> jaxgrad.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
    (12, 1, 3)
    """
    shape, order = tuple(int(n) for n in size), tuple(int(d) for d in physical_layout)
    if len(shape) != len(order):
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(shape)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    seen = set()
    for i, d in enumerate(order):
        if not 0 <= d < len(shape):
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and "
                               f"{len(shape) - 1}, but got {d} at index {i}).  NB: negative dims "
                               "not currently supported; file an issue if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    d = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes.get_default_dtype()
    if requires_grad and not (d.is_floating_point or d.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    physical_strides = contiguous_strides(tuple(shape[d] for d in order))
    strides = [0] * len(shape)
    for d, stride in zip(order, physical_strides):
        strides[d] = stride
    return empty_strided(shape, strides, dtype=dtype, device=device,
                         requires_grad=requires_grad, layout=layout)


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
    repeats = shape_arg(repeats)
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
    dims = shape_arg(dims)
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)
