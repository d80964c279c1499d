"""``jaxgrad.ops``: torch.ops' op namespaces as far as programs reach them: ``profiler``'s
legacy range ops (``_record_function_enter_new``, ``_record_function_exit``), which
``record_function`` is written with in torch and which traced programs call directly.

>>> import jaxgrad
>>> handle = jaxgrad.ops.profiler._record_function_enter_new("step", None)
>>> jaxgrad.ops.profiler._record_function_exit(handle)
>>> jaxgrad.ops.profiler._record_function_exit.overloads()
['default', '_RecordFunction']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._engine.profiling import record_function_enter, record_function_exit

__all__ = ["profiler"]


class OpOverloadPacket:
    """An op of a namespace (``torch.ops.profiler._record_function_exit``): callable, with its
    overloads as attributes (``.default``, ...), each the same function."""

    def __init__(self, namespace: str, name: str, fn: Callable[..., Any],
                 overloads: tuple[str, ...] = ("default",)) -> None:
        self._qualified_op_name = f"{namespace}::{name}"
        self.__name__, self._fn, self._overloads = name, fn, overloads
        for overload in overloads:
            setattr(self, overload, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def overloads(self) -> list[str]:
        """The overload names, as torch lists them."""
        return list(self._overloads)

    def __repr__(self) -> str:
        return self._qualified_op_name.replace("::", ".")


class _OpNamespace:
    """A namespace of ops (``torch.ops.profiler``); a name it lacks raises torch's error."""

    def __init__(self, name: str, ops: dict[str, OpOverloadPacket]) -> None:
        self.name, self.__name__ = name, f"jaxgrad.ops.{name}"
        self.__dict__.update(ops)

    def __getattr__(self, op_name: str) -> Any:
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")

    def __repr__(self) -> str:
        return f"<module '{self.__name__}' from 'jaxgrad.ops'>"


profiler = _OpNamespace("profiler", {
    "_record_function_enter": OpOverloadPacket("profiler", "_record_function_enter",
                                               record_function_enter),
    "_record_function_enter_new": OpOverloadPacket("profiler", "_record_function_enter_new",
                                                   record_function_enter),
    "_record_function_exit": OpOverloadPacket("profiler", "_record_function_exit",
                                              record_function_exit,
                                              ("default", "_RecordFunction")),
})
