"""More element-wise activations: ``PReLU`` (a learned slope), ``LogSigmoid``, ``SELU``,
``CELU``, ``Mish``, ``Hardswish``, ``Hardsigmoid``, ``Softsign``, ``Softshrink``,
``Hardshrink``, ``Tanhshrink``, ``Threshold``, ``GLU`` and ``Softmin``."""

from __future__ import annotations

from typing import Any

from ..._creation import empty
from ..._tensor import Tensor
from .. import functional, init
from ..parameter import Parameter
from .activation import _InplaceActivation
from .module import Module


class PReLU(Module):
    """``x`` where positive, ``weight * x`` elsewhere; ``weight`` holds ``num_parameters``
    learned slopes (one, or one per channel), initialised to ``init``.

    >>> import jaxgrad
    >>> m = jaxgrad.nn.PReLU()
    >>> m
    PReLU(num_parameters=1)
    >>> m(jaxgrad.tensor([-4.0, 2.0]))
    tensor([-1.,  2.], grad_fn=<PreluKernelBackward0>)
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every slope to ``init``."""
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        """``functional.prelu`` of ``input`` with the learned slopes."""
        return functional.prelu(input, self.weight)

    def extra_repr(self) -> str:
        """The ``num_parameters``, as shown in the repr."""
        return f"num_parameters={self.num_parameters}"


class LogSigmoid(Module):
    """``log(sigmoid(x))`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.LogSigmoid()(jaxgrad.zeros(1))
    tensor([-0.6931])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.logsigmoid`` of ``input``."""
        return functional.logsigmoid(input)


class SELU(_InplaceActivation):
    """Scaled ELU with the self-normalising constants.

    >>> import jaxgrad
    >>> jaxgrad.nn.SELU(inplace=True)
    SELU(inplace=True)
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.selu`` of ``input``."""
        return functional.selu(input, self.inplace)


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.CELU(0.5)
    CELU(alpha=0.5)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """``functional.celu`` of ``input``."""
        return functional.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        """``alpha`` (and ``inplace=True``), as shown in the repr."""
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Mish(_InplaceActivation):
    """``x * tanh(softplus(x))`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Mish()(jaxgrad.zeros(1))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.mish`` of ``input``."""
        return functional.mish(input, self.inplace)


class Hardswish(Module):
    """``x * relu6(x + 3) / 6`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Hardswish()(jaxgrad.tensor([4.0]))
    tensor([4.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """``functional.hardswish`` of ``input``."""
        return functional.hardswish(input, self.inplace)


class Hardsigmoid(Hardswish):
    """``relu6(x + 3) / 6`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Hardsigmoid()(jaxgrad.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.hardsigmoid`` of ``input``."""
        return functional.hardsigmoid(input, self.inplace)


class Softsign(Module):
    """``x / (1 + |x|)`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Softsign()(jaxgrad.tensor([1.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.softsign`` of ``input``."""
        return functional.softsign(input)


class Softshrink(Module):
    """Shrink towards 0 by ``lambd``, zeroing ``[-lambd, lambd]``.

    >>> import jaxgrad
    >>> jaxgrad.nn.Softshrink()
    Softshrink(0.5)
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        """``functional.softshrink`` of ``input``."""
        return functional.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        """``lambd``, as shown in the repr."""
        return str(self.lambd)


class Hardshrink(Softshrink):
    """Zero ``[-lambd, lambd]``, keep the rest.

    >>> import jaxgrad
    >>> jaxgrad.nn.Hardshrink(0.3)(jaxgrad.tensor([0.2, 1.0]))
    tensor([0., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.hardshrink`` of ``input``."""
        return functional.hardshrink(input, self.lambd)


class Tanhshrink(Module):
    """``x - tanh(x)`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Tanhshrink()(jaxgrad.zeros(1))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.tanhshrink`` of ``input``."""
        return functional.tanhshrink(input)


class Threshold(Module):
    """``value`` where ``x <= threshold``, ``x`` elsewhere.

    >>> import jaxgrad
    >>> jaxgrad.nn.Threshold(0.1, 20)
    Threshold(threshold=0.1, value=20)
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """``functional.threshold`` of ``input``."""
        return functional.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        """The threshold, value (and ``inplace=True``), as shown in the repr."""
        inplace = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace}"


class GLU(Module):
    """Gated linear unit along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.nn.GLU()
    GLU(dim=-1)
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        """``functional.glu`` of ``input``."""
        return functional.glu(input, self.dim)

    def extra_repr(self) -> str:
        """``dim``, as shown in the repr."""
        return f"dim={self.dim}"


class Softmin(Module):
    """Softmax of ``-x`` along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.nn.Softmin(dim=1)
    Softmin(dim=1)
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        """``functional.softmin`` of ``input`` along ``dim``."""
        return functional.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        """``dim``, as shown in the repr."""
        return f"dim={self.dim}"
