"""Linear maps and convolution: linear, bilinear, conv1d/2d/3d and their transposes; ``pad``
(from ``_functions.padding``) is exported here for ``nn.functional``.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from ..._core.tensor import Tensor
from ..._core.warn_once import warn_once
from ..._engine import profiling as _profiler
from ..._engine.dispatch import apply as _apply
from ..._functions import linalg as _linalg
from ..._functions import pointwise
from ..._functions import shapes as _shapes
from ..._functions.opgen import tensor_args
from ..._functions.padding import constant_pad as _constant_pad_nd
from ..._functions.padding import pad as pad
from ..._ops import nn as N
from ..._ops import nn_pooling as NP


@tensor_args
@_profiler.composite("aten::linear")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``, with torch's graph (addmm for 2-D, flattened otherwise).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.linear(jaxgrad.ones(2, 3), jaxgrad.ones(4, 3), jaxgrad.zeros(4)).shape
    jaxgrad.Size([2, 4])
    """
    if bias is not None and input.ndim == 2:
        return _linalg.addmm(bias, input, _shapes.t(weight))
    if bias is not None and input.ndim >= 1 and input.is_contiguous():
        flat = _shapes.reshape(input, (-1, input.shape[-1]))
        out = _linalg.addmm(bias, flat, _shapes.t(weight))
        return _shapes.view(out, (*input.shape[:-1], out.shape[1]))
    out = _linalg.matmul(input, _shapes.t(weight))
    return out if bias is None else pointwise.add_(out, bias)


@tensor_args
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """``x1^T W[o] x2 + b[o]`` for every output feature ``o`` (torch's ``_trilinear``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.bilinear(jaxgrad.ones(2, 3), jaxgrad.ones(2, 4), jaxgrad.ones(5, 3, 4)).shape
    jaxgrad.Size([2, 5])
    """
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(
            f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} "
            f"and {list(input2.shape[:-1])}")
    if input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        which, size = ((1, input1.shape[-1]) if input1.shape[-1] != weight.shape[1]
                       else (2, input2.shape[-1]))
        raise RuntimeError(f"bilinear(): input{which} size does not match weight size: got "
                           f"{size} but expected {weight.shape[which]}")
    out = _apply(N.TRILINEAR, _shapes.reshape(input1, (-1, input1.shape[-1])), weight,
                _shapes.reshape(input2, (-1, input2.shape[-1])))
    out = _shapes.reshape(out, (*input1.shape[:-1], weight.shape[0]))
    return out if bias is None else pointwise.add(out, bias)


def _tuple(value: Any, n: int, name: str = "") -> tuple[int, ...]:
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            return tuple(int(value[0]) for _ in range(n))
        if len(value) != n:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                               "values to match the convolution dimensions, but got "
                               f"{name}={list(value)}")
        return tuple(int(v) for v in value)
    return (int(value),) * n


def _conv_padding(padding: Any, n: int, stride: tuple, dilation: tuple,
                  kernel: tuple) -> tuple[tuple[int, int], ...]:
    if padding == "valid":
        return ((0, 0),) * n
    if padding == "same":
        if builtins.any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
        return tuple((t // 2, t - t // 2) for t in totals)
    if isinstance(padding, str):
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    return tuple((p, p) for p in _tuple(padding, n, "padding"))


def _conv(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
          dilation: Any, groups: int, n: int) -> Tensor:
    batched = input.ndim == n + 2
    if input.ndim != n + 1 and not batched:
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                           f"conv{n}d, but got input of size: {list(input.shape)}")
    x = input if batched else _shapes.unsqueeze(input, 0)
    if weight.shape[1] * groups != x.shape[1]:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{list(x.shape)} to have {weight.shape[1] * groups} channels, but got "
            f"{x.shape[1]} channels instead")
    stride_ = _tuple(stride, n, "stride")
    dilation_ = _tuple(dilation, n, "dilation")
    pads = _conv_padding(padding, n, stride_, dilation_, tuple(weight.shape[2:]))
    if builtins.any(lo != hi for lo, hi in pads):
        x, pads = _pad_same(x, pads)
    kernel = [d * (k - 1) + 1 for d, k in zip(dilation_, weight.shape[2:])]
    padded = [size + 2 * lo for size, (lo, _) in zip(x.shape[2:], pads)]
    if builtins.any(p < k for p, k in zip(padded, kernel)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than "
            "actual input size")
    out = _apply(N.CONVOLUTION, x, weight, bias, stride=stride_, padding=pads,
                dilation=dilation_, groups=groups)
    return out if batched else _shapes.squeeze(out, 0)


def _pad_same(x: Tensor, pads: tuple[tuple[int, int], ...]) -> tuple[Tensor, tuple]:
    """torch's _convolution_same for an even kernel: zero-pad the extra right-hand element of
    each dim first (``ConstantPadNdBackward0``), leaving a symmetric padding for the
    convolution; warns once per process, as torch's TORCH_WARN_ONCE does."""
    warn_once("Using padding='same' with even kernel lengths and odd dilation may require a "
              "zero-padded copy of the input be created", stacklevel=5)
    flat: list[int] = []
    for lo, hi in reversed(pads):
        flat += [0, hi - lo]
    return _constant_pad_nd(x, tuple(flat), 0.0), tuple((lo, lo) for lo, _ in pads)


@tensor_args
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D cross-correlation over (N, C, L) or (C, L) input (``ConvolutionBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.conv1d(jaxgrad.ones(1, 2, 5), jaxgrad.ones(3, 2, 3), padding="same").shape
    jaxgrad.Size([1, 3, 5])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


@tensor_args
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation over (N, C, H, W) or (C, H, W) input (``ConvolutionBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.conv2d(jaxgrad.ones(1, 2, 5, 5), jaxgrad.ones(3, 2, 3, 3), stride=2).shape
    jaxgrad.Size([1, 3, 2, 2])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


def _conv_transpose(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
                    padding: Any, output_padding: Any, groups: int, dilation: Any,
                    n: int) -> Tensor:
    """torch's ``convolution(..., transposed=True, ...)`` with its argument checks; 1-D
    messages read as torch's, which runs a 1-D transposed convolution as a 2-D one."""
    name = f"conv_transpose{n}d"
    for arg, value in (("padding", padding), ("output_padding", output_padding)):
        if isinstance(value, str):
            raise TypeError(f"{name}(): argument '{arg}' must be tuple of ints, not str")
    batched = input.ndim == n + 2
    if input.ndim != n + 1 and not batched:
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    x = input if batched else _shapes.unsqueeze(input, 0)
    stride_ = _tuple(stride, n, "stride")
    padding_ = _tuple(padding, n, "padding")
    output_padding_ = _tuple(output_padding, n, "output_padding")
    dilation_ = _tuple(dilation, n, "dilation")
    if builtins.any(v <= 0 for v in stride_):
        raise RuntimeError("non-positive stride is not supported")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(weight.shape)}] "
                           "instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[1] * groups):
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
            f"1-dimensional with {weight.shape[1] * groups} elements, but got bias of size "
            f"{list(bias.shape)} instead")
    if weight.shape[0] != x.shape[1]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected "
            f"input{list(x.shape)} to have {weight.shape[0]} channels, but got {x.shape[1]} "
            "channels instead")
    if builtins.any(op >= s and op >= d
                    for op, s, d in zip(output_padding_, stride_, dilation_)):
        shown = ((0, *output_padding_), (1, *stride_), (1, *dilation_)) if n == 1 else (
            output_padding_, stride_, dilation_)
        axes = ("depth", "height", "width")[-len(shown[0]):]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           "got " + " ".join(f"{what}_{axis}: {v}" for what, values in zip(
                               ("output_padding", "stride", "dilation"), shown)
                               for axis, v in zip(axes, values)))
    sizes = x.shape[2:]
    out = [(size - 1) * s - 2 * p + d * (k - 1) + op + 1 for size, s, p, d, k, op in zip(
        sizes, stride_, padding_, dilation_, weight.shape[2:], output_padding_)]
    if builtins.any(o < 1 for o in out):
        lead = ("1 x ",) if n == 1 else ("",)
        raise RuntimeError(
            f"Given input size per channel: ({lead[0]}{' x '.join(map(str, sizes))}). "
            f"Calculated output size per channel: ({lead[0]}{' x '.join(map(str, out))}). "
            "Output size is too small")
    result = _apply(N.CONVOLUTION_TRANSPOSE, x, weight, bias, stride=stride_, padding=padding_,
                    output_padding=output_padding_, dilation=dilation_, groups=groups)
    return result if batched else _shapes.squeeze(result, 0)


@tensor_args
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """1-D transposed convolution ("deconvolution") of (N, C_in, L) or (C_in, L) input with a
    (C_in, C_out / groups, k) weight (``ConvolutionBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.conv_transpose1d(jaxgrad.ones(1, 2, 3), jaxgrad.ones(2, 1, 2), stride=2)
    tensor([[[2., 2., 2., 2., 2., 2.]]])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1)


@tensor_args
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """2-D transposed convolution of (N, C_in, H, W) or (C_in, H, W) input with a
    (C_in, C_out / groups, kh, kw) weight (``ConvolutionBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.conv_transpose2d(jaxgrad.ones(1, 1, 2, 2), jaxgrad.ones(1, 3, 2, 2), stride=2).shape
    jaxgrad.Size([1, 3, 4, 4])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2)


@tensor_args
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D cross-correlation over (N, C, D, H, W) or (C, D, H, W) input
    (``ConvolutionBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.conv3d(jaxgrad.ones(1, 2, 4, 4, 4), jaxgrad.ones(3, 2, 3, 3, 3), padding=1).shape
    jaxgrad.Size([1, 3, 4, 4, 4])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3)


@tensor_args
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """3-D transposed convolution of (N, C_in, D, H, W) or (C_in, D, H, W) input with a
    (C_in, C_out / groups, kd, kh, kw) weight (``ConvolutionBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.conv_transpose3d(jaxgrad.ones(1, 1, 2, 2, 2), jaxgrad.ones(1, 3, 2, 2, 2)).shape
    jaxgrad.Size([1, 3, 3, 3, 3])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3)


@tensor_args
def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int],
                padding: Sequence[int], dilation: Sequence[int], transposed: bool,
                output_padding: Sequence[int], groups: int) -> Tensor:
    """torch's native convolution: a (transposed) convolution of batched input, its spatial
    dims those of ``weight`` (``ConvolutionBackward0``).

    >>> import jaxgrad
    >>> jaxgrad.convolution(jaxgrad.ones(1, 2, 5), jaxgrad.ones(3, 2, 3), None, [1], [0], [1],
    ...                     False, [0], 1).shape
    jaxgrad.Size([1, 3, 3])
    """
    n = weight.ndim - 2
    if input.ndim != weight.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                           f"dimensional weight {list(weight.shape)}, but got {input.ndim}-"
                           f"dimensional input of size {list(input.shape)} instead")
    if transposed:
        return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                               dilation, n)
    return _conv(input, weight, bias, stride, padding, dilation, groups, n)


@tensor_args
def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution of (time, batch, channel) input with a (kernel, in, out) weight, zero
    padded by ``pad`` steps on each side (``ConvTbcBackward0``).

    >>> import jaxgrad
    >>> jaxgrad.conv_tbc(jaxgrad.ones(5, 2, 3), jaxgrad.ones(3, 3, 4), jaxgrad.zeros(4), 1).shape
    jaxgrad.Size([5, 2, 4])
    """
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    return _apply(NP.CONV_TBC, input, weight, bias, pad=int(pad))
