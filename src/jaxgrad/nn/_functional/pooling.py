"""Pooling: max/avg pooling in 1-D and 2-D, adaptive pooling, pixel_shuffle (``interpolate`` is
in ``interpolation``)."""

from __future__ import annotations

import builtins
from typing import Any

from ..._core.tensor import Tensor
from ..._engine.dispatch import apply as _apply
from ..._functions import reductions
from ..._functions import shapes as _shapes
from ..._functions.opgen import tensor_args
from ..._ops import nn as N
from .convolution import _tuple


def _pool_args(input: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
               ceil_mode: bool) -> tuple:
    kernel = _tuple(kernel_size, 2)
    stride_ = kernel if stride is None or stride == [] or stride == () else _tuple(stride, 2)
    pad = _tuple(padding, 2)
    dil = _tuple(dilation, 2)
    if input.ndim not in (3, 4) or builtins.any(s == 0 for s in input.shape[-3:]):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    for p, k, d in zip(pad, kernel, dil):
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    out = [N.pooled_size(size, k, s, p, d, ceil_mode)
           for size, k, s, p, d in zip(input.shape[-2:], kernel, stride_, pad, dil)]
    if builtins.any(o < 1 for o in out):
        c, h, w = input.shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}). Output size is too small")
    return kernel, stride_, pad, dil


@tensor_args
def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """Max over 2-D windows; ``return_indices`` also gives each maximum's flat position.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.max_pool2d(jaxgrad.arange(16.0).reshape(1, 4, 4), 2)
    tensor([[[ 5.,  7.],
             [13., 15.]]])
    """
    kernel, stride_, pad, dil = _pool_args(input, kernel_size, stride, padding, dilation,
                                           ceil_mode)
    out, indices = _apply(N.MAX_POOL2D, input, kernel_size=kernel, stride=stride_, padding=pad,
                         dilation=dil, ceil_mode=bool(ceil_mode))
    return (out, indices) if return_indices else out


@tensor_args
def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """Mean over 2-D windows (padding counted unless ``count_include_pad=False``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.avg_pool2d(jaxgrad.ones(1, 2, 2), 2)
    tensor([[[1.]]])
    """
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kernel, stride_, pad, _ = _pool_args(input, kernel_size, stride, padding, 1, ceil_mode)
    return _apply(N.AVG_POOL2D, input, kernel_size=kernel, stride=stride_, padding=pad,
                 ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                 divisor_override=divisor_override)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed output size (``None`` keeps that input size). A 1x1 output is
    torch's shortcut ``input.mean((-1, -2), keepdim=True)``, taken before the input's dims are
    checked, so it accepts any input with two or more dims, as torch does.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.adaptive_avg_pool2d(jaxgrad.ones(1, 3, 5), (2, 2)).shape
    jaxgrad.Size([1, 2, 2])
    """
    if isinstance(output_size, (list, tuple)):
        if len(input.shape) <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        sizes = [input.shape[input.ndim - len(output_size) + i] if s is None else int(s)
                 for i, s in enumerate(output_size)]
    else:
        sizes = [int(output_size)] * 2
    if len(sizes) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if sizes[0] < 0 or sizes[1] < 0:
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than "
                           f"or equal to 0 but received {{{sizes[0]}, {sizes[1]}}}")
    if sizes == [1, 1]:
        return reductions.mean(input, (-1, -2), keepdim=True)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    for i in (-2, -1):
        if input.shape[i] == 0:
            raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {list(input.shape)} "
                               f"with dimension {i + input.ndim} being empty")
    return _apply(N.ADAPTIVE_AVG_POOL2D, input, output_size=tuple(sizes))


def _one(value: Any) -> int:
    return int(value[0]) if isinstance(value, (list, tuple)) else int(value)


def _as_2d(input: Tensor, name: str) -> None:
    if input.ndim in (2, 3):
        return
    if name == "max_pool1d":
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                       f"for argument #1 'self' (while checking arguments for {name})")


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max over 1-D windows of (N, C, L) or (C, L) input: torch's 2-D pooling of the input
    with a unit dim inserted before the last (``SqueezeBackward1`` of
    ``MaxPool2DWithIndicesBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.max_pool1d(jaxgrad.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[3., 2.]])
    """
    _as_2d(input, "max_pool1d")
    k = _one(kernel_size)
    s = k if stride is None or stride == [] or stride == () else _one(stride)
    out = max_pool2d(_shapes.unsqueeze(input, -2), (1, k), (1, s), (0, _one(padding)),
                     (1, _one(dilation)), ceil_mode, True)
    values, indices = _shapes.squeeze(out[0], -2), _shapes.squeeze(out[1], -2)
    return (values, indices) if return_indices else values


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """Mean over 1-D windows of (N, C, L) or (C, L) input (torch's 2-D pooling of the input
    with a unit dim inserted).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.avg_pool1d(jaxgrad.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[2., 1.]])
    """
    _as_2d(input, "avg_pool1d")
    k = _one(kernel_size)
    s = k if stride is None or stride == [] or stride == () else _one(stride)
    out = avg_pool2d(_shapes.unsqueeze(input, -2), (1, k), (1, s), (0, _one(padding)), ceil_mode,
                     count_include_pad)
    return _shapes.squeeze(out, -2)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling of (N, C, L) or (C, L) input to ``output_size`` positions.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.adaptive_avg_pool1d(jaxgrad.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[2., 1.]])
    """
    _as_2d(input, "adaptive_avg_pool1d")
    out = _apply(N.ADAPTIVE_AVG_POOL2D, _shapes.unsqueeze(input, -2),
                 output_size=(1, _one(output_size)))
    return _shapes.squeeze(out, -2)


def _adaptive_max(input: Tensor, sizes: tuple, name: str) -> tuple:
    if input.ndim not in (3, 4):
        raise RuntimeError(f"{name}(): Expected 3D or 4D tensor, but got: "
                           f"{list(input.shape)}")
    return _apply(N.ADAPTIVE_MAX_POOL2D, input, output_size=sizes)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of (N, C, H, W) or (C, H, W) input to a fixed output size (``None`` keeps
    that input size); ``return_indices`` also gives each maximum's flat position.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.adaptive_max_pool2d(jaxgrad.arange(16.0).reshape(1, 4, 4), 2)
    tensor([[[ 5.,  7.],
             [13., 15.]]])
    """
    if not isinstance(output_size, (list, tuple)):
        output_size = (output_size, output_size)
    sizes = tuple(input.shape[input.ndim - 2 + i] if s is None else int(s)
                  for i, s in enumerate(output_size))
    out, indices = _adaptive_max(input, sizes, "adaptive_max_pool2d")
    return (out, indices) if return_indices else out


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of (N, C, L) or (C, L) input to ``output_size`` positions.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.adaptive_max_pool1d(jaxgrad.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[3., 2.]])
    """
    _as_2d(input, "adaptive_max_pool1d")
    out, indices = _adaptive_max(_shapes.unsqueeze(input, -2), (1, _one(output_size)),
                                 "adaptive_max_pool2d")
    out, indices = _shapes.squeeze(out, -2), _shapes.squeeze(indices, -2)
    return (out, indices) if return_indices else out


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r * r, H, W) to (*, C, H * r, W * r).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.pixel_shuffle(jaxgrad.ones(1, 4, 2, 3), 2).shape
    jaxgrad.Size([1, 1, 4, 6])
    """
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    if input.shape[-3] % (upscale_factor * upscale_factor):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)="
                           f"{input.shape[-3]} is not divisible by "
                           f"{upscale_factor * upscale_factor}")
    return _apply(N.PIXEL_SHUFFLE, input, upscale_factor=int(upscale_factor))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) to (*, C * r * r, H, W).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.pixel_unshuffle(jaxgrad.ones(1, 1, 4, 6), 2).shape
    jaxgrad.Size([1, 4, 2, 3])
    """
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    for i, dim in ((-2, "height"), (-1, "width")):
        if input.shape[i] % downscale_factor:
            raise RuntimeError(f"pixel_unshuffle expects {dim} to be divisible by "
                               f"downscale_factor, but input.size({i})={input.shape[i]} is not "
                               f"divisible by {downscale_factor}")
    return _apply(N.PIXEL_UNSHUFFLE, input, downscale_factor=int(downscale_factor))
