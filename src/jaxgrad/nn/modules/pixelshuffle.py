"""``PixelShuffle`` and ``PixelUnshuffle``: moving channels into space and back."""

from __future__ import annotations

from ..._core.tensor import Tensor
from .. import functional
from .module import Module


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
