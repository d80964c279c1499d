"""Sliding blocks: ``unfold`` (torch's ``im2col``) and ``fold`` (``col2im``), with ATen's shape
checks in ATen's order and words."""

from __future__ import annotations

import builtins
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
