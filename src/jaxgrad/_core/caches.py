"""One cache policy for the whole package (layer 0: no jaxgrad imports).

Every memo jaxgrad keeps (jitted forwards and backwards per static signature, promotion results,
save plans, device scalars, compiled backward programs) is bounded and registered here, and
:func:`clear_caches` empties them all (tests use it; so can a user who wants the memory back).
A function memo is :func:`cache` (``functools.lru_cache``: least recently used goes first, and
its lookups are C code, which matters on the per-op path); a memo whose key is built by hand
from arguments that are not themselves hashable is a :class:`Memo` (a dict whose oldest entry
goes first).

Memos that hold compiled kernels are declared with ``kernels=True``: an XLA executable costs
1-3 MB of host memory however small its program, and one jitted function holds one per shape it
has seen, so a bound on entries is no bound on memory. :func:`release_kernels` empties just
those (the kernel cache calls it when too many kernels were loaded since the last release).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_registry: list[Any] = []
_kernel_holders: list[Any] = []


def _register(memo: Any, kernels: bool) -> None:
    _registry.append(memo)
    if kernels:
        _kernel_holders.append(memo)


def cache(maxsize: int, kernels: bool = False) -> Callable[[F], F]:
    """Decorate a function with a bounded LRU cache that :func:`clear_caches` empties (and
    :func:`release_kernels` too, when its values hold compiled kernels: ``kernels=True``).

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
        _register(cached, kernels)
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

    def __init__(self, maxsize: int, kernels: bool = False) -> None:
        super().__init__()
        self.maxsize = maxsize
        _register(self, kernels)

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


def release_kernels() -> None:
    """Empty the memos that hold compiled kernels (their executables are freed once no running
    call holds them; the memos of names, node classes and plans stay, so identities do too).

    >>> from jaxgrad._core.caches import cache, release_kernels
    >>> @cache(maxsize=2, kernels=True)
    ... def kernel(n):
    ...     return [n]
    >>> _ = kernel(1); release_kernels(); kernel.cache_info().currsize
    0
    """
    for cached in _kernel_holders:
        cached.cache_clear()
