"""torch's ``dcp.save`` and ``dcp.load``: every rank calls them with its state dict (SPMD); each
rank writes and reads only its part (:mod:`jaxgrad._distributed.checkpoint.layout`) of the
checkpoint directory (:mod:`jaxgrad._distributed.checkpoint.filesystem`)."""

from __future__ import annotations

import math
import os
import pickle
import warnings
from typing import Any

from ..._core.tensor import Tensor
from ..process_group import ProcessGroup
from .exchange import check_all_ranks, current_world, failure, from_coordinator
from .filesystem import (
    METADATA_FILE,
    DataFiles,
    FileSystemReader,
    FileSystemWriter,
    file_name,
    resolve_storage,
    write_atomic,
    write_items,
)
from .flatten import flatten, is_stateful, unwrapped
from .layout import array_of, loaded_array, plan_save
from .metadata import Metadata, MetadataIndex, TensorStorageMetadata, from_json, to_json
from .planner import DefaultLoadPlanner, DefaultSavePlanner, resolve_planner

__all__ = ["load", "save"]


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
    world = current_world(process_group, no_dist, "save")
    writer = resolve_storage(storage_writer, checkpoint_id, FileSystemWriter)
    resolve_planner(planner, DefaultSavePlanner)
    state_dict = unwrapped(state_dict)
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
        metadata, plan = plan_save(flatten(state_dict), world)
        write_items(writer.path / file_name(world.rank), plan.mine, writer.sync_files)
        error = None
    except Exception as e:
        error = e
    check_all_ranks("write", world, error)  # (every rank raises if any failed; also the barrier)
    text = None
    if world.rank == 0:
        text = to_json(metadata)
        write_atomic(writer.path / METADATA_FILE, [text.encode()], writer.sync_files)
    return from_json(from_coordinator(world, text))


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
    world = current_world(process_group, no_dist, "load")
    reader = resolve_storage(storage_reader, checkpoint_id, FileSystemReader)
    partial = resolve_planner(planner, DefaultLoadPlanner).allow_partial_load
    keys = list(state_dict)
    loaded = unwrapped(state_dict)
    try:
        metadata = reader.read_metadata()
        entries, storage = metadata.state_dict_metadata, metadata.storage_data
        items = []
        for fqn, value, container, key in flatten(loaded):
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
        files = DataFiles(reader.path)
        for fqn, value, container, key, entry in items:
            if isinstance(entry, TensorStorageMetadata):
                if math.prod(entry.size) == 0:
                    continue  # nothing to read (torch's tensor keeps its version)
                array = loaded_array(files, fqn, entry, storage, array_of(fqn, value))
                value._write_inplace(array)
            else:  # (containers are dicts and lists: tuples are saved whole, as torch's)
                info = storage[MetadataIndex(fqn)]
                container[key] = pickle.loads(files.bytes(info).tobytes())
    except Exception as error:
        raise failure("read", world, error) from error
    for k in keys:
        if is_stateful(state_dict[k]):
            state_dict[k].load_state_dict(loaded[k])
        else:
            state_dict[k] = loaded[k]
