"""torch.distributed's collectives, eager, as cached jitted programs over the group's mesh
(one device per process): each rank's tensor becomes its row of a global array (no copy), one
XLA program reduces or gathers the rows into a replicated result, and each rank writes its
part back into its tensor in place (a version bump, as torch's collectives count). Each runs
inside jaxgrad's x64 scope, as every op does (float64 stays float64)."""

from __future__ import annotations

import enum
from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from .._core.caches import cache
from .._core.jax_setup import in_x64_scope, jit
from .._core.tensor import Tensor
from .process_group import ProcessGroup, default_group


class ReduceOp(enum.Enum):
    """How ``all_reduce``/``reduce``/``reduce_scatter_tensor`` combine the ranks' values."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {list(ReduceOp).index(self)}>"


_REDUCE = {ReduceOp.SUM: jnp.sum, ReduceOp.AVG: jnp.mean, ReduceOp.PRODUCT: jnp.prod,
           ReduceOp.MIN: jnp.min, ReduceOp.MAX: jnp.max}


class Work:
    """What an ``async_op=True`` collective returns: already complete once ``wait`` returns."""

    def __init__(self, arrays: list) -> None:
        self._arrays = arrays

    def wait(self, timeout: Any = None) -> bool:
        for a in self._arrays:
            a.block_until_ready()
        return True

    def is_completed(self) -> bool:
        return all(a.is_ready() for a in self._arrays)


def _rows(pg: ProcessGroup, array: jax.Array) -> jax.Array:
    """The global array whose row ``r`` is rank ``r``'s ``array`` (this process's row is a view
    of its array on the mesh's device)."""
    device = pg.mesh.devices[pg.rank]
    local = jax.device_put(array[None], device)
    return jax.make_array_from_single_device_arrays(
        (pg.size, *array.shape), NamedSharding(pg.mesh, P("rank")), [local])


@cache(maxsize=256)
def _program(pg_mesh, what: str, op: ReduceOp | None):
    """The jitted program over the rows for one collective, its result replicated."""
    replicated = NamedSharding(pg_mesh, P())
    if what == "reduce":
        def run(rows):
            out = _REDUCE[op](rows, axis=0)
            return out.astype(rows.dtype)
    else:  # "gather": every rank gets every row
        def run(rows):
            return rows
    return jit(run, out_shardings=replicated)


def _collect(pg: ProcessGroup, tensor: Tensor, what: str, op: ReduceOp | None = None):
    """The replicated result of one collective, as this process's local array."""
    out = _program(pg.mesh, what, op)(_rows(pg, tensor._value))
    return out.addressable_data(0)


def _finish(arrays: list, async_op: bool) -> Work | None:
    return Work(arrays) if async_op else None


def _check_op(op: Any) -> ReduceOp:
    if not isinstance(op, ReduceOp):
        raise TypeError(f"Invalid function argument: op must be a ReduceOp, not {op!r}")
    return op


@in_x64_scope
def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Combine ``tensor`` across all ranks with ``op``; every rank's tensor holds the result."""
    pg, op = group or default_group(), _check_op(op)
    if pg.size == 1:
        return _finish([tensor._value], async_op)
    result = _collect(pg, tensor, "reduce", op)
    tensor._write_inplace(result)
    return _finish([result], async_op)


@in_x64_scope
def broadcast(tensor: Tensor, src: int, group: ProcessGroup | None = None,
              async_op: bool = False) -> Work | None:
    """Every rank's ``tensor`` takes rank ``src``'s values."""
    pg = group or default_group()
    if not 0 <= src < pg.size:
        raise ValueError(f"Invalid src rank {src}")
    if pg.size == 1:
        return _finish([tensor._value], async_op)
    result = _collect(pg, tensor, "gather")[src]
    tensor._write_inplace(result)
    return _finish([result], async_op)


@in_x64_scope
def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """``tensor_list[r]`` takes rank ``r``'s ``tensor``, on every rank."""
    pg = group or default_group()
    if len(tensor_list) != pg.size:
        raise ValueError("tensor list must have the world size's length")
    rows = _collect(pg, tensor, "gather") if pg.size > 1 else tensor._value[None]
    parts = [rows[r] for r in range(pg.size)]
    for out, part in zip(tensor_list, parts):
        out._write_inplace(part.astype(out._value.dtype))
    return _finish(parts, async_op)


@in_x64_scope
def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor,
                           group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:
    """``output_tensor`` (world size times ``input_tensor``'s first dim) takes every rank's
    ``input_tensor``, concatenated along dim 0 in rank order."""
    pg = group or default_group()
    rows = _collect(pg, input_tensor, "gather") if pg.size > 1 else input_tensor._value[None]
    result = rows.reshape(output_tensor._value.shape)
    output_tensor._write_inplace(result)
    return _finish([result], async_op)


@in_x64_scope
def reduce_scatter_tensor(output: Tensor, input: Tensor, op: ReduceOp = ReduceOp.SUM,
                          group: ProcessGroup | None = None,
                          async_op: bool = False) -> Work | None:
    """Combine ``input`` across ranks with ``op``; rank ``r``'s ``output`` takes the ``r``-th
    of the world size's equal chunks of the result along dim 0."""
    pg, op = group or default_group(), _check_op(op)
    reduced = _collect(pg, input, "reduce", op) if pg.size > 1 else input._value
    n = output._value.shape[0]
    result = reduced[pg.rank * n:(pg.rank + 1) * n]
    output._write_inplace(result)
    return _finish([result], async_op)


@in_x64_scope
def barrier(group: ProcessGroup | None = None, async_op: bool = False,
            device_ids: Any = None) -> Work | None:
    """Wait until every rank reaches this call."""
    pg = group or default_group()
    if pg.size == 1:
        return _finish([], async_op)
    token = Tensor._make(jnp.zeros((), jnp.int32))
    result = _collect(pg, token, "reduce", ReduceOp.SUM)
    result.block_until_ready()
    return _finish([result], async_op)
