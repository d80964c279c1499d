"""torch's TypeError for a non-tensor given where torch's argument parser requires a Tensor,
and the type names torch prints in its errors (``type_name``, ``typename``).

``@tensor_args`` marks a public function whose parameters annotated ``Tensor`` (``Tensor | None``:
or None; ``Sequence[Tensor]``: a list of tensors) take only tensors. The arguments are looked at
only after the function raised: a non-tensor fails at its first attribute access or at the
dispatcher's type checks, so right arguments cost one call frame and nothing else. The message
is built from the signature as torch builds it: the function form counts ``input`` as position
1, the method form (called from a ``Tensor`` method) does not count ``self``, a keyword argument
has no position, and an operator (``t @ None``) gives Python's "unsupported operand type(s)".
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from ._typename import type_name

_KINDS = {"Tensor": "Tensor", "Tensor | None": "optional", "Sequence[Tensor]": "tuple of Tensors"}
_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "matmul": "@",
              "pow": "** or pow()"}


def tensor_args(fn: Callable | None = None, *, name: str | None = None) -> Callable:
    """Give ``fn`` (printed as torch's ``name`` if given) torch's argument type errors."""
    if fn is None:
        return functools.partial(tensor_args, name=name)
    signature = inspect.signature(fn)
    kinds = {p: _KINDS[q.annotation] for p, q in signature.parameters.items()
             if q.annotation in _KINDS}
    label = name or fn.__name__

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception:
            error = _argument_error(label, signature, kinds, args, kwargs, sys._getframe(1))
            if error is not None:
                raise error from None
            raise

    return wrapper


def _argument_error(name: str, signature: inspect.Signature, kinds: dict, args: tuple,
                    kwargs: dict, caller: FrameType) -> TypeError | None:
    """torch's error for the first argument that does not fit its parameter, if any does not."""
    try:
        bound = signature.bind(*args, **kwargs).arguments
    except TypeError:
        return None
    params = list(signature.parameters)
    for param, value in bound.items():
        index = params.index(param)
        expected = _check(kinds.get(param), value, index)
        if expected is not None:
            return not_a_tensor(name, param, index, value, caller, param in kwargs, expected)
    return None


def _check(kind: str | None, value: Any, index: int) -> Any:
    """None if ``value`` fits ``kind``; else what torch's parser says it expected."""
    from ._tensor import Tensor

    if kind is None or isinstance(value, Tensor) or (value is None and kind == "optional"):
        return None
    if kind == "tuple of Tensors" and isinstance(value, (list, tuple)):
        bad = next((i for i, v in enumerate(value) if not isinstance(v, Tensor)), None)
        if bad is None:
            return None
        return TypeError(f"expected Tensor as element {bad} in argument {index}, but got "
                         f"{type_name(value[bad])}")
    return "Tensor" if kind == "optional" else kind


def not_a_tensor(name: str, param: str, index: int, value: Any, caller: FrameType,
                 keyword: bool = False, expected: Any = "Tensor") -> TypeError:
    """torch's error for ``value`` given as parameter ``param`` (``index`` in the function form)
    of ``name``, called from the frame ``caller`` (a Tensor method, an operator or user code)."""
    if isinstance(expected, TypeError):
        return expected
    code = caller.f_code
    method = code.co_qualname.startswith("Tensor.")
    op = code.co_name.strip("_")
    if method and code.co_name.startswith("__") and op.lstrip("ir") in _OPERATORS:
        left, right = "Tensor", type_name(value)
        symbol = _OPERATORS.get(op) or _OPERATORS.get(op[1:])
        if op not in _OPERATORS and op[0] == "r":
            left, right = right, left
        elif op not in _OPERATORS:
            symbol += "="
        return TypeError(f"unsupported operand type(s) for {symbol}: '{left}' and '{right}'")
    where = "" if keyword else f" (position {index + 1 - method})"
    return TypeError(f"{name}(): argument '{param}'{where} must be {expected}, not "
                     f"{type_name(value)}")


def not_a_tensor_in_caller(value: Any) -> TypeError:
    """torch's error for ``value``, an argument of the nearest public (not underscored) function
    on the stack (for hot functions left undecorated, e.g. ``mul``, whose scalar checks already
    branch)."""
    frame = sys._getframe(1)
    while frame.f_code.co_name.startswith("_"):
        frame = frame.f_back
    code = frame.f_code
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    found = next(((i, p) for i, p in enumerate(params) if frame.f_locals.get(p) is value), None)
    if found is None:
        return TypeError(f"expected Tensor or a number, not {type_name(value)}")
    return not_a_tensor(code.co_name, found[1], found[0], value, frame.f_back)



def typename(obj: Any) -> str:
    """torch.typename: ``jaxgrad.FloatTensor`` for a tensor; for a class or function its
    qualified name, for anything else its class's (``builtins`` names unqualified)."""
    from ._tensor import Tensor

    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if qualname is None:
        module, qualname = type(obj).__module__ or "", type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"
