"""``jaxgrad.ops``: torch.ops' op namespaces as far as programs reach them: ``profiler``'s
legacy range ops (``_record_function_enter_new``, ``_record_function_exit``), which
``record_function`` is written with in torch and which traced programs call directly; and
``aten``, whose overloads (``jaxgrad.ops.aten.mm.default``) are what a ``TorchDispatchMode``
or a selective-checkpoint policy receives as ``func`` (the same objects: ``func is
jaxgrad.ops.aten.mm.default``), and run jaxgrad's function of that name when called (with
autograd, as torch's do from Python). Any overload name of an op is accepted: jaxgrad keeps no
list of torch's overloads.

>>> import jaxgrad
>>> jaxgrad.ops.aten.mm.default(jaxgrad.eye(2), jaxgrad.ones(2, 1)).tolist()
[[1.0], [1.0]]

>>> import jaxgrad
>>> handle = jaxgrad.ops.profiler._record_function_enter_new("step", None)
>>> jaxgrad.ops.profiler._record_function_exit(handle)
>>> jaxgrad.ops.profiler._record_function_exit.overloads()
['default', '_RecordFunction']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._core.tensor import Tensor
from ._engine.op_overloads import PUBLIC_FUNCTION, TORCH_OVERLOAD, AtenPacket, packet_of
from ._engine.profiling import record_function_enter, record_function_exit
from ._functions.catalog import FUNCTIONS
from ._ops._table import ROW_NAMES
from .nn import functional as nn_functional

__all__ = ["aten", "profiler"]


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


def _public_function(op_name: str) -> Callable[..., Any] | None:
    """jaxgrad's function of an aten op's name (a function, ``nn.functional``'s, or the Tensor
    method: an in-place name, ``add_``, is the method), or None."""
    fn = FUNCTIONS.get(op_name) or getattr(nn_functional, op_name, None)
    if not callable(fn) or isinstance(fn, type):
        fn = getattr(Tensor, op_name, None)
    if not callable(fn) or isinstance(fn, type):
        return None
    return fn


PUBLIC_FUNCTION[0] = _public_function
# the ops a dispatch shows under torch's name, not a row's
_RENAMED = frozenset(rule[0] for rule in TORCH_OVERLOAD.values() if isinstance(rule, tuple))


class _AtenNamespace:
    """``jaxgrad.ops.aten``: an op for each jaxgrad function or Tensor method, and each op a
    dispatch shows (``native_layer_norm``, ``_softmax``)."""

    name = __name__ = "aten"

    def __getattr__(self, op_name: str) -> AtenPacket:
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        # (any op a dispatch shows: a row's name, torch's for a renamed row, a public function)
        if op_name not in ROW_NAMES and op_name not in _RENAMED and (
                _public_function(op_name) is None):
            raise AttributeError(f"'_OpNamespace' 'aten' object has no attribute '{op_name}'")
        return packet_of(op_name)

    def __repr__(self) -> str:
        return "<module 'jaxgrad.ops.aten' from 'jaxgrad.ops'>"


aten = _AtenNamespace()
