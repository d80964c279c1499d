"""Mutable storage cells shared by aliases, version counters, and strided view geometry.

JAX arrays are immutable, so mutability lives here. A ``Storage`` holds one JAX array (the
*base* array, row-major); every tensor aliasing it (views, ``detach()``, ``.data``) points at
the same cell. A view additionally carries a ``Layout`` (shape, strides, offset, in elements of
the base's flattened array, exactly torch's metadata), used to read it after the base changed
and to write an in-place result back into the base.

Version counters are separate objects: views and ``detach()`` share their base's counter,
``.data`` gets a fresh one (so ``.data`` writes are invisible to autograd, as in torch).
"""

from __future__ import annotations

import math
import threading
from typing import NamedTuple

import jax
import numpy as np

from ._caches import cache
from ._jax_setup import jit


class VersionCounter:
    """The ``_version`` shared by a tensor, its views and its ``detach()`` aliases.

    >>> import jaxgrad
    >>> x = jaxgrad.zeros(3); v = x[:2]
    >>> _ = v.add_(1)
    >>> x._version, v._version
    (1, 1)
    """

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class _WriteWatchers(threading.local):
    """Callbacks ``callback(storage)`` run in this thread just before a storage's contents are
    overwritten (``autograd.graph.allow_mutation_on_saved_tensors`` clones saved tensors there,
    as torch's dispatch mode does before every op that writes to its arguments)."""

    callbacks: tuple = ()


write_watchers = _WriteWatchers()


class Storage:
    """A cell holding the current base array; ``generation`` moves on every write.

    >>> import jax.numpy as jnp
    >>> from jaxgrad._storage import Storage
    >>> s = Storage(jnp.zeros(2))
    >>> s.write(jnp.ones(2)); s.generation, s.array.tolist()
    (1, [1.0, 1.0])
    """

    __slots__ = ("_address", "array", "generation")

    def __init__(self, array: jax.Array) -> None:
        self.array = array
        self.generation = 0
        self._address = None

    def address(self) -> int:
        """A stable integer naming this storage's first byte (torch's ``data_ptr`` of offset
        0): given on first request, from a range no other storage was given."""
        if self._address is None:
            with _ADDRESS_LOCK:
                if self._address is None:
                    self._address = _next_address(self.array.size * self.array.dtype.itemsize)
        return self._address

    def write(self, array: jax.Array) -> None:
        """Replace the base array and advance ``generation`` (after the write watchers)."""
        for callback in write_watchers.callbacks:
            callback(self)
        self.array = array
        self.generation += 1


_ADDRESS_LOCK = threading.Lock()
_ADDRESS_ALIGN = 64
_next_free = [0x10000000]


def _next_address(nbytes: int) -> int:
    """The start of a fresh aligned range of ``nbytes`` (at least one alignment unit)."""
    start = _next_free[0]
    span = -(-max(nbytes, 1) // _ADDRESS_ALIGN) * _ADDRESS_ALIGN
    _next_free[0] = start + span + _ADDRESS_ALIGN
    return start


class Layout(NamedTuple):
    """Where a view's elements sit in its base: torch's sizes/strides/storage_offset.

    >>> from jaxgrad._storage import Layout
    >>> Layout(shape=(2,), strides=(3,), offset=1)  # column 1 of a 2x3 base
    Layout(shape=(2,), strides=(3,), offset=1)
    """

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides of ``shape`` (torch's default layout).

    >>> from jaxgrad._storage import contiguous_strides
    >>> contiguous_strides((2, 3, 4))
    (12, 4, 1)
    """
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def is_contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """torch's is_contiguous: dims of size 1 may have any stride; empty tensors always are.

    >>> from jaxgrad._storage import is_contiguous
    >>> is_contiguous((2, 3), (3, 1)), is_contiguous((2, 3), (1, 2)), is_contiguous((1, 3), (7, 1))
    (True, False, True)
    """
    if 0 in shape:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def view_strides(old_shape, old_strides, new_shape) -> tuple[int, ...] | None:
    """Strides to view (old_shape, old_strides) as new_shape, or None (torch's computeStride).

    >>> from jaxgrad._storage import view_strides
    >>> view_strides((2, 3), (3, 1), (3, 2))
    (2, 1)
    >>> view_strides((2, 3), (1, 2), (6,)) is None  # a transposed tensor cannot be flattened
    True
    """
    if not old_shape:
        return (1,) * len(new_shape)
    if math.prod(old_shape) == 0:
        if tuple(old_shape) == tuple(new_shape):
            return tuple(old_strides)
        return contiguous_strides(tuple(new_shape))
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1] if old_strides else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def _flat_index(layout: Layout) -> np.ndarray:
    idx = np.full(layout.shape, layout.offset, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(layout.shape, layout.strides)):
        shape = [1] * len(layout.shape)
        shape[axis] = size
        idx = idx + (np.arange(size, dtype=np.int64) * stride).reshape(shape)
    return idx


@cache(maxsize=4096)
def _gather_fn(layout: Layout):
    idx = _flat_index(layout)
    return jit(lambda base: base.reshape(-1)[idx])


@cache(maxsize=4096)
def _scatter_fn(layout: Layout):
    idx = _flat_index(layout).reshape(-1)
    return jit(lambda base, values: base.reshape(-1).at[idx].set(
        values.reshape(-1).astype(base.dtype)).reshape(base.shape))


def gather(base: jax.Array, layout: Layout) -> jax.Array:
    """The view described by ``layout`` read out of ``base`` (one jitted gather).

    >>> import jax.numpy as jnp
    >>> from jaxgrad._storage import Layout, gather
    >>> base = jnp.arange(6).reshape(2, 3)
    >>> gather(base, Layout((2,), (3,), 1)).tolist()
    [1, 4]
    """
    return _gather_fn(layout)(base)


def scatter(base: jax.Array, layout: Layout, values: jax.Array) -> jax.Array:
    """``base`` with the view ``layout`` overwritten by ``values``.

    >>> import jax.numpy as jnp
    >>> from jaxgrad._storage import Layout, scatter
    >>> base = jnp.zeros((2, 3), dtype=int)
    >>> scatter(base, Layout((2,), (3,), 1), jnp.array([7, 8])).tolist()
    [[0, 7, 0], [0, 8, 0]]
    """
    return _scatter_fn(layout)(base, values)
