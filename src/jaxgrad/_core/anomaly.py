"""Anomaly mode's state and records (torch's AnomalyMode and PyAnomalyMetadata).

While anomaly mode is on, every node made records in its ``metadata`` dict the forward
traceback that created it (``"traceback_"``) and, for a node made while the engine evaluates
another (a ``create_graph`` backward), that node as its parent (``"parent_"``). When a node's
evaluation fails, the engine calls :func:`warn_forward_traces`: torch's "Error detected in ..."
warning, then one "Previous calculation was induced by ..." warning per parent. With
``check_nan`` the engine also checks each node's output gradients for NaN.

As in torch the mode is one process-wide switch (not per thread). When it is off, the only
cost on the op path is reading ``state.enabled``.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
import warnings
from typing import Any


class _AnomalyState:
    """The process-wide switch: ``enabled`` and ``check_nan`` (torch's AnomalyMode)."""

    __slots__ = ("check_nan", "enabled")

    def __init__(self) -> None:
        self.enabled = False
        self.check_nan = True


state = _AnomalyState()
_evaluating = threading.local()  # .node: the node the engine evaluates now in this thread

TRACE_KEY = "traceback_"
PARENT_KEY = "parent_"
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # jaxgrad/


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly mode on or off for the whole process (torch's ``set_anomaly_enabled``).

    >>> import jaxgrad
    >>> jaxgrad.set_anomaly_enabled(True, check_nan=False)
    >>> jaxgrad.is_anomaly_enabled(), jaxgrad.is_anomaly_check_nan_enabled()
    (True, False)
    >>> jaxgrad.set_anomaly_enabled(False)
    >>> jaxgrad.is_anomaly_enabled(), jaxgrad.is_anomaly_check_nan_enabled()
    (False, True)
    """
    for position, (name, value) in enumerate((("enabled", enabled), ("check_nan", check_nan)), 1):
        if type(value) is not bool:
            raise TypeError(f"set_anomaly_enabled(): argument '{name}' (position {position}) "
                            f"must be bool, not {type(value).__name__}")
    state.enabled, state.check_nan = enabled, check_nan


def is_anomaly_enabled() -> bool:
    """Whether anomaly mode is on.

    >>> import jaxgrad
    >>> jaxgrad.is_anomaly_enabled()
    False
    """
    return state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode checks backward outputs for NaN (when it is on).

    >>> import jaxgrad
    >>> jaxgrad.is_anomaly_check_nan_enabled()
    True
    """
    return state.check_nan


# --- records on nodes --------------------------------------------------------------------------

def _is_internal(filename: str) -> bool:
    """A frame of jaxgrad's private implementation (a module or package named ``_...``)."""
    if not filename.startswith(_PACKAGE_DIR):
        return False
    return any(part.startswith("_") for part in filename[len(_PACKAGE_DIR):].split(os.sep))


def forward_stack() -> list[str]:
    """The calling stack as ``traceback.format_stack`` lines, less jaxgrad's innermost private
    frames (torch's stack ends where the user's call entered C++)."""
    frames = traceback.extract_stack(sys._getframe(1))
    while frames and _is_internal(frames[-1].filename):
        frames.pop()
    return traceback.format_list(frames)


def record(node: Any) -> None:
    """Store the forward traceback, and the node being evaluated (if any) as the parent, in a
    new node's metadata. Called only while anomaly mode is on."""
    metadata = node.metadata
    metadata[TRACE_KEY] = forward_stack()
    parent = getattr(_evaluating, "node", None)
    if parent is not None:
        metadata[PARENT_KEY] = parent


def evaluating(node: Any) -> Any:
    """Mark ``node`` as the one the engine evaluates in this thread; returns the previous one
    (to hand back to :func:`evaluating` when the node is done)."""
    previous = getattr(_evaluating, "node", None)
    _evaluating.node = node
    return previous


def _describe(stack: list | None, name: str, is_parent: bool) -> str:
    if stack is None:
        return (f"Error detected in {name}. No forward pass information available. Enable "
                "detect anomaly during forward pass for more information.")
    trace = "".join(stack)
    if is_parent:
        return (f"\n\nPrevious calculation was induced by {name}. Traceback of forward call "
                f"that induced the previous calculation:\n{trace}")
    return f"Error detected in {name}. Traceback of forward call that caused the error:\n{trace}"


def forward_trace_messages(node: Any) -> list[str]:
    """The messages torch warns when ``node``'s evaluation fails: its own forward traceback,
    then that of each parent up the chain."""
    metadata = node.metadata
    messages = [_describe(metadata.get(TRACE_KEY), node.name(), False)]
    parent = metadata.get(PARENT_KEY)
    while parent is not None:
        metadata = parent.metadata
        messages.append(_describe(metadata.get(TRACE_KEY), parent.name(), True))
        parent = metadata.get(PARENT_KEY)
    return messages


def warn_forward_traces(node: Any) -> None:
    """Warn each of :func:`forward_trace_messages`; a warning the filters turn into an error is
    written to ``sys.stderr`` instead, so that the backward's own error is what propagates."""
    for message in forward_trace_messages(node):
        try:
            warnings.warn(message, UserWarning, stacklevel=2)
        except Warning as raised:
            sys.stderr.write(f"{type(raised).__name__}: {raised}\n")
