"""Layers over (N, C, D, H, W) volumes: ``Conv3d`` and ``BatchNorm3d``."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from .. import functional
from .batchnorm import _BatchNorm
from .conv import _conv_arguments, _ConvNd


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input.

    >>> import jaxgrad
    >>> conv = jaxgrad.nn.Conv3d(2, 4, 3, padding=1)
    >>> conv
    Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1))
    >>> conv(jaxgrad.ones(1, 2, 4, 4, 4)).shape
    jaxgrad.Size([1, 4, 4, 4, 4])
    """

    _conv_function = staticmethod(functional.conv3d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels,
                         *_conv_arguments(3, kernel_size, stride, padding, dilation), groups,
                         bias, padding_mode, device=device, dtype=dtype)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over (N, C, D, H, W) input, per channel C.

    >>> import jaxgrad
    >>> jaxgrad.nn.BatchNorm3d(2)(jaxgrad.randn(2, 2, 2, 2, 2)).shape
    jaxgrad.Size([2, 2, 2, 2, 2])
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")
