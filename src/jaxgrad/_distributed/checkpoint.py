"""torch's Distributed Checkpoint (``torch.distributed.checkpoint``) on JAX's multi-controller
runtime: every rank calls :func:`save` / :func:`load` with its state dict (SPMD) and touches only
the parts of each tensor it addresses.

**What a rank writes.** A state dict is flattened as torch's planner flattens it (nested dicts by
key, lists that hold tensors by position; ``"optim.state.0.exp_avg"``). A tensor whose array
spans processes (a global ``jax.Array``, e.g. sharded FSDP-like over a mesh of every process's
devices) is cut into its sharding's distinct shards (``sharding.devices_indices_map``); each
shard is written once, by the process of the device holding its first replica (JAX's
``replica_id == 0``), into that rank's file. A tensor whose array lives on one process only is
that process's local copy, taken to be replicated across ranks (the DDP pattern): the
coordinator (rank 0) writes it whole, once, as it writes every non-tensor value. Every process
computes every rank's shard layout from the arrays' shardings, so the coordinator writes the
complete metadata without gathering anything.

**On disk** (a directory, as torch's ``FileSystemWriter``):

- ``__{rank}_0.distcp``: the raw bytes (C order, native byte order: little-endian wherever JAX
  runs) of each chunk that rank writes, one after another, and on rank 0 also the pickles of
  the non-tensor values;
- ``.metadata``: JSON, ``{"format": "jaxgrad.distributed.checkpoint", "version": 1,
  "state_dict": {fqn: entry}}`` in the state dict's order, an entry being ``{"type":
  "tensor", "dtype": "float32", "requires_grad": false, "size": [8, 6], "chunks": [{"offsets":
  [0, 0], "sizes": [4, 6], "file": "__0_0.distcp", "offset": 0, "length": 96}, ...]}`` or
  ``{"type": "bytes", "file": "__0_0.distcp", "offset": 96, "length": 15}``.

Files are written under a temporary name and renamed into place, the metadata last (after a
barrier: a checkpoint with a ``.metadata`` is complete). :func:`load` reads the metadata, then,
for each of its tensors, the bytes of the saved chunks that overlap the shards this process
addresses (memory-mapped: only the pages needed), whatever the sharding was at save time.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import traceback
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils

from .._core.dtypes import dtype as _dtype
from .._core.dtypes import from_numpy_dtype
from .._core.jax_setup import in_x64_scope
from .._core.tensor import Size, Tensor
from .collectives import all_gather_object, broadcast_object_list
from .process_group import ProcessGroup, is_initialized, resolve

__all__ = ["BytesStorageMetadata", "CheckpointException", "ChunkStorageMetadata",
           "DefaultLoadPlanner", "DefaultSavePlanner", "FileSystemReader", "FileSystemWriter",
           "Metadata", "MetadataIndex", "TensorProperties", "TensorStorageMetadata", "load",
           "save"]


FORMAT = "jaxgrad.distributed.checkpoint"
VERSION = 1
METADATA_FILE = ".metadata"


# -- torch's metadata classes ----------------------------------------------------------------


@dataclass
class ChunkStorageMetadata:
    """Where one saved chunk of a tensor sits in it: its ``offsets`` and ``sizes`` per dim.

    >>> from jaxgrad.distributed.checkpoint import ChunkStorageMetadata
    >>> ChunkStorageMetadata(offsets=(0, 0), sizes=(2, 3)).sizes
    (2, 3)
    """

    offsets: Size
    sizes: Size


@dataclass
class TensorProperties:
    """A saved tensor's dtype and whether it required grad.

    >>> import jaxgrad
    >>> from jaxgrad.distributed.checkpoint import TensorProperties
    >>> TensorProperties(jaxgrad.float32).dtype
    jaxgrad.float32
    """

    dtype: _dtype
    requires_grad: bool = False


@dataclass
class TensorStorageMetadata:
    """A saved tensor: its properties, global size and the chunks it was saved as.

    >>> import jaxgrad
    >>> from jaxgrad.distributed.checkpoint import TensorStorageMetadata, TensorProperties
    >>> TensorStorageMetadata(TensorProperties(jaxgrad.int64), jaxgrad.Size([3]), []).size
    jaxgrad.Size([3])
    """

    properties: TensorProperties
    size: Size
    chunks: list[ChunkStorageMetadata]


@dataclass
class BytesStorageMetadata:
    """A saved non-tensor value (pickled).

    >>> from jaxgrad.distributed.checkpoint import BytesStorageMetadata
    >>> BytesStorageMetadata()
    BytesStorageMetadata()
    """


@dataclass(frozen=True)
class MetadataIndex:
    """The key of one stored item: a value's flattened name and, for a tensor chunk, its
    offsets.

    >>> from jaxgrad.distributed.checkpoint import MetadataIndex
    >>> MetadataIndex("model.weight", (0, 0)) == MetadataIndex("model.weight", (0, 0), index=3)
    True
    """

    fqn: str
    offset: Size | None = None
    index: int | None = field(hash=False, compare=False, default=None)


@dataclass
class _StorageInfo:
    """Where an item's bytes are: a file of the checkpoint directory, a byte offset, a length."""

    relative_path: str
    offset: int
    length: int


@dataclass
class Metadata:
    """A checkpoint's metadata: what :func:`save` returns and ``.metadata`` holds.
    ``state_dict_metadata`` maps each flattened name to a :class:`TensorStorageMetadata` or a
    :class:`BytesStorageMetadata`; ``storage_data`` maps each :class:`MetadataIndex` to where its
    bytes are.

    >>> from jaxgrad.distributed.checkpoint import Metadata
    >>> Metadata(state_dict_metadata={}).storage_data is None
    True
    """

    state_dict_metadata: dict[str, TensorStorageMetadata | BytesStorageMetadata]
    planner_data: Any = None
    storage_data: Any = None
    storage_meta: Any = None
    version: str | None = None


class CheckpointException(BaseException):
    """What :func:`save` and :func:`load` raise when a step fails on a rank (as torch's, a
    ``BaseException``): ``failures`` maps the rank to (the exception, its traceback).

    >>> from jaxgrad.distributed.checkpoint import CheckpointException
    >>> error = CheckpointException("load", {0: (RuntimeError("no"), None)})
    >>> print(error)
    CheckpointException ranks:dict_keys([0])
    Traceback (most recent call last): (RANK 0)
    RuntimeError: no
    """

    def __init__(self, msg: str, failures: dict[int, tuple]) -> None:
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self) -> dict[int, tuple]:
        """Each failed rank's (exception, traceback summary)."""
        return self._failures

    def __str__(self) -> str:
        text = f"CheckpointException ranks:{self._failures.keys()}\n"
        for rank, (exc, trace) in self._failures.items():
            text += f"Traceback (most recent call last): (RANK {rank})\n"
            if trace is not None:
                text += "".join(traceback.format_list(trace))
            text += "".join(traceback.format_exception_only(type(exc), exc))
        return text


# -- storage and planners (torch's names; the file system is the only storage) ---------------


class FileSystemWriter:
    """Where :func:`save` writes: a directory (created if missing). ``sync_files`` fsyncs each
    file; ``overwrite=False`` refuses a directory that already holds a checkpoint. The other
    arguments are torch's and accepted for compatibility (one file per rank is always written).

    >>> import tempfile
    >>> import jaxgrad.distributed.checkpoint as dcp
    >>> with tempfile.TemporaryDirectory() as d:
    ...     str(dcp.FileSystemWriter(d).path) == d
    True
    """

    def __init__(self, path: str | os.PathLike, single_file_per_rank: bool = True,
                 sync_files: bool = True, thread_count: int = 1,
                 per_thread_copy_ahead: int = 10_000_000, cache_staged_state_dict: bool = False,
                 overwrite: bool = True) -> None:
        self.path = Path(path)
        self.single_file_per_rank = single_file_per_rank
        self.sync_files = sync_files
        self.thread_count = thread_count
        self.per_thread_copy_ahead = per_thread_copy_ahead
        self.cache_staged_state_dict = cache_staged_state_dict
        self.overwrite = overwrite

    def reset(self, checkpoint_id: str | os.PathLike | None = None) -> None:
        """Point at the directory ``checkpoint_id`` (when given)."""
        if checkpoint_id:
            self.path = Path(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike) -> bool:
        """Whether ``checkpoint_id`` names a path (any local path does)."""
        return isinstance(checkpoint_id, (str, os.PathLike))


class FileSystemReader:
    """Where :func:`load` reads: a checkpoint directory. ``read_metadata()`` gives its
    :class:`Metadata`.

    >>> import tempfile
    >>> import jaxgrad, jaxgrad.distributed as dist, jaxgrad.distributed.checkpoint as dcp
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29521", rank=0,
    ...                         world_size=1)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = dcp.save({"w": jaxgrad.ones(2, 3), "epoch": 1}, checkpoint_id=d)
    ...     metadata = dcp.FileSystemReader(d).read_metadata()
    >>> metadata.state_dict_metadata["w"].size, metadata.state_dict_metadata["epoch"]
    (jaxgrad.Size([2, 3]), BytesStorageMetadata())
    >>> dist.destroy_process_group()
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    def reset(self, checkpoint_id: str | os.PathLike | None = None) -> None:
        """Point at the directory ``checkpoint_id`` (when given)."""
        if checkpoint_id:
            self.path = Path(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike) -> bool:
        """Whether ``checkpoint_id`` names a path (any local path does)."""
        return isinstance(checkpoint_id, (str, os.PathLike))

    def read_metadata(self) -> Metadata:
        """The checkpoint's :class:`Metadata` (its ``.metadata`` file)."""
        return _from_json((self.path / METADATA_FILE).read_text())


class DefaultSavePlanner:
    """torch's default save planner: the only planner :func:`save` runs (its arguments are
    accepted for compatibility; replicated tensors are always written once).

    >>> import jaxgrad.distributed.checkpoint as dcp
    >>> dcp.DefaultSavePlanner().flatten_state_dict
    True
    """

    def __init__(self, flatten_state_dict: bool = True, flatten_sharded_tensors: bool = True,
                 dedup_replicated_tensors: bool | None = None,
                 dedup_save_to_lowest_rank: bool = False,
                 enable_plan_caching: bool = False) -> None:
        self.flatten_state_dict = flatten_state_dict
        self.flatten_sharded_tensors = flatten_sharded_tensors
        self.dedup_save_to_lowest_rank = dedup_save_to_lowest_rank
        self.enable_plan_caching = enable_plan_caching


class DefaultLoadPlanner:
    """torch's default load planner: ``allow_partial_load=True`` skips the state dict's keys
    the checkpoint lacks (instead of raising).

    >>> import jaxgrad.distributed.checkpoint as dcp
    >>> dcp.DefaultLoadPlanner(allow_partial_load=True).allow_partial_load
    True
    """

    def __init__(self, flatten_state_dict: bool = True, flatten_sharded_tensors: bool = True,
                 allow_partial_load: bool = False) -> None:
        self.flatten_state_dict = flatten_state_dict
        self.flatten_sharded_tensors = flatten_sharded_tensors
        self.allow_partial_load = allow_partial_load


def _storage(given: Any, checkpoint_id: Any, kind: type) -> Any:
    if given is not None:
        if not isinstance(given, kind):
            raise NotImplementedError(f"jaxgrad.distributed.checkpoint supports "
                                      f"{kind.__name__} storage only, not {type(given).__name__}")
        if checkpoint_id is not None:
            given.reset(checkpoint_id)
        return given
    if not checkpoint_id:
        raise RuntimeError("`checkpoint_id` must be specified if storage_reader/storage_writer "
                           "is None.")
    return kind(checkpoint_id)


def _planner(given: Any, kind: type) -> Any:
    if given is None:
        return kind()
    if type(given) is not kind:
        raise NotImplementedError(f"jaxgrad.distributed.checkpoint runs torch's default planner "
                                  f"only ({kind.__name__}), not {type(given).__name__}")
    return given


# -- the ranks --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _World:
    """The ranks taking part: this one, how many, each rank's JAX process, and the process
    group that synchronises them (None: JAX's runtime without a group, or one process)."""

    rank: int
    size: int
    processes: tuple[int, ...]
    group: ProcessGroup | None

    def rank_of(self, process: int) -> int:
        if process not in self.processes:
            raise ValueError(f"a tensor of the state_dict has a shard on JAX process {process}, "
                             f"outside the process group {list(self.processes)}: all data in "
                             f"the state_dict must belong to its ranks")
        return self.processes.index(process)


def _world(process_group: ProcessGroup | None, no_dist: bool, action: str) -> _World:
    if not no_dist and (process_group is not None or is_initialized()):
        pg = resolve(process_group)
        return _World(pg.rank, pg.size, tuple(pg.ranks), pg)
    if not no_dist and jax.process_count() > 1:  # JAX's runtime joined without a group
        n = jax.process_count()
        return _World(jax.process_index(), n, tuple(range(n)), None)
    warnings.warn(f"torch.distributed is disabled, unavailable or uninitialized, assuming the "
                  f"intent is to {action} in a single process.", stacklevel=3)
    return _World(0, 1, (jax.process_index(),), None)


def _from_coordinator(world: _World, text: str | None) -> str:
    """The coordinator's ``text`` on every rank (also a barrier)."""
    if world.size == 1:
        return text
    if world.group is not None:
        box = [text]
        broadcast_object_list(box, src=world.processes[0], group=world.group)
        return box[0]
    data = np.frombuffer(text.encode(), np.uint8) if world.rank == 0 else np.zeros(0, np.uint8)
    n = int(multihost_utils.broadcast_one_to_all(np.int32(data.size)))
    padded = np.zeros(n, np.uint8)
    padded[:data.size] = data
    return np.asarray(multihost_utils.broadcast_one_to_all(padded)).tobytes().decode()


def _gathered(world: _World, obj: Any) -> list:
    """Every rank's picklable ``obj``, in rank order, on every rank (also a barrier)."""
    if world.size == 1:
        return [obj]
    if world.group is not None:
        out = [None] * world.size
        all_gather_object(out, obj, group=world.group)
        return out
    data = np.frombuffer(pickle.dumps(obj), np.uint8)
    sizes = np.asarray(multihost_utils.process_allgather(np.int32(data.size))).reshape(-1)
    padded = np.zeros(int(sizes.max()), np.uint8)
    padded[:data.size] = data
    rows = np.asarray(multihost_utils.process_allgather(padded))
    return [pickle.loads(rows[r, :sizes[r]].tobytes()) for r in range(world.size)]


def _wrapped(error: Exception) -> tuple:
    """(``error``, its traceback summary), picklable for the other ranks (torch's
    ``_wrap_exception``); an exception that does not survive pickling travels as a
    ``RuntimeError`` naming its type and message."""
    summary = traceback.extract_tb(error.__traceback__)
    for frame in summary:  # (Python 3.13+ keeps code objects here, which do not pickle)
        if hasattr(frame, "_code"):
            object.__setattr__(frame, "_code", None)
    try:
        pickle.loads(pickle.dumps((error, summary)))
        return error, summary
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}"), summary


def _all_ranks(step: str, world: _World, error: Exception | None) -> None:
    """Raise :class:`CheckpointException` on every rank when ``step`` failed on any rank
    (torch's ``_DistWrapper``): each rank's failure (or None) is gathered on every rank."""
    mine = None if error is None else _wrapped(error)
    failures = {r: f for r, f in enumerate(_gathered(world, mine)) if f is not None}
    if error is not None:  # this rank's own exception object, not its unpickled copy
        failures[world.rank] = (error, mine[1])
    if failures:
        raise CheckpointException(step, failures) from error


def _failure(step: str, world: _World, error: Exception) -> CheckpointException:
    return CheckpointException(step, {world.rank: (error, traceback.extract_tb(
        error.__traceback__))})


# -- the state dict, flattened as torch's planner flattens it ---------------------------------


def _is_stateful(value: Any) -> bool:
    return callable(getattr(value, "state_dict", None)) and \
        callable(getattr(value, "load_state_dict", None))


def _is_terminal(value: Any) -> bool:
    """torch's rule: a dict is walked into; a list only if it holds a tensor or a container
    that is walked into; anything else (tuples too) is one value."""
    if isinstance(value, Mapping):
        return False
    if not isinstance(value, list):
        return True
    return not any(isinstance(v, Tensor) or (isinstance(v, (Mapping, list)) and
                                              not _is_terminal(v)) for v in value)


def _flatten(state_dict: Mapping) -> list[tuple[str, Any, Any, Any]]:
    """(dotted name, value, its container, its key there) for each leaf value, in order."""
    out: list[tuple[str, Any, Any, Any]] = []

    def visit(path: tuple[str, ...], value: Any, container: Any, key: Any) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                visit((*path, str(k)), v, value, k)
        elif not _is_terminal(value):
            for i, v in enumerate(value):
                visit((*path, str(i)), v, value, i)
        else:
            out.append((".".join(path), value, container, key))

    for k, v in state_dict.items():
        visit((str(k),), v, state_dict, k)
    return out


# -- shards -----------------------------------------------------------------------------------


def _region(index: tuple, shape: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(offsets, sizes) of the block a tuple of slices selects."""
    starts, sizes = [], []
    for s, n in zip(index, shape):
        start, stop, step = s.indices(n)
        if step != 1:
            raise ValueError(f"jaxgrad.distributed.checkpoint: a strided shard ({s}) is not "
                             f"supported")
        starts.append(start)
        sizes.append(max(stop - start, 0))
    for n in shape[len(index):]:
        starts.append(0)
        sizes.append(n)
    return tuple(starts), tuple(sizes)


def _array_of(fqn: str, t: Tensor) -> jax.Array:
    array = t._value
    if not isinstance(array, jax.Array) or isinstance(array, jax.core.Tracer):
        raise TypeError(f"jaxgrad.distributed.checkpoint: {fqn} has no concrete array "
                        f"(a traced or storage-less tensor)")
    return array


def _as_bytes(data: Any) -> memoryview:
    if isinstance(data, bytes):
        return memoryview(data)
    return np.ascontiguousarray(data).reshape(-1).view(np.uint8).data


@dataclass
class _Item:
    """One stored item: where its bytes go, and (on the rank that writes it) how to get them."""

    file_rank: int
    offset: int
    length: int
    produce: Callable[[], Any] | None


class _SavePlan:
    """Every rank's items, laid out file by file (each process computes the same layout for
    the shards of global arrays; local tensors and non-tensor values are the coordinator's)."""

    def __init__(self, world: _World) -> None:
        self.world = world
        self.ends: dict[int, int] = {}
        self.mine: list[_Item] = []

    def add(self, file_rank: int, length: int, produce: Callable[[], Any]) -> _StorageInfo:
        offset = self.ends.get(file_rank, 0)
        self.ends[file_rank] = offset + length
        if file_rank == self.world.rank:
            self.mine.append(_Item(file_rank, offset, length, produce))
        return _StorageInfo(_file_name(file_rank), offset, length)


def _file_name(rank: int) -> str:
    return f"__{rank}_0.distcp"


def _plan_tensor(plan: _SavePlan, fqn: str, t: Tensor,
                 storage: dict[MetadataIndex, _StorageInfo]) -> TensorStorageMetadata:
    array = _array_of(fqn, t)
    shape = tuple(array.shape)
    itemsize = array.dtype.itemsize
    chunks: list[ChunkStorageMetadata] = []

    def add(offsets: tuple, sizes: tuple, file_rank: int, produce: Callable) -> None:
        chunk = ChunkStorageMetadata(Size(offsets), Size(sizes))
        info = plan.add(file_rank, math.prod(sizes) * itemsize, produce)
        storage[MetadataIndex(fqn, chunk.offsets, len(chunks))] = info
        chunks.append(chunk)

    if array.is_fully_addressable:  # this process's own copy: the coordinator writes it whole
        add((0,) * len(shape), shape, 0, lambda: np.asarray(array))
    else:  # a global array: each distinct shard once, by its first replica's process
        shards = {s.device: s for s in array.addressable_shards}
        seen: set[tuple] = set()
        for device, index in array.sharding.devices_indices_map(shape).items():
            offsets, sizes = _region(index, shape)
            if (offsets, sizes) in seen:
                continue
            seen.add((offsets, sizes))
            produce = (lambda d=device: np.asarray(shards[d].data)) if device in shards else None
            add(offsets, sizes, plan.world.rank_of(device.process_index), produce)
    properties = TensorProperties(from_numpy_dtype(array.dtype), bool(t.requires_grad))
    return TensorStorageMetadata(properties, Size(shape), chunks)


def _plan_save(items: list, world: _World) -> tuple[Metadata, _SavePlan]:
    plan = _SavePlan(world)
    entries: dict[str, Any] = {}
    storage: dict[MetadataIndex, _StorageInfo] = {}
    # laid out by name, so that every rank's layout agrees whatever order its dict has
    for fqn, value, _, _ in sorted(items, key=lambda item: item[0]):
        if isinstance(value, Tensor):
            entries[fqn] = _plan_tensor(plan, fqn, value, storage)
        else:
            data = pickle.dumps(value) if world.rank == 0 else b""
            storage[MetadataIndex(fqn)] = plan.add(0, len(data), lambda data=data: data)
            entries[fqn] = BytesStorageMetadata()
    ordered = {fqn: entries[fqn] for fqn, *_ in items}
    return Metadata(ordered, storage_data=storage, version=str(VERSION)), plan


def _write_atomic(path: Path, chunks: list, sync: bool) -> None:
    """Write the byte chunks to ``path`` under a temporary name, then rename it into place (a
    reader of the old file keeps reading the old file)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        for chunk in chunks:
            f.write(chunk)
        if sync:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)


def _write_rank_file(path: Path, plan: _SavePlan, sync: bool) -> None:
    def chunks():
        written = 0
        for item in plan.mine:
            data = _as_bytes(item.produce())
            if written != item.offset or data.nbytes != item.length:
                raise RuntimeError(f"jaxgrad.distributed.checkpoint: the layout of {path.name} "
                                   f"disagrees with its data (internal error)")
            written += data.nbytes
            yield data

    _write_atomic(path, chunks(), sync)


# -- metadata as JSON -------------------------------------------------------------------------


def _to_json(metadata: Metadata) -> str:
    storage = metadata.storage_data
    out: dict[str, Any] = {}
    for fqn, entry in metadata.state_dict_metadata.items():
        if isinstance(entry, TensorStorageMetadata):
            chunks = []
            for chunk in entry.chunks:
                info = storage[MetadataIndex(fqn, chunk.offsets)]
                chunks.append({"offsets": list(chunk.offsets), "sizes": list(chunk.sizes),
                               "file": info.relative_path, "offset": info.offset,
                               "length": info.length})
            out[fqn] = {"type": "tensor", "dtype": entry.properties.dtype.name,
                        "requires_grad": entry.properties.requires_grad,
                        "size": list(entry.size), "chunks": chunks}
        else:
            info = storage[MetadataIndex(fqn)]
            out[fqn] = {"type": "bytes", "file": info.relative_path, "offset": info.offset,
                        "length": info.length}
    return json.dumps({"format": FORMAT, "version": VERSION, "state_dict": out}, indent=1)


def _from_json(text: str) -> Metadata:
    data = json.loads(text)
    if data.get("format") != FORMAT:
        raise RuntimeError("not a jaxgrad.distributed.checkpoint checkpoint (its .metadata has "
                           "another format)")
    entries: dict[str, Any] = {}
    storage: dict[MetadataIndex, _StorageInfo] = {}
    for fqn, entry in data["state_dict"].items():
        if entry["type"] == "tensor":
            chunks = []
            for i, c in enumerate(entry["chunks"]):
                chunk = ChunkStorageMetadata(Size(c["offsets"]), Size(c["sizes"]))
                storage[MetadataIndex(fqn, chunk.offsets, i)] = _StorageInfo(
                    c["file"], c["offset"], c["length"])
                chunks.append(chunk)
            d = from_numpy_dtype(jnp.dtype(entry["dtype"]))
            entries[fqn] = TensorStorageMetadata(
                TensorProperties(d, entry["requires_grad"]), Size(entry["size"]), chunks)
        else:
            storage[MetadataIndex(fqn)] = _StorageInfo(entry["file"], entry["offset"],
                                                       entry["length"])
            entries[fqn] = BytesStorageMetadata()
    return Metadata(entries, storage_data=storage, version=str(data["version"]))


# -- save -------------------------------------------------------------------------------------


def save(state_dict: dict[str, Any], *, checkpoint_id: str | os.PathLike | None = None,
         storage_writer: FileSystemWriter | None = None,
         planner: DefaultSavePlanner | None = None, process_group: ProcessGroup | None = None,
         no_dist: bool = False) -> Metadata:
    """Save ``state_dict`` (nested dicts and lists of tensors and picklable values) into the
    directory ``checkpoint_id``, called on every rank (torch's ``dcp.save``). Each rank writes
    only the shards it holds of each tensor, the first replica's process writing a replicated
    shard; a tensor local to each process (the DDP pattern) and every non-tensor value are
    written once, by rank 0. A value with ``state_dict()`` and ``load_state_dict()`` (a module,
    an optimizer) at the top level is saved as its state dict. Returns the checkpoint's
    :class:`Metadata` once every rank has written.

    >>> import pathlib, tempfile
    >>> import jaxgrad, jaxgrad.distributed as dist, jaxgrad.distributed.checkpoint as dcp
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29522", rank=0,
    ...                         world_size=1)
    >>> model = jaxgrad.nn.Linear(3, 2)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     metadata = dcp.save({"model": model.state_dict(), "epoch": 4}, checkpoint_id=d)
    ...     files = sorted(p.name for p in pathlib.Path(d).iterdir())
    >>> list(metadata.state_dict_metadata), files
    (['model.weight', 'model.bias', 'epoch'], ['.metadata', '__0_0.distcp'])
    >>> dist.destroy_process_group()
    """
    world = _world(process_group, no_dist, "save")
    writer = _storage(storage_writer, checkpoint_id, FileSystemWriter)
    _planner(planner, DefaultSavePlanner)
    state_dict = {k: v.state_dict() if _is_stateful(v) else v for k, v in state_dict.items()}
    try:
        writer.path.mkdir(parents=True, exist_ok=True)
        if (writer.path / METADATA_FILE).exists():
            if not writer.overwrite:
                raise RuntimeError(f"Checkpoint already exists and self.overwrite="
                                   f"{writer.overwrite}.")
            warnings.warn(
                f"Detected an existing checkpoint in {writer.path}, overwriting since "
                f"self.overwrite={writer.overwrite}. Past version 2.5 of PyTorch, `overwrite` "
                f"will default to False. Set this variable to True to maintain this "
                f"functionality or False to raise when an existing checkpoint is found.",
                stacklevel=2)
        metadata, plan = _plan_save(_flatten(state_dict), world)
        _write_rank_file(writer.path / _file_name(world.rank), plan, writer.sync_files)
        error = None
    except Exception as e:
        error = e
    _all_ranks("write", world, error)  # (every rank raises if any failed; also the barrier)
    text = None
    if world.rank == 0:
        text = _to_json(metadata)
        _write_atomic(writer.path / METADATA_FILE, [text.encode()], writer.sync_files)
    return _from_json(_from_coordinator(world, text))


# -- load -------------------------------------------------------------------------------------


class _Files:
    """The checkpoint's data files, memory-mapped when first read."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.maps: dict[str, np.ndarray] = {}

    def bytes(self, info: _StorageInfo) -> np.ndarray:
        if info.relative_path not in self.maps:
            self.maps[info.relative_path] = np.memmap(self.root / info.relative_path,
                                                      np.uint8, "r")
        return self.maps[info.relative_path][info.offset:info.offset + info.length]

    def chunk(self, info: _StorageInfo, np_dtype: np.dtype, sizes: tuple) -> np.ndarray:
        return self.bytes(info).view(np_dtype).reshape(sizes)


def _read_block(files: _Files, fqn: str, entry: TensorStorageMetadata, storage: dict,
                offsets: tuple, sizes: tuple) -> np.ndarray:
    """The saved values of the block at ``offsets`` of ``sizes``, from the chunks overlapping
    it."""
    np_dtype = entry.properties.dtype.np
    out = np.empty(sizes, np_dtype)
    filled = 0
    for chunk in entry.chunks:
        lo = [max(a, b) for a, b in zip(chunk.offsets, offsets)]
        hi = [min(a + m, b + n) for a, m, b, n in zip(chunk.offsets, chunk.sizes, offsets,
                                                      sizes)]
        if any(low >= high for low, high in zip(lo, hi)):
            continue
        data = files.chunk(storage[MetadataIndex(fqn, chunk.offsets)], np_dtype, chunk.sizes)
        src = tuple(slice(low - c, high - c) for low, high, c in zip(lo, hi, chunk.offsets))
        dst = tuple(slice(low - o, high - o) for low, high, o in zip(lo, hi, offsets))
        out[dst] = data[src]
        filled += math.prod(high - low for low, high in zip(lo, hi))
    if filled != math.prod(sizes):
        raise RuntimeError(f"jaxgrad.distributed.checkpoint: the checkpoint's chunks of {fqn} "
                           f"do not cover its block at {list(offsets)} of size {list(sizes)}")
    return out


@in_x64_scope
def _loaded_array(files: _Files, fqn: str, entry: TensorStorageMetadata, storage: dict,
                  target: jax.Array) -> jax.Array:
    """An array with ``target``'s shape, dtype and sharding holding the saved values; this
    process reads only the blocks of the shards it addresses."""
    shape = tuple(target.shape)
    blocks: dict[tuple, np.ndarray] = {}

    def block(index: tuple) -> np.ndarray:
        offsets, sizes = _region(index, shape)
        if (offsets, sizes) not in blocks:
            data = _read_block(files, fqn, entry, storage, offsets, sizes)
            blocks[offsets, sizes] = data.astype(target.dtype, copy=False)
        return blocks[offsets, sizes]

    if not target.committed:  # a tensor on the default device stays uncommitted
        return jax.device_put(block(tuple(slice(None) for _ in shape)))
    return jax.make_array_from_callback(shape, target.sharding, block)


def load(state_dict: dict[str, Any], *, checkpoint_id: str | os.PathLike | None = None,
         storage_reader: FileSystemReader | None = None,
         planner: DefaultLoadPlanner | None = None, process_group: ProcessGroup | None = None,
         no_dist: bool = False) -> None:
    """Load the checkpoint in ``checkpoint_id`` into ``state_dict``, in place, on every rank
    (torch's ``dcp.load``). Each tensor keeps its identity, dtype and sharding and takes the
    saved values (one in-place write: its version goes up by one); each process reads only the
    saved chunks overlapping the shards it holds, so a tensor may be sharded differently than
    when saved, or be a plain local tensor. Non-tensor values are replaced in their dicts. A
    top-level value with ``state_dict()`` and ``load_state_dict()`` gets the loaded state
    dict through ``load_state_dict``. A key missing from the checkpoint raises, unless the
    planner is ``DefaultLoadPlanner(allow_partial_load=True)``.

    >>> import tempfile
    >>> import jaxgrad, jaxgrad.distributed as dist, jaxgrad.distributed.checkpoint as dcp
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29523", rank=0,
    ...                         world_size=1)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = dcp.save({"w": jaxgrad.arange(4.0), "step": 10}, checkpoint_id=d)
    ...     state = {"w": jaxgrad.zeros(4), "step": 0}
    ...     w = state["w"]
    ...     dcp.load(state, checkpoint_id=d)
    >>> state, state["w"] is w
    ({'w': tensor([0., 1., 2., 3.]), 'step': 10}, True)
    >>> dist.destroy_process_group()
    """
    world = _world(process_group, no_dist, "load")
    reader = _storage(storage_reader, checkpoint_id, FileSystemReader)
    partial = _planner(planner, DefaultLoadPlanner).allow_partial_load
    keys = list(state_dict)
    loaded = {k: v.state_dict() if _is_stateful(v) else v for k, v in state_dict.items()}
    try:
        metadata = reader.read_metadata()
        entries, storage = metadata.state_dict_metadata, metadata.storage_data
        items = []
        for fqn, value, container, key in _flatten(loaded):
            if fqn not in entries:
                if partial:
                    continue
                raise RuntimeError(f"Missing key in checkpoint state_dict: {fqn}.")
            entry = entries[fqn]
            if isinstance(entry, TensorStorageMetadata):
                if not isinstance(value, Tensor):
                    raise RuntimeError(f"jaxgrad.distributed.checkpoint: {fqn} is a tensor in "
                                       f"the checkpoint but a {type(value).__name__} in the "
                                       f"state_dict")
                if entry.size != value.shape:
                    raise ValueError(f"Size mismatch between saved {entry.size} and current: "
                                     f"{value.shape} for {fqn}")
            items.append((fqn, value, container, key, entry))
        files = _Files(reader.path)
        for fqn, value, container, key, entry in items:
            if isinstance(entry, TensorStorageMetadata):
                if math.prod(entry.size) == 0:
                    continue  # nothing to read (torch's tensor keeps its version)
                array = _loaded_array(files, fqn, entry, storage, _array_of(fqn, value))
                value._write_inplace(array)
            else:  # (containers are dicts and lists: tuples are saved whole, as torch's)
                info = storage[MetadataIndex(fqn)]
                container[key] = pickle.loads(files.bytes(info).tobytes())
    except Exception as error:
        raise _failure("read", world, error) from error
    for k in keys:
        if _is_stateful(state_dict[k]):
            state_dict[k].load_state_dict(loaded[k])
        else:
            state_dict[k] = loaded[k]

