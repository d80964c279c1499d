"""Pooling layers ``MaxPool1d``, ``MaxPool2d``, ``AvgPool1d``, ``AvgPool2d``, ``AdaptiveAvgPool1d``,
``AdaptiveAvgPool2d``, ``AdaptiveMaxPool1d`` and ``AdaptiveMaxPool2d``."""

from __future__ import annotations

from typing import Any

from ..._core.tensor import Tensor
from .. import functional
from .module import Module


class _MaxPoolNd(Module):
    """Arguments and repr of the max-pooling layers (``stride`` defaults to the kernel)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        """The kernel, stride, padding, dilation and ceil_mode, as shown in the repr."""
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    """Max over 2-D windows of (N, C, H, W) or (C, H, W) input.

    >>> import jaxgrad
    >>> pool = jaxgrad.nn.MaxPool2d(2)
    >>> pool
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(jaxgrad.arange(16.0).reshape(1, 4, 4))
    tensor([[[ 5.,  7.],
             [13., 15.]]])
    """

    def forward(self, input: Tensor) -> Any:
        """``functional.max_pool2d`` of ``input`` (with the indices when ``return_indices``).

        >>> import jaxgrad
        >>> pool = jaxgrad.nn.MaxPool2d(2, return_indices=True)
        >>> pool(jaxgrad.arange(4.0).reshape(1, 2, 2))
        (tensor([[[3.]]]), tensor([[[3]]]))
        """
        return functional.max_pool2d(input, self.kernel_size, self.stride, self.padding,
                                     self.dilation, ceil_mode=self.ceil_mode,
                                     return_indices=self.return_indices)


class _AvgPoolNd(Module):
    """Repr of the average-pooling layers."""

    def extra_repr(self) -> str:
        """The kernel, stride and padding, as shown in the repr."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """Mean over 2-D windows of (N, C, H, W) or (C, H, W) input.

    >>> import jaxgrad
    >>> pool = jaxgrad.nn.AvgPool2d((2, 1))
    >>> pool
    AvgPool2d(kernel_size=(2, 1), stride=(2, 1), padding=0)
    >>> pool(jaxgrad.tensor([[[1.0], [3.0]]]))
    tensor([[[2.]]])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        """``functional.avg_pool2d`` of ``input`` with this layer's arguments."""
        return functional.avg_pool2d(input, self.kernel_size, self.stride, self.padding,
                                     self.ceil_mode, self.count_include_pad,
                                     self.divisor_override)


class _AdaptiveAvgPoolNd(Module):
    """The target ``output_size`` and repr of the adaptive average-pooling layers."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        """The ``output_size``, as shown in the repr."""
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, H, W) or (C, H, W) input to a fixed output size (``None``
    keeps that input size).

    >>> import jaxgrad
    >>> pool = jaxgrad.nn.AdaptiveAvgPool2d((None, 1))
    >>> pool
    AdaptiveAvgPool2d(output_size=(None, 1))
    >>> pool(jaxgrad.ones(2, 3, 5)).shape
    jaxgrad.Size([2, 3, 1])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.adaptive_avg_pool2d`` of ``input`` to ``output_size``."""
        return functional.adaptive_avg_pool2d(input, self.output_size)


def _single(value: Any) -> tuple:
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


class MaxPool1d(_MaxPoolNd):
    """Max over 1-D windows of (N, C, L) or (C, L) input.

    >>> import jaxgrad
    >>> pool = jaxgrad.nn.MaxPool1d(2)
    >>> pool
    MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(jaxgrad.tensor([[1.0, 3.0, 2.0, 0.0]]))
    tensor([[3., 2.]])
    """

    def forward(self, input: Tensor) -> Any:
        """``functional.max_pool1d`` of ``input`` (with the indices when ``return_indices``)."""
        return functional.max_pool1d(input, self.kernel_size, self.stride, self.padding,
                                     self.dilation, ceil_mode=self.ceil_mode,
                                     return_indices=self.return_indices)


class AvgPool1d(_AvgPoolNd):
    """Mean over 1-D windows of (N, C, L) or (C, L) input.

    >>> import jaxgrad
    >>> pool = jaxgrad.nn.AvgPool1d(2)
    >>> pool
    AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    >>> pool(jaxgrad.tensor([[1.0, 3.0]]))
    tensor([[2.]])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        """``functional.avg_pool1d`` of ``input`` with this layer's arguments."""
        return functional.avg_pool1d(input, self.kernel_size, self.stride, self.padding,
                                     self.ceil_mode, self.count_include_pad)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, L) or (C, L) input to ``output_size`` positions.

    >>> import jaxgrad
    >>> jaxgrad.nn.AdaptiveAvgPool1d(1)(jaxgrad.tensor([[1.0, 3.0]]))
    tensor([[2.]])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.adaptive_avg_pool1d`` of ``input``."""
        return functional.adaptive_avg_pool1d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    """The target ``output_size``, ``return_indices`` and repr of adaptive max pooling."""

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        """The ``output_size``, as shown in the repr."""
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, L) or (C, L) input to ``output_size`` positions.

    >>> import jaxgrad
    >>> jaxgrad.nn.AdaptiveMaxPool1d(1)(jaxgrad.tensor([[1.0, 3.0]]))
    tensor([[3.]])
    """

    def forward(self, input: Tensor) -> Any:
        """``functional.adaptive_max_pool1d`` of ``input``."""
        return functional.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, H, W) or (C, H, W) input to a fixed output size.

    >>> import jaxgrad
    >>> jaxgrad.nn.AdaptiveMaxPool2d((2, None))
    AdaptiveMaxPool2d(output_size=(2, None))
    """

    def forward(self, input: Tensor) -> Any:
        """``functional.adaptive_max_pool2d`` of ``input``."""
        return functional.adaptive_max_pool2d(input, self.output_size, self.return_indices)
