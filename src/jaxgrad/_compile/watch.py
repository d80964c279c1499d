"""What a traced step used of the Python state it could reach: the attributes it read or wrote
of the user objects its walk found, and the Python functions it ran.

``jaxgrad.compile`` guards a program on what its trace depended on, as torch.compile's guards
do, not on everything the step can reach: a hook that closes over an object collecting
statistics (``self.rows``, growing each call) is not a new program per call when the trace
never read ``rows``. While the step runs on tracers, a :class:`Watch` gives each user object of
the walk (not tensors, modules, optimizers: jaxgrad's API reports their changes) a subclass of
its class that records attribute reads and writes, and a profile function notes the code of
every Python function called. Both are undone before the trace ends.

Objects that cannot be watched (a class whose layout forbids ``__class__`` assignment, one with
its own ``__init_subclass__`` or metaclass arguments) count as wholly read.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

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


class Watch:
    """Records, while entered, what a trace does with ``objects`` (user objects) and which code
    runs. ``accessed[id(obj)]``: the attribute names read or written (``WHOLE`` for all);
    ``ran``: the code objects called, or None where another profiler was active.

    >>> from jaxgrad._compile.watch import Watch
    >>> class Box:
    ...     pass
    >>> box = Box(); box.seen, box.unseen = 1, 2
    >>> with Watch([box]) as watch:
    ...     _ = box.seen
    >>> watch.accessed[id(box)], type(box) is Box
    ({'seen'}, True)
    """

    def __init__(self, objects: list) -> None:
        self.objects = objects
        self.accessed: dict[int, set] = {}
        self.ran: set | None = set()
        self._swapped: list[tuple[Any, type]] = []
        self._outer: dict[int, set] | None = None

    def __enter__(self) -> Watch:
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
