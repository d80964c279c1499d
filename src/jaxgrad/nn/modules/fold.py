"""``Fold`` and ``Unfold``: sliding local blocks to columns and back."""

from __future__ import annotations

from typing import Any

from ..._core.tensor import Tensor
from .. import functional
from .module import Module


class Fold(Module):
    """Sums columns of sliding blocks, (N, C * kh * kw, L), into a (N, C, H, W) image.

    >>> import jaxgrad
    >>> fold = jaxgrad.nn.Fold((3, 3), 2)
    >>> fold
    Fold(output_size=(3, 3), kernel_size=2, dilation=1, padding=0, stride=1)
    >>> fold(jaxgrad.ones(1, 4, 4)).shape
    jaxgrad.Size([1, 1, 3, 3])
    """

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        """``functional.fold`` of ``input``."""
        return functional.fold(input, self.output_size, self.kernel_size, self.dilation,
                               self.padding, self.stride)

    def extra_repr(self) -> str:
        """The output size, kernel, dilation, padding and stride, as shown in the repr."""
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Sliding local blocks of a (N, C, H, W) input as columns, (N, C * kh * kw, L).

    >>> import jaxgrad
    >>> unfold = jaxgrad.nn.Unfold(2)
    >>> unfold
    Unfold(kernel_size=2, dilation=1, padding=0, stride=1)
    >>> unfold(jaxgrad.ones(1, 1, 3, 3)).shape
    jaxgrad.Size([1, 4, 4])
    """

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        """``functional.unfold`` of ``input``."""
        return functional.unfold(input, self.kernel_size, self.dilation, self.padding,
                                 self.stride)

    def extra_repr(self) -> str:
        """The kernel, dilation, padding and stride, as shown in the repr."""
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
