"""``jaxgrad.utils._python_dispatch``: ``TorchDispatchMode``, as ``torch.utils._python_dispatch``.

While a mode is entered, every op jaxgrad runs (op rows, views, in-place ops) goes to its
``__torch_dispatch__(func, types, args, kwargs)`` below autograd: ``func`` is the op overload
(``aten.mm.default``, equal to ``jaxgrad.ops.aten.mm.default``), and calling it runs the op
(with the mode popped, so the ops it runs go to the modes below, then to the kernels); autograd
records the op on what the mode returns. Modes nest; the innermost runs first.

Differences from torch: ops jaxgrad computes as one kernel where torch's dispatcher shows
several (``softmax`` where torch shows ``_softmax``), and autograd's own ``detach`` calls, are
what jaxgrad runs, not what torch's dispatcher would show.

>>> import jaxgrad
>>> from jaxgrad.utils._python_dispatch import TorchDispatchMode
>>> class Log(TorchDispatchMode):
...     def __init__(self):
...         super().__init__()
...         self.ops = []
...     def __torch_dispatch__(self, func, types, args=(), kwargs=None):
...         self.ops.append(str(func))
...         return func(*args, **(kwargs or {}))
>>> x = jaxgrad.ones(2, 3, requires_grad=True)
>>> with Log() as log:
...     y = (x @ x.t()).sin()
>>> log.ops, y.grad_fn.name()
(['aten.t.default', 'aten.mm.default', 'aten.sin.default'], 'SinBackward0')
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .._core.tensor import dispatch_modes, pop_dispatch_mode, push_dispatch_mode

__all__ = ["TorchDispatchMode", "_get_current_dispatch_mode", "_get_current_dispatch_mode_stack",
           "_pop_mode", "_pop_mode_temporarily", "_push_mode", "any_torch_dispatch_mode_on_stack",
           "is_in_torch_dispatch_mode"]


class TorchDispatchMode:
    """A context manager that intercepts every op jaxgrad runs while it is entered: define
    ``__torch_dispatch__(self, func, types, args=(), kwargs=None)``."""

    def __init__(self, _dispatch_key: Any = None) -> None:
        pass

    def __torch_dispatch__(self, func: Any, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchDispatchMode:
        _push_mode(self)
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        _pop_mode()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchDispatchMode:
        """Deprecated in torch: make an instance (enter it with ``with``)."""
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls) -> bool:
        return False

    @classmethod
    def ignore_compile_internals(cls) -> bool:
        return False


def _get_current_dispatch_mode() -> TorchDispatchMode | None:
    """The innermost mode entered, or None."""
    modes = dispatch_modes()
    return modes[-1] if modes else None


def _get_current_dispatch_mode_stack() -> list[TorchDispatchMode]:
    """The modes entered, outermost first."""
    return list(dispatch_modes())


def is_in_torch_dispatch_mode(include_infra_modes: bool = True) -> bool:
    """Whether a mode is entered."""
    return bool(dispatch_modes())


def any_torch_dispatch_mode_on_stack() -> bool:
    """Whether a mode is entered."""
    return bool(dispatch_modes())


def _push_mode(mode: TorchDispatchMode) -> None:
    push_dispatch_mode(mode)


def _pop_mode(k: Any = None) -> TorchDispatchMode:
    if not dispatch_modes():
        raise AssertionError("Trying to pop from an empty mode stack")
    return pop_dispatch_mode()


@contextlib.contextmanager
def _pop_mode_temporarily(k: Any = None) -> Iterator[TorchDispatchMode]:
    mode = _pop_mode(k)
    try:
        yield mode
    finally:
        _push_mode(mode)
