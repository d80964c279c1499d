"""A state dict flattened as torch's planner flattens it: nested dicts by key, lists that hold
tensors by position (``"optim.state.0.exp_avg"``); a value with ``state_dict()`` and
``load_state_dict()`` (a module, an optimizer) stands for its state dict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._core.tensor import Tensor


def is_stateful(value: Any) -> bool:
    """Whether ``value`` has ``state_dict()`` and ``load_state_dict()``."""
    return callable(getattr(value, "state_dict", None)) and \
        callable(getattr(value, "load_state_dict", None))


def _is_terminal(value: Any) -> bool:
    """torch's rule: a dict is walked into; a list only if it holds a tensor or a container
    that is walked into; anything else (tuples too) is one value."""
    if isinstance(value, Mapping):
        return False
    if not isinstance(value, list):
        return True
    return not any(isinstance(v, Tensor) or (isinstance(v, (Mapping, list)) and
                                              not _is_terminal(v)) for v in value)


def flatten(state_dict: Mapping) -> list[tuple[str, Any, Any, Any]]:
    """(dotted name, value, its container, its key there) for each leaf value, in order."""
    out: list[tuple[str, Any, Any, Any]] = []

    def visit(path: tuple[str, ...], value: Any, container: Any, key: Any) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                visit((*path, str(k)), v, value, k)
        elif not _is_terminal(value):
            for i, v in enumerate(value):
                visit((*path, str(i)), v, value, i)
        else:
            out.append((".".join(path), value, container, key))

    for k, v in state_dict.items():
        visit((str(k),), v, state_dict, k)
    return out


def unwrapped(state_dict: Mapping) -> dict[str, Any]:
    """``state_dict`` with each top-level value that :func:`is_stateful` replaced by its state
    dict."""
    return {k: v.state_dict() if is_stateful(v) else v for k, v in state_dict.items()}
