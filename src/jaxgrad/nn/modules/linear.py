"""``Identity``, ``Linear`` (and its ``NonDynamicallyQuantizableLinear`` alias class) and
``Bilinear``."""

from __future__ import annotations

import math
from typing import Any

from ..._core.grad_mode import no_grad
from ..._core.tensor import Tensor
from ..._functions.creation import empty
from .. import functional, init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
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
        """Return ``input`` itself."""
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
        """Redraw the weight with ``kaiming_uniform_(a=sqrt(5))`` (U(-1/sqrt(in_features),
        1/sqrt(in_features)); a zero-element weight warns that initializing it is a no-op) and
        the bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as torch does."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        """``input @ weight.T + bias``.

        >>> import jaxgrad
        >>> lin = jaxgrad.nn.Linear(2, 1)
        >>> with jaxgrad.no_grad():
        ...     _ = lin.weight.fill_(1.0), lin.bias.fill_(0.5)
        >>> lin(jaxgrad.tensor([[1.0, 2.0]]))
        tensor([[3.5000]], grad_fn=<AddmmBackward0>)
        """
        return functional.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        """The feature sizes and whether there is a bias, as shown in the repr."""
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """A ``Linear`` under its own name: ``MultiheadAttention``'s ``out_proj``, as in torch.

    >>> import jaxgrad
    >>> jaxgrad.nn.modules.linear.NonDynamicallyQuantizableLinear(2, 2)
    NonDynamicallyQuantizableLinear(in_features=2, out_features=2, bias=True)
    """


class Bilinear(Module):
    """``y[o] = x1^T weight[o] x2 + bias[o]``, weight and bias drawn from
    U(-1/sqrt(in1_features), 1/sqrt(in1_features)).

    >>> import jaxgrad
    >>> bil = jaxgrad.nn.Bilinear(3, 4, 2)
    >>> bil
    Bilinear(in1_features=3, in2_features=4, out_features=2, bias=True)
    >>> bil(jaxgrad.ones(5, 3), jaxgrad.ones(5, 4)).shape
    jaxgrad.Size([5, 2])
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), device=device,
                                      dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Redraw weight and bias from U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features="
                             f"{self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        """``functional.bilinear(input1, input2, weight, bias)``."""
        return functional.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        """The feature sizes and whether there is a bias, as shown in the repr."""
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(LazyModuleMixin, Linear):
    """A :class:`Linear` whose ``in_features`` is the last size of its first input.

    >>> import jaxgrad
    >>> lin = jaxgrad.nn.LazyLinear(4)
    >>> lin
    LazyLinear(in_features=0, out_features=4, bias=True)
    >>> lin(jaxgrad.ones(2, 3)).shape
    jaxgrad.Size([2, 4])
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """Initialize as :class:`Linear` once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        """``in_features`` from ``input``'s last dim; weight and bias materialized and
        initialized."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # (a state dict loaded before the first forward)
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} "
                                     "is not equal to in_features from self.weight: "
                                     f"{self.weight.shape[-1]}")
            self.in_features = input.shape[-1]
