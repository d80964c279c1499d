"""Element-wise and softmax activations: ``ReLU``, ``Sigmoid``, ``Tanh``, ``GELU``, ``SiLU``,
``Softmax``, ``LogSoftmax``."""

from __future__ import annotations

from ..._tensor import Tensor
from .. import functional
from .module import Module


class _InplaceActivation(Module):
    """The ``inplace`` flag and repr of the activations that can write into their input."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_InplaceActivation):
    """``max(x, 0)`` element-wise (``inplace=True`` writes into the input).

    >>> import jaxgrad
    >>> jaxgrad.nn.ReLU()(jaxgrad.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return input.relu_() if self.inplace else input.relu()


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


class GELU(Module):
    """Gaussian error linear unit, exact (``approximate='none'``) or with the tanh
    approximation (``approximate='tanh'``).

    >>> import jaxgrad
    >>> jaxgrad.nn.GELU(approximate="tanh")
    GELU(approximate='tanh')
    >>> jaxgrad.nn.GELU()(jaxgrad.zeros(1))
    tensor([0.])
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return functional.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(_InplaceActivation):
    """``x * sigmoid(x)`` element-wise (``inplace=True`` writes into the input).

    >>> import jaxgrad
    >>> jaxgrad.nn.SiLU()(jaxgrad.zeros(1))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return functional.silu(input, inplace=self.inplace)


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
