"""``Upsample``: resampling to a size or by a scale factor."""

from __future__ import annotations

from typing import Any

from ..._core.tensor import Tensor
from .. import functional
from .module import Module


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


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour 2-D upsampling (``Upsample`` with mode 'nearest').

    >>> import jaxgrad
    >>> jaxgrad.nn.UpsamplingNearest2d(scale_factor=2)(jaxgrad.ones(1, 1, 1, 1)).shape
    jaxgrad.Size([1, 1, 2, 2])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear 2-D upsampling with aligned corners (``Upsample`` with mode 'bilinear').

    >>> import jaxgrad
    >>> jaxgrad.nn.UpsamplingBilinear2d(size=3)(jaxgrad.tensor([[[[0.0, 2.0]]]]))
    tensor([[[[0., 1., 2.],
              [0., 1., 2.],
              [0., 1., 2.]]]])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
