"""``jaxgrad.save`` and ``jaxgrad.load``: checkpoints in torch's on-disk format, without torch.

A checkpoint is what ``torch.save`` writes: a zip archive ``<name>/data.pkl`` (a pickle,
protocol 2, in which every tensor is ``torch._utils._rebuild_tensor_v2(storage, offset, size,
stride, requires_grad, hooks)`` and every storage a persistent id ``('storage',
torch.FloatStorage, key, location, numel)``), ``<name>/data/<key>`` (each storage's raw
little-endian bytes, 64-byte aligned), ``<name>/byteorder``, ``<name>/version``... Or, before
torch 1.6, the *legacy* stream: magic number, protocol, system info, the pickle, the storage
keys and the storages one after another.

Writing, a pickler names torch's globals (``torch._utils._rebuild_tensor_v2``, ``torch.Size``,
``torch.float32``...) for jaxgrad's tensors, Parameters, sizes, devices and dtypes, so that
``torch.load`` rebuilds torch objects. Reading, the same names map back to jaxgrad's
equivalents; storages become shared ``Storage`` cells, so tensors that shared a storage (a base
and its views) share one after loading, with their offsets and strides, as in torch.

``weights_only=True`` (the default, as in torch 2.6+) reads the pickle with an allow-list
unpickler that behaves as ``torch._weights_only_unpickler``: only containers, numbers, strings,
tensors, Parameters, dtypes, devices, sizes and the globals registered with
:func:`add_safe_globals` can be built; anything else raises torch's ``UnpicklingError``.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import math
import os
import pickle
import re
import secrets
import struct
import sys
import tarfile
import warnings
import zipfile
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from typing import IO, Any, Union

import jax
import numpy as np

from . import _dtypes
from ._device import device as Device
from ._storage import Layout, Storage, contiguous_strides
from ._tensor import Size, Tensor, as_subclass
from .nn.parameter import Parameter

FileLike = Union[str, os.PathLike, IO[bytes]]
MapLocation = Union[Callable[[Any, str], Any], Device, str, dict, None]

DEFAULT_PROTOCOL = 2
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
STORAGE_ALIGNMENT = 64

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`jaxgrad.load` from `False` to `True`. Re-running `jaxgrad.load` with `weights_only` set to "
    "`False` will likely succeed, but it can result in arbitrary code execution. Do it only if "
    "you got the file from a trusted source.")
DOCS_MESSAGE = (
    "\n\nCheck the documentation of jaxgrad.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
MINIZ_ADVICE = (
    ". This is an internal miniz error. If you are seeing this error, there is a high likelihood "
    "that your checkpoint file is corrupted. This can happen if the checkpoint was not saved "
    "properly, was transferred incorrectly, or the file was modified after saving.")


# --- torch's names -----------------------------------------------------------------------------

class TorchName:
    """A global that a checkpoint names by torch's path (``torch._utils._rebuild_tensor_v2``):
    what jaxgrad's pickler writes where torch's would write the torch object.

    >>> from jaxgrad._serialization import TorchName
    >>> TorchName("torch", "Size")
    TorchName('torch.Size')
    """

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __repr__(self) -> str:
        return f"TorchName('{self.module}.{self.name}')"

    def __call__(self, *args: Any) -> Any:  # pickle wants a reduce tuple's function callable
        raise TypeError(f"{self!r} only names a torch object in a checkpoint")


STORAGE_NAMES = {
    _dtypes.float64: "DoubleStorage", _dtypes.float32: "FloatStorage",
    _dtypes.float16: "HalfStorage", _dtypes.bfloat16: "BFloat16Storage",
    _dtypes.int64: "LongStorage", _dtypes.int32: "IntStorage", _dtypes.int16: "ShortStorage",
    _dtypes.int8: "CharStorage", _dtypes.uint8: "ByteStorage", _dtypes.bool_: "BoolStorage",
    _dtypes.complex128: "ComplexDoubleStorage", _dtypes.complex64: "ComplexFloatStorage",
}
_REBUILD_TENSOR_V2 = TorchName("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = TorchName("torch._utils", "_rebuild_parameter")
_REBUILD_PARAMETER_WITH_STATE = TorchName("torch._utils", "_rebuild_parameter_with_state")
_REBUILD_FROM_TYPE_V2 = TorchName("torch._tensor", "_rebuild_from_type_v2")
_TORCH_TENSOR = TorchName("torch", "Tensor")
_TORCH_SIZE = TorchName("torch", "Size")
_TORCH_DEVICE = TorchName("torch", "device")
_STORAGE_TYPES = {d: TorchName("torch", name) for d, name in STORAGE_NAMES.items()}
_DTYPE_NAMES = {d: TorchName("torch", d.name) for d in _dtypes.ALL_DTYPES}


class StorageType:
    """A typed storage class named in a checkpoint (``torch.FloatStorage`` -> float32).

    >>> from jaxgrad._serialization import StorageType
    >>> StorageType("HalfStorage").dtype
    jaxgrad.float16
    """

    _BY_NAME = {name: d for d, name in STORAGE_NAMES.items()}

    def __init__(self, name: str) -> None:
        self.dtype = self._BY_NAME[name]

    def __repr__(self) -> str:
        return f"StorageType(dtype={self.dtype})"


class UntypedStorage:
    """``torch.storage.UntypedStorage`` in a checkpoint: bytes, typed by the tensor's dtype."""

    dtype = _dtypes.uint8


class TypedStorage:
    """``torch.storage.TypedStorage`` in a checkpoint (only as a name: storages are loaded
    through persistent ids)."""


# --- loaded storages ---------------------------------------------------------------------------

class LoadedStorage:
    """One storage read from a checkpoint: its elements on the host and the device its tensors
    go to. The first tensor rebuilt over it creates the ``Storage`` cell that the others share.

    ``map_location`` callables receive and may return one (``storage.cpu()``,
    ``storage.cuda(1)``, ``storage.to('cpu')``), as torch's receive a storage.

    >>> import numpy as np
    >>> import jaxgrad
    >>> from jaxgrad._serialization import LoadedStorage
    >>> s = LoadedStorage(np.arange(6, dtype=np.float32), jaxgrad.float32)
    >>> s.tensor(1, (2,), (3,))  # a column of a 2x3 base
    tensor([1., 4.])
    >>> s.size(), s.nbytes(), s.device
    (6, 24, device(type='cpu'))
    """

    def __init__(self, array: np.ndarray, dtype: _dtypes.dtype,
                 device: Device | None = None) -> None:
        self.array = array
        self.dtype = dtype
        self.device = device if device is not None else Device("cpu")
        self._cell: Storage | None = None
        self._typed: dict[_dtypes.dtype, LoadedStorage] = {}

    def size(self) -> int:
        """The number of elements."""
        return int(self.array.size)

    def nbytes(self) -> int:
        """The number of bytes."""
        return int(self.array.nbytes)

    def to(self, device: Device | str) -> LoadedStorage:
        """This storage with its tensors going to ``device``."""
        return LoadedStorage(self.array, self.dtype, Device(device))

    def cpu(self) -> LoadedStorage:
        """This storage with its tensors going to the CPU."""
        return self.to("cpu")

    def cuda(self, device: int | str | Device | None = None) -> LoadedStorage:
        """This storage with its tensors going to a GPU (``device``: an index or a device)."""
        if device is None:
            return self.to("cuda")
        return self.to(Device("cuda", device) if isinstance(device, int) else Device(device))

    def typed(self, dtype: _dtypes.dtype) -> LoadedStorage:
        """The same bytes as elements of ``dtype`` (``_rebuild_tensor_v3``'s untyped storage)."""
        if dtype is self.dtype:
            return self
        if dtype not in self._typed:
            self._typed[dtype] = LoadedStorage(self.array.view(dtype.np), dtype, self.device)
        return self._typed[dtype]

    def fill(self, array: np.ndarray) -> None:
        """Replace the elements (the legacy format stores them after the pickle)."""
        self.array = array
        if self._cell is not None:
            self._cell.write(jax.device_put(array.reshape(self._cell.array.shape),
                                            self.device.jax))

    def tensor(self, offset: int, size: Iterable[int], stride: Iterable[int]) -> Tensor:
        """A tensor over this storage (as torch's ``set_(storage, offset, size, stride)``): the
        cell is shared with every other tensor rebuilt over it; a tensor covering the whole
        storage contiguously holds it directly, any other one through a ``Layout``."""
        size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
        numel = self.size()
        if any(s < 0 for s in size) or len(size) != len(stride):
            raise RuntimeError(f"invalid tensor geometry: size {list(size)}, stride {list(stride)}")
        if math.prod(size) and offset + sum((n - 1) * s for n, s in zip(size, stride)) >= numel:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{offset}, and itemsize {self.dtype.itemsize} requiring a storage size of "
                f"{(offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1) * self.dtype.itemsize}"
                f" are out of bounds for storage of size {numel * self.dtype.itemsize}")
        covers = offset == 0 and math.prod(size) == numel and stride == contiguous_strides(size)
        if self._cell is None:
            host = self.array.reshape(size) if covers else self.array
            self._cell = Storage(jax.device_put(host, self.device.jax))
        layout = None
        if not (covers and tuple(self._cell.array.shape) == size):
            layout = Layout(size, stride, offset)
        t = Tensor._make(None, cell=self._cell)
        t._layout = layout
        t._vc.value = 1  # torch rebuilds with set_(), an in-place op
        return t


# --- rebuild functions (what torch's names map to) ----------------------------------------------

def _rebuild_tensor(storage: LoadedStorage, storage_offset: int, size: Iterable[int],
                    stride: Iterable[int]) -> Tensor:
    return storage.tensor(storage_offset, size, stride)


def _apply_metadata(t: Tensor, metadata: dict | None) -> Tensor:
    """torch's conj/neg bits: the tensor means the conjugate/negation of what is stored."""
    if metadata and (metadata.get("conj") or metadata.get("neg")):
        value = t._value
        value = value.conj() if metadata.get("conj") else value
        value = -value if metadata.get("neg") else value
        t = Tensor._make(value)
        t._vc.value = 1
    return t


def _rebuild_tensor_v2(storage: LoadedStorage, storage_offset: int, size: Iterable[int],
                       stride: Iterable[int], requires_grad: bool, backward_hooks: Any,
                       metadata: dict | None = None) -> Tensor:
    t = _apply_metadata(storage.tensor(storage_offset, size, stride), metadata)
    t.requires_grad = requires_grad
    return t


def _rebuild_tensor_v3(storage: LoadedStorage, storage_offset: int, size: Iterable[int],
                       stride: Iterable[int], requires_grad: bool, backward_hooks: Any,
                       dtype: _dtypes.dtype, metadata: dict | None = None) -> Tensor:
    return _rebuild_tensor_v2(storage.typed(dtype), storage_offset, size, stride, requires_grad,
                              backward_hooks, metadata)


def _set_state(obj: Any, state: Any) -> Any:
    """Restore Python attributes as pickle's BUILD does (``__setstate__``, or dict and slots)."""
    setstate = getattr(type(obj), "__setstate__", None)
    if setstate is not None and not isinstance(obj, Tensor):
        setstate(obj, state)
        return obj
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        obj.__dict__.update(state)
    for name, value in (slots or {}).items():
        setattr(obj, name, value)
    return obj


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any) -> Parameter:
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data: Tensor, requires_grad: bool, backward_hooks: Any,
                                  state: Any) -> Parameter:
    return _set_state(Parameter(data, requires_grad), state)


def _rebuild_from_type_v2(func: Callable, new_type: type, args: tuple, state: Any) -> Any:
    """A tensor subclass or a tensor with Python attributes: rebuild, retype, restore."""
    result = func(*args)
    if type(result) is not new_type and isinstance(new_type, type) and issubclass(new_type,
                                                                                 Tensor):
        result = as_subclass(result, new_type)
    return _set_state(result, state)


def _on_device(t: Tensor, dtype: _dtypes.dtype, device: str, requires_grad: bool) -> Tensor:
    out = Tensor._make(jax.device_put(t._value.astype(dtype.np), Device(device).jax))
    out.requires_grad = requires_grad
    return out


def _rebuild_device_tensor_from_cpu_tensor(data: Tensor, dtype: _dtypes.dtype, device: str,
                                           requires_grad: bool) -> Tensor:
    return _on_device(data, dtype, device, requires_grad)


def _rebuild_device_tensor_from_numpy(data: np.ndarray, dtype: _dtypes.dtype, device: str,
                                      requires_grad: bool) -> Tensor:
    return _on_device(Tensor._make(np.asarray(data)), dtype, device, requires_grad)


def _not_in_jaxgrad(path: str) -> Callable:
    def rebuild(*args: Any) -> Any:
        raise RuntimeError(f"jaxgrad.load: the checkpoint holds an object built by {path}; "
                           "jaxgrad has no quantized, sparse, nested, meta or wrapper-subclass "
                           "tensors")
    rebuild.__qualname__ = rebuild.__name__ = path.rpartition(".")[2]
    return rebuild


# Torch's globals that its weights-only unpickler allows, as jaxgrad objects.
_TORCH_GLOBALS: dict[str, Any] = {
    "collections.OrderedDict": OrderedDict,
    "collections.Counter": Counter,
    "torch.nn.parameter.Parameter": Parameter,
    "torch.Size": Size,
    "torch.Tensor": Tensor,
    "torch.device": Device,
    "_codecs.encode": codecs.encode,
    "builtins.bytearray": bytearray,
    "builtins.set": set,
    "builtins.complex": complex,
    "torch._utils._rebuild_tensor": _rebuild_tensor,
    "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
    "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
    "torch._utils._rebuild_device_tensor_from_cpu_tensor": _rebuild_device_tensor_from_cpu_tensor,
    "torch._utils._rebuild_device_tensor_from_numpy": _rebuild_device_tensor_from_numpy,
    "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    "torch.storage.UntypedStorage": UntypedStorage,
    "torch.storage.TypedStorage": TypedStorage,
    **{f"torch.{d.name}": d for d in _dtypes.ALL_DTYPES},
    **{f"{prefix}.{name}": StorageType(name) for name in STORAGE_NAMES.values()
       for prefix in ("torch", "torch.cuda")},
    **{f"torch._utils.{name}": _not_in_jaxgrad(f"torch._utils.{name}") for name in (
        "_rebuild_qtensor", "_rebuild_sparse_tensor", "_rebuild_meta_tensor_no_storage",
        "_rebuild_nested_tensor", "_rebuild_wrapper_subclass")},
}
# Allowed by torch, but naming a dtype, layout or tensor type jaxgrad does not have.
_TORCH_ONLY = re.compile(
    r"torch\.(u?int[1-7]|uint(16|32|64)|float8_\w+|float4_\w+|complex32|bits\w+|q(u?int\w+)"
    r"|per_\w+|(cuda\.|sparse\.)?\w*Tensor|Q\w*Storage|serialization\._get_layout)")

_user_globals: set = set()


# --- safe globals --------------------------------------------------------------------------------

def add_safe_globals(safe_globals: list) -> None:
    """Allow ``jaxgrad.load(..., weights_only=True)`` to build these classes and call these
    functions; an entry may be ``(obj, "module.name")`` to allow ``obj`` under that name.

    >>> import io, jaxgrad
    >>> class Box:
    ...     pass
    >>> buf = io.BytesIO(); jaxgrad.save(Box(), buf)
    >>> jaxgrad.serialization.add_safe_globals([Box])
    >>> type(jaxgrad.load(io.BytesIO(buf.getvalue()))).__name__
    'Box'
    >>> jaxgrad.serialization.clear_safe_globals()
    """
    _user_globals.update(safe_globals)


def get_safe_globals() -> list:
    """The globals added with :func:`add_safe_globals`.

    >>> import jaxgrad
    >>> with jaxgrad.serialization.safe_globals([print]):
    ...     jaxgrad.serialization.get_safe_globals()
    [<built-in function print>]
    """
    return list(_user_globals)


def clear_safe_globals() -> None:
    """Forget every global added with :func:`add_safe_globals`.

    >>> import jaxgrad
    >>> jaxgrad.serialization.add_safe_globals([print])
    >>> jaxgrad.serialization.clear_safe_globals(); jaxgrad.serialization.get_safe_globals()
    []
    """
    _user_globals.clear()


class safe_globals:
    """Within this context, :func:`add_safe_globals` of these globals.

    >>> import jaxgrad
    >>> with jaxgrad.serialization.safe_globals([print]):
    ...     print in jaxgrad.serialization.get_safe_globals()
    True
    >>> jaxgrad.serialization.get_safe_globals()
    []
    """

    def __init__(self, safe_globals: list) -> None:
        self.safe_globals = list(safe_globals)

    def __enter__(self) -> None:
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc: Any) -> None:
        _user_globals.difference_update(self.safe_globals)


def _user_allowed() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for entry in _user_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full path), "
                                 f"but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full path, "
                                f"but got: {type(entry[1])}")
            found[entry[1]] = entry[0]
        else:
            found[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return found


# --- the weights-only unpickler --------------------------------------------------------------------

_BLOCKED_MODULES = ("sys", "os", "posix", "nt")
_OLD_NAMES = {("__builtin__", "xrange"): ("builtins", "range"),
              ("__builtin__", "reduce"): ("functools", "reduce"),
              ("__builtin__", "intern"): ("sys", "intern"),
              ("__builtin__", "unichr"): ("builtins", "chr"),
              ("__builtin__", "unicode"): ("builtins", "str"),
              ("__builtin__", "long"): ("builtins", "int"),
              ("itertools", "izip"): ("builtins", "zip"),
              ("itertools", "imap"): ("builtins", "map"),
              ("itertools", "ifilter"): ("builtins", "filter"),
              ("itertools", "ifilterfalse"): ("itertools", "filterfalse"),
              ("itertools", "izip_longest"): ("itertools", "zip_longest"),
              ("UserDict", "IterableUserDict"): ("collections", "UserDict"),
              ("UserList", "UserList"): ("collections", "UserList"),
              ("UserString", "UserString"): ("collections", "UserString"),
              ("__builtin__", "basestring"): ("builtins", "str"),
              ("exceptions", "StandardError"): ("builtins", "Exception"),
              ("UserDict", "UserDict"): ("collections", "UserDict")}
_OLD_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg", "Queue": "queue",
                "repr": "reprlib", "_abcoll": "collections.abc", "UserDict": "collections",
                "UserList": "collections", "UserString": "collections", "whichdb": "dbm",
                "StringIO": "io", "cStringIO": "io"}
_NEEDS_IMPORT = {
    "torch.nested._internal.nested_tensor.NestedTensor": "``torch.nested`` and ``torch._dynamo``"
    " must be imported to load nested jagged tensors (NJTs)",
    "torch.nested._internal.nested_tensor._rebuild_njt": "``torch.nested`` and ``torch._dynamo``"
    " must be imported to load nested jagged tensors (NJTs)",
    "torch._dynamo.decorators._DimRange": "``torch.nested`` and ``torch._dynamo`` must be "
    "imported to load nested jagged tensors (NJTs)",
    **{f"torch.distributed.{name}": "``torch.distributed.tensor`` must be imported to load "
       "DTensors" for name in (
           "device_mesh.DeviceMesh", "tensor._dtensor_spec.DTensorSpec",
           "tensor._dtensor_spec.TensorMeta", "tensor.DTensor",
           "tensor.placement_types.Partial", "tensor.placement_types.Replicate",
           "tensor.placement_types.Shard")},
}


def _global_name(module: str, name: str) -> tuple[str, str]:
    """Python 2 names in a protocol-2 pickle, renamed as Python 3 (and torch) read them."""
    if (module, name) in _OLD_NAMES:
        return _OLD_NAMES[(module, name)]
    return _OLD_MODULES.get(module, module), name


def _torch_global(path: str) -> Any:
    """The jaxgrad object for one of torch's allowed globals (``KeyError`` if not one)."""
    if path in _TORCH_GLOBALS:
        return _TORCH_GLOBALS[path]
    if _TORCH_ONLY.fullmatch(path):
        raise RuntimeError(f"jaxgrad.load: the checkpoint names {path}, which jaxgrad does not "
                           "have (jaxgrad has the dtypes bool, uint8, int8-64, float16, bfloat16, "
                           "float32, float64, complex64 and complex128, and strided tensors)")
    raise KeyError(path)


class WeightsOnlyUnpickler:
    """An unpickler that builds only what a state dict holds: torch's weights-only rules.

    Containers, numbers, strings and bytes are built from their opcodes; ``GLOBAL`` resolves
    only torch's allowed names (to jaxgrad's objects) and :func:`add_safe_globals`' entries;
    ``REDUCE``/``NEWOBJ``/``BUILD`` apply only to those. Anything else is an ``UnpicklingError``.

    >>> import io, pickle
    >>> from jaxgrad._serialization import WeightsOnlyUnpickler
    >>> WeightsOnlyUnpickler(io.BytesIO(pickle.dumps({"a": [1, 2.5]}, protocol=2))).load()
    {'a': [1, 2.5]}
    """

    def __init__(self, file: IO[bytes], *, encoding: str = "bytes") -> None:
        self.encoding = encoding
        self.read = file.read
        self.readline = file.readline
        self.memo: dict[int, Any] = {}
        self.proto = -1
        self.stack: list = []
        self.metastack: list = []

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("unsupported persistent id encountered")

    def load(self) -> Any:
        self.stack, self.metastack = [], []
        ops = self._OPS
        while True:
            key = self.read(1)
            if not key:
                raise EOFError
            op = ops.get(key[0])
            if op is None:
                raise pickle.UnpicklingError(f"Unsupported operand {key[0]}")
            if op is WeightsOnlyUnpickler._stop:
                return self.stack.pop()
            op(self)

    # -- opcodes: structure ---------------------------------------------------------------------
    def _pop_mark(self) -> list:
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _mark(self) -> None:
        self.metastack.append(self.stack)
        self.stack = []

    def _stop(self) -> None:  # handled in load()
        pass

    def _proto(self) -> None:
        self.proto = self.read(1)[0]
        if self.proto != 2:
            warnings.warn(
                f"Detected pickle protocol {self.proto} in the checkpoint, which was not the "
                "default pickle protocol used by `jaxgrad.load` (2). The weights_only Unpickler "
                "might not support all instructions implemented by this protocol, please file "
                "an issue for adding support if you encounter this.", stacklevel=4)

    def _tuple(self) -> None:
        items = tuple(self._pop_mark())  # before reading self.stack: popping the mark swaps it
        self.stack.append(items)

    def _tuple_n(n: int) -> Callable:  # noqa: N805 - builds the TUPLE1/2/3 handlers
        def build(self: WeightsOnlyUnpickler) -> None:
            items = tuple(self.stack[-n:]) if len(self.stack) >= n else self.stack[-n]
            self.stack[-n:] = [items]
        return build

    def _append(self) -> None:
        item = self.stack.pop()
        target = self.stack[-1]
        if type(target) is not list:
            raise pickle.UnpicklingError(f"Can only append to lists, but got {type(target)}")
        target.append(item)

    def _appends(self) -> None:
        items = self._pop_mark()
        target = self.stack[-1]
        if type(target) is not list:
            raise pickle.UnpicklingError(f"Can only extend lists, but got {type(target)}")
        target.extend(items)

    def _dict_target(self, opcode: str) -> dict:
        target = self.stack[-1]
        if type(target) not in (dict, OrderedDict, Counter):
            raise pickle.UnpicklingError(
                f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, but "
                f"got {type(target)}")
        return target

    def _setitem(self) -> None:
        value, key = self.stack.pop(), self.stack.pop()
        self._dict_target("SETITEM")[key] = value

    def _setitems(self) -> None:
        items = self._pop_mark()
        target = self._dict_target("SETITEMS")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _get(self, wide: bool) -> None:
        index = struct.unpack("<I", self.read(4))[0] if wide else self.read(1)[0]
        self.stack.append(self.memo[index])

    def _put(self, wide: bool) -> None:
        index = struct.unpack("<I", self.read(4))[0] if wide else self.read(1)[0]
        self.memo[index] = self.stack[-1]

    # -- opcodes: values ------------------------------------------------------------------------
    def _push(value: Any) -> Callable:  # noqa: N805 - builds the constant handlers
        def push(self: WeightsOnlyUnpickler) -> None:
            self.stack.append(value() if callable(value) else value)
        return push

    def _binint(self) -> None:
        self.stack.append(struct.unpack("<i", self.read(4))[0])

    def _binint1(self) -> None:
        self.stack.append(self.read(1)[0])

    def _binint2(self) -> None:
        self.stack.append(struct.unpack("<H", self.read(2))[0])

    def _long1(self) -> None:
        n = self.read(1)[0]
        self.stack.append(pickle.decode_long(self.read(n)))

    def _binfloat(self) -> None:
        self.stack.append(struct.unpack(">d", self.read(8))[0])

    def _binunicode(self) -> None:
        n = struct.unpack("<I", self.read(4))[0]
        if n > sys.maxsize:
            raise pickle.UnpicklingError("String is too long")
        self.stack.append(str(self.read(n), "utf-8", "surrogatepass"))

    def _short_binstring(self) -> None:
        data = self.read(self.read(1)[0])
        self.stack.append(data if self.encoding == "bytes" else data.decode(self.encoding,
                                                                             "strict"))

    def _binpersid(self) -> None:
        pid = self.stack.pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise pickle.UnpicklingError(
                f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and pid and _ascii(pid[0]) != "storage":
            raise pickle.UnpicklingError(
                f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
        self.stack.append(self.persistent_load(pid))

    # -- opcodes: the risky ones ----------------------------------------------------------------
    def _global(self) -> None:
        module = self.readline()[:-1].decode("utf-8")
        name = self.readline()[:-1].decode("utf-8")
        module, name = _global_name(module, name)
        path = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(
                f"Trying to load unsupported GLOBAL {path} whose module {module} is blocked.")
        with contextlib.suppress(KeyError):
            self.stack.append(_torch_global(path))
            return
        user = _user_allowed()
        if path in user:
            self.stack.append(user[path])
            return
        if path in _NEEDS_IMPORT:
            raise pickle.UnpicklingError(_NEEDS_IMPORT[path])
        shown = path[len("builtins."):] if path.startswith("builtins.") else path
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
            f"`jaxgrad.serialization.add_safe_globals([{shown}])` or the "
            f"`jaxgrad.serialization.safe_globals([{shown}])` context manager to allowlist this "
            "global if you trust this class/function.")

    @staticmethod
    def _allowed(obj: Any) -> bool:
        return (any(obj is v or obj == v for v in _TORCH_GLOBALS.values())
                or any(obj is v for v in _user_allowed().values()))

    def _newobj(self) -> None:
        args = self.stack.pop()
        cls = self.stack.pop()
        if cls is Parameter:
            self.stack.append(Parameter(*args))
        elif self._allowed(cls):
            self.stack.append(cls.__new__(cls, *args))
        else:
            raise pickle.UnpicklingError(
                "Can only create new object for nn.Parameter or classes allowlisted via "
                f"`add_safe_globals` but got {cls}")

    def _reduce(self) -> None:
        args = self.stack.pop()
        func = self.stack[-1]
        if not self._allowed(func):
            message = f"Trying to call reduce for unrecognized function {func}"
            if hasattr(func, "__self__"):
                message += f" which belongs to {func.__self__}"
            raise pickle.UnpicklingError(message)
        self.stack[-1] = func(*args)

    def _build(self) -> None:
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is Tensor:  # legacy: a Tensor built from (storage, offset, size, stride)
            _set_from(inst, *state)
        elif type(inst) is Parameter or type(inst) is OrderedDict:
            _set_state(inst, state)
        elif self._allowed(type(inst)):
            _set_state(inst, state)
        else:
            raise pickle.UnpicklingError(
                "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                f"`add_safe_globals`, but got {type(inst)}")

    _OPS: dict[int, Callable] = {}


_W = WeightsOnlyUnpickler
_W._OPS = {
    pickle.GLOBAL[0]: _W._global, pickle.NEWOBJ[0]: _W._newobj, pickle.REDUCE[0]: _W._reduce,
    pickle.BUILD[0]: _W._build, pickle.APPEND[0]: _W._append, pickle.APPENDS[0]: _W._appends,
    pickle.SETITEM[0]: _W._setitem, pickle.SETITEMS[0]: _W._setitems, pickle.MARK[0]: _W._mark,
    pickle.TUPLE[0]: _W._tuple, pickle.TUPLE1[0]: _W._tuple_n(1), pickle.TUPLE2[0]: _W._tuple_n(2),
    pickle.TUPLE3[0]: _W._tuple_n(3), pickle.NONE[0]: _W._push(None),
    pickle.NEWFALSE[0]: _W._push(False), pickle.NEWTRUE[0]: _W._push(True),
    pickle.EMPTY_TUPLE[0]: _W._push(()), pickle.EMPTY_LIST[0]: _W._push(list),
    pickle.EMPTY_DICT[0]: _W._push(dict), pickle.EMPTY_SET[0]: _W._push(set),
    pickle.BININT[0]: _W._binint, pickle.BININT1[0]: _W._binint1, pickle.BININT2[0]: _W._binint2,
    pickle.BINFLOAT[0]: _W._binfloat, pickle.BINUNICODE[0]: _W._binunicode,
    pickle.SHORT_BINSTRING[0]: _W._short_binstring, pickle.BINPERSID[0]: _W._binpersid,
    pickle.BINGET[0]: lambda self: self._get(False), pickle.LONG_BINGET[0]: lambda self: self._get(True),
    pickle.BINPUT[0]: lambda self: self._put(False), pickle.LONG_BINPUT[0]: lambda self: self._put(True),
    pickle.LONG1[0]: _W._long1, pickle.PROTO[0]: _W._proto, pickle.STOP[0]: _W._stop,
}
del _W


def _set_from(inst: Tensor, storage: LoadedStorage, offset: int, size: Iterable[int],
              stride: Iterable[int]) -> None:
    """Point ``inst`` at ``storage`` (a legacy pickle's ``Tensor.set_(...)`` via BUILD)."""
    src = storage.tensor(offset, size, stride)
    inst._cell, inst._layout, inst._arr, inst._arr_gen = src._cell, src._layout, None, 0
    inst._vc.value += 1


def _ascii(value: Any) -> Any:
    return value.decode("ascii") if isinstance(value, bytes) else value


def _find_class(module: str, name: str, fallback: Callable[[str, str], Any]) -> Any:
    """``find_class`` of the full unpickler: torch's names as jaxgrad objects, other ``torch.*``
    names as the ``jaxgrad.*`` object of the same path (``torch.nn.modules.linear.Linear``)."""
    if type(name) is str and "Storage" in name and name in StorageType._BY_NAME:
        return StorageType(name)
    module = {"torch.tensor": "torch._tensor"}.get(module, module)
    with contextlib.suppress(KeyError):
        return _torch_global(f"{module}.{name}")
    if module == "torch" or module.startswith("torch."):
        return fallback("jaxgrad" + module[len("torch"):], name)
    return fallback(module, name)


# --- where storages go (map_location) ------------------------------------------------------------

def _restore(storage: LoadedStorage, location: str) -> LoadedStorage:
    """torch's default_restore_location: put a storage on the device its tag names."""
    if location.startswith(("cpu", "cuda", "tpu")):
        target = Device(location)
        if target.type == "cuda":
            try:
                gpus = jax.devices("gpu")
            except RuntimeError:
                gpus = []
            if not gpus:
                raise RuntimeError(
                    "Attempting to deserialize object on a CUDA device but "
                    "jaxgrad.cuda.is_available() is False. If you are running on a CPU-only "
                    "machine, please use jaxgrad.load with map_location=jaxgrad.device('cpu') to "
                    "map your storages to the CPU.")
            if (target.index or 0) >= len(gpus):
                raise RuntimeError(
                    f"Attempting to deserialize object on CUDA device {target.index or 0} but "
                    f"jaxgrad.cuda.device_count() is {len(gpus)}. Please use jaxgrad.load with "
                    "map_location to map your storages to an existing device.")
        return storage.to(target)
    raise RuntimeError(f"don't know how to restore data location of jaxgrad.storage.UntypedStorage"
                       f" (tagged with {location})")


def _restore_location(map_location: MapLocation) -> Callable[[LoadedStorage, str], Any]:
    if map_location is None:
        return _restore
    if isinstance(map_location, dict):
        return lambda storage, location: _restore(storage, map_location.get(location, location))
    if isinstance(map_location, (str, bytes)):
        where = _ascii(map_location)
        return lambda storage, location: _restore(storage, where)
    if isinstance(map_location, Device):
        return lambda storage, location: _restore(storage, str(map_location))

    def call(storage: LoadedStorage, location: str) -> LoadedStorage:
        result = map_location(storage, location)
        return _restore(storage, location) if result is None else result
    return call


# --- saving --------------------------------------------------------------------------------------

def _pickler_class(pickle_module: Any) -> type:
    """A pickler writing torch's names for jaxgrad's tensors, Parameters, sizes, devices and
    dtypes. It derives from the pure-Python pickler, whose ``save_global`` can be overridden."""
    base = pickle_module.Pickler
    if base is getattr(pickle, "Pickler", None) or not hasattr(base, "save_global"):
        base = pickle._Pickler

    class CheckpointPickler(base):
        def __init__(self, file: IO[bytes], protocol: int, storages: _SavedStorages) -> None:
            super().__init__(file, protocol=protocol)
            self._storages = storages

        def persistent_id(self, obj: Any) -> Any:
            if isinstance(obj, _StorageRef):
                return self._storages.pid(obj)
            return None

        def reducer_override(self, obj: Any) -> Any:
            if isinstance(obj, (TorchName, _dtypes.dtype)):
                return "global"  # written by save_global below
            return _reduce(obj)

        def save_global(self, obj: Any, name: str | None = None) -> None:
            target = _DTYPE_NAMES.get(obj) if isinstance(obj, _dtypes.dtype) else obj
            if not isinstance(target, TorchName):
                return super().save_global(obj, name)
            if self.proto >= 4:
                self.save(target.module)
                self.save(target.name)
                self.write(pickle.STACK_GLOBAL)
            else:
                self.write(pickle.GLOBAL + f"{target.module}\n{target.name}\n".encode("utf-8"))
            self.memoize(obj)

    return CheckpointPickler


class _StorageRef:
    """A tensor's storage cell, as a pickled object that becomes a persistent id."""

    __slots__ = ("cell", "device")

    def __init__(self, cell: Storage, device: Device) -> None:
        self.cell, self.device = cell, device


class _SavedStorages:
    """The storages a pickle refers to, keyed ``"0"``, ``"1"``... in order of first use."""

    def __init__(self, legacy: bool = False) -> None:
        self.keys: dict[int, str] = {}
        self.cells: dict[str, Storage] = {}
        self.legacy = legacy

    def pid(self, ref: _StorageRef) -> tuple:
        cell = ref.cell
        key = self.keys.get(id(cell))
        if key is None:
            key = str(id(cell)) if self.legacy else str(len(self.keys))
            self.keys[id(cell)] = key
            self.cells[key] = cell
        dtype = _dtypes.from_numpy_dtype(cell.array.dtype)
        pid = ("storage", _STORAGE_TYPES[dtype], key, str(ref.device), int(cell.array.size))
        return (*pid, None) if self.legacy else pid


def _hooks_warning(t: Tensor) -> None:
    hooks = t._backward_hooks
    for hook in (hooks or {}).values():
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this is "
                          "expected, you can decorate the function with "
                          "@jaxgrad.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)


def _reduce(obj: Any) -> Any:
    """The reduce tuple torch's pickler would write for a jaxgrad object, or NotImplemented."""
    if isinstance(obj, Parameter):
        state = dict(obj.__dict__)
        data = obj.detach()
        if not state:
            return (_REBUILD_PARAMETER, (data, obj.requires_grad, OrderedDict()))
        return (_REBUILD_PARAMETER_WITH_STATE, (data, obj.requires_grad, OrderedDict(), state))
    if isinstance(obj, Tensor):
        _hooks_warning(obj)
        layout = obj._geometry()
        args = (_StorageRef(obj._cell, obj.device), layout.offset, tuple(layout.shape),
                tuple(layout.strides), obj.requires_grad, OrderedDict())
        state = dict(obj.__dict__)
        if type(obj) is Tensor and not state:
            return (_REBUILD_TENSOR_V2, args)
        cls = _TORCH_TENSOR if type(obj) is Tensor else type(obj)
        return (_REBUILD_FROM_TYPE_V2, (_REBUILD_TENSOR_V2, cls, args, state))
    if isinstance(obj, Size):
        return (_TORCH_SIZE, (tuple(obj),))
    if isinstance(obj, Device):
        return (_TORCH_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index))
    return NotImplemented


def _storage_bytes(cell: Storage) -> np.ndarray:
    """A storage's elements as little-endian bytes."""
    host = np.asarray(cell.array).reshape(-1)
    if host.dtype.byteorder == ">":
        host = host.astype(host.dtype.newbyteorder("<"))
    return np.ascontiguousarray(host).view(np.uint8)


class _ZipWriter:
    """torch's zip layout: stored records under one directory, data 64-byte aligned."""

    def __init__(self, file: IO[bytes], archive: str) -> None:
        self.zip = zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True)
        self.start = self.zip.fp.tell()
        self.prefix = archive + "/"

    def write(self, name: str, data: bytes | np.ndarray) -> None:
        info = zipfile.ZipInfo(self.prefix + name, date_time=(1980, 0, 0, 0, 0, 0))
        size = len(data) if isinstance(data, bytes) else int(data.nbytes)
        header = self.zip.fp.tell() - self.start + 30 + len(info.filename.encode("utf-8"))
        if size >= zipfile.ZIP64_LIMIT:
            header += 20  # the zip64 extra field that zipfile adds
        pad = (-(header + 4)) % STORAGE_ALIGNMENT
        info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        with self.zip.open(info, "w", force_zip64=size >= zipfile.ZIP64_LIMIT) as out:
            out.write(data if isinstance(data, bytes) else memoryview(data))

    def close(self) -> None:
        self.write("version", b"3\n")
        self.write(".data/serialization_id", b"%020d%020d" % (secrets.randbits(64),
                                                              secrets.randbits(64)))
        self.zip.close()


def _archive_name(f: Any) -> str:
    if isinstance(f, str):
        return os.path.splitext(os.path.basename(f))[0] or "archive"
    return "archive"


def save(obj: object, f: FileLike, pickle_module: Any = pickle,
         pickle_protocol: int = DEFAULT_PROTOCOL, _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` to a file (a path or a binary file object) in torch's checkpoint format:
    ``torch.load`` reads it, and so does :func:`jaxgrad.load`.

    Tensors sharing storage (a tensor and its views, a Parameter and its ``detach()``) are saved
    once and share storage again after loading.

    >>> import io, jaxgrad
    >>> x = jaxgrad.arange(6.0).reshape(2, 3)
    >>> buf = io.BytesIO()
    >>> jaxgrad.save({"x": x, "col": x[:, 1]}, buf)
    >>> loaded = jaxgrad.load(io.BytesIO(buf.getvalue()))
    >>> loaded["col"], loaded["col"].stride(), loaded["col"].storage_offset()
    (tensor([1., 4.]), (3,), 1)
    """
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a "
                             "'write' attribute")
    if isinstance(f, os.PathLike):
        f = os.fspath(f)
    if _use_new_zipfile_serialization and not isinstance(f, str):
        if not callable(f.write):
            raise TypeError(f"Buffer of {str(type(f)).strip('<>')} has no callable attribute "
                            "'write'")
    opened = open(f, "wb") if isinstance(f, str) else None  # noqa: SIM115 - closed below
    try:
        out = opened if opened is not None else f
        if _use_new_zipfile_serialization:
            _save_zip(obj, out, _archive_name(f), pickle_module, pickle_protocol,
                      _disable_byteorder_record)
        else:
            _save_legacy(obj, out, pickle_module, pickle_protocol)
        out.flush()
    finally:
        if opened is not None:
            opened.close()


def _save_zip(obj: Any, out: IO[bytes], archive: str, pickle_module: Any, protocol: int,
              no_byteorder: bool) -> None:
    storages = _SavedStorages()
    data = io.BytesIO()
    _pickler_class(pickle_module)(data, protocol, storages).dump(obj)
    writer = _ZipWriter(out, archive)
    writer.write("data.pkl", data.getvalue())
    writer.write(".format_version", b"1")
    writer.write(".storage_alignment", str(STORAGE_ALIGNMENT).encode())
    if not no_byteorder:
        writer.write("byteorder", b"little")
    for key, cell in storages.cells.items():
        writer.write(f"data/{key}", _storage_bytes(cell))
    writer.close()


def _save_legacy(obj: Any, out: IO[bytes], pickle_module: Any, protocol: int) -> None:
    sys_info = {"protocol_version": PROTOCOL_VERSION, "little_endian": True,
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, sys_info):
        pickle_module.dump(header, out, protocol=protocol)
    storages = _SavedStorages(legacy=True)
    _pickler_class(pickle_module)(out, protocol, storages).dump(obj)
    keys = sorted(storages.cells)
    pickle_module.dump(keys, out, protocol=protocol)
    for key in keys:
        cell = storages.cells[key]
        out.write(struct.pack("<q", int(cell.array.size)))
        out.write(memoryview(_storage_bytes(cell)))


# --- loading -------------------------------------------------------------------------------------

class _ZipReader:
    """The records of a torch zip checkpoint, read as torch's reader reads them (records are
    located through the central directory; their bytes are read without a CRC check)."""

    def __init__(self, file: IO[bytes], path: str | None, mmap: bool) -> None:
        self.file = file
        try:
            self.zip = zipfile.ZipFile(file)
        except (zipfile.BadZipFile, ValueError, EOFError, struct.error):
            raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding "
                               "central directory" + MINIZ_ADVICE) from None
        names = self.zip.namelist()
        first = names[0] if names else ""
        if "/" not in first:
            raise RuntimeError(f"file in archive is not in a subdirectory: {first}")
        self.prefix = first.split("/", 1)[0] + "/"
        self.infos = {info.filename: info for info in self.zip.infolist()}
        self.mapped = np.memmap(path, dtype=np.uint8, mode="r") if mmap and path else None
        if not self.has("version"):
            raise RuntimeError('Expected hasRecord("version") to be true, but got false.  (Could '
                               "this error message be improved?  If so, please report an "
                               "enhancement request to PyTorch.)")

    def has(self, name: str) -> bool:
        return self.prefix + name in self.infos

    def _info(self, name: str) -> zipfile.ZipInfo:
        info = self.infos.get(self.prefix + name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not "
                               "found" + MINIZ_ADVICE)
        return info

    def read(self, name: str) -> bytes | np.ndarray:
        info = self._info(name)
        if info.compress_type != zipfile.ZIP_STORED:
            return self.zip.read(info)
        self.file.seek(info.header_offset + 26)
        name_len, extra_len = struct.unpack("<HH", self.file.read(4))
        start = info.header_offset + 30 + name_len + extra_len
        if self.mapped is not None:
            return self.mapped[start:start + info.file_size]
        self.file.seek(start)
        data = self.file.read(info.file_size)
        if len(data) != info.file_size:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: file read "
                               "failed" + MINIZ_ADVICE)
        return data


def _storage_array(raw: bytes | np.ndarray, dtype: _dtypes.dtype, numel: int,
                   byteorder: str) -> np.ndarray:
    np_dtype = dtype.np.newbyteorder("<" if byteorder == "little" else ">")
    raw = raw if isinstance(raw, np.ndarray) else np.frombuffer(raw, dtype=np.uint8)
    nbytes = numel * dtype.itemsize
    if raw.size < nbytes:
        raise RuntimeError(f"storage has wrong byte size: expected {nbytes} got {raw.size}")
    array = raw[:nbytes].view(np_dtype)
    return array.astype(dtype.np) if np_dtype != dtype.np else array


def _load_zip(reader: _ZipReader, map_location: MapLocation, unpickler: Callable,
              pickle_load_args: dict) -> Any:
    restore = _restore_location(map_location)
    byteorder = "little"
    if reader.has("byteorder"):
        byteorder = bytes(reader.read("byteorder")).decode()
        if byteorder not in ("little", "big"):
            raise ValueError("Unknown endianness type: " + byteorder)
    loaded: dict[str, LoadedStorage] = {}

    def persistent_load(saved_id: Any) -> LoadedStorage:
        if not isinstance(saved_id, tuple):
            raise AssertionError(f"saved_id must be a tuple, got {type(saved_id).__name__}")
        typename = _ascii(saved_id[0])
        if typename != "storage":
            raise AssertionError("Unknown typename for persistent_load, expected 'storage' but "
                                 f"got '{typename}'")
        storage_type, key, location, numel = saved_id[1:]
        if key not in loaded:
            dtype = storage_type.dtype
            array = _storage_array(reader.read(f"data/{key}"), dtype, numel, byteorder)
            loaded[key] = restore(LoadedStorage(array, dtype), _ascii(location))
        return loaded[key]

    data = io.BytesIO(bytes(reader.read("data.pkl")))
    u = unpickler(data, **pickle_load_args)
    u.persistent_load = persistent_load
    return u.load()


def _load_legacy(f: IO[bytes], map_location: MapLocation, pickle_module: Any, weights_only: bool,
                 pickle_load_args: dict) -> Any:
    """The pre-1.6 stream (``_use_new_zipfile_serialization=False``)."""
    restore = _restore_location(map_location)
    loader = _unpickler_class(pickle_module, weights_only)

    def read_one() -> Any:
        return loader(f, **pickle_load_args).load()

    if _is_real_file(f) and f.tell() == 0:
        try:
            with tarfile.open(fileobj=f, mode="r:", format=tarfile.PAX_FORMAT) as tar:
                tar.getmember("storages")
            if weights_only:
                raise RuntimeError("Cannot use ``weights_only=True`` with files saved in the "
                                   "legacy .tar format. " + UNSAFE_MESSAGE)
            raise RuntimeError("jaxgrad.load does not read the legacy .tar checkpoint format "
                               "(written by torch before 0.4); load and re-save it with torch")
        except (tarfile.TarError, KeyError):
            f.seek(0)
    if read_one() != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol_version = read_one()
    if protocol_version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {protocol_version}")
    sys_info = read_one()
    byteorder = "little" if not isinstance(sys_info, dict) or sys_info.get(
        "little_endian", True) else "big"
    storages: dict[str, LoadedStorage] = {}

    def persistent_load(saved_id: Any) -> Any:
        if not isinstance(saved_id, tuple):
            raise AssertionError(f"saved_id must be a tuple, got {type(saved_id).__name__}")
        typename = _ascii(saved_id[0])
        if typename == "module":
            return saved_id[1]
        if typename != "storage":
            raise RuntimeError(f"Unknown saved id type: {saved_id[0]}")
        storage_type, key, location, numel, view = saved_id[1:]
        if view is not None:
            raise RuntimeError("jaxgrad.load does not read legacy storage views")
        if key not in storages:  # the data follows the pickle: zeros until it is read
            dtype = storage_type.dtype
            storages[key] = restore(LoadedStorage(np.zeros(numel, dtype.np), dtype),
                                    _ascii(location))
        return storages[key]

    unpickler = loader(f, **pickle_load_args)
    unpickler.persistent_load = persistent_load
    result = unpickler.load()
    for key in read_one():
        storage = storages[key]
        (numel,) = struct.unpack("<q", f.read(8))
        storage.fill(_storage_array(f.read(numel * storage.dtype.itemsize), storage.dtype, numel,
                                    byteorder))
    return result


def _is_real_file(f: Any) -> bool:
    try:
        return f.fileno() >= 0
    except (io.UnsupportedOperation, AttributeError, ValueError):
        return False


def _unpickler_class(pickle_module: Any, weights_only: bool) -> Callable:
    if weights_only:
        return WeightsOnlyUnpickler

    class CheckpointUnpickler(pickle_module.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            return _find_class(module, name, super().find_class)

    return CheckpointUnpickler


def _weights_only_message(message: str) -> str:
    """torch's text around a weights-only unpickling error."""
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the "
                f"checkpoint\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
                "`weights_only=True` please check the recommended steps in the following error "
                "message.\n\tWeightsUnpickler error: " + message + DOCS_MESSAGE)
    if re.search(r"(\S+) must be (\S+) to load", message):
        return f"Weights only load failed. {message}\n {UNSAFE_MESSAGE}\n"
    text = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if not re.search(r"whose module (\S+) is blocked", message):
        text += ("Please file an issue with the following so that we can make `weights_only=True` "
                 "compatible with your use case: WeightsUnpickler error: ")
    return text + "\n\n" + message + DOCS_MESSAGE


def _check_seekable(f: Any) -> None:
    try:
        f.seek(f.tell())
    except (io.UnsupportedOperation, AttributeError) as e:
        if "seek" in str(e) or "tell" in str(e):
            raise type(e)(str(e) + ". You can only jaxgrad.load from a file that is seekable. "
                          "Please pre-load the data into a buffer like io.BytesIO and try to "
                          "load from it instead.") from None
        raise


def load(f: FileLike, map_location: MapLocation = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Load an object saved with ``torch.save`` or :func:`jaxgrad.save` (torch's zip format, or
    its legacy format), with jaxgrad tensors in place of torch's. torch need not be installed.

    ``weights_only`` (default True, as in torch) loads only tensors, Parameters, containers,
    numbers, strings, dtypes, devices, sizes and globals allowed with
    ``jaxgrad.serialization.add_safe_globals``; ``weights_only=False`` unpickles anything (only
    for trusted files), mapping ``torch.*`` classes to the ``jaxgrad.*`` ones of the same path.
    ``map_location`` moves storages: a device or its name, a dict from saved location tags to
    new ones, or ``fn(storage, location)`` returning a storage (``storage.cpu()``) or None.

    >>> import io, jaxgrad
    >>> net = jaxgrad.nn.Linear(2, 1)
    >>> buf = io.BytesIO(); jaxgrad.save(net.state_dict(), buf); _ = buf.seek(0)
    >>> state = jaxgrad.load(buf, map_location="cpu")
    >>> list(state), bool((state["weight"] == net.weight).all())
    (['weight', 'bias'], True)
    """
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                               "specified")
    elif pickle_module is None:
        pickle_module = pickle
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
    opened = open(path, "rb") if path is not None else None  # noqa: SIM115 - closed below
    try:
        file = opened if opened is not None else f
        if opened is None:
            _check_seekable(file)
        return _load_file(file, path, map_location, pickle_module, weights_only, bool(mmap),
                          pickle_load_args)
    finally:
        if opened is not None:
            opened.close()


def _load_file(file: IO[bytes], path: str | None, map_location: MapLocation, pickle_module: Any,
               weights_only: bool, mmap: bool, pickle_load_args: dict) -> Any:
    start = file.tell()
    is_zip = file.read(4) == b"PK\x03\x04"
    file.seek(start)
    if is_zip:
        reader = _ZipReader(file, path, False)
        if reader.has("constants.pkl"):
            warnings.warn("'jaxgrad.load' received a zip file that looks like a TorchScript "
                          "archive dispatching to 'jaxgrad.jit.load' (call 'jaxgrad.jit.load' "
                          "directly to silence this warning)", UserWarning, stacklevel=3)
            if weights_only:
                raise RuntimeError("Cannot use ``weights_only=True`` with TorchScript archives "
                                   "passed to ``jaxgrad.load``. " + UNSAFE_MESSAGE)
            raise RuntimeError("jaxgrad cannot load TorchScript archives (jaxgrad has no jit)")
        if mmap:
            if path is None:
                raise ValueError("f must be a file path in order to use the mmap argument")
            reader = _ZipReader(file, path, True)
        unpickler = _unpickler_class(pickle_module, weights_only)
        try:
            return _load_zip(reader, map_location, unpickler, pickle_load_args)
        except pickle.UnpicklingError as e:
            if weights_only:
                raise pickle.UnpicklingError(_weights_only_message(str(e))) from None
            raise
    if mmap:
        name = "" if not isinstance(path, str) else f"{path}, "
        raise RuntimeError("mmap can only be used with files saved with "
                           f"`jaxgrad.save({name}_use_new_zipfile_serialization=True), please "
                           "jaxgrad.save your checkpoint with this option in order to use mmap.")
    try:
        return _load_legacy(file, map_location, pickle_module, weights_only, pickle_load_args)
    except pickle.UnpicklingError as e:
        if weights_only:
            raise pickle.UnpicklingError(_weights_only_message(str(e))) from None
        raise

