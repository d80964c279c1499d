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
        """The ``inplace=True`` shown in the repr, or nothing.

        >>> import jaxgrad
        >>> jaxgrad.nn.ReLU(inplace=True)
        ReLU(inplace=True)
        """
        return "inplace=True" if self.inplace else ""


class ReLU(_InplaceActivation):
    """``max(x, 0)`` element-wise (``inplace=True`` writes into the input).

    >>> import jaxgrad
    >>> jaxgrad.nn.ReLU()(jaxgrad.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``relu`` of ``input`` (written into it when ``inplace``)."""
        return input.relu_() if self.inplace else input.relu()


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Sigmoid()(jaxgrad.zeros(1))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``sigmoid`` of ``input``."""
        return input.sigmoid()


class Tanh(Module):
    """``tanh(x)`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Tanh()(jaxgrad.zeros(1))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``tanh`` of ``input``."""
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
        """``functional.gelu`` of ``input`` with this module's ``approximate``."""
        return functional.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        """The ``approximate`` argument, as shown in the repr.

        >>> import jaxgrad
        >>> jaxgrad.nn.GELU().extra_repr()
        "approximate='none'"
        """
        return f"approximate={self.approximate!r}"


class SiLU(_InplaceActivation):
    """``x * sigmoid(x)`` element-wise (``inplace=True`` writes into the input).

    >>> import jaxgrad
    >>> jaxgrad.nn.SiLU()(jaxgrad.zeros(1))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.silu`` of ``input`` (written into it when ``inplace``)."""
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
        """Softmax of ``input`` along ``dim``."""
        return input.softmax(self.dim)

    def extra_repr(self) -> str:
        """The ``dim`` argument, as shown in the repr.

        >>> import jaxgrad
        >>> jaxgrad.nn.Softmax(dim=-1).extra_repr()
        'dim=-1'
        """
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """Log of the softmax along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.nn.LogSoftmax(dim=1)
    LogSoftmax(dim=1)
    """

    def forward(self, input: Tensor) -> Tensor:
        """Log-softmax of ``input`` along ``dim``.

        >>> import jaxgrad
        >>> jaxgrad.nn.LogSoftmax(dim=0)(jaxgrad.zeros(2)).exp()
        tensor([0.5000, 0.5000])
        """
        return input.log_softmax(self.dim)
