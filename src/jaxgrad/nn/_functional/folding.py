"""Sliding blocks and sampling grids: ``unfold`` (torch's ``im2col``), ``fold`` (``col2im``),
``affine_grid`` and ``grid_sample``, with ATen's checks in ATen's order and words."""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

from ..._core import dtypes as _dtypes
from ..._core.tensor import Tensor
from ..._engine.dispatch import apply as _apply
from ..._functions.opgen import tensor_args
from ..._ops import nn_sampling as S


def _pair(value: Any, name: str) -> tuple[int, int]:
    """torch's ``_pair`` (a sequence passes through) then the ``int[2]`` argument check."""
    values = tuple(value) if isinstance(value, (list, tuple)) else (value, value)
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{name}(): argument 'kernel_size' (position 2) must be tuple of "
                            f"ints, but found element of type {type(v).__name__} at pos {i}")
    return values  # type: ignore[return-value]


def _two(values: tuple, what: str) -> tuple[int, int]:
    if len(values) != 2:
        raise RuntimeError(f"It is expected {what} equals to 2, but got size {len(values)}")
    return values  # type: ignore[return-value]


def _positive(values: tuple, what: str, names: tuple[str, str]) -> None:
    if values[0] <= 0 or values[1] <= 0:
        raise RuntimeError(f"{what} should be greater than zero, but got {names[0]}: "
                           f"{values[0]} {names[1]}: {values[1]}")


def _check_kernel(kernel: tuple) -> None:
    _positive(kernel, "kernel size", ("kernel_height", "kernel_width"))


def _check_dilation(dilation: tuple) -> None:
    _positive(dilation, "dilation", ("dilation_height", "dilation_width"))


def _check_stride(stride: tuple) -> None:
    _positive(stride, "stride", ("stride_height", "stride_width"))


def _check_padding(padding: tuple) -> None:
    if padding[0] < 0 or padding[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {padding[0]} "
                           f"pad_width: {padding[1]}")


def _check_dtype(input: Tensor, kernel: str) -> None:
    if not (input.dtype.is_floating_point or input.dtype.is_complex
            or input.dtype.name == "bool"):
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dtypes.scalar_type_name(input.dtype)}'")


def _size(input: Tensor, dim: int) -> int:
    if dim >= input.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-input.ndim}, {input.ndim - 1}], but got {dim})")
    return input.shape[dim]


@tensor_args(name="im2col")
def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """Sliding local blocks of a (N, C, H, W) or (C, H, W) input as columns: the result is
    (N, C * kh * kw, L), one column per block (torch's ``im2col``, ``Im2ColBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.unfold(jaxgrad.arange(9.0).reshape(1, 1, 3, 3), 2)
    tensor([[[0., 1., 3., 4.],
             [1., 2., 4., 5.],
             [3., 4., 6., 7.],
             [4., 5., 7., 8.]]])
    """
    kernel = _two(_pair(kernel_size, "im2col"), "kernel_size")
    dil = _two(_pair(dilation, "im2col"), "dilation")
    pad = _two(_pair(padding, "im2col"), "padding")
    step = _two(_pair(stride, "im2col"), "stride")
    _check_kernel(kernel)
    _check_dilation(dil)
    _check_padding(pad)
    _check_stride(step)
    batched = 1 if input.ndim == 4 else 0
    sizes = [_size(input, batched + i) for i in range(3)]
    if input.ndim not in (3, 4) or builtins.any(s == 0 for s in sizes):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {list(input.shape)}")
    h, w = sizes[1:]
    blocks = [S.sliding_blocks(*args) for args in zip((h, w), kernel, dil, pad, step)]
    if blocks[0] < 1 or blocks[1] < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size={kernel}, "
                           f"dilation={dil}, padding={pad}, calculated shape of the array of "
                           f"sliding blocks as ({blocks[0]}, {blocks[1]}), but its components "
                           "must be at least one.")
    _check_dtype(input, "im2col_out_cpu")
    return _apply(S.IM2COL, input, kernel_size=kernel, dilation=dil, padding=pad, stride=step)


@tensor_args(name="col2im")
def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """Sums columns of sliding blocks, (N, C * kh * kw, L) or (C * kh * kw, L), back into a
    (N, C, H, W) image of ``output_size`` (torch's ``col2im``, ``Col2ImBackward0``; the adjoint
    of :func:`unfold`).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.fold(jaxgrad.ones(1, 4, 4), (3, 3), 2)
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    out_size = _two(_pair(output_size, "col2im"), "output_size")
    kernel = _two(_pair(kernel_size, "col2im"), "kernel_size")
    dil = _two(_pair(dilation, "col2im"), "dilation")
    pad = _two(_pair(padding, "col2im"), "padding")
    step = _two(_pair(stride, "col2im"), "stride")
    _check_kernel(kernel)
    _check_stride(step)
    _check_dilation(dil)
    _check_padding(pad)
    sizes = list(input.shape[-2:])
    if input.ndim not in (2, 3) or builtins.any(s == 0 for s in sizes):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    columns, length = sizes
    if columns % (kernel[0] * kernel[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={columns} and "
                           f"kernel_size={kernel}.")
    blocks = [S.sliding_blocks(*args) for args in zip(out_size, kernel, dil, pad, step)]
    if blocks[0] * blocks[1] != length:
        raise RuntimeError(f"Given output_size={out_size}, kernel_size={kernel}, "
                           f"dilation={dil}, padding={pad}, stride={step}, expected size of "
                           f"input's dimension 2 to match the calculated number of sliding "
                           f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but "
                           f"got input.size(2)={length}.")
    if blocks[0] < 1 or blocks[1] < 1:
        raise RuntimeError(f"Given output_size={out_size}, kernel_size={kernel}, "
                           f"dilation={dil}, padding={pad}, stride={step}, calculated shape of "
                           f"the array of sliding blocks as ({blocks[0]}, {blocks[1]}), which "
                           "is too small (non-positive)")
    _check_dtype(input, "col2im_out_cpu")
    return _apply(S.COL2IM, input, output_size=out_size, kernel_size=kernel, dilation=dil,
                  padding=pad, stride=step)


_ALIGN_CORNERS_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details.")


@tensor_args
def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid, (N, H, W, 2) or (N, D, H, W, 3), of a batch of affine matrices
    ``theta`` ((N, 2, 3) or (N, 3, 4)) for an output of ``size`` (torch's
    ``affine_grid_generator``, ``AffineGridGeneratorBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> theta = jaxgrad.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> F.affine_grid(theta, (1, 1, 1, 2), align_corners=False)
    tensor([[[[-0.5000,  0.0000],
              [ 0.5000,  0.0000]]]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) == 4:
        if theta.ndim != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError("Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
    elif len(size) == 5:
        if theta.ndim != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError("Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    spatial = size[2:]
    if align_corners and builtins.min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif builtins.min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        k = len(spatial)
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {k + 1}] but got: [{theta.shape[0]}, {k + 1}].")
    return _apply(S.AFFINE_GRID_GENERATOR, theta, size=size, align_corners=bool(align_corners))


_MODES = {"bilinear": S.BILINEAR, "nearest": S.NEAREST, "bicubic": S.BICUBIC}
_PADDINGS = {"zeros": S.ZEROS, "border": S.BORDER, "reflection": S.REFLECTION}


def _check_grid_sampler(input: Tensor, grid: Tensor, mode: int) -> None:
    """ATen's check_grid_sampler_common and _2d/_3d checks, in their order."""
    if input.shape[:1] != grid.shape[:1] or input.ndim == 0:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in "
                           f"last dimension, but got grid with sizes {list(grid.shape)}")
    for i in range(2, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {i} being empty")
    n = 4 if input.ndim == 4 else 5
    if input.ndim != n or grid.ndim != n:
        raise RuntimeError(f"grid_sampler(): expected {n}D input and grid with same number of "
                           f"dimensions, but got input with sizes {list(input.shape)} and grid "
                           f"with sizes {list(grid.shape)}")
    if n == 5 and mode == S.BICUBIC:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"grid_sampler_{n - 2}d_cpu_kernel_impl" not implemented '
                                  f"for '{_dtypes.scalar_type_name(input.dtype)}'")
    _dtypes.check_scalar_type(grid.dtype, input.dtype)


@tensor_args
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Samples (N, C, H, W) (or 5-D) ``input`` at the normalised points of ``grid``, (N, H', W',
    2) (or (N, D', H', W', 3)), in [-1, 1] (torch's ``grid_sampler``,
    ``GridSampler2DBackward0``/``GridSampler3DBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> image = jaxgrad.arange(4.0).reshape(1, 1, 2, 2)
    >>> F.grid_sample(image, jaxgrad.zeros(1, 1, 1, 2), align_corners=True)
    tensor([[[[1.5000]]]])
    """
    if mode not in _MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    _check_grid_sampler(input, grid, _MODES[mode])
    return _apply(S.GRID_SAMPLER[input.ndim - 2], input, grid,
                  interpolation_mode=_MODES[mode], padding_mode=_PADDINGS[padding_mode],
                  align_corners=bool(align_corners))
