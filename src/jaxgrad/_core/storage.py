"""Mutable storage cells shared by aliases, version counters, and strided view geometry.

JAX arrays are immutable, so mutability lives here. A ``Storage`` holds one JAX array (the
*base* array, row-major); every tensor aliasing it (views, ``detach()``, ``.data``) points at
the same cell. A view additionally carries a ``Layout`` (shape, strides, offset, in elements of
the base's flattened array, exactly torch's metadata), used to read it after the base changed
and to write an in-place result back into the base.

Version counters are separate objects: views and ``detach()`` share their base's counter,
``.data`` gets a fresh one (so ``.data`` writes are invisible to autograd, as in torch).

``Tensor.storage()`` and ``Tensor.untyped_storage()`` hand out :class:`TypedStorage` and
:class:`UntypedStorage`: torch's storage surface (length, address, elements) over a cell.
"""

from __future__ import annotations

import math
import sys
import threading
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import dtypes as _dtypes
from .caches import cache
from .device import device, of_jax
from .jax_setup import jit, x64_scope
from .tensor_repr import held_here, spans_processes_error
from .typename import public_path


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
    >>> from jaxgrad._core.storage import Storage
    >>> s = Storage(jnp.zeros(2))
    >>> s.write(jnp.ones(2)); s.generation, s.array.tolist()
    (1, [1.0, 1.0])
    """

    __slots__ = ("_address", "_host", "_host_seen", "array", "born", "generation", "shared")

    def __init__(self, array: jax.Array) -> None:
        self.array = array
        self.generation = 0
        self.shared = False  # (``share_memory_`` was called: torch's ``is_shared()``)
        self._address = None
        self.born = births[0]  # (see ``new_birth_mark``)

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


def share_with_host(cell: Storage) -> np.ndarray | None:
    """A writable numpy array sharing ``cell``'s memory, as torch's ``numpy()`` and
    ``from_numpy`` share it: writes through the array show in every tensor over the cell, and
    in-place ops on those tensors show in the array. None where the cell's array is not one
    concrete array of this process's CPU (a tracer, a GPU array, a sharded one): torch shares
    only CPU memory.

    JAX arrays are immutable, so the cell keeps the numpy array as its memory
    (:class:`_HostStorage`) for as long as anyone else holds it (or a view of it), and hands JAX
    a copy whenever its contents changed; after that it is a plain storage again.

    >>> import jax.numpy as jnp
    >>> from jaxgrad._core.storage import Storage, share_with_host
    >>> cell = Storage(jnp.zeros(2))
    >>> host = share_with_host(cell); host[0] = 5.0
    >>> cell.array.tolist(), cell.generation
    ([5.0, 0.0], 1)
    """
    if isinstance(cell, _HostStorage):
        return cell._host
    if not _on_this_cpu(cell.array):
        return None
    host = np.array(cell.array)  # a writable copy owning its memory
    cell._host, cell._host_seen = host, host.copy()
    cell.__class__ = _HostStorage
    return host


def adopt_host_array(array: np.ndarray) -> Storage:
    """A storage over the numpy ``array``'s memory itself (``from_numpy``), shared as in
    :func:`share_with_host` where JAX keeps it on this process's CPU. ``array`` must be
    C-contiguous, writable and in native byte order.

    >>> import numpy as np
    >>> from jaxgrad._core.storage import adopt_host_array
    >>> a = np.zeros(2, np.float32)
    >>> cell = adopt_host_array(a); a[1] = 3.0
    >>> cell.array.tolist()
    [0.0, 3.0]
    """
    seen = array.copy()
    cell = Storage(_to_jax(seen))
    if _on_this_cpu(cell.array):
        cell._host, cell._host_seen = array, seen
        cell.__class__ = _HostStorage
    return cell


def _to_jax(seen: np.ndarray, like: object = None) -> jax.Array:
    """A JAX copy of ``seen``, a snapshot never written again (JAX may keep reading it, and
    keeps a reference to it, after this returns), placed as the array ``like`` where that one
    is committed to a device."""
    with x64_scope():
        if isinstance(like, jax.Array) and not isinstance(like, jax.core.Tracer) and \
                like.committed:
            return jax.device_put(seen, like.sharding)
        return jnp.asarray(seen, dtype=seen.dtype)


def _on_this_cpu(array: object) -> bool:
    if not isinstance(array, jax.Array) or isinstance(array, jax.core.Tracer):
        return False
    devices = array.devices()
    return len(devices) == 1 and next(iter(devices)).platform == "cpu"


_ARRAY_SLOT, _GENERATION_SLOT = Storage.array, Storage.generation


def _bytes_of(array: np.ndarray) -> np.ndarray:
    return array.reshape(-1).view(np.uint8)


def _held_elsewhere(host: np.ndarray) -> bool:
    """Whether anyone but the storage holds ``host`` or an object its memory comes from
    (numpy's ``base`` chain, which every array over that memory holds a link of)."""
    if sys.getrefcount(host) > 4:  # (the slot, the caller's and our name, getrefcount's own)
        return True
    link = host.base
    while link is not None:
        if sys.getrefcount(link) > 3:  # (the link above it, our name, getrefcount's own)
            return True
        link = getattr(link, "base", None)
    return False


class _HostStorage(Storage):
    """A storage whose memory is a numpy array someone holds (see :func:`share_with_host`).

    Every read first syncs: a change made through numpy becomes a new JAX array and a write
    (``generation`` moves, so views and transforms see it); once nobody but the cell holds the
    numpy array, the cell turns back into a plain :class:`Storage`. Every write from JAX is
    copied into the numpy array.
    """

    __slots__ = ()

    def _sync(self) -> None:
        host, seen = self._host, self._host_seen
        if not _held_elsewhere(host):
            self._let_go()
        if np.array_equal(_bytes_of(host), _bytes_of(seen)):  # (NaN equals itself here)
            return
        seen = host.copy()
        _ARRAY_SLOT.__set__(self, _to_jax(seen, _ARRAY_SLOT.__get__(self)))
        _GENERATION_SLOT.__set__(self, _GENERATION_SLOT.__get__(self) + 1)
        if self._host is not None:
            self._host_seen = seen

    def _let_go(self) -> None:
        self._host = self._host_seen = None
        self.__class__ = Storage

    @property
    def array(self) -> jax.Array:
        self._sync()
        return _ARRAY_SLOT.__get__(self)

    @array.setter
    def array(self, value: jax.Array) -> None:
        self._sync()
        _ARRAY_SLOT.__set__(self, value)
        host = self._host
        if host is None or isinstance(value, jax.core.Tracer):  # (a trace's value stays there)
            return
        if value.shape != host.shape or value.dtype != host.dtype:  # (resize_, set_)
            self._let_go()
            return
        np.copyto(host, np.asarray(value))
        self._host_seen = host.copy()

    @property
    def generation(self) -> int:
        self._sync()
        return _GENERATION_SLOT.__get__(self)

    @generation.setter
    def generation(self, value: int) -> None:
        _GENERATION_SLOT.__set__(self, value)


births = [0]  # moves on when a jaxgrad.func transform starts tracing its function


def new_birth_mark() -> int:
    """A mark that every storage made from now on is ``born`` at or after, and every existing
    one before: the tensors a transformed function finds from outside (torch.func's captured
    tensors) are those whose storage was born before its transform's mark."""
    births[0] += 1
    return births[0]


class ReinterpretedStorage:
    """Another storage's memory read through a lens: torch's conjugate and negative bits
    (``x.conj()``, the ``imag`` of a conjugate) and its dtype views (``view_as_real``,
    ``view_as_complex``). It holds no array of its own: reading gives the lens applied to the
    storage underneath, and writing (or assigning ``array``) stores the inverse there, so the
    tensors over either see each other's in-place changes, as aliases of one memory do.

    ``kind`` is ``"conj"``, ``"neg"``, ``"as_real"`` (complex memory seen as interleaved
    real/imaginary floats: one trailing dim of 2) or ``"as_complex"`` (float memory seen as
    complex pairs, flat). Use :func:`reinterpret`, which undoes a lens instead of stacking its
    inverse.

    >>> import jax.numpy as jnp
    >>> from jaxgrad._core.storage import Storage, reinterpret
    >>> base = Storage(jnp.array([1 + 2j]))
    >>> real = reinterpret(base, "as_real")
    >>> real.array.tolist()
    [[1.0, 2.0]]
    >>> real.write(jnp.array([[3.0, 4.0]])); base.array.tolist(), base.generation
    ([(3+4j)], 1)
    """

    __slots__ = ("_array", "_seen", "kind", "parent")

    def __init__(self, parent: Storage | ReinterpretedStorage, kind: str) -> None:
        self.parent, self.kind = parent, kind
        self._seen = self._array = None

    @property
    def array(self) -> jax.Array:
        source = self.parent.array
        if source is not self._seen:
            self._array, self._seen = _LENSES[self.kind][0](source), source
        return self._array

    @array.setter
    def array(self, value: jax.Array) -> None:
        self.parent.array = self._inverse(value)

    @property
    def generation(self) -> int:
        return self.parent.generation

    @property
    def born(self) -> int:
        return self.parent.born

    @generation.setter
    def generation(self, value: int) -> None:
        self.parent.generation = value

    def _inverse(self, value: jax.Array) -> jax.Array:
        return _LENSES[self.kind][1](value, self.parent.array.shape)

    def write(self, array: jax.Array) -> None:
        """Write ``array`` (as this lens sees the memory) into the storage underneath."""
        self.parent.write(self._inverse(array))

    def address(self) -> int:
        return self.parent.address()


def _as_real(a: jax.Array) -> jax.Array:
    return jnp.stack([jnp.real(a), jnp.imag(a)], axis=-1)


def _as_complex(a: jax.Array) -> jax.Array:
    pairs = a.reshape(-1, 2)
    return jax.lax.complex(pairs[:, 0], pairs[:, 1])


_LENSES = {  # kind -> (read, write back: (value, shape underneath) -> array underneath)
    "conj": (jit(jnp.conj), lambda value, shape: _CONJ(value)),
    "neg": (jit(jnp.negative), lambda value, shape: _NEG(value)),
    "as_real": (jit(_as_real), lambda value, shape: _AS_COMPLEX(value.reshape(-1)).reshape(shape)),
    "as_complex": (jit(_as_complex), lambda value, shape: _AS_REAL(value).reshape(shape)),
}
_CONJ, _NEG, _AS_REAL, _AS_COMPLEX = (_LENSES[k][0] for k in ("conj", "neg", "as_real",
                                                              "as_complex"))
_UNDOES = {"conj": "conj", "neg": "neg", "as_real": "as_complex", "as_complex": "as_real"}


def reinterpret(cell: Storage | ReinterpretedStorage, kind: str) -> Storage | ReinterpretedStorage:
    """``cell`` read through the lens ``kind`` (see :class:`ReinterpretedStorage`): the storage
    underneath itself where ``cell`` is that lens's inverse over it (``conj`` of a conjugate)."""
    if isinstance(cell, ReinterpretedStorage) and _UNDOES[cell.kind] == kind:
        return cell.parent
    return ReinterpretedStorage(cell, kind)


def lens_of(cell: Storage | ReinterpretedStorage) -> str | None:
    """The outermost lens of ``cell`` (``"conj"`` for a conjugate view), or None."""
    return cell.kind if isinstance(cell, ReinterpretedStorage) else None


def physical(cell: Storage | ReinterpretedStorage) -> Storage | ReinterpretedStorage:
    """``cell`` without its conjugate/negative bits: the values as they sit in memory."""
    while isinstance(cell, ReinterpretedStorage) and cell.kind in ("conj", "neg"):
        cell = cell.parent
    return cell


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

    >>> from jaxgrad._core.storage import Layout
    >>> Layout(shape=(2,), strides=(3,), offset=1)  # column 1 of a 2x3 base
    Layout(shape=(2,), strides=(3,), offset=1)
    """

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides of ``shape`` (torch's default layout).

    >>> from jaxgrad._core.storage import contiguous_strides
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

    >>> from jaxgrad._core.storage import is_contiguous
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

    >>> from jaxgrad._core.storage import view_strides
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


@cache(maxsize=4096, kernels=True)
def _gather_fn(layout: Layout):
    idx = _flat_index(layout)
    return jit(lambda base: base.reshape(-1)[idx])


@cache(maxsize=4096, kernels=True)
def _scatter_fn(layout: Layout):
    idx = _flat_index(layout).reshape(-1)
    return jit(lambda base, values: base.reshape(-1).at[idx].set(
        values.reshape(-1).astype(base.dtype)).reshape(base.shape))


def gather(base: jax.Array, layout: Layout) -> jax.Array:
    """The view described by ``layout`` read out of ``base`` (one jitted gather).

    >>> import jax.numpy as jnp
    >>> from jaxgrad._core.storage import Layout, gather
    >>> base = jnp.arange(6).reshape(2, 3)
    >>> gather(base, Layout((2,), (3,), 1)).tolist()
    [1, 4]
    """
    return _gather_fn(layout)(base)


def scatter(base: jax.Array, layout: Layout, values: jax.Array) -> jax.Array:
    """``base`` with the view ``layout`` overwritten by ``values``.

    >>> import jax.numpy as jnp
    >>> from jaxgrad._core.storage import Layout, scatter
    >>> base = jnp.zeros((2, 3), dtype=int)
    >>> scatter(base, Layout((2,), (3,), 1), jnp.array([7, 8])).tolist()
    [[0, 7, 0], [0, 8, 0]]
    """
    return _scatter_fn(layout)(base, values)


# --- torch's storage objects -----------------------------------------------------------------

TYPED_STORAGE_WARNING = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
    "only storage class. This should only matter to you if you are using storages directly.  To "
    "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")


class _TypedStorageWarning:
    """torch warns about TypedStorage once per process, whatever ``set_warn_always`` says."""

    warned = False


typed_storage_warning = _TypedStorageWarning()


class _CellStorage:
    """What both storage classes say of the cell they read: its address and device."""

    __slots__ = ("_cell",)

    def __init__(self, cell: Storage) -> None:
        self._cell = cell

    def data_ptr(self) -> int:
        return self._cell.address()

    @property
    def device(self) -> device:
        return _device_of(self._cell.array)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def is_shared(self) -> bool:
        """Whether ``share_memory_`` marked the storage shared (jaxgrad's memory stays this
        process's: there is no ``jaxgrad.multiprocessing`` to hand it to another)."""
        return _memory_of(self._cell).shared

    def share_memory_(self) -> _CellStorage:
        """Mark the storage shared, as torch's ``share_memory_`` reports it; returns ``self``.

        >>> import jaxgrad
        >>> s = jaxgrad.zeros(2).untyped_storage()
        >>> s.share_memory_().is_shared()
        True
        """
        _memory_of(self._cell).shared = True
        return self


def _memory_of(cell: Storage | ReinterpretedStorage) -> Storage:
    """The storage holding ``cell``'s memory, under every lens."""
    while isinstance(cell, ReinterpretedStorage):
        cell = cell.parent
    return cell


@public_path("jaxgrad.storage")
class UntypedStorage(_CellStorage):
    """The bytes of a tensor's storage cell (``Tensor.untyped_storage()``): ``len``, ``nbytes()``,
    ``data_ptr()`` and byte access, as torch's ``UntypedStorage``; writes go to the cell.

    >>> import jaxgrad
    >>> u = jaxgrad.tensor([1.0, 2.0])[1:].untyped_storage()
    >>> len(u), u.nbytes(), u[7]
    (8, 8, 64)
    """


    def _bytes(self) -> np.ndarray:
        return np.ascontiguousarray(_host_array(self._cell.array)).reshape(-1).view(np.uint8)

    def nbytes(self) -> int:
        array = self._cell.array
        return array.size * array.dtype.itemsize

    def size(self) -> int:
        return self.nbytes()

    def __len__(self) -> int:
        return self.nbytes()

    def __getitem__(self, idx: int) -> int:
        return int(self._bytes()[_element_index(self, idx)])

    def __setitem__(self, idx: int, value: int) -> None:
        raw = self._bytes().copy()
        raw[_element_index(self, idx)] = value
        array = self._cell.array
        self._cell.write(jnp.asarray(raw.view(array.dtype).reshape(array.shape)))

    def tolist(self) -> list[int]:
        return self._bytes().tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self) -> str:
        info = f"[jaxgrad.storage.UntypedStorage(device={self.device}) of size {len(self)}]"
        return " " + "\n ".join(str(b) for b in self.tolist()) + "\n" + info


@public_path("jaxgrad.storage")
class TypedStorage(_CellStorage):
    """A tensor's storage as elements of its dtype (``Tensor.storage()``, deprecated in torch,
    which warns once): ``len`` counts the whole cell's elements (a view's storage is its
    base's), ``data_ptr()`` is the cell's address, and elements read and write the cell (not
    bumping any tensor's version, as in torch).

    >>> import warnings
    >>> import jaxgrad
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     s = jaxgrad.tensor([1.0, 2.0, 3.0])[:2].storage()
    >>> len(s), s[2], s.tolist(), s.dtype
    (3, 3.0, [1.0, 2.0, 3.0], jaxgrad.float32)
    """


    @property
    def _untyped_storage(self) -> UntypedStorage:
        return UntypedStorage(self._cell)

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    @property
    def dtype(self) -> _dtypes.dtype:
        return _dtypes.from_numpy_dtype(self._cell.array.dtype)

    def size(self) -> int:
        return self._cell.array.size

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def nbytes(self) -> int:
        return self.size() * self.element_size()

    def type(self) -> str:
        return f"jaxgrad.{_dtypes.legacy_type_name(self.dtype).replace('Tensor', 'Storage')}"

    def cpu(self) -> TypedStorage:
        if self.device.type != "cpu":
            raise NotImplementedError("only CPU storages can be copied here")
        return self

    def _values(self) -> np.ndarray:
        values = _host_array(self._cell.array).reshape(-1)
        return values.astype(np.float32) if self.dtype is _dtypes.bfloat16 else values

    def __getitem__(self, idx: int) -> bool | int | float | complex:
        return self._values()[_element_index(self, idx)].item()

    def __setitem__(self, idx: int, value: bool | int | float | complex) -> None:
        if not isinstance(value, (bool, int, float, complex)):
            raise TypeError(f"can't assign a {type(value).__name__} to a "
                            f"jaxgrad.{_dtypes.legacy_type_name(self.dtype)}")
        flat = self._cell.array.reshape(-1)
        index = _element_index(self, idx)
        new = flat.at[jnp.asarray(index)].set(jnp.asarray(value).astype(flat.dtype))
        self._cell.write(new.reshape(self._cell.array.shape))

    def tolist(self) -> list:
        return self._values().tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self) -> str:
        info = (f"[jaxgrad.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size "
                f"{len(self)}]")
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info


def _device_of(array: jax.Array) -> device:
    return of_jax(next(iter(array.devices())))


def _element_index(storage: TypedStorage | UntypedStorage, idx: object) -> int:
    """``idx`` as a non-negative index of ``storage``, with torch's errors."""
    if not isinstance(idx, int) or isinstance(idx, bool):
        if isinstance(idx, slice) and isinstance(storage, TypedStorage):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        raise RuntimeError(f"can't index a {_qualified(storage)} with {type(idx)}")
    size = len(storage)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} out of range for storage of size {size}")
    return idx % size if size else idx


def _qualified(storage: object) -> str:
    return f"<class 'jaxgrad.storage.{type(storage).__name__}'>"  # (torch's path, renamed)


def _host_array(array: jax.Array) -> np.ndarray:
    """A storage's elements on the host (refused, at once, for an array spanning processes
    that this process does not hold)."""
    if not held_here(array):
        raise spans_processes_error("Reading its storage")
    return np.asarray(array)
