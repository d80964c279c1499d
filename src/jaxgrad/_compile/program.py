"""What a traced step did to its state, as a program that each compiled call replays.

:func:`build` compares the walk made before a trace with the walk made after it (see
``state``) and records, in terms of positions in a walk, which cells got new arrays,
how far each version counter moved, which tensors and containers the step created (a new
``.grad``, a momentum buffer, an optimizer's per-parameter state dict), and which entries it
set or deleted. :meth:`Program.apply` replays that on the objects a later call's walk found,
with the arrays the compiled XLA program returned, so the objects end as eager execution would
leave them: same ``.grad`` tensors present, same optimizer state keys, versions bumped by the
number of in-place ops torch runs.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from .codegen import Replayed, replayer
from .state import StateWalk, Template, Unsupported


class Program:
    """The write-back of one traced step (built by :func:`build`, replayed per call)."""

    def __init__(self) -> None:
        self.cell_writes: list[tuple[int, int]] = []  # (pre cell, output position)
        self.new_cells: list[int] = []  # output positions
        self.version_moves: list[tuple[int, int]] = []  # (pre counter, delta)
        self.new_counters: list[int] = []  # absolute values
        # post-walk index -> (kind, meta, entries) of each object the step created, in order
        self.new_objects: dict[int, tuple[str, tuple, list]] = {}
        # (what: set|del|list|extend, pre object, key, code)
        self.changes: list[tuple[str, int, Any, Any]] = []
        self.number_outputs: list[tuple[int, bool]] = []  # output position, is an integer
        self.opaque: dict[int, Any] = {}
        self.result: tuple = ("c", None)
        self.first_free_output = 0  # where the outputs found at number/array slots start
        self.template: Template | bool | None = False  # False: not made yet
        self.diff_inputs: list[int] = []  # cells of tensors requiring grad (a forward's inputs)
        self.diff_outputs: list[tuple[int, int]] = []  # (output position, new tensor) with history
        # new tensors of the result whose history a backward inside the step consumed
        self.spent_outputs: list[int] = []
        self._replay: Any = None  # the generated write-back (codegen.replayer), made once

    def apply(self, walk: StateWalk, outputs: list) -> Replayed:
        """Write the step's effects into the objects of ``walk`` (the generated replay, see
        ``codegen``); what it returns holds the step's result and the objects it created."""
        numbers = {}
        if self.number_outputs:
            values = jax.device_get([outputs[p] for p, _ in self.number_outputs])
            numbers = {p: (int(v) if is_int else float(v))
                       for (p, is_int), v in zip(self.number_outputs, values)}
        if self._replay is None:
            self._replay = replayer(self, walk.kinds)
        return self._replay(walk, outputs, numbers)


def build(pre: StateWalk, post: StateWalk, inputs: list, versions: list[int]) -> tuple[
        Program, list]:
    """The program of a traced step and the list of arrays the XLA program returns.

    ``pre``/``post``: the walks before and after the step ran on tracers; ``inputs``: the
    tracers installed in ``pre.cells``; ``versions``: ``pre.counters``' values before.
    """
    program = Program()
    outputs: list = []
    for j, (cell, tracer) in enumerate(zip(pre.cells, inputs)):
        if cell.array is not tracer:
            program.cell_writes.append((j, len(outputs)))
            outputs.append(cell.array)
    for j, (counter, before) in enumerate(zip(pre.counters, versions)):
        if counter.value != before:
            program.version_moves.append((j, counter.value - before))
    cells = _ages(post.cells, pre.cell_index, pre.cells)
    for cell, (age, _) in zip(post.cells, cells):
        if age == "new":
            program.new_cells.append(len(outputs))
            outputs.append(cell.array)
    counters = _ages(post.counters, pre.counter_index, pre.counters)
    program.new_counters = [c.value for c, (age, _) in zip(post.counters, counters)
                            if age == "new"]
    program.first_free_output = first = len(outputs)
    outputs.extend(post.outputs)
    program.number_outputs = [
        (first + k, bool(np.issubdtype(np.dtype(v.dtype), np.integer)))
        for k, (v, kind) in enumerate(zip(post.outputs, post.output_kinds)) if kind == "number"]
    program.opaque = {**pre.opaque, **post.opaque}
    for i, obj in enumerate(post.objects):
        old = pre.index.get(id(obj))
        kind = post.kinds[i]
        if old is not None and pre.objects[old] is obj:
            _compare(program, pre, post, old, i)
            continue
        meta = post.metas[i]
        if kind == "tensor":
            meta = (meta[0], cells[meta[1]], counters[meta[2]]) + meta[3:]
        elif kind not in ("dict", "list", "tuple"):
            raise Unsupported(f"the step stored a new {type(obj).__name__} object in state that "
                              "outlives it; jaxgrad.compile can only create tensors, dicts, "
                              "lists and tuples there")
        program.new_objects[i] = (kind, meta, post.entries[i])
    program.result = post.arg_codes[-1]
    return program, outputs


def adds_state(program: Program, pre: StateWalk) -> bool:
    """Whether the step gives state it found new entries that a next call will find in place
    (the first ``.grad`` of a parameter, an optimizer's per-parameter state): the next call's
    signature differs from this one's, and is the one later calls keep."""
    state_objects = pre.prefix[0]
    for what, index, key, code in program.changes:
        if what != "set" or index >= state_objects or code[0] not in ("new", "old"):
            continue
        before = dict(pre.entries[index]).get(key)
        if before is None or before == ("c", None):
            return True
    return False


def find_differentiable(program: Program, pre: StateWalk, post: StateWalk) -> None:
    """For a function whose results have autograd history and that left every ``.grad`` alone
    (a forward, not a training step): the results to connect to the outer graph and the cells
    to differentiate them by (torch.compile's results keep their history)."""
    grad_cells = {pre.metas[code[1]][1] for entries, kind in zip(pre.entries, pre.kinds)
                  if kind == "tensor" for key, code in entries if code[0] == "old"}
    written = {cell for cell, _ in program.cell_writes}
    if grad_cells & written or any(what == "set" and pre.kinds[index] == "tensor"
                                   for what, index, _, _ in program.changes):
        # a training step: its loss had history, which its backward() consumed (torch.compile's
        # loss comes out of the graph before the backward with a spent CompiledFunctionBackward)
        program.spent_outputs = [i for i in _new_tensors(program, program.result)
                                 if post.objects[i]._grad_node is not None]
        return
    for index in _new_tensors(program, program.result):
        obj = post.objects[index]
        meta = program.new_objects[index][1]
        age, cell = meta[1]
        if obj._grad_node is not None and obj._requires_grad and age == "new":  # (views too)
            program.diff_outputs.append((program.new_cells[cell], index))
    program.diff_inputs = sorted({pre.metas[i][1] for i, kind in enumerate(pre.kinds)
                                  if kind == "tensor" and pre.metas[i][4]
                                  and pre.cells[pre.metas[i][1]].array.dtype.kind in "fc"})
    if not program.diff_inputs:
        program.diff_outputs = []


def _new_tensors(program: Program, code: Any) -> list[int]:
    """Post-walk indices of the new tensors a result holds (directly or in new containers)."""
    if not (isinstance(code, tuple) and code[:1] == ("new",)):
        return []
    kind, _, entries = program.new_objects[code[1]]
    if kind == "tensor":
        return [code[1]]
    return [i for _, value in entries for i in _new_tensors(program, value)]


def _ages(items: list, pre_index: dict[int, int], pre_items: list) -> list[tuple[str, int]]:
    """Each item of a post-step walk as ("old", its index before the step) or ("new", its
    number among the new ones)."""
    refs, new = [], 0
    for item in items:
        old = pre_index.get(id(item))
        if old is not None and pre_items[old] is item:
            refs.append(("old", old))
        else:
            refs.append(("new", new))
            new += 1
    return refs


def _compare(program: Program, pre: StateWalk, post: StateWalk, old: int, new: int) -> None:
    """Record the changes the step made to an object that existed before it."""
    kind = pre.kinds[old]
    if kind == "tensor":
        before, after = pre.metas[old], post.metas[new]
        t = pre.objects[old]
        if t._cell is not pre.cells[before[1]] or t._layout != before[3]:
            raise Unsupported("the step rebound the storage of a tensor it did not create "
                              "(`.data = ...`, `set_`); do that outside the compiled step")
        if after[4] != before[4] or after[7] != before[7]:
            raise Unsupported("the step changed requires_grad or the hooks of a tensor it did "
                              "not create; do that outside the compiled step")
    before_entries, after_entries = pre.entries[old], post.entries[new]
    if before_entries == after_entries:
        return
    if kind in ("list", "tuple"):
        if kind == "tuple":
            return
        if pre.metas[old][1:] == ("items",):  # walked by items: what the step appended
            appended = [code for key, code in after_entries if type(key) is tuple]
            if appended:
                program.changes.append(("extend", old, None, appended))
            return
        program.changes.append(("list", old, None, [c for _, c in after_entries]))
        return
    before_map, after_map = dict(before_entries), dict(after_entries)
    for key, code in after_entries:
        if before_map.get(key, _MISSING) != code:
            program.changes.append(("set", old, key, code))
    for key, _ in before_entries:
        if key not in after_map:
            program.changes.append(("del", old, key, None))


_MISSING = ("missing",)
