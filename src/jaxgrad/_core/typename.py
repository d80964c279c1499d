"""How jaxgrad's types are named where users see them: the type names Python's C API prints in
error messages, and the public module path a class is shown at (no jaxgrad imports: layer 0)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")

_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python, printed by bare name


def type_name(obj: Any) -> str:
    """The type name Python's C API prints: module-qualified for types defined in C.

    >>> from jaxgrad._core.typename import type_name
    >>> import numpy as np
    >>> type_name(3), type_name(np.float32(1))
    ('int', 'numpy.float32')
    """
    t = type(obj)
    if t.__module__ == "builtins" or t.__flags__ & _HEAPTYPE:
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


def public_path(module: str) -> Callable[[_T], _T]:
    """Show a class (or function) defined in a private module at ``module``: the path torch
    prints for its twin (``<class 'jaxgrad.autograd.function.Function'>``; ``"builtins"`` for
    a C++ class of torch's) and the one pickle finds it by again.

    >>> from jaxgrad._core.typename import public_path
    >>> @public_path("jaxgrad.example")
    ... class Shown:
    ...     pass
    >>> Shown
    <class 'jaxgrad.example.Shown'>
    """

    def show(obj: _T) -> _T:
        obj.__module__ = module  # type: ignore[attr-defined]
        return obj

    return show
