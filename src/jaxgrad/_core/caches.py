"""One cache policy for the whole package (layer 0: no jaxgrad imports).

Every memo jaxgrad keeps (jitted forwards and backwards per static signature, promotion results,
save plans, device scalars, compiled backward programs) is bounded and registered here, and
:func:`clear_caches` empties them all (tests use it; so can a user who wants the memory back).
A function memo is :func:`cache` (``functools.lru_cache``: least recently used goes first, and
its lookups are C code, which matters on the per-op path); a memo whose key is built by hand
from arguments that are not themselves hashable is a :class:`Memo` (a dict whose oldest entry
goes first).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_registry: list[Any] = []


def cache(maxsize: int) -> Callable[[F], F]:
    """Decorate a function with a bounded LRU cache that :func:`clear_caches` empties.

    >>> from jaxgrad._core.caches import cache, clear_caches
    >>> @cache(maxsize=2)
    ... def square(x):
    ...     return x * x
    >>> square(3), square.cache_info().currsize
    (9, 1)
    >>> clear_caches(); square.cache_info().currsize
    0
    """

    def decorate(fn: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(fn)
        _registry.append(cached)
        return cached  # type: ignore[return-value]

    return decorate


class Memo(OrderedDict):
    """A bounded dict: inserting into a full one drops its oldest entry first (in O(1): a plain
    dict's oldest key is found by scanning past every deleted slot).

    >>> from jaxgrad._core.caches import Memo
    >>> m = Memo(maxsize=2)
    >>> m["a"], m["b"], m["c"] = 1, 2, 3
    >>> sorted(m)
    ['b', 'c']
    """

    def __init__(self, maxsize: int) -> None:
        super().__init__()
        self.maxsize = maxsize
        _registry.append(self)

    def __setitem__(self, key: Any, value: Any) -> None:
        if len(self) >= self.maxsize and key not in self:
            self.popitem(last=False)
        super().__setitem__(key, value)

    def cache_clear(self) -> None:
        """Drop every entry."""
        self.clear()


def clear_caches() -> None:
    """Empty every jaxgrad cache (jitted kernels are compiled again on their next use).

    >>> import jaxgrad
    >>> jaxgrad._clear_caches()
    """
    for cached in _registry:
        cached.cache_clear()
