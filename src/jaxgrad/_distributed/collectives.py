"""torch.distributed's collectives, eager, as cached jitted programs over the group's mesh
(one device per process): each rank's tensor becomes its row of a global array (no copy), one
XLA program reduces or gathers the rows into a replicated result, and each rank writes its
part back into its tensor in place (a version bump, as torch's collectives count). Each runs
inside jaxgrad's x64 scope, as every op does (float64 stays float64)."""

from __future__ import annotations

import enum
import functools
import pickle
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from .._core.caches import cache
from .._core.dtypes import c_type_name, scalar_type_name
from .._core.jax_setup import in_x64_scope, jit
from .._core.tensor import Tensor
from . import over_processes as _over_processes
from .process_group import ProcessGroup, resolve


class ReduceOp(enum.Enum):
    """How ``all_reduce``/``reduce``/``reduce_scatter_tensor`` combine the ranks' values.

    >>> import jaxgrad.distributed as dist
    >>> dist.ReduceOp.AVG
    <RedOpType.AVG: 1>
    """

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {list(ReduceOp).index(self)}>"


def _average(rows, axis):
    """torch's AVG: a sum in the tensor's dtype, then a division (float16 may overflow)."""
    return jnp.sum(rows, axis=axis, dtype=rows.dtype) / jnp.asarray(rows.shape[axis], rows.dtype)


_REDUCE = {ReduceOp.SUM: jnp.sum, ReduceOp.AVG: _average, ReduceOp.PRODUCT: jnp.prod,
           ReduceOp.MIN: jnp.min, ReduceOp.MAX: jnp.max, ReduceOp.BAND: jnp.bitwise_and.reduce,
           ReduceOp.BOR: jnp.bitwise_or.reduce, ReduceOp.BXOR: jnp.bitwise_xor.reduce}
_BITWISE = (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)


class Work:
    """What an ``async_op=True`` collective returns: already complete once ``wait`` returns.

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> work = dist.all_reduce(jaxgrad.ones(2), async_op=True)
    >>> work.wait(), work.is_completed()
    (True, True)
    >>> dist.destroy_process_group()
    """

    def __init__(self, arrays: list) -> None:
        self._arrays = arrays

    def wait(self, timeout: Any = None) -> bool:
        for a in self._arrays:
            if not isinstance(a, jax.core.Tracer):  # (traced: the program orders it)
                a.block_until_ready()
        return True

    def is_completed(self) -> bool:
        return all(isinstance(a, jax.core.Tracer) or a.is_ready() for a in self._arrays)


def _rows(pg: ProcessGroup, array: jax.Array) -> jax.Array:
    """The global array whose row ``r`` is group rank ``r``'s ``array`` (this process's row is
    a view of its array on the mesh's device)."""
    device = pg.mesh.devices[pg.rank]
    local = jax.device_put(array[None], device)
    return jax.make_array_from_single_device_arrays(
        (pg.size, *array.shape), NamedSharding(pg.mesh, P("rank")), [local])


@cache(maxsize=256, kernels=True)
def _program(pg_mesh, what: str, arg: Any):
    """The jitted program over the rows for one collective: "reduce" (``arg`` the op) and
    "gather" (every row) replicate their result; "pick" replicates row ``arg`` (a broadcast);
    "scatter" hands row ``arg``'s ``r``-th part to rank ``r``."""
    replicated = NamedSharding(pg_mesh, P())
    if what == "reduce":
        def run(rows):
            return _REDUCE[arg](rows, axis=0).astype(rows.dtype)
    elif what == "gather":
        def run(rows):
            return rows
    else:
        def run(rows):
            return rows[arg]
    if what == "scatter":
        return jit(run, out_shardings=NamedSharding(pg_mesh, P("rank")))
    return jit(run, out_shardings=replicated)


def _result_shape(pg: ProcessGroup, shape: tuple, what: str) -> tuple:
    """This process's part of a collective's result over rows of ``shape``."""
    return {"reduce": shape, "gather": (pg.size, *shape), "pick": shape,
            "scatter": shape[1:]}[what]


def _collect(pg: ProcessGroup, array: jax.Array, what: str, arg: Any = None):
    """This process's part of one collective over the group's rows of ``array`` (see
    :func:`_program`); local for a group of one. In a trace of ``jaxgrad.compile``, an XLA
    collective of the step compiled as one program over the group (see ``over_processes``);
    in other traces, an ordered host call in the traced program: every rank's program runs it
    at the same point, in program order."""
    if pg.size == 1:
        return array[None] if what == "gather" else array[0] if what == "scatter" else array
    if what == "reduce" and arg in _BITWISE:  # (XLA's CPU all-reduce has no bitwise ops)
        return _REDUCE[arg](_collect(pg, array, "gather"), axis=0)
    if isinstance(array, jax.core.Tracer):
        if _over_processes.lowers(pg):
            return _over_processes.collective(array, what, arg, _REDUCE.get(arg), pg.size)
        shape = _result_shape(pg, array.shape, what)
        return io_callback(functools.partial(_collect_on_host, pg, what=what, arg=arg),
                           jax.ShapeDtypeStruct(shape, array.dtype), array, ordered=True)
    out = _program(pg.mesh, what, arg)(_rows(pg, array)).addressable_data(0)
    return out[0] if what == "scatter" else out


@in_x64_scope
def _collect_on_host(pg: ProcessGroup, array: np.ndarray, what: str, arg: Any):
    return np.asarray(_collect(pg, jnp.asarray(array), what, arg))


def _finish(arrays: list, async_op: bool) -> Work | None:
    return Work(arrays) if async_op else None


def _check_op(op: Any, tensor: Tensor, name: str | None = None) -> ReduceOp:
    """``op``, if torch's ``name`` collective takes it for ``tensor``'s dtype."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"Invalid function argument: op must be a ReduceOp, not {op!r}")
    dtype = tensor.dtype
    if op is ReduceOp.AVG and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{scalar_type_name(dtype)}")
    if op in _BITWISE and (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if name and dtype.is_complex and op in (ReduceOp.MIN, ReduceOp.MAX, ReduceOp.PRODUCT):
        raise ValueError(f"{name} does not support RedOpType.{op.name} on complex tensors")
    return op


def _dims(shape: tuple) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ")"


def _check_sizes(name: str, expected: tuple, tensors: list[Tensor]) -> None:
    """torch's gloo check that every tensor of a list has the ``expected`` shape."""
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(expected):
            raise RuntimeError(f"ProcessGroupGloo::{name}: invalid tensor size at index {i} "
                               f"(expected {_dims(expected)}, got {_dims(tuple(t.shape))})")


def _same_dtypes(*tensors: Tensor) -> None:
    """torch's check that the tensors a collective reads and writes share one dtype."""
    first = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype != first:
            raise ValueError(f"Invalid usage of tensors with different dtypesFound {first} "
                             f"and  {t.dtype}")


def _root(pg: ProcessGroup, rank: int, name: str) -> int:
    """The group rank of the root given as global rank ``rank`` (torch's gloo error when it is
    out of the default group's range)."""
    if rank not in pg.ranks and pg.ranks == tuple(range(pg.size)):
        raise RuntimeError(f"ProcessGroupGloo::{name}: invalid root rank: {rank}")
    return pg.group_rank(rank)


def _check_root_list(pg: ProcessGroup, tensor: Tensor, tensors: list | None, name: str,
                     what: str) -> None:
    """torch's checks of the root's list in ``gather``/``scatter``: one tensor per rank, each
    of ``tensor``'s dtype and shape."""
    tensors = tensors or []
    if len(tensors) != pg.size:
        raise RuntimeError(f"ProcessGroupGloo::{name}: Incorrect {what} list size "
                           f"{len(tensors)}. {what.capitalize()} list size should be "
                           f"{pg.size}, same as size of the process group.")
    _same_dtypes(tensor, *tensors)
    _check_sizes(name, tuple(tensor.shape), tensors)


# torch's version-counter convention, observed on gloo: the tensor a collective reduces or
# broadcasts into keeps its version (the transport writes its memory), except AVG (a sum, then
# an in-place division); output lists written by a copy count one in-place op each;
# all_gather_into_tensor's output one per rank (a copy per chunk).


@in_x64_scope
def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Combine ``tensor`` across all ranks with ``op``; every rank's tensor holds the result.

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> t = jaxgrad.tensor([1.0, 2.0])
    >>> dist.all_reduce(t, op=dist.ReduceOp.SUM); t
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    pg, op = resolve(group), _check_op(op, tensor, "all_reduce")
    result = _collect(pg, tensor._value, "reduce", op)
    tensor._write_inplace(result, ops=int(op is ReduceOp.AVG))
    return _finish([result], async_op)


@in_x64_scope
def reduce(tensor: Tensor, dst: int, op: ReduceOp = ReduceOp.SUM,
           group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Combine ``tensor`` across all ranks with ``op`` into rank ``dst``'s tensor (the others'
    keep their values).

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> t = jaxgrad.tensor([1.0, 2.0])
    >>> dist.reduce(t, dst=0); t
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    pg, op = resolve(group), _check_op(op, tensor)
    root = _root(pg, dst, "reduce")
    result = _collect(pg, tensor._value, "reduce", op)
    if pg.rank == root:
        tensor._write_inplace(result, ops=int(op is ReduceOp.AVG))
    return _finish([result], async_op)


@in_x64_scope
def broadcast(tensor: Tensor, src: int, group: ProcessGroup | None = None,
              async_op: bool = False) -> Work | None:
    """Every rank's ``tensor`` takes rank ``src``'s values.

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> t = jaxgrad.tensor([3.0])
    >>> dist.broadcast(t, src=0); t
    tensor([3.])
    >>> dist.destroy_process_group()
    """
    pg = resolve(group)
    root = _root(pg, src, "broadcast")
    result = _collect(pg, tensor._value, "pick", root)
    tensor._write_inplace(result, ops=0)
    return _finish([result], async_op)


@in_x64_scope
def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """``tensor_list[r]`` takes rank ``r``'s ``tensor``, on every rank.

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> out = [jaxgrad.zeros(2)]
    >>> dist.all_gather(out, jaxgrad.ones(2)); out
    [tensor([1., 1.])]
    >>> dist.destroy_process_group()
    """
    pg = resolve(group)
    if len(tensor_list) != pg.size:
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid output tensor list at index "
                           f"0 (expected length {pg.size}, got {len(tensor_list)})")
    _same_dtypes(*tensor_list, tensor)
    _check_sizes("allgather", tuple(tensor.shape), tensor_list)
    rows = _collect(pg, tensor._value, "gather")
    parts = [rows[r] for r in range(pg.size)]
    for out, part in zip(tensor_list, parts):
        out._write_inplace(part)
    return _finish(parts, async_op)


@in_x64_scope
def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int = 0,
           group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Rank ``dst``'s ``gather_list[r]`` takes rank ``r``'s ``tensor`` (the other ranks pass no
    list).

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> out = [jaxgrad.zeros(2)]
    >>> dist.gather(jaxgrad.ones(2), out, dst=0); out
    [tensor([1., 1.])]
    >>> dist.destroy_process_group()
    """
    pg = resolve(group)
    root = _root(pg, dst, "gather")
    if pg.rank == root:
        _check_root_list(pg, tensor, gather_list, "gather", "output")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    rows = _collect(pg, tensor._value, "gather")
    if pg.rank == root:
        for r, out in enumerate(gather_list):
            out._write_inplace(rows[r])
    return _finish([rows], async_op)


@in_x64_scope
def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int = 0,
            group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Every rank ``r``'s ``tensor`` takes rank ``src``'s ``scatter_list[r]`` (the other ranks
    pass no list).

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> t = jaxgrad.zeros(2)
    >>> dist.scatter(t, [jaxgrad.ones(2)], src=0); t
    tensor([1., 1.])
    >>> dist.destroy_process_group()
    """
    pg = resolve(group)
    root = _root(pg, src, "scatter")
    if pg.rank == root:
        _check_root_list(pg, tensor, scatter_list, "scatter", "input")
        mine = jnp.stack([t._value for t in scatter_list])
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    else:
        mine = jnp.zeros((pg.size, *tensor._value.shape), tensor._value.dtype)
    result = _collect(pg, mine, "scatter", root)
    tensor._write_inplace(result, ops=0)
    return _finish([result], async_op)


@in_x64_scope
def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor,
                           group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:
    """``output_tensor`` (world size times ``input_tensor``'s first dim) takes every rank's
    ``input_tensor``, concatenated along dim 0 in rank order.

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> out = jaxgrad.zeros(2)
    >>> dist.all_gather_into_tensor(out, jaxgrad.ones(2)); out
    tensor([1., 1.])
    >>> dist.destroy_process_group()
    """
    pg = resolve(group)
    out_shape = tuple(output_tensor.shape)
    chunk = (out_shape[0] // pg.size, *out_shape[1:]) if out_shape else ()
    if chunk != tuple(input_tensor.shape) or (out_shape and out_shape[0] % pg.size):
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid tensor size at index 0 "
                           f"(expected {_dims(tuple(input_tensor.shape))}, got {_dims(chunk)})")
    if output_tensor.dtype != input_tensor.dtype:
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid tensor type at index 0 "
                           f"(expected {input_tensor.dtype}, got {output_tensor.dtype})")
    rows = _collect(pg, input_tensor._value, "gather")
    result = rows.reshape(output_tensor._value.shape)
    output_tensor._write_inplace(result, ops=pg.size)
    return _finish([result], async_op)


@in_x64_scope
def reduce_scatter_tensor(output: Tensor, input: Tensor, op: ReduceOp = ReduceOp.SUM,
                          group: ProcessGroup | None = None,
                          async_op: bool = False) -> Work | None:
    """Combine ``input`` across ranks with ``op``; rank ``r``'s ``output`` takes the ``r``-th
    of the world size's equal chunks of the result along dim 0.

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> out = jaxgrad.zeros(2)
    >>> dist.reduce_scatter_tensor(out, jaxgrad.ones(2)); out
    tensor([1., 1.])
    >>> dist.destroy_process_group()
    """
    pg, op = resolve(group), _check_op(op, input)
    n = output._value.shape[0]
    if n * pg.size != input._value.shape[0]:
        raise RuntimeError(f"Check failed: outputShape[0] * worldSize == inputShape[0] "
                           f"({n * pg.size} vs. {input._value.shape[0]}).")
    if output.dtype != input.dtype:
        raise RuntimeError(f"Check failed: outputTensors[i].dtype() == inputTensors[i].dtype() "
                           f"({c_type_name(output.dtype)} vs. {c_type_name(input.dtype)}).")
    reduced = _collect(pg, input._value, "reduce", op)
    result = reduced[pg.rank * n:(pg.rank + 1) * n]
    output._write_inplace(result)
    return _finish([result], async_op)


@in_x64_scope
def barrier(group: ProcessGroup | None = None, async_op: bool = False,
            device_ids: Any = None) -> Work | None:
    """Wait until every rank reaches this call.

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> dist.barrier()
    >>> dist.destroy_process_group()
    """
    pg = resolve(group)
    result = _collect(pg, jnp.zeros((), jnp.int32), "reduce", ReduceOp.SUM)
    result.block_until_ready()
    return _finish([result], async_op)


def _to_bytes(obj: Any) -> np.ndarray:
    return np.frombuffer(pickle.dumps(obj), np.uint8)


def _padded(data: np.ndarray, size: int) -> jax.Array:
    return jnp.asarray(np.pad(data, (0, size - data.size)))


@in_x64_scope
def all_gather_object(object_list: list, obj: Any, group: ProcessGroup | None = None) -> None:
    """``object_list[r]`` takes rank ``r``'s ``obj`` (any picklable object), on every rank.

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> objs = [None]
    >>> dist.all_gather_object(objs, {'step': 3}); objs
    [{'step': 3}]
    >>> dist.destroy_process_group()
    """
    pg = resolve(group)
    data = _to_bytes(obj)
    sizes = np.asarray(_collect(pg, jnp.asarray(data.size, jnp.int64), "gather"))
    rows = np.asarray(_collect(pg, _padded(data, int(sizes.max())), "gather"))
    for r in range(pg.size):
        object_list[r] = pickle.loads(rows[r, :sizes[r]].tobytes())


@in_x64_scope
def broadcast_object_list(object_list: list, src: int = 0, group: ProcessGroup | None = None,
                          device: Any = None) -> None:
    """Every rank's ``object_list`` takes rank ``src``'s objects (same length on every rank).

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> objs = ['config']
    >>> dist.broadcast_object_list(objs, src=0); objs
    ['config']
    >>> dist.destroy_process_group()
    """
    pg = resolve(group)
    root = _root(pg, src, "broadcast")
    datas = [_to_bytes(o) for o in object_list] if pg.rank == root else []
    sizes = jnp.asarray([d.size for d in datas] if datas else [0] * len(object_list), jnp.int64)
    sizes = np.asarray(_collect(pg, sizes, "pick", root))
    mine = np.concatenate(datas) if datas else np.zeros(0, np.uint8)
    flat = np.asarray(_collect(pg, _padded(mine, int(sizes.sum())), "pick", root))
    ends = np.cumsum(sizes)
    for i, end in enumerate(ends):
        object_list[i] = pickle.loads(flat[end - sizes[i]:end].tobytes())
