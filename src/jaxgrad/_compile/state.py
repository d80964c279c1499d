"""The state a compiled step reads and writes, found by walking the objects its code reaches.

``jaxgrad.compile`` traces a Python step once per signature; everything that lives outside the
step (parameters and their ``.grad``, optimizer state, buffers, the RNG key, learning rates a
scheduler changes) must enter the XLA program as inputs and come back as outputs. A
:class:`StateWalk` finds it by walking from the step's *state roots* (the globals and closure
cells its code loads, the default generator) and then its *argument roots*, through containers:
dicts, lists, tuples, objects' ``__dict__`` (modules, optimizers, schedulers, user objects),
functions' globals and closures, and tensors (their ``.grad`` and hooks). What it finds:

- **cells**: the storage cells of every tensor reached (shared by aliases, so each once); their
  arrays are traced inputs, and the trace's new arrays are written back;
- **numbers**: Python ints and floats at positions a class declares traced in
  ``_jaxgrad_traced_state`` (an optimizer's ``param_groups[i]["lr"]``, a scheduler's
  ``last_epoch``), traced so that a changing learning rate does not recompile;
- **arrays**: JAX arrays held in containers (a generator's key), traced;
- everything else is *static*: part of the signature (shapes, dtypes, which ``.grad`` and state
  entries exist, ``training`` flags, hook identities, other Python values).

After the trace a second walk compares the objects with the first; ``program`` turns the
differences into the write-back each call replays. Python state is restored after tracing, so a
trace leaves no tracer behind.

Repeated calls skip most of the walk (:class:`WalkMemo`): objects of classes that declare
``_jaxgrad_managed_attrs`` (tensors, modules, optimizers, schedulers, generators) change their
structure only through jaxgrad's API, which moves ``epoch.EPOCH``; every other object reached
(the step's globals, param-group dicts, user objects) is re-checked by the identities it holds.
"""

from __future__ import annotations

import dis
import types
from typing import Any

import jax
import numpy as np

from .._core import caches as _caches
from .._core.storage import Storage, VersionCounter
from .._core.tensor import Tensor

_OPAQUE_PACKAGES = ("jax", "jaxlib", "numpy", "jaxgrad", "builtins", "functools", "typing",
                    "collections", "abc", "threading", "warnings", "math", "optax", "chex")
_TENSOR_FIELDS = tuple(s for s in Tensor.__slots__ if s not in ("__dict__", "__weakref__"))
_CONTAINERS = (dict, list, tuple)
_EMPTY = object()
_NUMBER_DTYPES = (np.dtype(np.float64), np.dtype(np.int64))
TENSOR_KEY = "<jaxgrad tensor key>"  # marks a dict key that is a tensor (an optimizer's state)


class Unsupported(RuntimeError):
    """A step did something ``jaxgrad.compile`` cannot express as one XLA program."""


class WalkPolicy:
    """What a compiled function's traces taught its walks (replaced, never changed, when they
    learn more, so that each traced program keeps the policy its inputs were found by):

    - ``dynamic``: id(object) -> the keys of the numbers there that changed between calls
      (traced, torch.compile's automatic dynamic);
    - ``unread``: id(user object) -> the attributes no trace read or wrote (not walked: neither
      part of the signature nor re-checked per call);
    - ``unrun``: the code of functions no trace ran (their globals and closures are not walked;
      the function is guarded by identity);
    - ``items``: id(user list) -> ``(indices, length)``: the items every trace read of a list
      no trace used otherwise (only those are walked and re-checked; its length too when a
      trace read it), and that traces only appended to (see ``watch``).

    >>> from jaxgrad._compile.state import WalkPolicy
    >>> WalkPolicy().but(unrun=frozenset({1})).unrun
    frozenset({1})
    """

    __slots__ = ("dynamic", "items", "unread", "unrun")

    def __init__(self, dynamic: dict[int, frozenset] | None = None,
                 unread: dict[int, frozenset] | None = None,
                 unrun: frozenset = frozenset(),
                 items: dict[int, tuple[frozenset, bool]] | None = None) -> None:
        self.dynamic = dynamic or {}
        self.unread = unread or {}
        self.unrun = unrun
        self.items = items or {}

    def but(self, **changes: Any) -> WalkPolicy:
        """This policy with some fields replaced."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return WalkPolicy(**fields)


NO_POLICY = WalkPolicy()


def _is_opaque_function(fn: Any) -> bool:
    module = getattr(fn, "__module__", None) or ""
    return module.split(".")[0] in _OPAQUE_PACKAGES


_names_cache = _caches.Memo(maxsize=4096)  # code object -> the globals it loads


def global_names(code: types.CodeType) -> tuple[str, ...]:
    """The globals a code object (and the code nested in it) loads.

    >>> from jaxgrad._compile.state import global_names
    >>> def f(x):
    ...     return np.sin(x).attribute
    >>> global_names(f.__code__)
    ('np',)
    """
    names = _names_cache.get(code)
    if names is None:
        found = dict.fromkeys(i.argval for i in dis.get_instructions(code)
                              if i.opname in ("LOAD_GLOBAL", "LOAD_NAME"))
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                found.update(dict.fromkeys(global_names(const)))
        names = _names_cache[code] = tuple(found)
    return names


ARGUMENTS = "arguments"  # traced: the numbers directly in the call's arguments, not deeper


def _dynamic(dynamic: Any, key: Any, value: Any) -> bool:
    """Whether the number ``value`` at ``key`` is one that changed between calls (traced; after
    the trace, the tracer the step computed for it), or ``value`` is a list or dict there whose
    numbers are (one the step replaces on every call: ``log["lrs"] = [group["lr"]]``)."""
    return key in dynamic and (type(value) is int or type(value) is float
                               or isinstance(value, (jax.core.Tracer, list, dict)))


def _child_traced(traced: Any, key: Any) -> Any:
    """Whether numbers under ``key`` of a dict are traced, given the dict's own setting."""
    if traced is True or traced is ARGUMENTS:
        return traced
    return isinstance(traced, tuple) and isinstance(key, str) and key in traced


class StateWalk:
    """One walk from a step's roots: the objects reached, their entries, and the state slots.

    ``pre`` is the walk made before tracing when this one is made after it: then objects and
    slots seen before are coded by their index there (``("old", i)``, ``("in", kind, j)``), and
    tracers the step produced become outputs.

    >>> import jaxgrad
    >>> from jaxgrad._compile.state import StateWalk
    >>> w = jaxgrad.ones(2, requires_grad=True)
    >>> walk = StateWalk(({"w": w},), ())
    >>> len(walk.cells), walk.objects[1] is w
    (1, True)
    """

    def __init__(self, state_roots: tuple, arg_roots: tuple, pre: StateWalk | None = None,
                 installed: dict[int, tuple[str, int]] | None = None,
                 snapshot: bool = False, arg_numbers: bool = False,
                 policy: WalkPolicy = NO_POLICY) -> None:
        self._start(pre, installed, snapshot, policy)
        self.state_codes = tuple(self.code(root, False, False, -1, None) for root in state_roots)
        self.prefix = self._sizes()
        self.arg_codes = self._arg_codes(arg_roots, arg_numbers)

    def _arg_codes(self, arg_roots: tuple, arg_numbers: bool) -> tuple:
        """The arguments' codes; ``arg_numbers``: the numbers among them are traced (the
        arguments are then a list and a dict, where tracers can be put)."""
        if not arg_numbers and self.pre is None and self.snapshots is None \
                and len(arg_roots) == 2:
            codes = self._plain_tensor_arguments(*arg_roots)
            if codes is not None:
                return codes
        traced = ARGUMENTS if arg_numbers else False
        return tuple(self.code(root, traced, False, -1, None) for root in arg_roots)

    def _plain_tensor_arguments(self, args: tuple, kwargs: dict) -> tuple | None:
        """The codes :meth:`code` gives a call's ``(args, kwargs)`` when the arguments are
        tensors without ``.grad``, hooks or a base and there are no keyword arguments (most
        compiled calls: ``step(x, y)``), found without its general dispatch; None otherwise."""
        if kwargs or type(args) is not tuple:
            return None
        for t in args:
            if not isinstance(t, Tensor) or t._grad is not None or t._base is not None \
                    or t._grad_hooks or t._post_acc_hooks:
                return None
        objects, kinds, metas, entries, index = (self.objects, self.kinds, self.metas,
                                                 self.entries, self.index)
        position = index[id(args)] = len(objects)
        objects.append(args)
        kinds.append("tuple")
        metas.append((tuple,))
        items: list = []
        entries.append(items)
        self.masks[position] = []
        counter_index = self.counter_index
        for i, t in enumerate(args):
            found = index.get(id(t))
            if found is None:
                found = index[id(t)] = len(objects)
                objects.append(t)
                kinds.append("tensor")
                cell = self._cell(t._cell)
                counter = counter_index.get(id(t._vc))
                if counter is None:
                    counter = counter_index[id(t._vc)] = len(self.counters)
                    self.counters.append(t._vc)
                metas.append((type(t), cell, counter, t._layout, t._requires_grad,
                              t._grad_node is None, t._retains_grad, (), None))
                entries.append([("grad", ("c", None))])
            items.append((i, ("old", found)))
        keywords = index[id(kwargs)] = len(objects)  # the empty dict, as _visit_dict has it
        objects.append(kwargs)
        kinds.append("dict")
        metas.append((dict, None))
        entries.append([])
        self.masks[keywords] = []
        return (("old", position), ("old", keywords))

    def _start(self, pre: StateWalk | None = None, installed: dict | None = None,
               snapshot: bool = False, policy: WalkPolicy = NO_POLICY) -> None:
        self.pre = pre
        self.policy = policy
        self.dynamic, self.unread, self.unrun = policy.dynamic, policy.unread, policy.unrun
        self.items = policy.items
        self.lengths: dict[int, int] = {}  # object index -> length of a list walked by items
        self.installed = installed or {}  # id(tracer) -> ("number"|"array", slot) of pre
        self.objects: list[Any] = []
        self.kinds: list[str] = []
        self.metas: list[tuple] = []
        self.entries: list[list[tuple[Any, tuple]]] = []
        self.index: dict[int, int] = {}
        # the objects re-checked by identity on repeated calls -> their entries holding traced
        # slots (blanked in the check)
        self.masks: dict[int, list[int]] = {}
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
        self.empties: list[Any] = []  # empty containers of jaxgrad's objects seen (hook tables)
        self.has_foreign_tracers = False

    def _sizes(self) -> tuple[int, int, int, int, int]:
        return (len(self.objects), len(self.cells), len(self.counters), len(self.numbers),
                len(self.arrays))

    @classmethod
    def resume(cls, memo: WalkMemo, arg_roots: tuple, arg_numbers: bool = False) -> StateWalk:
        """The walk a fresh one would be, from the state a :class:`WalkMemo` recorded plus a walk of
        this call's arguments (by the memo's policy). The memo is used up: the walk takes its
        lists."""
        walk = cls.__new__(cls)
        walk._start(policy=memo.template.policy)
        walk.objects = objects = memo.objects
        walk.kinds = kinds = list(memo.kinds)
        walk.metas = [()] * len(objects)  # the state part's are not needed again
        walk.entries = [()] * len(objects)
        walk.index = dict(zip(map(id, objects), range(len(objects))))
        walk.cells = memo.cells
        walk.cell_index = dict(zip(map(id, memo.cells), range(len(memo.cells))))
        walk.counters = memo.counters
        walk.counter_index = dict(zip(map(id, memo.counters), range(len(memo.counters))))
        walk.numbers = [(o, k, get_entry(objects[o], kinds[o], k)) for o, k in memo.numbers]
        walk.arrays = [(o, k, get_entry(objects[o], kinds[o], k)) for o, k in memo.arrays]
        walk.state_codes = memo.state_codes
        walk.prefix = walk._sizes()
        walk.arg_codes = walk._arg_codes(arg_roots, arg_numbers)
        return walk

    # -- coding values ----------------------------------------------------------------------
    def code(self, value: Any, traced: Any, managed: bool, owner: int, key: Any) -> tuple:
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
            return self._object_code(value, "tensor", False, True)
        if isinstance(value, jax.Array):
            if self.pre is None and (owner < 0 or self.kinds[owner] == "tuple"):
                return self._opaque(value)  # no place to put a tracer: a constant
            # a traced number the step computed comes back as a Python number: where numbers
            # are traced, or a 64-bit scalar the step computed from them and stored elsewhere
            # (``log["lrs"] = [group["lr"]]``)
            number = self.pre is not None and value.ndim == 0 and (
                traced is not False or self._computed_number(value))
            return self._slot("number" if number else "array", value, owner, key)
        if kind in _CONTAINERS or isinstance(value, _CONTAINERS):
            if managed and not value and kind is not tuple:  # most hook tables: no visit
                return self._empty(value)
            name = ("dict" if isinstance(value, dict) else "list" if isinstance(value, list)
                    else "tuple")
            return self._object_code(value, name, False if traced is ARGUMENTS and owner >= 0
                                     else traced, managed)
        if isinstance(value, types.FunctionType):
            if _is_opaque_function(value) or value.__code__ in self.unrun:
                return self._opaque(value)
            return self._object_code(value, "function", False, False)
        if isinstance(value, types.MethodType):
            return ("method", self.code(value.__self__, False, managed, -1, None),
                    self.code(value.__func__, False, managed, -1, None))
        if (isinstance(value, (type, types.ModuleType, types.BuiltinFunctionType, np.ndarray,
                               np.generic))
                or getattr(kind, "_jaxgrad_opaque", False) or not hasattr(value, "__dict__")):
            return self._opaque(value)
        return self._object_code(value, "attrs", False,
                                 getattr(kind, "_jaxgrad_managed_attrs", None) is not None)

    def _computed_number(self, value: Any) -> bool:
        """Whether a scalar tracer found after the trace is a Python number the step computed
        (traced numbers enter as 64-bit scalars; the step's own arrays live in tensors)."""
        return (isinstance(value, jax.core.Tracer) and value.dtype in _NUMBER_DTYPES
                and self.installed.get(id(value), ("number",))[0] == "number")

    def _empty(self, container: Any) -> tuple:
        """An empty dict or list of an object jaxgrad manages: coded by its type, emptied again
        after a trace. (A user's empty container is an object of the walk: the step may fill
        it, and the next call must find it in place.)"""
        self.empties.append(container)
        return ("empty", type(container), getattr(container, "default_factory", None))

    def _opaque(self, value: Any) -> tuple:
        self.opaque[id(value)] = value
        return ("v", id(value))

    def _slot(self, kind: str, value: Any, owner: int, key: Any) -> tuple:
        if owner in self.masks:
            self.masks[owner].append(len(self.entries[owner]))
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

    def _object_code(self, obj: Any, kind: str, traced: Any, managed: bool) -> tuple:
        index = self.index.get(id(obj))
        if index is None:
            index = self._visit(obj, kind, traced, managed)
        if self.pre is not None:
            old = self.pre.index.get(id(obj))
            if old is not None and self.pre.objects[old] is obj:
                return ("old", old)
            return ("new", index)
        return ("old", index)

    # -- visiting objects --------------------------------------------------------------------
    def _visit(self, obj: Any, kind: str, traced: Any, managed: bool) -> int:
        index = len(self.objects)
        self.index[id(obj)] = index
        self.objects.append(obj)
        self.kinds.append(kind)
        self.metas.append(())
        entries: list[tuple[Any, tuple]] = []
        self.entries.append(entries)
        if not managed:
            self.masks[index] = []
        if self.snapshots is not None:
            self.snapshots.append(_snapshot(obj, kind))
        getattr(self, "_visit_" + kind)(obj, index, entries, traced, managed)
        return index

    def _visit_tensor(self, t: Tensor, index: int, entries: list, traced: Any,
                      managed: bool) -> None:
        cell = self._cell(t._cell)
        counter = self.counter_index.get(id(t._vc))
        if counter is None:
            counter = self.counter_index[id(t._vc)] = len(self.counters)
            self.counters.append(t._vc)
        hooks = tuple(self.code(h, False, False, -1, None) for h in _hooks(t))
        base = None if t._base is None else self.code(t._base, False, True, -1, None)
        self.metas[index] = (type(t), cell, counter, t._layout, t._requires_grad,
                             t._grad_node is None, t._retains_grad, hooks, base)
        entries.append(("grad", self.code(t._grad, False, True, index, "grad")))

    def _cell(self, cell: Storage) -> int:
        found = self.cell_index.get(id(cell))
        if found is None:
            found = self.cell_index[id(cell)] = len(self.cells)
            self.cells.append(cell)
            if self.pre is None and isinstance(cell.array, jax.core.Tracer):
                self.has_foreign_tracers = True
        return found

    def _visit_dict(self, d: dict, index: int, entries: list, traced: Any,
                    managed: bool) -> None:
        self.metas[index] = (type(d), getattr(d, "default_factory", None))
        dynamic = self.dynamic.get(id(d), ())
        for key, value in list(d.items()):
            key_code = (TENSOR_KEY, self.code(key, False, managed, -1, None)) \
                if isinstance(key, Tensor) else key
            child = _dynamic(dynamic, key, value) or _child_traced(traced, key)
            entries.append((key_code, self.code(value, child, managed, index, key)))

    def _visit_list(self, lst: list, index: int, entries: list, traced: Any,
                    managed: bool) -> None:
        items = self.items.get(id(lst)) if type(lst) is not tuple else None
        if items is not None:
            self._visit_items(lst, index, entries, traced, managed, items)
            return
        self.metas[index] = (type(lst),)
        dynamic = self.dynamic.get(id(lst), ())
        for i, value in enumerate(list(lst)):
            entries.append((i, self.code(value, _dynamic(dynamic, i, value) or traced, managed,
                                         index, i)))

    _visit_tuple = _visit_list

    def _visit_items(self, lst: list, index: int, entries: list, traced: Any, managed: bool,
                     items: tuple[frozenset, bool]) -> None:
        """A list the traces used only by some items (and appended to): its length if read,
        those items, and after a trace the items appended (keys ``("+", k)``)."""
        read, length = items
        self.metas[index] = (type(lst), "items")
        size = self.lengths[index] = len(lst)
        if length:
            entries.append(("len", ("len", size)))
        dynamic = self.dynamic.get(id(lst), ())
        for i in sorted(read):
            if i < size:
                value = lst[i]
                entries.append((i, self.code(value, _dynamic(dynamic, i, value) or traced,
                                             managed, index, i)))
        old = None if self.pre is None else self.pre.index.get(id(lst))
        if old is not None and old in self.pre.lengths:
            for k in range(self.pre.lengths[old], size):
                entries.append((("+", k), self.code(lst[k], traced, managed, index, k)))

    def _visit_attrs(self, obj: Any, index: int, entries: list, traced: Any,
                     managed: bool) -> None:
        cls = type(obj)
        self.metas[index] = (cls,)
        spec = getattr(cls, "_jaxgrad_traced_state", {})
        owned = getattr(cls, "_jaxgrad_managed_attrs", ())
        dynamic = self.dynamic.get(id(obj), ())
        unread = self.unread.get(id(obj), ())
        for name, value in list(vars(obj).items()):
            if name in unread:
                continue
            child_managed = owned is True or name in owned
            child = _dynamic(dynamic, name, value) or spec.get(name, False)
            entries.append((name, self.code(value, child, child_managed, index, name)))

    def _visit_function(self, fn: types.FunctionType, index: int, entries: list,
                        traced: Any, managed: bool) -> None:
        self.metas[index] = (fn.__code__,)
        namespace = fn.__globals__
        for name in global_names(fn.__code__):
            if name in namespace:
                entries.append((("g", name), self.code(namespace[name], False, False, index,
                                                       ("g", name))))
        for i, cell in enumerate(fn.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell (a name assigned later)
                continue
            entries.append((("c", i), self.code(value, False, False, index, ("c", i))))
        for i, value in enumerate(fn.__defaults__ or ()):
            entries.append((("d", i), self.code(value, False, False, -1, None)))
        for name, value in (fn.__kwdefaults__ or {}).items():
            entries.append((("k", name), self.code(value, False, False, -1, None)))

    # -- signatures and inputs -------------------------------------------------------------------
    def state_key(self) -> tuple:
        """Everything static about the state roots' part of the walk."""
        return self._key(self.state_codes, (0, 0, 0, 0, 0), self.prefix)

    def arg_key(self) -> tuple:
        """Everything static about the arguments' part of the walk."""
        return self._key(self.arg_codes, self.prefix, self._sizes())

    def _key(self, codes: tuple, start: tuple, stop: tuple) -> tuple:
        objects = tuple(zip(self.kinds[start[0]:stop[0]], self.metas[start[0]:stop[0]],
                            map(tuple, self.entries[start[0]:stop[0]])))
        cells = tuple((c.array.shape, c.array.dtype, getattr(c.array, "weak_type", False))
                      for c in self.cells[start[1]:stop[1]])
        numbers = tuple(type(v) for _, _, v in self.numbers[start[3]:stop[3]])
        arrays = tuple((a.shape, a.dtype) for _, _, a in self.arrays[start[4]:stop[4]])
        return (codes, objects, cells, numbers, arrays)

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


class WalkMemo:
    """The state part of the last call's walk, as a fresh walk would find it now, with what
    :meth:`still_valid` needs to tell that it still is (the epoch, the identities held by every
    object jaxgrad's API does not watch)."""

    __slots__ = (
        "arrays",
        "cells",
        "checks",
        "counters",
        "epoch",
        "kinds",
        "numbers",
        "objects",
        "state_codes",
        "template",
    )

    def still_valid(self) -> bool:
        """Whether every re-checked object holds the same objects as when this was made."""
        for obj, kind, names, mask, ids in self.checks:
            if identities(obj, kind, names, mask) != ids:
                return False
        return True


class Template:
    """How to make a :class:`WalkMemo` after a program ran: the post-step walk's objects, cells and
    counters as references to the call's walk (``old``) or to what the program created
    (``new``), plus the entries (number slots, re-checks) in that walk's coordinates."""

    __slots__ = (
        "arrays",
        "cells",
        "checks",
        "counters",
        "kinds",
        "next_entries",
        "numbers",
        "objects",
        "policy",
        "state_codes",
    )

    def memo(self, walk: StateWalk, created: dict, new_cells: list, new_counters: list,
             epoch: int) -> WalkMemo | None:
        """The memo after a call whose walk was ``walk`` and whose program made ``created``."""
        objects = []
        for age, i in self.objects:
            obj = walk.objects[i] if age == "old" else created.get(i, _EMPTY)
            if obj is _EMPTY:
                return None
            objects.append(obj)
        memo = WalkMemo()
        memo.objects = objects
        memo.kinds = self.kinds
        memo.cells = [walk.cells[i] if age == "old" else new_cells[i] for age, i in self.cells]
        memo.counters = [walk.counters[i] if age == "old" else new_counters[i]
                         for age, i in self.counters]
        memo.numbers, memo.arrays = self.numbers, self.arrays
        memo.state_codes = self.state_codes
        memo.checks = [(objects[i], kind, names, mask,
                        identities(objects[i], kind, names, mask))
                       for i, kind, names, mask in self.checks]
        memo.epoch = epoch
        memo.template = self
        return memo


def make_template(fresh: StateWalk, walk: StateWalk, created: dict, new_cells: list,
                  new_counters: list) -> Template | None:
    """The template of a program from ``fresh``, a walk of the state roots made right after the
    program's first write-back, whose walk was ``walk``; None if some object cannot be named."""
    if fresh.has_foreign_tracers:
        return None
    template = Template()
    template.objects = _refs(fresh.objects, walk.objects, walk.index,
                             {id(o): i for i, o in created.items()})
    template.cells = _refs(fresh.cells, walk.cells, walk.cell_index,
                           {id(c): i for i, c in enumerate(new_cells)})
    template.counters = _refs(fresh.counters, walk.counters, walk.counter_index,
                              {id(c): i for i, c in enumerate(new_counters)})
    if None in (template.objects, template.cells, template.counters):
        return None
    template.kinds = fresh.kinds
    template.numbers = [(o, k) for o, k, _ in fresh.numbers]
    template.arrays = [(o, k) for o, k, _ in fresh.arrays]
    template.state_codes = fresh.state_codes
    template.policy = fresh.policy
    template.checks = [(i, fresh.kinds[i], _names(fresh, i), _mask_positions(fresh, i))
                       for i in fresh.masks]
    template.next_entries = {}
    return template


def _refs(items: list, old: list, old_index: dict, new_index: dict) -> list | None:
    """Each item as ("old", its index in ``old``) or ("new", its index among the created);
    None if one is neither."""
    refs = []
    for item in items:
        i = old_index.get(id(item))
        if i is not None and old[i] is item:
            refs.append(("old", i))
            continue
        i = new_index.get(id(item))
        if i is None:
            return None
        refs.append(("new", i))
    return refs


def _names(walk: StateWalk, index: int) -> Any:
    """What a re-check of object ``index`` looks at: a function's globals; the attributes an
    object's walk skipped (not looked at)."""
    obj, kind = walk.objects[index], walk.kinds[index]
    if kind == "function":
        return global_names(obj.__code__)
    if kind == "list" and id(obj) in walk.items:
        return walk.items[id(obj)]
    return walk.unread.get(id(obj), ()) if kind == "attrs" else ()


def _mask_positions(walk: StateWalk, index: int) -> tuple[int, ...]:
    """Positions of traced slots in the identity list of a re-checked object."""
    mask = walk.masks.get(index) or ()
    if not mask:
        return ()
    kind = walk.kinds[index]
    keys = len(walk.entries[index]) if kind in ("dict", "attrs") else 0
    return tuple(keys + p for p in mask)


def identities(obj: Any, kind: str, names: tuple, mask: tuple) -> list[int]:
    """The ids of what ``obj`` holds (keys and values), traced positions blanked."""
    if kind == "dict":
        ids = [*map(id, obj), *map(id, obj.values())]
    elif kind == "list" and names:  # the length (if read) and the items read
        read, length = names
        size = len(obj)
        ids = [size] if length else []
        ids.extend(id(obj[i]) if i < size else -1 for i in sorted(read))
    elif kind in ("list", "tuple"):
        ids = [*map(id, obj)]
    elif kind == "attrs":
        namespace = vars(obj)
        if names:  # the attributes the walk skipped
            namespace = {k: v for k, v in namespace.items() if k not in names}
        ids = [*map(id, namespace), *map(id, namespace.values())]
    elif kind == "function":
        namespace = obj.__globals__
        ids = [*map(id, map(namespace.get, names))]
        for cell in obj.__closure__ or ():
            try:
                ids.append(id(cell.cell_contents))
            except ValueError:
                ids.append(0)
        ids.append(id(obj.__defaults__))
        ids.append(id(obj.__kwdefaults__))
    else:
        return []
    for position in mask:
        ids[position] = 0
    return ids


def _hooks(t: Tensor) -> list:
    hooks = []
    for table in (t._grad_hooks, t._post_acc_hooks):
        if table:
            hooks.extend(table.values())
    return hooks


def get_entry(obj: Any, kind: str, key: Any) -> Any:
    """The value at entry ``key`` of a walked object."""
    if kind in ("dict", "list", "tuple"):
        return obj[key]
    if kind == "attrs":
        return vars(obj)[key]
    if kind == "tensor":
        return obj._grad
    if key[0] == "g":
        return obj.__globals__[key[1]]
    return obj.__closure__[key[1]].cell_contents


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
        cells = []
        for cell in obj.__closure__ or ():
            try:
                cells.append(cell.cell_contents)
            except ValueError:
                cells.append(_EMPTY)
        return ({n: namespace.get(n, _EMPTY) for n in global_names(obj.__code__)}, cells)
    return None


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
