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
    """One trace of a compiled step: the function's name, the warnings already given, and how
    many ``jaxgrad.compiler.callback`` calls the trace staged."""

    __slots__ = ("callbacks", "name", "warned")

    def __init__(self, name: str, warned: set) -> None:
        self.name = name
        self.warned = warned
        self.callbacks = 0


def current() -> TraceContext | None:
    """The trace ``jaxgrad.compile`` is running on this thread, or None.

    >>> from jaxgrad._core.tracing import current
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


def call_user_hook(hook: Callable, *args: Any) -> Any:
    """``hook(*args)``; during a trace, warn once per compiled function when a hook returns None
    without staging a ``jaxgrad.compiler.callback`` (it ran for side effects that happen at
    trace time only)."""
    trace = current()
    if trace is None:
        return hook(*args)
    before = trace.callbacks
    result = hook(*args)
    if result is None and trace.callbacks == before:
        name = getattr(hook, "__qualname__", None) or type(hook).__name__
        if name not in trace.warned:
            trace.warned.add(name)
            warnings.warn(HOOK_WARNING.format(name=repr(name)), UserWarning, stacklevel=4)
    return result
