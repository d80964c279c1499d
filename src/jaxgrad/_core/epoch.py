"""A counter that moves whenever the *structure* of jaxgrad state changes through its API.

Structure is what a compiled step's signature depends on beyond array values: which ``.grad``
a tensor holds, ``requires_grad``, hooks, a tensor's storage binding, a module's attributes and
submodules, an optimizer's groups and state entries, a generator's seed. ``jaxgrad.compile``
checks this counter on each call: when it has not moved since the previous call wrote its
results back, the state it found then is still what a new walk would find, and the walk over
modules, tensors and optimizers is skipped. This module imports nothing from jaxgrad.
"""

from __future__ import annotations


class _Epoch:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


EPOCH = _Epoch()


def changed() -> None:
    """Record that some jaxgrad object's structure changed.

    >>> from jaxgrad._core.epoch import EPOCH, changed
    >>> before = EPOCH.value; changed(); EPOCH.value == before + 1
    True
    """
    EPOCH.value += 1


_global_hook_tables: list = []


def register_global_hooks(*tables: dict) -> None:
    """Name module-level hook tables (global module and optimizer hooks) whose contents a
    compiled step's signature depends on."""
    _global_hook_tables.extend(tables)


def global_hooks() -> tuple:
    """The identities of every registered global hook, in order (part of a signature).

    >>> from jaxgrad._core.epoch import global_hooks
    >>> isinstance(global_hooks(), tuple)
    True
    """
    if not any(_global_hook_tables):  # the common case, checked on every compiled call
        return ()
    return tuple(tuple(map(id, table.values())) for table in _global_hook_tables)
