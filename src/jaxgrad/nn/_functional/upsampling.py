"""torch's deprecated resampling aliases of ``interpolate``: ``upsample``,
``upsample_nearest`` and ``upsample_bilinear`` (each warns, then interpolates)."""

from __future__ import annotations

import warnings
from typing import Any

from ..._core.tensor import Tensor
from .interpolation import interpolate


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode, align_corners)``.

    >>> import warnings
    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample(jaxgrad.tensor([[[1.0, 2.0]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode='nearest')``.

    >>> import warnings
    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_nearest(jaxgrad.tensor([[[[1.0]]]]), 2).shape
    jaxgrad.Size([1, 1, 2, 2])
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode='bilinear',
    align_corners=True)``.

    >>> import warnings
    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_bilinear(jaxgrad.tensor([[[[0.0, 2.0]]]]), (1, 3))
    tensor([[[[0., 1., 2.]]]])
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
