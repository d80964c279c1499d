"""torch's legacy ``Variable``: a constructor of tensors, and a name every tensor is an instance of.

``Variable(data, requires_grad=False)`` is ``data.detach()`` (same storage and version counter)
with ``requires_grad`` set; ``isinstance(t, Variable)`` holds for every tensor. The class also
carries the engine object, as torch's does (``Variable._execution_engine.queue_callback``).
"""

from __future__ import annotations

import warnings
from typing import Any

from .._core.tensor import Tensor
from .._engine.engine import execution_engine
from .._functions.creation import empty


class VariableMeta(type):
    """Makes every tensor an instance of ``Variable``."""

    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """A new leaf sharing ``data``'s storage and version counter, as ``torch.autograd.Variable``.

    >>> import jaxgrad
    >>> from jaxgrad.autograd import Variable
    >>> x = jaxgrad.ones(2)
    >>> v = Variable(x, requires_grad=True)
    >>> v.is_leaf, v.requires_grad, isinstance(x, Variable)
    (True, True, True)
    """

    _execution_engine = execution_engine

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = False,
                volatile: bool = False) -> Tensor:  # type: ignore[misc]
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                          "instead.", UserWarning, stacklevel=2)
        if data is None:
            return empty(0, requires_grad=requires_grad)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
