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
    """One trace of a compiled step: the function's name, the warnings already given, how many
    ``jaxgrad.compiler.callback`` calls the trace staged, and whether the step ran Python that
    eager mode runs on every call with values (a user hook, a print of a traced tensor): a
    ``quiet`` trace (an eager ``jaxgrad.func`` transform's) gives up on such a step instead of
    warning."""

    __slots__ = ("callbacks", "collectives_on_host", "name", "over_processes", "per_call_python",
                 "quiet", "warned")

    def __init__(self, name: str, warned: set, quiet: bool = False) -> None:
        self.name = name
        self.warned = warned
        self.callbacks = 0
        self.quiet = quiet
        self.per_call_python = False
        # whether the step is traced as one program over several processes, and whether the
        # collectives it meets are host calls instead (see ProgramOverProcesses)
        self.over_processes = False
        self.collectives_on_host = False


class ProgramOverProcesses(Exception):
    """Raised by a collective over several processes that a compiled step's trace meets: the
    step is to be compiled again as one program over the group's processes, where the collective
    is an XLA collective. ``program`` makes it: ``program.jit(fn)`` and ``program.make_jaxpr(fn)``
    are ``jax.jit``/``jax.make_jaxpr`` of ``fn`` (a function of this process's arrays) run as
    that program, ``program.accepts(args)`` whether ``args`` can be this process's part of it.
    ``program`` None: the step, traced as such a program, cannot be one (an ordered host
    callback in it); its collectives are to be host calls.
    """

    def __init__(self, program: Any) -> None:
        super().__init__("a collective asks for the compiled step as one program over processes")
        self.program = program


def current() -> TraceContext | None:
    """The trace ``jaxgrad.compile`` is running on this thread, or None.

    >>> from jaxgrad._core.tracing import current
    >>> current() is None
    True
    """
    return getattr(_state, "trace", None)


def note_per_call_python() -> None:
    """Record that code ran Python that eager mode runs on every call with values (see
    :class:`TraceContext`): in the step being traced, if any, and in :func:`per_call_notes`."""
    trace = current()
    if trace is not None:
        trace.per_call_python = True
    _state.notes = per_call_notes() + 1


def per_call_notes() -> int:
    """How many times this thread noted per-call Python (compare before and after a call)."""
    return getattr(_state, "notes", 0)


@contextmanager
def tracing(name: str, warned: set, quiet: bool = False) -> Iterator[TraceContext]:
    """Mark this thread as tracing the compiled function ``name`` (nested traces restore the
    outer one); ``warned`` is the compiled function's set of warnings already given."""
    outer = current()
    _state.trace = TraceContext(name, warned, quiet)
    try:
        yield _state.trace
    finally:
        _state.trace = outer


def call_user_hook(hook: Callable, *args: Any) -> Any:
    """``hook(*args)``; during a trace, warn once per compiled function when a hook returns None
    without staging a ``jaxgrad.compiler.callback`` (it ran for side effects that happen at
    trace time only)."""
    trace = current()
    if trace is None or trace.quiet:
        note_per_call_python()  # (a transform running it on every call is kept eager)
        return hook(*args)
    before = trace.callbacks
    result = hook(*args)
    if result is None and trace.callbacks == before:
        name = getattr(hook, "__qualname__", None) or type(hook).__name__
        if name not in trace.warned:
            trace.warned.add(name)
            warnings.warn(HOOK_WARNING.format(name=repr(name)), UserWarning, stacklevel=4)
    return result
