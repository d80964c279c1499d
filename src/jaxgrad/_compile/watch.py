"""What a traced step used of the Python state it could reach: the attributes it read or wrote
of the user objects its walk found, the items it read of their lists (or whether it only
appended to them), and the Python functions it ran.

``jaxgrad.compile`` guards a program on what its trace depended on, as torch.compile's guards
do, not on everything the step can reach: a hook that closes over an object collecting
statistics (``self.rows``, growing each call) is not a new program per call when the trace
never read ``rows``. While the step runs on tracers, a :class:`Watch` gives each user object of
the walk (not tensors, modules, optimizers: jaxgrad's API reports their changes) a subclass of
its class that records attribute reads and writes; each user list held in one place of the
walk is replaced there by a recording copy (a ``list`` subclass: indexing with an integer and
``len`` are noted, ``append``/``extend`` too, anything else counts as using the whole list),
copied back and put back before the trace ends, so a large list read by one item or a loss
history the step appends to is not walked item by item on every call; and a profile function
notes the code of every Python function called.

Objects that cannot be watched (a class whose layout forbids ``__class__`` assignment, one with
its own ``__init_subclass__`` or metaclass arguments) count as wholly read.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

import jax

from .state import get_entry, set_entry

WHOLE = "__dict__"  # an access to the namespace itself: every attribute counts as read


class _Current:
    accessed: dict[int, set] | None = None


_current = _Current()
_watching: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # class -> watching class


def _watching_class(cls: type) -> type | None:
    """A subclass of ``cls`` with its layout that records attribute reads, writes and deletes
    of watched objects; None where one cannot be made without side effects."""
    try:
        return _watching[cls]
    except KeyError:
        pass
    except TypeError:  # not weak-referenceable
        return None
    sub = None
    if type(cls) is type and not any("__init_subclass__" in vars(k) for k in cls.__mro__[:-1]):
        get, put, remove = cls.__getattribute__, cls.__setattr__, cls.__delattr__

        def __getattribute__(self: Any, name: str) -> Any:
            _note(self, name)
            return get(self, name)

        def __setattr__(self: Any, name: str, value: Any) -> None:
            _note(self, name)
            put(self, name, value)

        def __delattr__(self: Any, name: str) -> None:
            _note(self, name)
            remove(self, name)

        try:
            sub = type(cls.__name__, (cls,), {
                "__slots__": (), "__module__": cls.__module__, "__qualname__": cls.__qualname__,
                "__getattribute__": __getattribute__, "__setattr__": __setattr__,
                "__delattr__": __delattr__})
        except Exception:
            sub = None
    _watching[cls] = sub
    return sub


def _note(obj: Any, name: str) -> None:
    accessed = _current.accessed
    if accessed is not None:
        seen = accessed.get(id(obj))
        if seen is not None:
            seen.add(name)


class ListUses:
    """How a trace used a list: the indices it read, whether it read the length, whether it
    appended, whether it used the list in any other way (``whole``)."""

    __slots__ = ("appended", "indices", "length", "whole")

    def __init__(self) -> None:
        self.indices: set[int] = set()
        self.length = self.appended = self.whole = False


class _WatchedList(list):
    """The stand-in of a user's list while a trace runs (see the module's docstring)."""

    __slots__ = ("_uses",)

    def __getitem__(self, i: Any) -> Any:
        uses = self._uses
        if type(i) is int:
            uses.indices.add(i if i >= 0 else i + list.__len__(self))
            uses.length = uses.length or i < 0
        else:
            uses.whole = True
        return list.__getitem__(self, i)

    def __len__(self) -> int:
        self._uses.length = True
        return list.__len__(self)

    def append(self, value: Any) -> None:
        self._uses.appended = True
        list.append(self, value)

    def extend(self, values: Any) -> None:
        self._uses.appended = True
        list.extend(self, values)

    def __iadd__(self, values: Any) -> _WatchedList:
        self.extend(values)
        return self


def _used_whole(name: str) -> Any:
    method = getattr(list, name)

    def whole(self: _WatchedList, *args: Any, **kwargs: Any) -> Any:
        self._uses.whole = True
        return method(self, *args, **kwargs)

    whole.__name__ = name
    return whole


for _name in ("__iter__", "__reversed__", "__contains__", "index", "count", "copy", "__eq__",
              "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__mul__", "__rmul__",
              "__imul__", "__reduce__", "__reduce_ex__", "__repr__", "__setitem__",
              "__delitem__", "insert", "pop", "remove", "clear", "sort", "reverse"):
    setattr(_WatchedList, _name, _used_whole(_name))


def _flatten(stand_in: _WatchedList) -> tuple[list, None]:
    stand_in._uses.whole = True
    return list.__getitem__(stand_in, slice(None)), None


# a JAX pytree as the list it stands for (``jax.tree.map(f, the_list)`` inside the step); what
# JAX rebuilds from it is a plain list
jax.tree_util.register_pytree_node(_WatchedList, _flatten, lambda _, items: list(items))


class Watch:
    """Records, while entered, what a trace does with ``objects`` (user objects), with
    ``lists`` (``(list, holder, holder's kind, key)``: a user list and the one walked place
    holding it) and which code runs. ``accessed[id(obj)]``: the attribute names read or written
    (``WHOLE`` for all); ``list_uses[id(list)]``: a :class:`ListUses`; ``ran``: the code
    objects called, or None where another profiler was active.

    >>> from jaxgrad._compile.watch import Watch
    >>> class Box:
    ...     pass
    >>> box = Box(); box.seen, box.unseen = 1, 2
    >>> with Watch([box]) as watch:
    ...     _ = box.seen
    >>> watch.accessed[id(box)], type(box) is Box
    ({'seen'}, True)
    """

    def __init__(self, objects: list, lists: list = ()) -> None:
        self.objects = objects
        self.lists = lists
        self.accessed: dict[int, set] = {}
        self.list_uses: dict[int, ListUses] = {}
        self._stand_ins: list[_WatchedList] = []
        self.ran: set | None = set()
        self._swapped: list[tuple[Any, type]] = []
        self._outer: dict[int, set] | None = None

    def __enter__(self) -> Watch:
        for lst, holder, kind, key in self.lists:
            stand_in = _WatchedList(lst)
            stand_in._uses = self.list_uses[id(lst)] = ListUses()
            set_entry(holder, kind, key, stand_in)
            self._stand_ins.append(stand_in)
        for obj in self.objects:
            cls = type(obj)
            sub = _watching_class(cls)
            try:
                if sub is None:
                    raise TypeError
                object.__setattr__(obj, "__class__", sub)
            except TypeError:
                self.accessed[id(obj)] = {WHOLE}
                continue
            self.accessed[id(obj)] = set()
            self._swapped.append((obj, cls))
        self._outer, _current.accessed = _current.accessed, self.accessed
        if sys.getprofile() is None:
            ran = self.ran.add

            def profile(frame: Any, event: str, arg: Any) -> None:
                if event == "call":
                    ran(frame.f_code)

            sys.setprofile(profile)
        else:  # another profiler (cProfile): which functions ran is not known
            self.ran = None
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.ran is not None:
            sys.setprofile(None)
        _current.accessed = self._outer
        for obj, cls in self._swapped:
            object.__setattr__(obj, "__class__", cls)
        self._swapped = []
        for (lst, holder, kind, key), stand_in in zip(self.lists, self._stand_ins):
            lst[:] = list.__getitem__(stand_in, slice(None))
            if get_entry(holder, kind, key) is stand_in:
                set_entry(holder, kind, key, lst)

    def leaked(self, objects: list) -> set[int]:
        """The ids of the watched lists whose stand-in is among ``objects`` (the step stored
        it somewhere: the trace cannot stand, and the list is walked whole from then on)."""
        stand_ins = {id(s): id(lst) for (lst, *_), s in zip(self.lists, self._stand_ins)}
        return {stand_ins[id(obj)] for obj in objects if id(obj) in stand_ins}
