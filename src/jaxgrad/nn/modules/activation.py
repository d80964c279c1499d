"""Element-wise and softmax activations: ``ReLU``, ``Sigmoid``, ``Tanh``, ``Softmax``,
``LogSoftmax``."""

from __future__ import annotations

from ..._tensor import Tensor
from .module import Module


class ReLU(Module):
    """``max(x, 0)`` element-wise (``inplace=True`` writes into the input).

    >>> import jaxgrad
    >>> jaxgrad.nn.ReLU()(jaxgrad.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return input.relu_() if self.inplace else input.relu()

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Sigmoid()(jaxgrad.zeros(1))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return input.sigmoid()


class Tanh(Module):
    """``tanh(x)`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Tanh()(jaxgrad.zeros(1))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return input.tanh()


class Softmax(Module):
    """Softmax along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.nn.Softmax(dim=0)(jaxgrad.zeros(2))
    tensor([0.5000, 0.5000])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return input.softmax(self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """Log of the softmax along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.nn.LogSoftmax(dim=1)
    LogSoftmax(dim=1)
    """

    def forward(self, input: Tensor) -> Tensor:
        return input.log_softmax(self.dim)
