"""The ranks of a checkpoint and what passes between them: the coordinator's metadata, and each
rank's failure, so that every rank raises when a step failed on any (torch's ``_DistWrapper``).
Over a process group when there is one, else over JAX's multi-controller runtime."""

from __future__ import annotations

import pickle
import traceback
import warnings
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
from jax.experimental import multihost_utils

from ..collectives import all_gather_object, broadcast_object_list
from ..process_group import ProcessGroup, is_initialized, resolve
from .metadata import CheckpointException


@dataclass(frozen=True)
class World:
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


def current_world(process_group: ProcessGroup | None, no_dist: bool, action: str) -> World:
    """The ranks that ``action`` (save or load) runs on: ``process_group``'s (the default
    group's), else every JAX process, else this process alone (with torch's warning)."""
    if not no_dist and (process_group is not None or is_initialized()):
        pg = resolve(process_group)
        return World(pg.rank, pg.size, tuple(pg.ranks), pg)
    if not no_dist and jax.process_count() > 1:  # JAX's runtime joined without a group
        n = jax.process_count()
        return World(jax.process_index(), n, tuple(range(n)), None)
    warnings.warn(f"torch.distributed is disabled, unavailable or uninitialized, assuming the "
                  f"intent is to {action} in a single process.", stacklevel=3)
    return World(0, 1, (jax.process_index(),), None)


def from_coordinator(world: World, text: str | None) -> str:
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


def _gathered(world: World, obj: Any) -> list:
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


def check_all_ranks(step: str, world: World, error: Exception | None) -> None:
    """Raise :class:`CheckpointException` on every rank when ``step`` failed on any rank
    (torch's ``_DistWrapper``): each rank's failure (or None) is gathered on every rank."""
    mine = None if error is None else _wrapped(error)
    failures = {r: f for r, f in enumerate(_gathered(world, mine)) if f is not None}
    if error is not None:  # this rank's own exception object, not its unpickled copy
        failures[world.rank] = (error, mine[1])
    if failures:
        raise CheckpointException(step, failures) from error


def failure(step: str, world: World, error: Exception) -> CheckpointException:
    """The :class:`CheckpointException` of ``step`` failing with ``error`` on this rank alone."""
    return CheckpointException(step, {world.rank: (error, traceback.extract_tb(
        error.__traceback__))})
