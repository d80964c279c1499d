"""The flags of ``jaxgrad.backends``' modules: module attributes that only take a ``bool``, as
torch's ``ContextProp`` does (``torch.backends.cudnn.benchmark = 1`` raises).

>>> import types
>>> from jaxgrad.backends._flags import BoolFlag
>>> class Flags(types.ModuleType):
...     on = BoolFlag(False, "set_on")
>>> m = Flags("m"); m.on = True; m.on
True
"""

from __future__ import annotations

import sys
import types
from typing import Any, TypeVar

M = TypeVar("M", bound=types.ModuleType)


class BoolFlag:
    """A ``bool`` kept on a module (in its ``__dict__``, under a private key); setting anything
    else raises torch's ``RuntimeError`` (``<setter> expects a bool, but got <type>``).

    >>> import types
    >>> from jaxgrad.backends._flags import BoolFlag
    >>> class Flags(types.ModuleType):
    ...     on = BoolFlag(True, "set_on")
    >>> m = Flags("m")
    >>> m.on
    True
    >>> m.on = 1
    Traceback (most recent call last):
    RuntimeError: set_on expects a bool, but got int
    """

    def __init__(self, default: bool, setter: str) -> None:
        self.default = default
        self.setter = setter
        self.key = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = f"_flag_{name}"

    def __get__(self, module: Any, owner: type | None = None) -> Any:
        if module is None:
            return self
        return module.__dict__.get(self.key, self.default)

    def __set__(self, module: Any, value: Any) -> None:
        if not isinstance(value, bool):
            raise RuntimeError(f"{self.setter} expects a bool, but got {type(value).__name__}")
        module.__dict__[self.key] = value


def install(module_name: str, cls: type[M]) -> M:
    """Give the module ``module_name`` the class ``cls``, whose flags it then has, and return it
    (torch replaces its module in ``sys.modules``; changing the class keeps the module object).

    >>> import sys, types
    >>> from jaxgrad.backends._flags import BoolFlag, install
    >>> class Flags(types.ModuleType):
    ...     on = BoolFlag(False, "set_on")
    >>> sys.modules["_flags_demo"] = types.ModuleType("_flags_demo")
    >>> install("_flags_demo", Flags).on, type(sys.modules.pop("_flags_demo")).__name__
    (False, 'Flags')
    """
    module = sys.modules[module_name]
    module.__class__ = cls
    return module  # type: ignore[return-value]
