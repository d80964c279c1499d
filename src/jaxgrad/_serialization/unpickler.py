"""Reading torch's checkpoint pickles into jaxgrad objects: the names torch writes
(``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``, ``torch.Size``, ``torch.float32``,
``torch.nn.parameter.Parameter``...) mapped to jaxgrad's equivalents, the storages a checkpoint
holds, and the weights-only unpickler that ``jaxgrad.load`` uses by default (torch's
``_weights_only_unpickler``: only state-dict material, and globals allowed with
:func:`add_safe_globals`, can be built). Saving and the file formats live in ``_serialization``.
"""

from __future__ import annotations

import codecs
import contextlib
import math
import pickle
import re
import struct
import sys
import warnings
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from typing import IO, Any

import numpy as np

from .._core import dtypes as _dtypes
from .._core.device import device as Device
from .._core.jax_setup import host_to_device
from .._core.storage import Layout, Storage, contiguous_strides
from .._core.tensor import Size, Tensor, as_subclass
from .._core.typename import public_path
from .._functions.parameter import Parameter

STORAGE_NAMES = {
    _dtypes.float64: "DoubleStorage", _dtypes.float32: "FloatStorage",
    _dtypes.float16: "HalfStorage", _dtypes.bfloat16: "BFloat16Storage",
    _dtypes.int64: "LongStorage", _dtypes.int32: "IntStorage", _dtypes.int16: "ShortStorage",
    _dtypes.int8: "CharStorage", _dtypes.uint8: "ByteStorage", _dtypes.bool_: "BoolStorage",
    _dtypes.complex128: "ComplexDoubleStorage", _dtypes.complex64: "ComplexFloatStorage",
}


class StorageType:
    """A typed storage class named in a checkpoint (``torch.FloatStorage`` -> float32).

    >>> from jaxgrad._serialization.unpickler import StorageType
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
    >>> from jaxgrad._serialization.unpickler import LoadedStorage
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
            host = array.reshape(self._cell.array.shape)
            self._cell.write(host_to_device(host, host.dtype, self.device.jax))

    def tensor(self, offset: int, size: Iterable[int], stride: Iterable[int]) -> Tensor:
        """A tensor over this storage (as torch's ``set_(storage, offset, size, stride)``): the
        cell is shared with every other tensor rebuilt over it; a tensor covering the whole
        storage contiguously holds it directly, any other one through a ``Layout``."""
        size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
        numel = self.size()
        if any(s < 0 for s in size) or len(size) != len(stride):
            raise RuntimeError(f"invalid tensor geometry: size {list(size)}, stride {list(stride)}")
        needed = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
        if math.prod(size) and needed > numel:
            item = self.dtype.itemsize
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{offset}, and itemsize {item} requiring a storage size of {needed * item} are "
                f"out of bounds for storage of size {numel * item}")
        covers = offset == 0 and math.prod(size) == numel and stride == contiguous_strides(size)
        if self._cell is None:
            host = self.array.reshape(size) if covers else self.array
            self._cell = Storage(host_to_device(host, host.dtype, self.device.jax))
        layout = None
        if not (covers and tuple(self._cell.array.shape) == size):
            layout = Layout(size, stride, offset)
        t = Tensor._make(None, cell=self._cell)
        t._layout = layout
        t._vc.value = 1  # torch rebuilds with set_(), an in-place op
        return t


# --- rebuild functions (what torch's names map to) ---------------------------------------------

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


def _on_device(array: Any, dtype: _dtypes.dtype, device: str, requires_grad: bool) -> Tensor:
    out = Tensor._make(host_to_device(array, dtype.np, Device(device).jax))
    out.requires_grad = requires_grad
    return out


def _rebuild_device_tensor_from_cpu_tensor(data: Tensor, dtype: _dtypes.dtype, device: str,
                                           requires_grad: bool) -> Tensor:
    return _on_device(data._value, dtype, device, requires_grad)


def _rebuild_device_tensor_from_numpy(data: np.ndarray, dtype: _dtypes.dtype, device: str,
                                      requires_grad: bool) -> Tensor:
    return _on_device(data, dtype, device, requires_grad)


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
_TORCH_GLOBAL_IDS = {id(v) for v in _TORCH_GLOBALS.values()}
# Allowed by torch, but naming a dtype, layout or tensor type jaxgrad does not have.
_TORCH_ONLY = re.compile(
    r"torch\.(u?int[1-7]|uint(16|32|64)|float8_\w+|float4_\w+|complex32|bits\w+|q(u?int\w+)"
    r"|per_\w+|(cuda\.|sparse\.)?\w*Tensor|Q\w*Storage|serialization\._get_layout)")

_user_globals: set = set()


# --- safe globals ------------------------------------------------------------------------------

def add_safe_globals(safe_globals: list) -> None:
    """Allow ``jaxgrad.load(..., weights_only=True)`` to build these classes and call these
    functions; an entry may be ``(obj, "module.name")`` to allow ``obj`` under that name.

    >>> import io, jaxgrad
    >>> from fractions import Fraction
    >>> buf = io.BytesIO(); jaxgrad.save(Fraction(1, 3), buf)
    >>> jaxgrad.serialization.add_safe_globals([Fraction])
    >>> jaxgrad.load(io.BytesIO(buf.getvalue()))
    Fraction(1, 3)
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


@public_path("jaxgrad.serialization")
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


# --- the weights-only unpickler ----------------------------------------------------------------

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
    >>> from jaxgrad._serialization.unpickler import WeightsOnlyUnpickler
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
        ops = _OPCODES
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

    def _binget(self) -> None:
        self.stack.append(self.memo[self.read(1)[0]])

    def _long_binget(self) -> None:
        self.stack.append(self.memo[struct.unpack("<I", self.read(4))[0]])

    def _binput(self) -> None:
        self.memo[self.read(1)[0]] = self.stack[-1]

    def _long_binput(self) -> None:
        self.memo[struct.unpack("<I", self.read(4))[0]] = self.stack[-1]

    # -- opcodes: values ------------------------------------------------------------------------
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
        if type(pid) is tuple and pid and decode_ascii(pid[0]) != "storage":
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
        return id(obj) in _TORCH_GLOBAL_IDS or any(obj is v for v in _user_allowed().values())

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
        elif type(inst) is Parameter or type(inst) is OrderedDict or self._allowed(type(inst)):
            _set_state(inst, state)
        else:
            raise pickle.UnpicklingError(
                "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                f"`add_safe_globals`, but got {type(inst)}")


def _tuple_of(n: int) -> Callable[[WeightsOnlyUnpickler], None]:
    """TUPLE1/2/3: the top ``n`` items become one tuple (IndexError on a shorter stack)."""
    def build(self: WeightsOnlyUnpickler) -> None:
        items = tuple(self.stack[-n:]) if len(self.stack) >= n else self.stack[-n]
        self.stack[-n:] = [items]
    return build


def _push(make: Callable[[], Any]) -> Callable[[WeightsOnlyUnpickler], None]:
    """NONE, NEWTRUE, EMPTY_LIST...: push a new constant or empty container."""
    def push(self: WeightsOnlyUnpickler) -> None:
        self.stack.append(make())
    return push


_W = WeightsOnlyUnpickler
_OPCODES: dict[int, Callable[[WeightsOnlyUnpickler], None]] = {
    pickle.GLOBAL[0]: _W._global, pickle.NEWOBJ[0]: _W._newobj, pickle.REDUCE[0]: _W._reduce,
    pickle.BUILD[0]: _W._build, pickle.APPEND[0]: _W._append, pickle.APPENDS[0]: _W._appends,
    pickle.SETITEM[0]: _W._setitem, pickle.SETITEMS[0]: _W._setitems, pickle.MARK[0]: _W._mark,
    pickle.TUPLE[0]: _W._tuple, pickle.TUPLE1[0]: _tuple_of(1), pickle.TUPLE2[0]: _tuple_of(2),
    pickle.TUPLE3[0]: _tuple_of(3), pickle.NONE[0]: _push(lambda: None),
    pickle.NEWFALSE[0]: _push(lambda: False), pickle.NEWTRUE[0]: _push(lambda: True),
    pickle.EMPTY_TUPLE[0]: _push(tuple), pickle.EMPTY_LIST[0]: _push(list),
    pickle.EMPTY_DICT[0]: _push(dict), pickle.EMPTY_SET[0]: _push(set),
    pickle.BININT[0]: _W._binint, pickle.BININT1[0]: _W._binint1, pickle.BININT2[0]: _W._binint2,
    pickle.BINFLOAT[0]: _W._binfloat, pickle.BINUNICODE[0]: _W._binunicode,
    pickle.SHORT_BINSTRING[0]: _W._short_binstring, pickle.BINPERSID[0]: _W._binpersid,
    pickle.BINGET[0]: _W._binget, pickle.LONG_BINGET[0]: _W._long_binget,
    pickle.BINPUT[0]: _W._binput, pickle.LONG_BINPUT[0]: _W._long_binput,
    pickle.LONG1[0]: _W._long1, pickle.PROTO[0]: _W._proto, pickle.STOP[0]: _W._stop,
}
del _W


def _set_from(inst: Tensor, storage: LoadedStorage, offset: int, size: Iterable[int],
              stride: Iterable[int]) -> None:
    """Point ``inst`` at ``storage`` (a legacy pickle's ``Tensor.set_(...)`` via BUILD)."""
    src = storage.tensor(offset, size, stride)
    inst._cell, inst._layout, inst._arr, inst._arr_gen = src._cell, src._layout, None, 0
    inst._lazy = None
    inst._vc.value += 1


def decode_ascii(value: Any) -> Any:
    return value.decode("ascii") if isinstance(value, bytes) else value


def find_class(module: str, name: str, fallback: Callable[[str, str], Any]) -> Any:
    """``find_class`` of the full unpickler: torch's names as jaxgrad objects, other ``torch.*``
    names as the ``jaxgrad.*`` object of the same path (``torch.nn.modules.linear.Linear``)."""
    if type(name) is str and "Storage" in name and name in StorageType._BY_NAME:
        return StorageType(name)
    module = {"torch.tensor": "torch._tensor"}.get(module, module)
    with contextlib.suppress(KeyError):
        return _torch_global(f"{module}.{name}")
    if module == "torch" or module.startswith("torch."):
        ours = "jaxgrad" + module[len("torch"):]
        try:
            return fallback(ours, name)
        except (ImportError, AttributeError) as e:
            raise type(e)(f"jaxgrad.load: the checkpoint needs {module}.{name}, and jaxgrad has "
                          f"no {ours}.{name}") from None
    return fallback(module, name)
