"""``Identity`` and ``Linear``."""

from __future__ import annotations

import math
from typing import Any

from ..._creation import empty
from ..._grad_mode import no_grad
from ..._tensor import Tensor
from .. import functional
from ..parameter import Parameter
from .module import Module


class Identity(Module):
    """Returns its input unchanged (ignores any constructor arguments).

    >>> import jaxgrad
    >>> jaxgrad.nn.Identity(54, unused="x")(jaxgrad.ones(2))
    tensor([1., 1.])
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``, weight and bias drawn from U(-1/sqrt(in), 1/sqrt(in))
    (torch's ``kaiming_uniform_(a=sqrt(5))``) with jaxgrad's random generator.

    >>> import jaxgrad
    >>> lin = jaxgrad.nn.Linear(3, 2)
    >>> lin
    Linear(in_features=3, out_features=2, bias=True)
    >>> lin(jaxgrad.ones(4, 3)).shape
    jaxgrad.Size([4, 2])
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Redraw weight and bias from U(-1/sqrt(in_features), 1/sqrt(in_features))."""
        # kaiming_uniform_(a=sqrt(5)) on fan_in gives bound sqrt(6 / ((1 + 5) * fan_in)).
        fan_in = self.in_features
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        with no_grad():
            self.weight.uniform_(-bound, bound)
            if self.bias is not None:
                self.bias.uniform_(-bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return functional.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")
