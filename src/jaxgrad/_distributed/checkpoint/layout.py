"""Which rank writes which part of each tensor, and which saved chunks a rank reads back.

**Saving.** A tensor whose array spans processes (a global ``jax.Array``, e.g. sharded FSDP-like
over a mesh of every process's devices) is cut into its sharding's distinct shards
(``sharding.devices_indices_map``); each shard is written once, by the process of the device
holding its first replica (JAX's ``replica_id == 0``), into that rank's file. A tensor whose
array lives on one process only is that process's local copy, taken to be replicated across
ranks (the DDP pattern): the coordinator (rank 0) writes it whole, once, as it writes every
non-tensor value. Every process computes every rank's layout from the arrays' shardings, so the
coordinator writes the complete metadata without gathering anything.

**Loading.** For each tensor, a process reads the bytes of the saved chunks that overlap the
shards it addresses, whatever the sharding was at save time.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from ..._core.dtypes import from_numpy_dtype
from ..._core.jax_setup import in_x64_scope
from ..._core.tensor import Size, Tensor
from .exchange import World
from .filesystem import DataFiles, file_name
from .metadata import (
    VERSION,
    BytesStorageMetadata,
    ChunkStorageMetadata,
    Metadata,
    MetadataIndex,
    StorageInfo,
    TensorProperties,
    TensorStorageMetadata,
)


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


def array_of(fqn: str, t: Tensor) -> jax.Array:
    """The concrete ``jax.Array`` of the tensor ``fqn`` (raises for a traced one)."""
    array = t._value
    if not isinstance(array, jax.Array) or isinstance(array, jax.core.Tracer):
        raise TypeError(f"jaxgrad.distributed.checkpoint: {fqn} has no concrete array "
                        f"(a traced or storage-less tensor)")
    return array


@dataclass
class _Item:
    """One stored item: where its bytes go, and (on the rank that writes it) how to get them."""

    file_rank: int
    offset: int
    length: int
    produce: Callable[[], Any] | None


class SavePlan:
    """Every rank's items, laid out file by file (each process computes the same layout for
    the shards of global arrays; local tensors and non-tensor values are the coordinator's)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.ends: dict[int, int] = {}
        self.mine: list[_Item] = []

    def add(self, file_rank: int, length: int, produce: Callable[[], Any]) -> StorageInfo:
        offset = self.ends.get(file_rank, 0)
        self.ends[file_rank] = offset + length
        if file_rank == self.world.rank:
            self.mine.append(_Item(file_rank, offset, length, produce))
        return StorageInfo(file_name(file_rank), offset, length)


def _plan_tensor(plan: SavePlan, fqn: str, t: Tensor,
                 storage: dict[MetadataIndex, StorageInfo]) -> TensorStorageMetadata:
    array = array_of(fqn, t)
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


def plan_save(items: list, world: World) -> tuple[Metadata, SavePlan]:
    """The checkpoint's :class:`Metadata` and every rank's layout for the flattened ``items``
    (this rank's share holding how to produce its bytes)."""
    plan = SavePlan(world)
    entries: dict[str, Any] = {}
    storage: dict[MetadataIndex, StorageInfo] = {}
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


def _read_block(files: DataFiles, fqn: str, entry: TensorStorageMetadata, storage: dict,
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
def loaded_array(files: DataFiles, fqn: str, entry: TensorStorageMetadata, storage: dict,
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
