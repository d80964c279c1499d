"""Collectives inside ``jaxgrad.compile``: the compiled step as one XLA program over the group's
processes, each collective an XLA collective of that program.

A compiled step is traced in each process on that process's arrays. A collective over a group of
several processes met in such a trace asks for the step to be compiled again
(:class:`~jaxgrad._core.tracing.ProgramOverProcesses`) as a :class:`GroupProgram`: ``shard_map``
over the group's mesh (one device per process, axis ``"rank"``), where each process's arrays are
its blocks of global arrays (no copy) and each collective becomes ``psum``/``pmax``/``pmin``/
``all_gather`` over ``"rank"``. Every process of the group runs the same program, whose
collectives run in program order, as torch requires of its collectives. A step that makes no
collective stays a program of its process alone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from .._core import tracing as _tracing
from .._core.jax_setup import jit, x64_scope
from .process_group import ProcessGroup

_AXIS = "rank"  # (the axis of every group's mesh)
_inside = threading.local()  # .program: the _Trace of the program this thread traces, if any


def lowers(pg: ProcessGroup) -> bool:
    """Whether a collective over ``pg`` (of several processes) met while tracing is an XLA
    collective of the program being traced: inside ``pg``'s program, yes; in a compiled step's
    trace that can become that program, raises :class:`ProgramOverProcesses`; elsewhere (the
    user's own ``jax.jit``, a step whose collectives stay on the host) no: a host call."""
    inside = getattr(_inside, "program", None)
    if inside is not None and inside.pg is pg:
        return True
    trace = _tracing.current()
    if trace is not None and not trace.collectives_on_host:
        raise _tracing.ProgramOverProcesses(GroupProgram(pg))
    return False


def collective(array: jax.Array, what: str, arg: Any, reduce: Callable | None,
               size: int) -> jax.Array:
    """This process's part of a collective (see ``collectives._program``: "reduce", "gather",
    "pick", "scatter") as XLA collectives over the group's axis, after every earlier one;
    ``reduce`` is the reduction of stacked rows that ``arg`` names (for ops without a collective
    of their own)."""
    inside = _inside.program
    return inside.in_order(_lowered(inside.after_the_last(array), what, arg, reduce, size))


def _lowered(array: jax.Array, what: str, arg: Any, reduce: Callable | None,
             size: int) -> jax.Array:
    if what == "reduce":
        name = getattr(arg, "name", None)
        if array.dtype != jnp.bool_ and name in ("SUM", "AVG", "MIN", "MAX"):
            if name == "MIN":
                return jax.lax.pmin(array, _AXIS)
            if name == "MAX":
                return jax.lax.pmax(array, _AXIS)
            total = jax.lax.psum(array, _AXIS)
            return total if name == "SUM" else total / jnp.asarray(size, array.dtype)
        return reduce(jax.lax.all_gather(array, _AXIS), axis=0).astype(array.dtype)
    rows = jax.lax.all_gather(array, _AXIS)
    if what == "gather":
        return rows
    if what == "pick":
        return rows[arg]
    return jax.lax.dynamic_index_in_dim(rows[arg], jax.lax.axis_index(_AXIS), keepdims=False)


class _Trace:
    """One trace of a group's program. Its collectives run in program order on every process
    whatever each process's program does around them (a ``reduce`` writes on its root only):
    each collective's input depends on a token made from the results of the ones before, and
    the token is one of the program's results, so that none is pruned where its results are
    unused. (``optimization_barrier`` is not enough: XLA's CPU pipeline removes it.)"""

    def __init__(self, pg: ProcessGroup) -> None:
        self.pg = pg
        self.token: jax.Array | None = None

    def after_the_last(self, array: jax.Array) -> jax.Array:
        if self.token is None:  # (the rank: XLA takes no input of a collective for a value
            self.token = jax.lax.axis_index(_AXIS)  # that every process holds, as it may fold
        return jnp.where(self.token < 0, self.token.astype(array.dtype), array)  # a constant's)

    def in_order(self, result: jax.Array) -> jax.Array:
        self.token = self.token + jnp.sum(jnp.ravel(result)[:1] == 0, dtype=jnp.int32)
        return result

    def results(self, leaves: list) -> list:
        """``leaves`` (the traced function's results), then the token if any collective ran."""
        return leaves if self.token is None else [*leaves, self.token]

    def __enter__(self) -> _Trace:
        self.outer = getattr(_inside, "program", None)
        _inside.program = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _inside.program = self.outer


class GroupProgram:
    """A compiled step as one program over ``pg``'s processes (see the module's docstring)."""

    def __init__(self, pg: ProcessGroup) -> None:
        self.pg = pg
        self._rows = NamedSharding(pg.mesh, P(_AXIS))
        self._mine = jax.sharding.SingleDeviceSharding(pg.mesh.devices[pg.rank])

    def accepts(self, args: Any) -> bool:
        """Whether ``args``' arrays are this process's own (none spans processes already)."""
        return all(not isinstance(leaf, jax.Array) or leaf.is_fully_addressable
                   for leaf in jax.tree.leaves(args))

    kept_results = 1  # (make_jaxpr's last result: what runs the jaxpr returns it, unused)

    def make_jaxpr(self, fn: Callable) -> Callable:
        """``jax.make_jaxpr(fn)`` as traced inside the program (its collectives bound); the
        jaxpr's results are ``fn``'s, then the token of its collectives (see ``_Trace``)."""
        def traced(*args: Any) -> Any:
            def results(*args: Any) -> list:
                with _Trace(self.pg) as trace:
                    return trace.results(jax.tree.leaves(fn(*args)))
            return jax.make_jaxpr(results, axis_env=[(_AXIS, self.pg.size)])(*args)
        return traced

    def jit(self, fn: Callable) -> Callable:
        """``jit(fn)`` run as the program: this process's arrays in, its arrays out."""
        programs: dict[tuple, tuple[Callable, dict]] = {}

        def call(*args: Any) -> Any:
            leaves, tree = jax.tree.flatten(args)
            with x64_scope():
                leaves = [leaf if isinstance(leaf, jax.Array) else jnp.asarray(leaf)
                          for leaf in leaves]
                key = (tree, tuple(leaf.ndim == 0 for leaf in leaves))
                if key not in programs:
                    programs[key] = self._program(fn, *key)
                program, out = programs[key]
                results = program(*[self._block_of_rows(leaf) for leaf in leaves])
                mine = results[:out["tree"].num_leaves]  # (not the token)
                return jax.tree.unflatten(out["tree"], [
                    self._own_block(r, scalar) for r, scalar in zip(mine, out["scalars"])])
        return call

    def _program(self, fn: Callable, tree: Any, scalars: tuple) -> tuple[Callable, dict]:
        out: dict = {}

        def body(*blocks: Any) -> list:
            args = jax.tree.unflatten(tree, [b.reshape(()) if s else b
                                             for b, s in zip(blocks, scalars)])
            with _Trace(self.pg) as trace:
                leaves, out["tree"] = jax.tree.flatten(fn(*args))
                leaves = trace.results(leaves)  # (the token last: dropped by the unflatten)
            out["scalars"] = [leaf.ndim == 0 for leaf in leaves]
            return [leaf.reshape(1) if leaf.ndim == 0 else leaf for leaf in leaves]

        spec = P(_AXIS)
        return jit(jax.shard_map(body, mesh=self.pg.mesh, in_specs=spec, out_specs=spec,
                                 check_vma=False)), out

    def _block_of_rows(self, array: jax.Array) -> jax.Array:
        """The global array whose ``r``-th block along axis 0 is rank ``r``'s ``array`` (this
        process's block is ``array`` itself, on the mesh's device)."""
        if array.ndim == 0:
            array = array.reshape(1)
        if array.sharding != self._mine:
            array = jax.device_put(array, self._mine)
        shape = (self.pg.size * array.shape[0], *array.shape[1:])
        return jax.make_array_from_single_device_arrays(shape, self._rows, [array])

    @staticmethod
    def _own_block(result: jax.Array, scalar: bool) -> jax.Array:
        block = result.addressable_data(0)
        return block.reshape(()) if scalar else block
