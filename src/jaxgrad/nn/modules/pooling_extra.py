"""1-D and adaptive max pooling layers (``MaxPool1d``, ``AvgPool1d``, ``AdaptiveAvgPool1d``,
``AdaptiveMaxPool1d``, ``AdaptiveMaxPool2d``) and resampling layers (``Upsample``,
``PixelShuffle``, ``PixelUnshuffle``)."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from .. import functional
from .module import Module
from .pooling import _AdaptiveAvgPoolNd, _AvgPoolNd, _MaxPoolNd


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


class Upsample(Module):
    """Resample to ``size`` or by ``scale_factor`` (``functional.interpolate``).

    >>> import jaxgrad
    >>> up = jaxgrad.nn.Upsample(scale_factor=2)
    >>> up
    Upsample(scale_factor=2.0, mode='nearest')
    >>> up(jaxgrad.tensor([[[1.0, 2.0]]]))
    tensor([[[1., 1., 2., 2.]]])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        """``functional.interpolate`` of ``input`` with this layer's arguments."""
        return functional.interpolate(input, self.size, self.scale_factor, self.mode,
                                      self.align_corners,
                                      recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        """The scale factor (or size) and mode, as shown in the repr."""
        info = (f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None
                else f"size={self.size!r}")
        return info + f", mode={self.mode!r}"


class PixelShuffle(Module):
    """(*, C * r * r, H, W) to (*, C, H * r, W * r).

    >>> import jaxgrad
    >>> jaxgrad.nn.PixelShuffle(2)
    PixelShuffle(upscale_factor=2)
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        """``functional.pixel_shuffle`` of ``input``."""
        return functional.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        """``upscale_factor``, as shown in the repr."""
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H * r, W * r) to (*, C * r * r, H, W).

    >>> import jaxgrad
    >>> jaxgrad.nn.PixelUnshuffle(3)
    PixelUnshuffle(downscale_factor=3)
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        """``functional.pixel_unshuffle`` of ``input``."""
        return functional.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        """``downscale_factor``, as shown in the repr."""
        return f"downscale_factor={self.downscale_factor}"
