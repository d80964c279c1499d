"""Linear maps, padding and convolution: linear, bilinear, pad, conv1d/2d/3d and their
transposes.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._core.tensor import Tensor
from ..._core.warn_once import warn_once
from ..._engine import profiling as _profiler
from ..._engine.dispatch import apply as _apply
from ..._functions import linalg as _linalg
from ..._functions import pointwise
from ..._functions import shapes as _shapes
from ..._functions.opgen import tensor_args
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


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


_PAD_SUPPORT = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


@tensor_args
def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    """Pad the last ``len(pad) // 2`` dims of ``input``; ``pad`` lists (left, right) pairs from
    the last dim backwards. ``mode`` is 'constant' (any dims, ``value`` fills, negative pads
    crop), or 'reflect', 'replicate', 'circular' (the last 1-3 dims of a batched or unbatched
    input), each with torch's graph: ``ConstantPadNdBackward0``, ``ReflectionPad{1,2,3}DBackward0``,
    ``ReplicationPad{1,2,3}DBackward0``, and for 'circular' torch's slice copies (``CopySlices``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> x = jaxgrad.arange(4.0).reshape(1, 4)
    >>> F.pad(x, (2, 1), mode="reflect")
    tensor([[2., 1., 0., 1., 2., 3., 2.]])
    >>> F.pad(x, (1, 1), value=-1.0)
    tensor([[-1.,  0.,  1.,  2.,  3., -1.]])
    """
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    for i, p in enumerate(pad):
        if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
            raise TypeError("pad(): argument 'pad' (position 2) must be tuple of ints, but "
                            f"found element of type {type(p).__name__} at pos {i}")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.ndim}")
    if mode == "constant":
        return _constant_pad_nd(input, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    n = len(pad) // 2
    if n not in (1, 2, 3) or input.ndim not in (n + 1, n + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.ndim}D "
                                  f"input tensor.\n{_PAD_SUPPORT}")
    if mode == "circular":
        return _pad_circular(input, pad)
    _check_pad_input(input, pad, mode)
    row = (N.REFLECTION_PAD if mode == "reflect" else N.REPLICATION_PAD)[n]
    return _apply(row, input, padding=pad)


def _constant_pad_nd(input: Tensor, pad: tuple[int, ...], value: float) -> Tensor:
    """torch's constant_pad_nd: negative pads narrow first, so their errors are narrow's."""
    sizes = list(input.shape)
    for dim in range(input.ndim - len(pad) // 2, input.ndim):
        k = 2 * (input.ndim - dim - 1)
        for p in pad[k:k + 2]:
            if p < 0:
                if sizes[dim] + p < 0:
                    raise RuntimeError("narrow(): length must be non-negative.")
                sizes[dim] += p
    return _apply(N.CONSTANT_PAD_ND, input, aux=(value,), pad=pad)


def _check_pad_input(input: Tensor, pad: tuple[int, ...], mode: str) -> None:
    """The checks of torch's reflection_pad{1,2,3}d / replication_pad{1,2,3}d kernels."""
    n = len(pad) // 2
    name = f"{'reflection' if mode == 'reflect' else 'replication'}_pad{n}d"
    shape = list(input.shape)
    nonempty = shape[1:] if input.ndim == n + 2 else shape
    if 0 in nonempty:
        raise RuntimeError(f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"{shape}")
    dims = range(input.ndim - 1, input.ndim - 1 - n, -1)  # W, H, D
    sizes = [shape[d] for d in dims]
    outs = [shape[d] + pad[2 * i] + pad[2 * i + 1] for i, d in enumerate(dims)]
    if mode == "reflect":
        for i, d in enumerate(dims):
            if pad[2 * i] >= shape[d] or pad[2 * i + 1] >= shape[d]:
                raise RuntimeError(
                    f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                    f"input dimension, but got: padding ({pad[2 * i]}, {pad[2 * i + 1]}) at "
                    f"dimension {d} of input {shape}")
    if builtins.all(o < 1 for o in outs):
        if n == 1:
            inputs, outputs = f"W: {sizes[0]}", f"W: {outs[0]}"
        elif n == 2:
            inputs = f"H: {sizes[1]}, W: {sizes[0]}" + (" " if mode == "replicate" else "")
            outputs = f"H: {outs[1]} W: {outs[0]}"
        else:
            inputs = f"D: {sizes[2]} H: {sizes[1]}, W: {sizes[0]}"
            outputs = f"D: {outs[2]} H: {outs[1]} W: {outs[0]}"
        raise RuntimeError(f"input ({inputs}) is too small. Calculated output {outputs}")
    if builtins.any(o < 0 for o in outs):
        out_shape = shape[:input.ndim - n] + outs[::-1]
        if mode == "reflect" and n == 2:  # torch's 2-D reflection kernel allocates unchecked
            raise RuntimeError("numel: integer multiplication overflow")
        negative = next(o for o in out_shape if o < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative}: "
                           f"{out_shape}")
    if input.dtype.name == "bool":  # the kernels' dtype dispatch comes after the size checks
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


def _pad_circular(input: Tensor, pad: tuple[int, ...]) -> Tensor:
    """torch's _pad_circular, op for op: an empty output, the input copied into its middle, then
    each padded dim's borders copied from the opposite side (so the graph is CopySlices)."""
    n = len(pad) // 2
    lead = input.ndim - n
    out_shape = list(input.shape)
    for i in range(n):
        lo, hi = pad[2 * (n - i - 1)], pad[2 * (n - i - 1) + 1]
        size = input.shape[lead + i]
        out_shape[lead + i] = size + lo + hi
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[lead + i] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = input.new_empty(tuple(out_shape))
    out_slice, in_slice = out, input
    for i in range(n):
        dim = n - i + lead - 1
        lo, hi = pad[2 * i], pad[2 * i + 1]
        out_slice = _shapes.narrow_slice(out_slice, dim, builtins.max(lo, 0),
                                         out_shape[dim] - builtins.max(hi, 0), 1)
        in_slice = _shapes.narrow_slice(in_slice, dim, builtins.max(-lo, 0),
                                        input.shape[dim] - builtins.max(-hi, 0), 1)
    pointwise.copy_(out_slice, in_slice)
    for i in range(n):
        dim = n - i + lead - 1
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            end = out_shape[dim] - builtins.max(hi, 0)
            pointwise.copy_(_shapes.narrow_slice(out, dim, 0, lo, 1),
                            _shapes.narrow_slice(out, dim, end - lo, end, 1))
        if hi > 0:
            start = builtins.max(lo, 0)
            pointwise.copy_(_shapes.narrow_slice(out, dim, out_shape[dim] - hi, out_shape[dim], 1),
                            _shapes.narrow_slice(out, dim, start, start + hi, 1))
    return out


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
