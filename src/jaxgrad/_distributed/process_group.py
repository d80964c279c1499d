"""The default process group: torch's ``init_process_group`` mapped onto JAX's multi-controller
runtime. Each process is one rank; joining the group is ``jax.distributed.initialize`` with the
rank, the world size and a coordinator address taken from torch's arguments or environment
variables (``env://``: ``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``, ``WORLD_SIZE``;
``tcp://host:port``). The transport is JAX's (gloo on CPU, NCCL on GPU), whatever ``backend``
names: torch's names are accepted and reported back by ``get_backend``.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass

import jax
import numpy as np
from jax._src import xla_bridge as _xla_bridge  # (whether a JAX backend has started; not public)
from jax.sharding import Mesh

_BACKENDS = ("gloo", "nccl", "mpi", "ucc", "xccl", "cpu:gloo,cuda:nccl")
DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)  # torch's default for gloo


@dataclass(eq=False)
class ProcessGroup:
    """One group of ranks: its backend name, this process's rank in it, its size, the global
    ranks of its members (in group order) and the mesh with one device per member process that
    its collectives run on.

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> dist.group.WORLD
    ProcessGroup(backend='gloo', rank=0, size=1)
    >>> dist.destroy_process_group()
    """

    backend: str
    rank: int
    size: int
    mesh: Mesh | None  # None for a group of one process (its collectives are local)
    ranks: tuple[int, ...] = ()

    def group_rank(self, global_rank: int) -> int:
        """The group rank of the process of global rank ``global_rank`` (torch's error if it is
        not a member)."""
        if global_rank not in self.ranks:
            raise ValueError(f"Group {self} does not contain rank {global_rank}")
        return self.ranks.index(global_rank)

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self.backend!r}, rank={self.rank}, size={self.size})"


class _State:
    default: ProcessGroup | None = None
    subgroups: list[ProcessGroup] = []


class _DefaultGroup:
    """A class attribute that reads as the default group (or None)."""

    def __get__(self, instance, owner) -> ProcessGroup | None:
        return _State.default


class GroupMember:
    """torch's markers: ``WORLD`` (the default group) and ``NON_GROUP_MEMBER`` (what
    ``new_group`` returns on a process outside the new group).

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> dist.GroupMember.WORLD is dist.group.WORLD, dist.GroupMember.NON_GROUP_MEMBER
    (True, -100)
    >>> dist.destroy_process_group()
    """

    NON_GROUP_MEMBER = -100
    WORLD = _DefaultGroup()


class group:  # (torch's lower-case name: ``dist.group.WORLD``)
    """``dist.group.WORLD``: the default process group.

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> dist.group.WORLD.size
    1
    >>> dist.destroy_process_group()
    """

    WORLD = _DefaultGroup()


def default_group() -> ProcessGroup:
    """The default group, or torch's error when none was initialised."""
    if _State.default is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return _State.default


def is_initialized() -> bool:
    """Whether the default process group exists.

    >>> import jaxgrad.distributed as dist
    >>> dist.is_initialized()
    False
    """
    return _State.default is not None


def _from_env(name: str, given: int) -> int:
    if given is not None and given >= 0:
        return given
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {name} expected, but not set")
    return int(value)


def coordinator_address(init_method: str | None) -> str:
    """Where JAX's coordinator listens: ``tcp://host:port``, else ``MASTER_ADDR`` and a port:
    ``JAXGRAD_COORDINATOR_PORT`` where set (jaxgrad's launcher sets it), else ``MASTER_PORT``
    (under torchrun, whose agent holds ``MASTER_PORT``, the port above it)."""
    if init_method is not None and init_method.startswith("tcp://"):
        return init_method[len("tcp://"):]
    if init_method not in (None, "env://"):
        raise ValueError(f"jaxgrad.distributed supports env:// and tcp:// init methods, not "
                         f"{init_method!r}")
    host = os.environ.get("MASTER_ADDR")
    if host is None:
        raise ValueError("Error initializing torch.distributed using env:// rendezvous: "
                         "environment variable MASTER_ADDR expected, but not set")
    port = os.environ.get("JAXGRAD_COORDINATOR_PORT")
    if port is None:
        master = os.environ.get("MASTER_PORT")
        if master is None:
            raise ValueError("Error initializing torch.distributed using env:// rendezvous: "
                             "environment variable MASTER_PORT expected, but not set")
        port = str(int(master) + 1) if "TORCHELASTIC_RUN_ID" in os.environ else master
    return f"{host}:{port}"


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: datetime.timedelta | None = None, world_size: int = -1,
                       rank: int = -1, store=None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Join the default process group (torch's ``init_process_group``): this process becomes
    rank ``rank`` of ``world_size`` in JAX's multi-controller runtime. Call it before any JAX
    computation (``import jaxgrad`` starts none).

    >>> import jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29511", rank=0,
    ...                         world_size=1)
    >>> dist.get_rank(), dist.get_world_size(), dist.get_backend()
    (0, 1, 'gloo')
    >>> dist.destroy_process_group()
    """
    if _State.default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        raise NotImplementedError("jaxgrad.distributed: a Store rendezvous is not supported; "
                                  "use env:// or tcp:// (JAX's coordinator is the store)")
    backend = "gloo" if backend is None else str(backend).lower()
    if backend not in _BACKENDS:
        raise ValueError(f"Invalid backend: '{backend}'")
    rank = _from_env("RANK", rank)
    world_size = _from_env("WORLD_SIZE", world_size)
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, "
                         f"{world_size - 1}]")
    if jax.distributed.is_initialized() and (jax.process_count(), jax.process_index()) != (
            world_size, rank):
        raise ValueError(
            f"init_process_group(rank={rank}, world_size={world_size}) in a process that "
            f"already joined JAX's runtime as process {jax.process_index()} of "
            f"{jax.process_count()}: pass the same rank and world size")
    if world_size > 1 and not jax.distributed.is_initialized():
        if _xla_bridge.backends_are_initialized():
            raise RuntimeError(
                "init_process_group() must be called before any JAX computation in this "
                "process (a tensor made or an op run before it started JAX on one process); "
                "move it to the start of the program")
        seconds = int((timeout or DEFAULT_TIMEOUT).total_seconds())
        address = coordinator_address(init_method)
        # The coordinator listens on its own address only (JAX's default is every interface);
        # the shutdown barrier waits as long as any collective may (a rank that ends early
        # waits for the others, as torch's ranks end independently; jaxgrad's launcher ends a
        # job whose rank failed).
        jax.distributed.initialize(
            address, num_processes=world_size, process_id=rank,
            coordinator_bind_address=os.environ.get("JAX_COORDINATOR_BIND_ADDRESS", address),
            initialization_timeout=seconds, heartbeat_timeout_seconds=min(seconds, 100),
            shutdown_timeout_seconds=seconds)
    members = tuple(range(world_size))
    _State.default = ProcessGroup(backend, rank, world_size, _mesh_of(members), members)


def _mesh_of(members: tuple[int, ...]) -> Mesh | None:
    """The mesh with the first device of each member process, in group order (none for one)."""
    if len(members) == 1:
        return None
    return Mesh(np.array([_first_device_of(p) for p in members]), ("rank",))


def _first_device_of(process: int) -> jax.Device:
    return min((d for d in jax.devices() if d.process_index == process), key=lambda d: d.id)


def new_group(ranks: list[int] | None = None, timeout: datetime.timedelta | None = None,
              backend: str | None = None, pg_options=None, use_local_synchronization=False,
              group_desc: str | None = None, device_id=None) -> ProcessGroup | int:
    """A group of the processes of global ranks ``ranks`` (all by default), in that order.
    Every process calls it, as in torch; a process outside ``ranks`` gets
    ``GroupMember.NON_GROUP_MEMBER``. Its collectives run over a mesh of its members' devices.

    >>> import jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29512", rank=0,
    ...                         world_size=1)
    >>> g = dist.new_group([0])
    >>> dist.get_rank(g), dist.get_world_size(g), dist.get_process_group_ranks(g)
    (0, 1, [0])
    >>> dist.destroy_process_group()
    """
    world = default_group()
    members = tuple(range(world.size)) if ranks is None else tuple(sorted(ranks))
    for r in members:
        if not 0 <= r < world.size:
            raise ValueError(f"The new group's rank should be within the world_size set by "
                             f"init_process_group, but got {r}")
    if world.rank not in members:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(backend or world.backend, members.index(world.rank), len(members),
                      _mesh_of(members), members)
    _State.subgroups.append(pg)
    return pg


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leave the default process group. JAX's runtime stays joined until the process ends (it
    cannot be joined twice), so ``init_process_group`` with the same rank and world size may
    create the group again, as torch allows.

    >>> import jaxgrad.distributed as dist
    >>> dist.is_initialized()
    False
    """
    pg = _State.default
    if pg is None:
        raise AssertionError("Process group cannot be None")  # (torch's check)
    if group is not None and group is not pg:
        _State.subgroups = [g for g in _State.subgroups if g is not group]
        return
    _State.default, _State.subgroups = None, []


def resolve(group: ProcessGroup | int | None) -> ProcessGroup:
    """The group a collective runs on: ``group``, or the default one."""
    if group is None:
        return default_group()
    if group == GroupMember.NON_GROUP_MEMBER:
        raise ValueError("This process is not a member of the group it calls a collective on")
    return group


def get_rank(group: ProcessGroup | int | None = None) -> int:
    """This process's rank in ``group`` (the default group when none; -1 if not a member, as
    torch).

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> dist.get_rank(), dist.get_rank(dist.new_group([0]))
    (0, 0)
    >>> dist.destroy_process_group()
    """
    world = default_group()
    return -1 if group == GroupMember.NON_GROUP_MEMBER else (group or world).rank


def get_world_size(group: ProcessGroup | int | None = None) -> int:
    """The number of processes in ``group`` (-1 if this process is not a member, as torch).

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> dist.get_world_size()
    1
    >>> dist.destroy_process_group()
    """
    world = default_group()
    return -1 if group == GroupMember.NON_GROUP_MEMBER else (group or world).size


def get_process_group_ranks(group: ProcessGroup) -> list[int]:
    """The global ranks of ``group``'s members, in group order.

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> dist.get_process_group_ranks(dist.group.WORLD)
    [0]
    >>> dist.destroy_process_group()
    """
    return list(resolve(group).ranks)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    """The global rank of the member of rank ``group_rank`` in ``group``.

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> dist.get_global_rank(dist.new_group([0]), 0)
    0
    >>> dist.destroy_process_group()
    """
    return resolve(group).ranks[group_rank]


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    """The rank in ``group`` of the process of global rank ``global_rank``.

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> dist.get_group_rank(dist.new_group([0]), 0)
    0
    >>> dist.destroy_process_group()
    """
    return resolve(group).group_rank(global_rank)


def get_backend(group: ProcessGroup | int | None = None) -> str:
    """The backend name the group was created with (torch's names; JAX's transport runs it).

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> dist.get_backend()
    'gloo'
    >>> dist.destroy_process_group()
    """
    if group == GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return (group or default_group()).backend
