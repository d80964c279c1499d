"""``torch.profiler.itt``: named ranges and marks for a timeline tool.

torch sends them to Intel VTune through ITT; jaxgrad sends them to ``jax.profiler``'s trace as
``TraceAnnotation`` ranges (TensorBoard, Perfetto), as ``autograd.profiler.emit_itt`` does for
ops. That trace is always there to write to, so ``is_available()`` is true, as in a torch
build with ITT. Ranges nest per thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import jax

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]

_open = threading.local()


def _ranges() -> list[jax.profiler.TraceAnnotation]:
    ranges = getattr(_open, "ranges", None)
    if ranges is None:
        ranges = _open.ranges = []
    return ranges


def _message(function: str, msg: Any) -> str:
    """``msg`` as a range name: text, bytes or None (an empty name), as torch's binding takes."""
    if msg is None:
        return ""
    if isinstance(msg, bytes):
        return msg.decode()
    if not isinstance(msg, str):
        raise TypeError(f"{function}(): incompatible function arguments. The following argument "
                        f"types are supported:\n    1. (arg0: str) -> None\n\nInvoked with: "
                        f"{msg!r}")
    return msg


def is_available() -> bool:
    """Whether ranges have somewhere to go: always (``jax.profiler``'s trace).

    >>> import jaxgrad
    >>> jaxgrad.profiler.itt.is_available()
    True
    """
    return True


def range_push(msg: str) -> None:
    """Open a range named ``msg`` on this thread, inside any range still open.

    >>> import jaxgrad
    >>> jaxgrad.profiler.itt.range_push("load"), jaxgrad.profiler.itt.range_pop()
    (None, None)
    """
    annotation = jax.profiler.TraceAnnotation(_message("rangePush", msg))
    annotation.__enter__()
    _ranges().append(annotation)


def range_pop() -> None:
    """Close this thread's innermost open range (nothing happens if none is open)."""
    ranges = _ranges()
    if ranges:
        ranges.pop().__exit__(None, None, None)


def mark(msg: str) -> None:
    """Mark an instant named ``msg`` (an empty range in the trace).

    >>> import jaxgrad
    >>> jaxgrad.profiler.itt.mark("checkpoint saved")
    """
    with jax.profiler.TraceAnnotation(_message("mark", msg)):
        pass


@contextmanager
def range(msg: str, *args: Any, **kwargs: Any) -> Iterator[None]:
    """A range around a block (or a decorated function); ``msg`` is formatted with the
    extra arguments.

    >>> import jaxgrad
    >>> with jaxgrad.profiler.itt.range("epoch {}", 3):
    ...     _ = jaxgrad.ones(2) * 2
    """
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
