"""``interpolate``: torch's argument handling, then one resampling row per mode and rank."""

from __future__ import annotations

import math
from typing import Any

from ..._core import dtypes as _dtypes
from ..._core.tensor import Tensor
from ..._engine.dispatch import apply as _apply
from ..._ops import nn_resample as R
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d
from .pooling_nd import adaptive_avg_pool3d

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_LINEAR_RANK = {"linear": 3, "bilinear": 4, "trilinear": 5}


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resample (N, C, L), (N, C, H, W) or (N, C, D, H, W) input to ``size`` or by
    ``scale_factor``, as torch's: ``mode`` is ``'nearest'``, ``'nearest-exact'``, ``'linear'``
    (3-D input), ``'bilinear'``/``'bicubic'`` (4-D), ``'trilinear'`` (5-D), ``'area'`` (adaptive
    average pooling) or ``'lanczos'`` (4-D, antialiased); ``antialias`` filters a downscale
    (bilinear, bicubic, lanczos on 4-D input).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.interpolate(jaxgrad.tensor([[[1.0, 2.0]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    >>> F.interpolate(jaxgrad.tensor([[[1.0, 2.0, 3.0, 4.0]]]), size=2, mode="area")
    tensor([[[1.5000, 3.5000]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    output_size, scales = _sizes(input, size, scale_factor, recompute_scale_factor, mode)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")
    if antialias and input.dtype in (_dtypes.float16, _dtypes.bfloat16):
        raise NotImplementedError('"compute_index_ranges_weights" not implemented for '
                                  f"'{_dtypes.scalar_type_name(input.dtype)}'")
    return _resample(input, mode, output_size, scales, align_corners, antialias)


def _sizes(input: Tensor, size: Any, scale_factor: Any, recompute: bool | None,
           mode: str) -> tuple:
    """torch's output size and scale factors (the latter None where torch recomputes them)."""
    dims = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dims:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(s) for s in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] "
                                "or Tuple[int, int, int], but got size with types "
                                f"{[type(s) for s in size]}")
            output_size = [int(s) for s in size]
        else:
            if not _is_integer(size):
                raise TypeError(f"interpolate() received an invalid combination of arguments: "
                                f"size of type {type(size).__name__}, where torch expects a tuple "
                                "of ints")
            output_size = [int(size)] * dims
        if recompute:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        return output_size, (None,) * dims
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dims:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {list(input.shape[2:])} and scale_factor "
                f"of shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                "format and scale_factor in (s1, s2, ...,sK) format.")
        factors = [float(s) for s in scale_factor]
    else:
        factors = [float(scale_factor)] * dims
    output_size = [math.floor(n * f) for n, f in zip(input.shape[2:], factors)]
    # ("area" always takes a size: torch recomputes its scales from it)
    return output_size, (None,) * dims if recompute or mode == "area" else tuple(factors)


def _is_integer(value: Any) -> bool:
    if isinstance(value, Tensor):
        return not (value.is_floating_point() or value.is_complex())
    return isinstance(value, int) or hasattr(value, "__index__")


def _resample(input: Tensor, mode: str, output_size: list, scales: tuple, align_corners: Any,
              antialias: bool) -> Tensor:
    """The row torch's ``interpolate`` calls for ``mode`` at ``input``'s rank."""
    rank = input.ndim
    if 3 <= rank <= 5 and mode == "area":
        pool = {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d, 5: adaptive_avg_pool3d}[rank]
        return pool(input, output_size)
    if 3 <= rank <= 5 and mode in ("nearest", "nearest-exact"):
        _check_sizes(input, output_size)
        rows = R.UPSAMPLE_NEAREST if mode == "nearest" else R.UPSAMPLE_NEAREST_EXACT
        return _apply(rows[rank - 2], input, output_size=tuple(output_size), scales=scales,
                      input_size=tuple(input.shape))
    interpolating = {"align_corners": bool(align_corners), "scales": scales,
                     "output_size": tuple(output_size), "input_size": tuple(input.shape)}
    if _LINEAR_RANK.get(mode) == rank:
        _check_sizes(input, output_size)
        row = R.UPSAMPLE_ANTIALIASED["bilinear"] if antialias else R.UPSAMPLE_LINEAR[rank - 2]
        return _apply(row, input, **interpolating)
    if rank == 4 and mode == "bicubic":
        _check_sizes(input, output_size)
        row = R.UPSAMPLE_ANTIALIASED["bicubic"] if antialias else R.UPSAMPLE_BICUBIC
        return _apply(row, input, **interpolating)
    if rank == 4 and mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        _check_sizes(input, output_size)
        return _apply(R.UPSAMPLE_ANTIALIASED["lanczos"], input, **interpolating)
    if 3 <= rank <= 5 and mode in _LINEAR_RANK:
        raise NotImplementedError(f"Got {rank}D input, but {mode} mode needs "
                                  f"{_LINEAR_RANK[mode]}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                              f"{rank}D) for the modes: {_MODES} (got {mode})")


def _check_sizes(input: Tensor, output_size: list) -> None:
    """torch's upsample_*_common_check: every input and output size positive."""
    spatial = list(input.shape[2:])
    if all(n > 0 for n in spatial) and all(n > 0 for n in output_size):
        return
    names = "DHW"[3 - len(spatial):]

    def describe(sizes: list) -> str:
        return ", ".join(f"{name}: {n}" for name, n in zip(names, sizes))

    joint = " and " if len(spatial) == 1 else " "
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                       f"({describe(spatial)}){joint}output ({describe(output_size)})")
