"""Indexing: ``t[...]`` reads and writes (getitem/setitem, torch's basic and advanced
indexing), index_put, masked_fill/select/scatter, where, take/put, nonzero; the rows of
``_ops/indexing.py`` are generated here.
"""

from __future__ import annotations

import builtins
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor, dispatch_modes, dispatches_in_python
from .._core.tensor_repr import (
    concrete_here,
    dynamic_shape_error,
    host_value,
    unwrap_levels,
)
from .._core.typename import type_name
from .._core.warn_once import warn_at_user_line
from .._engine.dispatch import (
    apply,
    apply_inplace,
    check_inplace,
    check_overlap,
    has_internal_overlap,
    warn_expanded_write,
)
from .._ops import elementwise as E
from .._ops import indexing as X
from .._ops import reductions as R
from .arguments import (
    broadcast_operands,
    broadcast_shapes,
    check_inplace_broadcast,
    concrete_values,
    dims_or_all,
    number_or_tensor,
    raw_shape,
    require_tensors,
)
from .opgen import declare, generate
from .pointwise import copy_, fill_
from .shapes import _select, alias, expand, narrow_slice, unsqueeze, view

# The ops a row of ``_ops`` declares whole (``variants=``/``inplace=``) are generated here from
# their schemas (see ``opgen``).
globals().update(generate(X))


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
    value = _dtypes.checked_scalar(value, input.dtype)
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
    value = _dtypes.checked_scalar(value, input.dtype)
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
        d = _dtypes.result_type([(other.dtype, other.ndim)], [input])
        input = Tensor._make(jnp.asarray(_dtypes.checked_scalar(input, d, numel=1), d.np))
    elif not isinstance(other, Tensor):  # (torch's scalar_tensor of the result type)
        other = _dtypes.checked_scalar(other, _dtypes.result_type([(input.dtype, input.ndim)],
                                                                   [other]), numel=1)
    return apply(E.WHERE, input, number_or_tensor(other), aux=(condition,))


@declare('nonzero(Tensor self, *, bool as_tuple=False) -> Tensor')
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """Indices of the non-zero elements (a tuple of index tensors with ``as_tuple``).

    >>> import jaxgrad
    >>> jaxgrad.nonzero(jaxgrad.tensor([0.0, 3.0, 0.0, 4.0]))
    tensor([[1],
            [3]])
    """
    idx = np.nonzero(host_value(input._value, dynamic_shape_error("nonzero"), what="nonzero"))
    if as_tuple:
        return tuple(Tensor._make(jnp.asarray(i, jnp.int64)) for i in idx)
    return Tensor._make(jnp.asarray(np.stack(idx, axis=1), jnp.int64))


@declare('nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> Tensor')
def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """:func:`nonzero` with a fixed number of rows, ``size``: the first ``size`` indices, then
    rows of ``fill_value``.

    >>> import jaxgrad
    >>> jaxgrad.nonzero_static(jaxgrad.tensor([0.0, 3.0]), size=2)
    tensor([[ 1],
            [-1]])
    """
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    rows = jnp.argwhere(input._value, size=size, fill_value=fill_value)
    return Tensor._make(rows.astype(jnp.int64).reshape(size, input.ndim))


def _is_int_index(i: Any) -> bool:
    if isinstance(i, bool):
        return False
    if isinstance(i, (int, np.integer)):
        return True
    return (isinstance(i, Tensor) and i.ndim == 0 and not i.dtype.is_floating_point
            and i.dtype not in (_dtypes.bool_, _dtypes.uint8))


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
    ``jax.jit`` or ``jaxgrad.func``) stays its tracer: only its shape and dtype are known; so
    does one spanning processes that this process does not hold (an integer index then runs
    on the devices, a mask is refused: the result's shape depends on its values)."""
    if isinstance(i, Tensor):
        return np.asarray(i._value) if concrete_here(i._value) else i._value
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


def _warn_uint8_indices(indices: Any, zero_dim: bool = True) -> None:
    """torch's deprecation warning, once per uint8 index tensor (where it expands the masks;
    ``zero_dim=False``: not for 0-d ones, which ``t[...]`` takes as bools)."""
    for i in indices:
        if isinstance(i, Tensor) and i.dtype is _dtypes.uint8 and (zero_dim or i.ndim):
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
            if unwrap_levels(arr) is None:
                raise IndexError("indexing with a boolean mask needs the mask's values (the "
                                 "result's shape depends on them), which a JAX trace does not "
                                 "have; use jaxgrad.where(mask, x, 0) or index outside the "
                                 "transformation")
            arr = host_value(arr, "vmap: We do not support batching operators that can support "
                                  "dynamic shape. Attempting to batch over indexing with a "
                                  "boolean mask.")
        elif not isinstance(arr, np.ndarray):  # spanning processes: not held here
            arr = host_value(arr, what="Indexing with a boolean mask")
        if arr.ndim == 0:  # torch's expandTensors: a 0-d mask's nonzero has no columns
            return []
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
    _warn_uint8_indices(tuple(index) if _treat_as_tuple(index) else (index,), zero_dim=False)
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
    _indexed_shape(tuple(out.shape), advanced)  # (the index shapes must broadcast)
    _check_index_bounds(tuple(out.shape), advanced)
    while advanced[-1] is None:
        advanced.pop()
    return out, tuple(advanced)


def _bool_index(item: Any) -> bool | None:
    """A Python bool or 0-d bool or uint8 tensor index as a bool (torch's applySlicing: a new
    dim, indexed by [0] or []), else None."""
    if isinstance(item, bool):
        return item
    if isinstance(item, Tensor) and item.ndim == 0 and item.dtype in (_dtypes.bool_,
                                                                      _dtypes.uint8):
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
    if not defined or not builtins.all(concrete_here(a) for _, a in defined):
        return  # values unknown under a trace (or on other processes): JAX clamps, as jit does
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


def _indexed_shape(shape: tuple, advanced: Any) -> tuple:
    """The shape of ``x[advanced]`` for an ``x`` of ``shape`` (``advanced``: None or an integer
    array per leading dim): the broadcast index shape in place of the indexed dims where those
    are adjacent, else first (numpy's rule, torch's); torch's IndexError where the index shapes
    do not broadcast."""
    advanced = list(advanced) + [None] * (len(shape) - len(advanced))
    defined = [k for k, a in enumerate(advanced) if a is not None]
    if not defined:
        return tuple(shape)
    shapes = [tuple(advanced[k].shape) for k in defined]
    try:
        index_shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with "
                         f"shapes {', '.join(str(list(s)) for s in shapes)}") from None
    if defined[-1] - defined[0] + 1 == len(defined):
        return tuple(shape[:defined[0]]) + index_shape + tuple(shape[defined[-1] + 1:])
    return index_shape + tuple(n for n, a in zip(shape, advanced) if a is None)


def _check_index_put_value(target: Tensor, advanced: Any, value: Tensor) -> None:
    """torch's make_index_put_iterator checks: ``value`` broadcasts to the indexing result,
    and has ``target``'s dtype (a write torch hands to masked_fill_ skips them)."""
    result = _indexed_shape(tuple(target.shape), advanced)
    shape = tuple(value.shape)
    if len(shape) > len(result) or not builtins.all(
            v in (1, r) for v, r in zip(shape[::-1], result[::-1])):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(shape)} cannot be "
                           f"broadcast to indexing result of shape {list(result)}")
    if value.dtype is not target.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{_dtypes.scalar_type_name(target.dtype)} for the destination and "
                           f"{_dtypes.scalar_type_name(value.dtype)} for the source.")


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
    if not isinstance(value, Tensor):  # (torch's valueToTensor: a 0-d tensor of input's dtype)
        value = _dtypes.checked_scalar(value, input.dtype, numel=1)
    if index is False:  # torch's shortcut: no write, so no version bump, no autograd checks
        return
    if index is True:  # torch's shortcut: copy_to into the unsqueezed view (any value dtype)
        _copy_to(unsqueeze(input, 0), value)
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
    tensor_items = [i for i in items if _bool_index(i) is not None or (
        isinstance(i, Tensor) and i.ndim) or _is_sequence(i)]
    if (_masked_fill_form(tensor_items, value, False)
            and _bool_index(tensor_items[0]) is None):  # (a bool item indexes a new dim)
        _refuse_uint8_masked_fill(tensor_items, value, False)
    else:
        _check_index_put_value(target, advanced, value)
    _warn_uint8_indices(items, zero_dim=False)
    if has_internal_overlap(target):  # (a mask's shape was checked by _basic_index)
        indices = [i for i in items if (isinstance(i, Tensor) and i.ndim) or _is_sequence(i)]
        if not indices:  # ``t[True] = v``: torch's unsqueeze and copy_ (nothing for t[False])
            if builtins.all(a is None or a.size for a in advanced):
                check_overlap(E.COPY, target, (value,))
        else:
            _warn_expanded_index_put(target, indices, value, False, None)
    mask = [i for i in items if isinstance(i, Tensor) and i.ndim and i.dtype is _dtypes.bool_]
    if len(mask) == 1 and _lone_mask_put(target, items, mask[0], advanced, value):
        return
    apply_inplace(X.INDEX_PUT, target, value, aux=(advanced,), accumulate=False)


def _lone_mask_put(target: Tensor, items: tuple, mask: Tensor, advanced: tuple,
                   value: Tensor) -> bool:
    """``target[..mask..] = value`` as a ``where`` over the mask (INDEX_PUT_MASK), when
    ``mask`` is the only advanced index, its values are known, and ``value`` broadcasts without
    the masked count: no kernel then depends on the count. False where it does not apply."""
    if builtins.any(i is not mask and ((isinstance(i, Tensor) and i.ndim) or _is_sequence(i)
                                       or _bool_index(i) is not None) for i in items):
        return False
    dim = [a is not None for a in advanced].index(True)
    return _put_where_mask(target, mask, dim, value, apply_inplace) is not None


def _put_where_mask(target: Tensor, mask: Tensor, dim: int, value: Tensor,
                    run: Any) -> Tensor | None:
    """``run`` (apply or apply_inplace) of INDEX_PUT_MASK: ``value`` into ``target`` where
    ``mask`` (over dims ``dim`` on) holds, if its values are known, it fits ``target`` there and
    ``value`` broadcasts to torch's result shape without its count dim; else None."""
    if dispatch_modes() or dispatches_in_python(target) or dispatches_in_python(value):
        return None  # (a __torch_dispatch__ sees index_put's arguments, as torch gives them)
    raw = _index_array(mask)
    shape = tuple(target.shape)
    if (not isinstance(raw, np.ndarray)  # traced or on other processes: INDEX_PUT's rules
            or raw.shape != shape[dim:dim + raw.ndim]):
        return None
    post = shape[dim + raw.ndim:]
    rank = dim + 1 + len(post)
    if value.ndim > rank:
        return None
    padded = (1,) * (rank - value.ndim) + tuple(value.shape)
    fits = builtins.all(v in (1, r) for v, r in zip(padded, shape[:dim] + (1,) + post))
    if not fits or padded[dim] != 1:
        return None
    value_shape = padded[:dim] + (1,) * raw.ndim + padded[dim + 1:]
    return run(X.INDEX_PUT_MASK, target, value, aux=(jnp.asarray(raw),), dim=dim,
               value_shape=value_shape, count_is_one=bool(raw.sum() == 1))


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
    raise TypeError(f"can't assign a {kind} to a jaxgrad.{_dtypes.legacy_type_name(input.dtype)}")


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


@declare('count_nonzero(Tensor self, int[1]? dim=None) -> Tensor')
def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """How many elements are not zero, over ``dim`` (all dims by default), as int64.

    >>> import jaxgrad
    >>> jaxgrad.count_nonzero(jaxgrad.tensor([[0.0, 1.0], [2.0, 3.0]]), dim=1)
    tensor([1, 2])
    """
    return apply(R.COUNT_NONZERO, input, dim=dims_or_all(dim, input.ndim))


@declare('argwhere(Tensor self) -> Tensor')
def argwhere(input: Tensor) -> Tensor:
    """The indices of the non-zero elements, one row each (``nonzero(input)``).

    >>> import jaxgrad
    >>> jaxgrad.argwhere(jaxgrad.tensor([[0.0, 1.0], [2.0, 0.0]]))
    tensor([[0, 1],
            [1, 0]])
    """
    return nonzero(input)


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
    count = int(np.broadcast_to(host_value(mask._value, _BATCHED_MASK, what="masked_select"),
                                shape).sum())
    return apply(X.MASKED_SELECT, input, aux=(mask,), _count=count)


_BATCHED_MASK = ("vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot "
                 "support this because for each batch this would return a differently shaped "
                 "Tensor. Please file an issue at https://github.com/pytorch/pytorch/issues if "
                 "you need this feature.")


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
    values = concrete_values(mask)
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
    values = concrete_values(index)
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
    values = concrete_values(index)
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


def _masked_fill_form(indices: Any, values: Tensor, accumulate: bool) -> bool:
    """torch's canDispatchToMaskedFill: index_put_ of a one-element value at one bool or uint8
    mask (no other index) is masked_fill_, which takes a value of any dtype (``indices``: the
    index items, None for a dim taken whole, or sequences)."""
    defined = [i for i in indices if i is not None]
    return (not accumulate and values.numel() == 1 and len(defined) == 1
            and (isinstance(defined[0], Tensor) or _is_sequence(defined[0]))
            and _index_array(defined[0]).dtype in _MASK_DTYPES)


def _index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool,
               inplace: bool) -> Tensor:
    require_tensors(values)
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not "
                        f"{type_name(indices)}")
    bad = next((k for k, i in enumerate(indices) if not isinstance(i, Tensor)), None)
    if bad is not None:  # (torch's parser takes no None here; the method form renumbers this)
        raise TypeError(f"expected Tensor as element {bad} in argument 1, but got "
                        f"{type_name(indices[bad])}")
    if len(indices) > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim} (got "
                         f"{len(indices)})")
    if inplace and has_internal_overlap(input):
        _warn_expanded_index_put(input, list(indices), values, accumulate, 0)
    masked_fill = _masked_fill_form(indices, values, accumulate)
    _refuse_uint8_masked_fill(list(indices), values, accumulate)
    _warn_uint8_indices(indices)
    arrays: list = []
    for i in indices:
        arrays.extend(_advanced(i))
    run = apply_inplace if inplace else apply
    if masked_fill:  # torch: masked_fill_ (a 0-d mask included), before index_put's checks
        mask = indices[0]
        _check_mask_shape(mask, tuple(input.shape))
        if values.ndim > input.ndim:  # (torch's masked_fill_ takes ``values.item()``)
            values = view(values, ())
        out = _put_where_mask(input, mask, 0, values, run)
        if out is not None:
            return out
        if mask.ndim == 0:  # (seen by a dispatch mode) the mask over all of ``input``
            full = np.broadcast_to(_index_array(mask), tuple(input.shape))
            arrays = [jnp.asarray(a) for a in np.nonzero(full)]
    else:
        _check_index_put_value(input, arrays, values)
    _check_index_bounds(tuple(input.shape), arrays)
    if (not accumulate and len(indices) == 1 and indices[0].ndim
            and indices[0].dtype is _dtypes.bool_):
        out = _put_where_mask(input, indices[0], 0, values, run)
        if out is not None:
            return out
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
