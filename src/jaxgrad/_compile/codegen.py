"""A program's write-back as generated Python: one straight-line function per program.

``program.Program`` records a step's effects as codes: ``("old", i)`` (object ``i`` of the
call's walk), ``("new", i)`` (an object the step created), ``("out", kind, k)`` (an output of
the XLA program), ``("in", kind, j)`` (a traced input), ``("c", ..., value)`` (a constant), ...
A compiled step replays the same program on every call, so :func:`replayer` resolves those codes
once, into the source of a function that writes the cells, moves the version counters, creates
the new tensors and containers, sets and deletes entries and builds the result in a fixed
order, with no dispatch on codes left for the call. It takes the call's walk, the XLA program's
outputs and the numbers read back from them, and returns a :class:`Replayed`.
"""

from __future__ import annotations

import types
from typing import Any

from .._core.storage import Storage, VersionCounter
from .state import TENSOR_KEY, delete_entry, set_entry


class Replayed:
    """What one replay of a program made: the created objects (post-walk index -> object), the
    new storage cells and version counters, and the step's result."""

    __slots__ = ("created", "new_cells", "new_counters", "result")

    def __init__(self, created: dict, new_cells: list, new_counters: list, result: Any) -> None:
        self.created = created
        self.new_cells = new_cells
        self.new_counters = new_counters
        self.result = result


class _Source:
    """The lines and the constants of a generated replay function."""

    def __init__(self, program: Any, kinds: list[str]) -> None:
        self.program = program
        self.kinds = kinds  # the kinds of the walk's objects the program was traced with
        self.lines: list[str] = []
        self.constants: list[Any] = []
        self.numbered = {p for p, _ in program.number_outputs}
        self.tuples_made: set[int] = set()

    def constant(self, value: Any) -> str:
        self.constants.append(value)
        return f"K[{len(self.constants) - 1}]"

    def emit(self, line: str) -> None:
        self.lines.append("    " + line)

    def expression(self, code: tuple) -> str:
        """Python that evaluates to the object ``code`` names (a tuple the step created is built
        where it is first needed, once)."""
        tag = code[0]
        if tag == "c":
            return self.constant(code[-1])
        if tag == "old":
            return f"O[{code[1]}]"
        if tag == "empty":
            cls, factory = code[1], code[2]
            made = self.constant(cls)
            return f"{made}({self.constant(factory)})" if factory is not None else f"{made}()"
        if tag == "new":
            index = code[1]
            kind, meta, entries = self.program.new_objects[index]
            if kind == "tuple" and index not in self.tuples_made:  # made where first needed
                items = ", ".join(self.expression(c) for _, c in entries)
                self.emit(f"n{index} = {self.constant(meta[0])}(({items}{',' if items else ''}))")
                self.tuples_made.add(index)
            return f"n{index}"
        if tag == "in":
            return f"{'NUM' if code[1] == 'number' else 'ARR'}[{code[2]}][2]"
        if tag == "out":
            position = self.program.first_free_output + code[2]
            return f"{'numbers' if position in self.numbered else 'outputs'}[{position}]"
        if tag == "v":
            return self.constant(self.program.opaque[code[1]])
        if tag == "method":
            return f"_method({self.expression(code[2])}, {self.expression(code[1])})"
        raise AssertionError(code)

    def key(self, key: Any) -> str:
        if type(key) is tuple and len(key) == 2 and key[0] is TENSOR_KEY:
            return self.expression(key[1])
        return self.constant(key)

    def store(self, target: str, kind: str, key: Any, code: tuple) -> None:
        """``set_entry(target, kind, key, value)`` for the entry's kind."""
        key_source = self.key(key)
        value = self.expression(code)
        if kind == "tensor":
            self.emit(f"{target}._grad = {value}")
        elif kind in ("dict", "list"):
            self.emit(f"{target}[{key_source}] = {value}")
        elif kind == "attrs":
            self.emit(f"{target}.__dict__[{key_source}] = {value}")
        else:
            self.emit(f"_set_entry({target}, {kind!r}, {key_source}, {value})")


def replayer(program: Any, kinds: list[str]) -> Any:
    """The generated replay of ``program`` on walks whose objects have ``kinds``: a function
    ``(walk, outputs, numbers) -> Replayed``.

    >>> from types import SimpleNamespace
    >>> from jaxgrad._compile.codegen import replayer
    >>> from jaxgrad._compile.program import Program
    >>> program = Program()
    >>> program.result = ("out", "array", 0)
    >>> walk = SimpleNamespace(objects=[], cells=[], counters=[], numbers=[], arrays=[])
    >>> replayer(program, [])(walk, ["the output"], {}).result
    'the output'
    """
    source = _Source(program, kinds)
    _emit_storage_writes(source)
    _emit_new_objects(source)
    _emit_changes(source)
    result = source.expression(program.result)
    created = ", ".join(f"{i}: n{i}" for i in program.new_objects
                        if program.new_objects[i][0] != "tuple" or i in source.tuples_made)
    new_cells = ", ".join(f"c{j}" for j in range(len(program.new_cells)))
    new_counters = ", ".join(f"v{j}" for j in range(len(program.new_counters)))
    source.emit(f"return _Replayed({{{created}}}, [{new_cells}], [{new_counters}], {result})")
    text = ("def replay(walk, outputs, numbers):\n"
            "    O, C, V = walk.objects, walk.cells, walk.counters\n"
            "    NUM, ARR = walk.numbers, walk.arrays\n" + "\n".join(source.lines) + "\n")
    namespace = {"K": source.constants, "_Storage": Storage, "_VersionCounter": VersionCounter,
                 "_Replayed": Replayed, "_method": types.MethodType, "_set_entry": set_entry,
                 "_delete_entry": delete_entry}
    exec(compile(text, f"<jaxgrad.compile replay of {len(source.lines)} lines>", "exec"),
         namespace)
    return namespace["replay"]


def _emit_storage_writes(source: _Source) -> None:
    """The cells the program wrote, the version counters it moved, the cells and counters it
    made."""
    program, emit = source.program, source.emit
    for cell, position in program.cell_writes:
        emit(f"C[{cell}].write(outputs[{position}])")
    for counter, delta in program.version_moves:
        emit(f"V[{counter}].value += {delta}")
    for j, position in enumerate(program.new_cells):
        emit(f"c{j} = _Storage(outputs[{position}])")
    for j, value in enumerate(program.new_counters):
        emit(f"v{j} = _VersionCounter()")
        emit(f"v{j}.value = {value}")


def _emit_new_objects(source: _Source) -> None:
    """The tensors, dicts and lists the step created (all made, then filled: they may hold each
    other); tuples are made where first needed."""
    program, emit = source.program, source.emit
    for index, (kind, meta, _) in program.new_objects.items():
        if kind == "tensor":
            cls, cell, counter, layout, requires_grad, is_leaf = meta[:6]
            cell_source = f"C[{cell[1]}]" if cell[0] == "old" else f"c{cell[1]}"
            counter_source = f"V[{counter[1]}]" if counter[0] == "old" else f"v{counter[1]}"
            emit(f"n{index} = {source.constant(cls)}._make(None, {requires_grad and is_leaf}, "
                 f"cell={cell_source}, vc={counter_source})")
            if layout is not None:
                emit(f"n{index}._layout = {source.constant(layout)}")
        elif kind == "dict":
            cls, factory = meta
            made = source.constant(cls)
            emit(f"n{index} = {made}({source.constant(factory)})" if factory is not None
                 else f"n{index} = {made}()")
        elif kind != "tuple":
            emit(f"n{index} = {source.constant(meta[0])}()")
    for index, (kind, _, entries) in program.new_objects.items():
        if kind == "list":
            items = ", ".join(source.expression(code) for _, code in entries)
            emit(f"n{index}.extend([{items}])")
        elif kind != "tuple":
            for key, code in entries:
                if kind == "tensor" and code == ("c", None):
                    continue  # a new tensor's ``.grad`` is None already
                source.store(f"n{index}", kind, key, code)


def _emit_changes(source: _Source) -> None:
    """The entries the step set, deleted or appended in objects that existed before it."""
    for what, index, key, code in source.program.changes:
        kind = source.kinds[index]
        if what == "set":
            source.store(f"O[{index}]", kind, key, code)
        elif what == "del":
            source.emit(f"_delete_entry(O[{index}], {kind!r}, {source.key(key)})")
        else:  # a list's new contents, or the items appended to it
            items = ", ".join(source.expression(c) for c in code)
            source.emit(f"O[{index}].extend([{items}])" if what == "extend"
                        else f"O[{index}][:] = [{items}]")
