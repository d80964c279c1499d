"""The state a compiled step reads and writes, found by walking the objects its code reaches.

``jaxgrad.compile`` traces a Python step once per signature; everything that lives outside the
step (parameters and their ``.grad``, optimizer state, buffers, the RNG key, learning rates a
scheduler changes) must enter the XLA program as inputs and come back as outputs. A
:class:`StateWalk` finds it from the step's *roots* (its arguments, the globals and closure cells
its code names, the default generator) by walking containers: dicts, lists, tuples, objects'
``__dict__`` (modules, optimizers, schedulers, user objects), functions' globals and closures,
and tensors (their ``.grad`` and hooks). What it finds:

- **cells**: the storage cells of every tensor reached (shared by aliases, so each once); their
  arrays are traced inputs, and the trace's new arrays are written back;
- **numbers**: Python ints and floats at positions a class declares traced in
  ``_jaxgrad_traced_state`` (an optimizer's ``param_groups[i]["lr"]``, a scheduler's
  ``last_epoch``), traced so that a changing learning rate does not recompile;
- **arrays**: JAX arrays held in containers (a generator's key), traced;
- everything else is *static*: part of the cache key (shapes, dtypes, which ``.grad`` exist,
  optimizer state keys, ``training`` flags, hook identities, other Python values).

After the trace a second walk compares the objects with the first: what the step changed
(a new ``.grad``, a new momentum buffer, ``group["lr"]``) becomes a :class:`Program` that each
call applies to the objects found at call time. Python state is restored after tracing, so a
trace leaves no tracer behind.
"""

from __future__ import annotations

import types
from typing import Any

import jax
import numpy as np

from ._storage import Storage, VersionCounter
from ._tensor import Tensor

_OPAQUE_PACKAGES = ("jax", "jaxlib", "numpy", "jaxgrad", "builtins", "functools", "typing",
                    "collections", "abc", "threading", "warnings", "math", "optax", "chex")
_TENSOR_FIELDS = tuple(s for s in Tensor.__slots__ if s not in ("__dict__", "__weakref__"))
_CONTAINERS = (dict, list, tuple)


class Unsupported(RuntimeError):
    """A step did something ``jaxgrad.compile`` cannot express as one XLA program."""


def _is_opaque_function(fn: Any) -> bool:
    module = getattr(fn, "__module__", None) or ""
    return module.split(".")[0] in _OPAQUE_PACKAGES


_names_cache: dict[types.CodeType, tuple[str, ...]] = {}


def _global_names(code: types.CodeType) -> tuple[str, ...]:
    """The names a code object (and the code nested in it) may read as globals."""
    names = _names_cache.get(code)
    if names is None:
        found = dict.fromkeys(code.co_names)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                found.update(dict.fromkeys(_global_names(const)))
        names = _names_cache[code] = tuple(found)
    return names


def _child_traced(traced: Any, key: Any) -> Any:
    """Whether numbers under ``key`` of a dict are traced, given the dict's own setting."""
    if traced is True:
        return True
    return isinstance(traced, tuple) and isinstance(key, str) and key in traced


class StateWalk:
    """One walk from a step's roots: the objects reached, their entries, and the state slots.

    ``pre`` is the walk made before tracing when this one is made after it: then objects and
    slots seen before are coded by their index there (``("old", i)``, ``("in", kind, j)``), and
    tracers the step produced become outputs.

    >>> import jaxgrad
    >>> from jaxgrad._compile_state import StateWalk
    >>> w = jaxgrad.ones(2, requires_grad=True)
    >>> walk = StateWalk(({"w": w},))
    >>> len(walk.cells), walk.objects[1] is w
    (1, True)
    """

    def __init__(self, roots: tuple, pre: StateWalk | None = None,
                 installed: dict[int, tuple[str, int]] | None = None,
                 snapshot: bool = False) -> None:
        self.pre = pre
        self.installed = installed or {}  # id(tracer) -> ("number"|"array", slot) of pre
        self.objects: list[Any] = []
        self.kinds: list[str] = []
        self.metas: list[tuple] = []
        self.entries: list[list[tuple[Any, tuple]]] = []
        self.index: dict[int, int] = {}
        self.cells: list[Storage] = []
        self.cell_index: dict[int, int] = {}
        self.counters: list[VersionCounter] = []
        self.counter_index: dict[int, int] = {}
        self.numbers: list[tuple[int, Any, Any]] = []  # (object index, key, value)
        self.arrays: list[tuple[int, Any, Any]] = []
        self.outputs: list[Any] = []  # post walk: tracers the step produced, in order
        self.output_kinds: list[str] = []  # "number" or "array", per output
        self.opaque: dict[int, Any] = {}
        self.snapshots: list[Any] | None = [] if snapshot else None
        self.empties: list[Any] = []  # empty containers seen (kept only with snapshots)
        self.has_foreign_tracers = False
        self.root_codes = tuple(self.code(root, False, -1, None) for root in roots)

    # -- coding values ----------------------------------------------------------------------
    def code(self, value: Any, traced: Any, owner: int, key: Any) -> tuple:
        """The code of ``value`` found at entry ``key`` of object ``owner``."""
        if value is None or value is True or value is False:
            return ("c", value)
        kind = type(value)
        if kind is int or kind is float:
            if traced is not False and owner >= 0 and self.kinds[owner] != "tuple":
                return self._slot("number", value, owner, key)
            return ("c", kind, value)
        if kind is str or kind is bytes or kind is complex:
            return ("c", value)
        if isinstance(value, Tensor):
            return self._object_code(value, "tensor")
        if isinstance(value, jax.Array):
            if owner < 0 or self.kinds[owner] == "tuple":
                return self._opaque(value)
            # a traced number the step computed comes back as a Python number
            number = traced is not False and self.pre is not None and value.ndim == 0
            return self._slot("number" if number else "array", value, owner, key)
        if kind in _CONTAINERS or isinstance(value, _CONTAINERS):
            if not value and kind is not tuple:  # most hook tables: not worth a visit
                return self._empty(value)
            name = "dict" if isinstance(value, dict) else "list" if isinstance(value, list) \
                else "tuple"
            return self._object_code(value, name, traced)
        if isinstance(value, types.FunctionType):
            if _is_opaque_function(value):
                return self._opaque(value)
            return self._object_code(value, "function")
        if isinstance(value, types.MethodType):
            return ("method", self.code(value.__self__, False, -1, None),
                    self.code(value.__func__, False, -1, None))
        if (isinstance(value, (type, types.ModuleType, types.BuiltinFunctionType, np.ndarray,
                               np.generic))
                or getattr(kind, "_jaxgrad_opaque", False) or not hasattr(value, "__dict__")):
            return self._opaque(value)
        return self._object_code(value, "attrs")

    def _empty(self, container: Any) -> tuple:
        """An empty dict or list: coded by its type, emptied again after a trace."""
        if self.snapshots is not None:
            self.empties.append(container)
        return ("empty", type(container), getattr(container, "default_factory", None))

    def _opaque(self, value: Any) -> tuple:
        self.opaque[id(value)] = value
        return ("v", id(value))

    def _slot(self, kind: str, value: Any, owner: int, key: Any) -> tuple:
        if isinstance(value, jax.core.Tracer):
            where = self.installed.get(id(value))
            if where is not None:
                return ("in",) + where
            if self.pre is None:
                self.has_foreign_tracers = True
            self.outputs.append(value)
            self.output_kinds.append(kind)
            return ("out", kind, len(self.outputs) - 1)
        if self.pre is not None:  # a concrete value the step stored: kept as it is
            return self._opaque(value) if kind == "array" else ("c", type(value), value)
        slots = self.numbers if kind == "number" else self.arrays
        slots.append((owner, key, value))
        return ("in", kind, len(slots) - 1)

    def _object_code(self, obj: Any, kind: str, traced: Any = False) -> tuple:
        index = self.index.get(id(obj))
        if index is None:
            index = self._visit(obj, kind, traced)
        if self.pre is not None:
            old = self.pre.index.get(id(obj))
            if old is not None and self.pre.objects[old] is obj:
                return ("old", old)
            return ("new", index)
        return ("old", index)

    # -- visiting objects --------------------------------------------------------------------
    def _visit(self, obj: Any, kind: str, traced: Any) -> int:
        index = len(self.objects)
        self.index[id(obj)] = index
        self.objects.append(obj)
        self.kinds.append(kind)
        self.metas.append(())
        entries: list[tuple[Any, tuple]] = []
        self.entries.append(entries)
        if self.snapshots is not None:
            self.snapshots.append(_snapshot(obj, kind))
        getattr(self, "_visit_" + kind)(obj, index, entries, traced)
        return index

    def _visit_tensor(self, t: Tensor, index: int, entries: list, traced: Any) -> None:
        cell = self._cell(t._cell)
        counter = self.counter_index.get(id(t._vc))
        if counter is None:
            counter = self.counter_index[id(t._vc)] = len(self.counters)
            self.counters.append(t._vc)
        hooks = tuple(self.code(h, False, -1, None) for h in _hooks(t))
        base = None if t._base is None else self.code(t._base, False, -1, None)
        self.metas[index] = (type(t), cell, counter, t._layout, t._requires_grad,
                             t._grad_fn is None, t._retains_grad, hooks, base)
        entries.append(("grad", self.code(t._grad, False, index, "grad")))

    def _cell(self, cell: Storage) -> int:
        found = self.cell_index.get(id(cell))
        if found is None:
            found = self.cell_index[id(cell)] = len(self.cells)
            self.cells.append(cell)
            if self.pre is None and isinstance(cell.array, jax.core.Tracer):
                self.has_foreign_tracers = True
        return found

    def _visit_dict(self, d: dict, index: int, entries: list, traced: Any) -> None:
        self.metas[index] = (type(d), getattr(d, "default_factory", None))
        for key, value in list(d.items()):
            key_code = self.code(key, False, -1, None) if isinstance(key, Tensor) else key
            entries.append((key_code, self.code(value, _child_traced(traced, key), index, key)))

    def _visit_list(self, lst: list, index: int, entries: list, traced: Any) -> None:
        self.metas[index] = (type(lst),)
        for i, value in enumerate(list(lst)):
            entries.append((i, self.code(value, traced, index, i)))

    _visit_tuple = _visit_list

    def _visit_attrs(self, obj: Any, index: int, entries: list, traced: Any) -> None:
        self.metas[index] = (type(obj),)
        spec = getattr(type(obj), "_jaxgrad_traced_state", {})
        for name, value in list(vars(obj).items()):
            entries.append((name, self.code(value, spec.get(name, False), index, name)))

    def _visit_function(self, fn: types.FunctionType, index: int, entries: list,
                        traced: Any) -> None:
        self.metas[index] = (fn.__code__,)
        namespace = fn.__globals__
        for name in _global_names(fn.__code__):
            if name in namespace:
                entries.append((("g", name), self.code(namespace[name], False, index,
                                                       ("g", name))))
        for i, cell in enumerate(fn.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell (a name assigned later)
                continue
            entries.append((("c", i), self.code(value, False, index, ("c", i))))
        for i, value in enumerate(fn.__defaults__ or ()):
            entries.append((("d", i), self.code(value, False, -1, None)))
        for name, value in (fn.__kwdefaults__ or {}).items():
            entries.append((("k", name), self.code(value, False, -1, None)))

    # -- the cache key and the inputs ----------------------------------------------------------
    def key(self) -> tuple:
        """Everything static about the state: equal keys, equal XLA programs."""
        cells = tuple((c.array.shape, c.array.dtype, getattr(c.array, "weak_type", False))
                      for c in self.cells)
        numbers = tuple(type(v) for _, _, v in self.numbers)
        arrays = tuple((a.shape, a.dtype) for _, _, a in self.arrays)
        objects = tuple(zip(self.kinds, self.metas, map(tuple, self.entries)))
        return (self.root_codes, objects, cells, numbers, arrays)

    def inputs(self) -> tuple[list, list, list]:
        """The traced inputs: cell arrays, numbers (as 64-bit scalars), arrays."""
        return ([c.array for c in self.cells],
                [np.float64(v) if type(v) is float else np.int64(v) for _, _, v in self.numbers],
                [a for _, _, a in self.arrays])

    def install(self, cells: list, numbers: list, arrays: list) -> dict[int, tuple[str, int]]:
        """Put tracers where the state was; returns id(tracer) -> its slot."""
        installed = {}
        for cell, tracer in zip(self.cells, cells):
            cell.array = tracer
            cell.generation += 1
        for j, ((owner, key, _), tracer) in enumerate(zip(self.numbers, numbers)):
            set_entry(self.objects[owner], self.kinds[owner], key, tracer)
            installed[id(tracer)] = ("number", j)
        for j, ((owner, key, _), tracer) in enumerate(zip(self.arrays, arrays)):
            set_entry(self.objects[owner], self.kinds[owner], key, tracer)
            installed[id(tracer)] = ("array", j)
        return installed

    def restore(self, arrays: list, versions: list[int]) -> None:
        """Put back what the walk found (after a trace changed it)."""
        for cell, array in zip(self.cells, arrays):
            cell.array = array
            cell.generation += 1
        for counter, value in zip(self.counters, versions):
            counter.value = value
        for obj, kind, saved in zip(self.objects, self.kinds, self.snapshots or ()):
            _restore(obj, kind, saved)
        for container in self.empties:
            container.clear()


def _hooks(t: Tensor) -> list:
    hooks = []
    for table in (t._backward_hooks, t._post_acc_hooks):
        if table:
            hooks.extend(table.values())
    return hooks


def set_entry(obj: Any, kind: str, key: Any, value: Any) -> None:
    """Store ``value`` at entry ``key`` of a walked object."""
    if kind in ("dict", "list"):
        obj[key] = value
    elif kind == "attrs":
        vars(obj)[key] = value
    elif kind == "tensor":
        obj._grad = value
    elif kind == "function":
        if key[0] == "g":
            obj.__globals__[key[1]] = value
        elif key[0] == "c":
            obj.__closure__[key[1]].cell_contents = value
        else:
            raise Unsupported("a compiled step cannot change a function's default arguments")
    else:
        raise Unsupported(f"a compiled step cannot change a {kind}")


def delete_entry(obj: Any, kind: str, key: Any) -> None:
    """Remove entry ``key`` of a walked object."""
    if kind == "dict":
        del obj[key]
    elif kind == "attrs":
        del vars(obj)[key]
    elif kind == "function" and key[0] == "g":
        del obj.__globals__[key[1]]
    else:
        raise Unsupported(f"a compiled step cannot delete from a {kind}")


def _snapshot(obj: Any, kind: str) -> Any:
    if kind == "tensor":
        return tuple(getattr(obj, s) for s in _TENSOR_FIELDS)
    if kind == "dict":
        return dict(obj)
    if kind == "list":
        return list(obj)
    if kind == "attrs":
        return dict(vars(obj))
    if kind == "function":
        namespace = obj.__globals__
        names = _global_names(obj.__code__)
        cells = []
        for cell in obj.__closure__ or ():
            try:
                cells.append(cell.cell_contents)
            except ValueError:
                cells.append(_EMPTY)
        return ({n: namespace.get(n, _EMPTY) for n in names}, cells)
    return None


_EMPTY = object()


def _restore(obj: Any, kind: str, saved: Any) -> None:
    if kind == "tensor":
        for name, value in zip(_TENSOR_FIELDS, saved):
            setattr(obj, name, value)
    elif kind == "dict":
        obj.clear()
        obj.update(saved)
    elif kind == "list":
        obj[:] = saved
    elif kind == "attrs":
        namespace = vars(obj)
        namespace.clear()
        namespace.update(saved)
    elif kind == "function":
        names, cells = saved
        namespace = obj.__globals__
        for name, value in names.items():
            if value is _EMPTY:
                namespace.pop(name, None)
            else:
                namespace[name] = value
        for cell, value in zip(obj.__closure__ or (), cells):
            if value is not _EMPTY:
                cell.cell_contents = value
