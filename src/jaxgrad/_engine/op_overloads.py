"""The op overloads a ``__torch_dispatch__`` (a ``TorchDispatchMode``, a selective-checkpoint
policy) receives as ``func``: one object per ``(op, overload)``, the same object
``jaxgrad.ops.aten.<op>.<overload>`` is, so ``func is jaxgrad.ops.aten.sin.default`` holds as in
torch; named as torch's dispatcher names the overload a call reaches (``add.Tensor``,
``sum.dim_IntList``, ``_softmax.default``: ``TORCH_OVERLOAD``).

A dispatched overload runs the call's own kernel while its dispatch is under way (``running``:
what ``func(*args, **kwargs)`` computes inside ``__torch_dispatch__``, below autograd); called
elsewhere it runs jaxgrad's public function of its name (with autograd, as torch's do from
Python), found through ``PUBLIC_FUNCTION`` (set by ``jaxgrad.ops``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from .._core.grad_mode import no_grad
from .._ops._table import Op

# (set by jaxgrad.ops: op name -> jaxgrad's public function of that name, or None)
PUBLIC_FUNCTION: list[Callable[[str], Callable | None] | None] = [None]


class OpOverload:
    """What ``__torch_dispatch__`` receives as ``func``: one op overload (``aten.mul.Tensor``,
    ``aten.sin.default``), callable on tensors, one object per name (``overload_of``)."""

    __module__ = "torch._ops.aten"

    def __init__(self, name: str, overload: str = "default") -> None:
        self._opname, self._overloadname = name, overload
        self.__name__ = f"{name}.{overload}"
        self._runs: list[tuple[Callable, bool]] = []  # the dispatches under way, innermost last

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._runs:
            run, below_autograd = self._runs[-1]
            if not below_autograd:
                return run(*args, **kwargs)
            with no_grad():
                return run(*args, **kwargs)
        fn = PUBLIC_FUNCTION[0](self._opname) if PUBLIC_FUNCTION[0] is not None else None
        if fn is None:
            raise RuntimeError(
                f"jaxgrad runs aten.{self.__name__} only inside the "
                "__torch_dispatch__ it is given to (no public function of its name)"
            )
        return fn(*args, **kwargs)

    def name(self) -> str:
        """torch's qualified name: ``aten::mm``, ``aten::add.Tensor``."""
        tail = "" if self._overloadname == "default" else f".{self._overloadname}"
        return f"aten::{self._opname}{tail}"

    @property
    def overloadpacket(self) -> AtenPacket:
        """The op this is an overload of (``aten.mm``)."""
        return packet_of(self._opname)

    def __repr__(self) -> str:
        return f"aten.{self.__name__}"

    def __reduce__(self) -> tuple:
        return overload_of, (self._opname, self._overloadname)


class AtenPacket:
    """An aten op (``jaxgrad.ops.aten.mm``): its overloads as attributes, each the
    :class:`OpOverload` of that name; called, it runs jaxgrad's function of the op's name."""

    def __init__(self, name: str) -> None:
        self.__name__ = name
        self._qualified_op_name = f"aten::{name}"

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        return overload_of(self.__name__, overload)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return overload_of(self.__name__, "default")(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='aten.{self.__name__}')>"

    def __str__(self) -> str:
        return f"aten.{self.__name__}"


_OVERLOADS: dict[tuple[str, str], OpOverload] = {}
_PACKETS: dict[str, AtenPacket] = {}


def overload_of(name: str, overload: str = "default") -> OpOverload:
    """The one :class:`OpOverload` of ``aten.<name>.<overload>``."""
    found = _OVERLOADS.get((name, overload))
    if found is None:
        found = _OVERLOADS[name, overload] = OpOverload(name, overload)
    return found


def packet_of(name: str) -> AtenPacket:
    """The one :class:`AtenPacket` of ``aten.<name>``."""
    found = _PACKETS.get(name)
    if found is None:
        found = _PACKETS[name] = AtenPacket(name)
    return found


@contextlib.contextmanager
def running(func: OpOverload, run: Callable, below_autograd: bool = True) -> Iterator[None]:
    """While a dispatch of ``func`` is under way, calling ``func`` runs ``run`` (this call's
    kernel; below autograd unless told)."""
    func._runs.append((run, below_autograd))
    try:
        yield
    finally:
        func._runs.pop()


# --- torch's overload names -------------------------------------------------------------------
# An op row whose schema names no overload, or another than the one torch's dispatcher shows
# for the call: the torch overload, or (torch op name, overload), or a rule on the row and the
# call's static arguments giving either.


def _with_dim(overload: str) -> Callable[[Op, dict], str]:
    return lambda op, static: overload if static.get("dim") is not None else "default"


def _pow(op: Op, static: dict) -> str:
    if op.node == "PowBackward1":
        return "Tensor_Tensor"
    return "Scalar" if op.node == "PowBackward2" else "Tensor_Scalar"


TORCH_OVERLOAD: dict[str, Any] = {
    "add": "Tensor",
    "sub": "Tensor",
    "rsub": "Tensor",
    "transpose": "int",
    "select": "int",
    "slice": "Tensor",
    "split": "Tensor",
    "var_mean": "correction",
    "std_mean": "correction",
    "softmax": ("_softmax", "default"),
    "log_softmax": ("_log_softmax", "default"),
    "to": ("_to_copy", "default"),
    "sum": _with_dim("dim_IntList"),
    "mean": _with_dim("dim"),
    "pow": _pow,
}


def torch_overload(op: Op, static: dict) -> OpOverload:
    """The overload torch's dispatcher shows for a call of ``op`` with ``static``."""
    name = op.name
    overload = (op.schema.overload if op.schema is not None else "") or "default"
    rule = TORCH_OVERLOAD.get(name)
    if callable(rule):
        rule = rule(op, static)
    if isinstance(rule, tuple):
        name, overload = rule
    elif rule is not None:
        overload = rule
    return overload_of(name, overload)
