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

import io
import os
import pickle
import re
import secrets
import struct
import tarfile
import warnings
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from .._core import dtypes as _dtypes
from .._core.device import device as Device
from .._core.device import local_devices
from .._core.storage import Storage
from .._core.tensor import Size, Tensor
from .._core.tensor_repr import held_here, spans_processes_error
from .._functions.parameter import Parameter
from .unpickler import STORAGE_NAMES, LoadedStorage, WeightsOnlyUnpickler, decode_ascii, find_class

FileLike = str | os.PathLike | IO[bytes]
MapLocation = Callable[[Any, str], Any] | Device | str | dict | None

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

    >>> from jaxgrad._serialization.save_load import TorchName
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


_REBUILD_TENSOR_V2 = TorchName("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = TorchName("torch._utils", "_rebuild_parameter")
_REBUILD_PARAMETER_WITH_STATE = TorchName("torch._utils", "_rebuild_parameter_with_state")
_REBUILD_FROM_TYPE_V2 = TorchName("torch._tensor", "_rebuild_from_type_v2")
_TORCH_TENSOR = TorchName("torch", "Tensor")
_TORCH_SIZE = TorchName("torch", "Size")
_TORCH_DEVICE = TorchName("torch", "device")
_STORAGE_TYPES = {d: TorchName("torch", name) for d, name in STORAGE_NAMES.items()}
_DTYPE_NAMES = {d: TorchName("torch", d.name) for d in _dtypes.ALL_DTYPES}


# --- where storages go (map_location) ----------------------------------------------------------

def _restore(storage: LoadedStorage, location: str) -> LoadedStorage:
    """torch's default_restore_location: put a storage on the device its tag names."""
    if location.startswith(("cpu", "cuda", "tpu")):
        target = Device(location)
        if target.type == "cuda":
            gpus = local_devices("gpu")
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
        where = decode_ascii(map_location)
        return lambda storage, location: _restore(storage, where)
    if isinstance(map_location, Device):
        return lambda storage, location: _restore(storage, str(map_location))

    def call(storage: LoadedStorage, location: str) -> LoadedStorage:
        result = map_location(storage, location)
        return _restore(storage, location) if result is None else result
    return call


# --- saving ------------------------------------------------------------------------------------

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
                self.write(pickle.GLOBAL + f"{target.module}\n{target.name}\n".encode())
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
            if not held_here(cell.array):  # (refused before anything is written)
                raise spans_processes_error("jaxgrad.save")
            key = str(id(cell)) if self.legacy else str(len(self.keys))
            self.keys[id(cell)] = key
            self.cells[key] = cell
        dtype = _dtypes.from_numpy_dtype(cell.array.dtype)
        pid = ("storage", _STORAGE_TYPES[dtype], key, str(ref.device), int(cell.array.size))
        return (*pid, None) if self.legacy else pid


def _hooks_warning(t: Tensor) -> None:
    hooks = t._grad_hooks
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


class _FromHere:
    """A writable stream seen from its current position: the zip's offsets count from where
    the archive starts (as torch's writer's do), not from the start of the stream."""

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file
        self.start = file.tell()

    def write(self, data: Any) -> int:
        return self.file.write(data)

    def tell(self) -> int:
        return self.file.tell() - self.start

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = self.start if whence == io.SEEK_SET else 0
        return self.file.seek(offset + base, whence) - self.start

    def flush(self) -> None:
        self.file.flush()


def _zip_target(file: IO[bytes]) -> Any:
    try:
        file.seek(file.tell())
    except (OSError, AttributeError, ValueError):
        return file  # not seekable: zipfile counts the bytes it writes itself
    return _FromHere(file)


class _ZipWriter:
    """torch's zip layout: stored records under one directory, data 64-byte aligned."""

    def __init__(self, file: IO[bytes], archive: str) -> None:
        self.zip = zipfile.ZipFile(_zip_target(file), "w", zipfile.ZIP_STORED, allowZip64=True)
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
    if _use_new_zipfile_serialization and not isinstance(f, str) and not callable(f.write):
        raise TypeError(f"Buffer of {str(type(f)).strip('<>')} has no callable attribute 'write'")
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


# --- loading -----------------------------------------------------------------------------------

class _ZipReader:
    """The records of a torch zip checkpoint, read as torch's reader reads them (records are
    located through the central directory; their bytes are read without a CRC check)."""

    def __init__(self, file: IO[bytes], path: str | None, mmap: bool) -> None:
        self.file = file
        start = file.tell()
        size = file.seek(0, io.SEEK_END) - start
        file.seek(start)
        if size < 22:  # shorter than a zip's end-of-directory record: miniz's first check
            raise RuntimeError("PytorchStreamReader failed reading zip archive: not a ZIP "
                               "archive" + MINIZ_ADVICE)
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
        typename = decode_ascii(saved_id[0])
        if typename != "storage":
            raise AssertionError("Unknown typename for persistent_load, expected 'storage' but "
                                 f"got '{typename}'")
        storage_type, key, location, numel = saved_id[1:]
        if key not in loaded:
            dtype = storage_type.dtype
            array = _storage_array(reader.read(f"data/{key}"), dtype, numel, byteorder)
            loaded[key] = restore(LoadedStorage(array, dtype), decode_ascii(location))
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
            tarfile.open(fileobj=f, mode="r:", format=tarfile.PAX_FORMAT).close()
        except tarfile.TarError:
            f.seek(0)
        else:
            if weights_only:
                raise RuntimeError("Cannot use ``weights_only=True`` with files saved in the "
                                   "legacy .tar format. " + UNSAFE_MESSAGE)
            raise RuntimeError("jaxgrad.load does not read the legacy .tar checkpoint format "
                               "(written by torch before 0.4); load and re-save it with torch")
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
        typename = decode_ascii(saved_id[0])
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
                                    decode_ascii(location))
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
            return find_class(module, name, super().find_class)

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

