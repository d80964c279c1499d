"""Whether ``jaxgrad.compile`` is tracing a step on this thread, and its trace-time warnings.

``jaxgrad.compile`` runs the user's Python once per new signature, with tensors holding JAX
tracers; code below it (the engine calling tensor hooks, modules calling their hooks) asks here
whether it runs inside such a trace, so that it can warn that a hook's Python side effects happen
at trace time only. This module imports nothing from jaxgrad.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_state = threading.local()

HOOK_WARNING = (
    "jaxgrad.compile: the hook {name} returned None while the step was traced, so it ran only for "
    "its side effects. Python side effects (print, logging, appending to a list that the step does "
    "not reach) happen once per trace, not on every call of the compiled step. To observe values "
    "on every call, call jaxgrad.compiler.callback(fn, *tensors) inside the hook.")


class TraceContext:
    """One trace of a compiled step: the name of the function and the warnings already given."""

    __slots__ = ("name", "warned")

    def __init__(self, name: str, warned: set) -> None:
        self.name = name
        self.warned = warned


def current() -> TraceContext | None:
    """The trace ``jaxgrad.compile`` is running on this thread, or None.

    >>> from jaxgrad._tracing import current
    >>> current() is None
    True
    """
    return getattr(_state, "trace", None)


@contextmanager
def tracing(name: str, warned: set) -> Iterator[TraceContext]:
    """Mark this thread as tracing the compiled function ``name`` (nested traces restore the
    outer one); ``warned`` is the compiled function's set of warnings already given."""
    outer = current()
    _state.trace = TraceContext(name, warned)
    try:
        yield _state.trace
    finally:
        _state.trace = outer


def note_hook_result(hook: Callable, result: Any) -> None:
    """Warn once per compiled function when a user hook returning None runs during a trace."""
    trace = current()
    if trace is None or result is not None:
        return
    name = getattr(hook, "__qualname__", None) or type(hook).__name__
    if name in trace.warned:
        return
    trace.warned.add(name)
    warnings.warn(HOOK_WARNING.format(name=repr(name)), UserWarning, stacklevel=4)
