"""3-D pooling, the ``*_with_indices`` forms, max unpooling and power-average pooling:
max_pool3d, avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool3d, max_unpool1d/2d/3d,
lp_pool1d/2d/3d, and the top-level ``jaxgrad.max_pool1d/2d/3d`` forms with torch's native
signatures.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from ..._core.tensor import Tensor
from ..._core.tensor_repr import concrete_here
from ..._engine.dispatch import apply as _apply
from ..._functions import random as _random
from ..._functions import reductions
from ..._functions import shapes as _shapes
from ..._functions.opgen import tensor_args
from ..._ops import nn as N
from ..._ops import nn_pooling as P
from .activations import relu
from .pooling import (
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)

_WORDS = {1: "one", 2: "two", 3: "three"}


def _arg(value: Any, n: int, message: str | None, allow_empty: bool = False) -> tuple:
    """An int or a 1- or n-sequence as an n-tuple; ``None`` for an omitted (empty) one."""
    if isinstance(value, (list, tuple)):
        if allow_empty and len(value) == 0:
            return ()
        if len(value) not in (1, n):
            raise RuntimeError(message)
        return tuple(int(v) for v in value) * (n if len(value) == 1 else 1)
    return (int(value),) * n


def _pool3d_args(input: Tensor, name: str, kernel_size: Any, stride: Any, padding: Any,
                 dilation: Any, ceil_mode: bool) -> tuple:
    """torch's argument and shape checks of max_pool3d / avg_pool3d, in torch's order."""
    is_max = name == "max_pool3d"
    either = " either" if is_max else ""
    kernel = _arg(kernel_size, 3, f"{name}: kernel_size must{either} be a single int, or a "
                                  "tuple of three ints")
    stride_ = _arg(stride if stride is not None else (), 3,
                   f"{name}: stride must{either} be omitted, a single int, or a tuple of three "
                   "ints", allow_empty=True) or kernel
    pad = _arg(padding, 3, f"{name}: padding must{either} be a single int, or a tuple of three "
                           "ints")
    dil = _arg(dilation, 3, "max_pool3d: dilation must be either a single int, or a tuple of "
                            "three ints")
    if input.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    out = []
    for size, k, s, p, d in zip(input.shape[-3:], kernel, stride_, pad, dil):
        if s == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
        out.append(N.pooled_size(size, k, s, p, d, ceil_mode))
    (kt, kh, kw), (dt, dh, dw), (lt, lh, lw) = kernel, stride_, dil
    if builtins.any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {kt} kH: {kh} "
                           f"kW: {kw}")
    if builtins.any(s <= 0 for s in stride_):
        raise RuntimeError(f"stride should be greater than zero, but got dT: {dt} dH: {dh} "
                           f"dW: {dw}")
    if builtins.any(d <= 0 for d in dil):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {lt} "
                           f"dilationH: {lh} dilationW: {lw}")
    fn = "max_pool3d_with_indices_out_cpu_template()" if is_max else "avg_pool3d()"
    if 0 in input.shape[input.ndim - 4:]:  # (torch's message always names dimension 0)
        raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive "
                           f"length, but input has a shape of {list(input.shape)} and "
                           "non-batch dimension 0 has length zero!")
    c, t, h, w = input.shape[-4:]
    if not is_max and (t < kt or h < kh or w < kw):
        raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size "
                           f"(kT: {kt} kH: {kh} kW: {kw})")
    if builtins.any(o < 1 for o in out):
        raise RuntimeError(f"Given input size: ({c}x{t}x{h}x{w}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}x{out[2]}). Output size is too small")
    return kernel, stride_, pad, dil


@tensor_args
def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """Max over 3-D windows of (N, C, D, H, W) or (C, D, H, W) input, with each maximum's
    position flat over D*H*W (``MaxPool3DWithIndicesBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.max_pool3d_with_indices(jaxgrad.arange(8.0).reshape(1, 2, 2, 2), 2)
    (tensor([[[[7.]]]]), tensor([[[[7]]]]))
    """
    kernel, stride_, pad, dil = _pool3d_args(input, "max_pool3d", kernel_size, stride, padding,
                                             dilation, ceil_mode)
    out, indices = _apply(P.MAX_POOL3D, input, kernel_size=kernel, stride=stride_, padding=pad,
                          dilation=dil, ceil_mode=bool(ceil_mode))
    return out, indices


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max over 3-D windows; ``return_indices`` also gives each maximum's flat position.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.max_pool3d(jaxgrad.arange(8.0).reshape(1, 2, 2, 2), 2)
    tensor([[[[7.]]]])
    """
    out = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


@tensor_args
def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """Mean over 3-D windows (padding counted unless ``count_include_pad=False``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.avg_pool3d(jaxgrad.ones(1, 2, 2, 2), 2)
    tensor([[[[1.]]]])
    """
    kernel, stride_, pad, _ = _pool3d_args(input, "avg_pool3d", kernel_size, stride, padding, 1,
                                           ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return _apply(P.AVG_POOL3D, input, kernel_size=kernel, stride=stride_, padding=pad,
                  ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                  divisor_override=divisor_override)


def _output_sizes(input: Tensor, output_size: Any, n: int) -> Any:
    """torch's ``_list_with_default``: ``None`` entries take the input's size."""
    if not isinstance(output_size, (list, tuple)):
        return (int(output_size),) * n
    if input.ndim <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    return tuple(input.shape[input.ndim - len(output_size) + i] if s is None else int(s)
                 for i, s in enumerate(output_size))


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed (D, H, W) output size (``None`` keeps that input size); a
    1x1x1 output is torch's shortcut ``input.mean((-1, -2, -3), keepdim=True)``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.adaptive_avg_pool3d(jaxgrad.ones(1, 3, 5, 4), (2, 2, 3)).shape
    jaxgrad.Size([1, 2, 2, 3])
    """
    sizes = _output_sizes(input, output_size, 3)
    if len(sizes) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    if builtins.any(s < 0 for s in sizes):
        raise RuntimeError("adaptive_avg_pool3d: elements of output_size must be greater than "
                           f"or equal to 0 but received {{{sizes[0]}, {sizes[1]},{sizes[2]}}}")
    if sizes == (1, 1, 1):
        return reductions.mean(input, (-1, -2, -3), keepdim=True)
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError("adaptive_avg_pool3d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {list(input.shape)} "
                               f"with dimension {i} being empty")
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got "
                           f"{list(input.shape)}")
    return _apply(P.ADAPTIVE_AVG_POOL3D, input, output_size=sizes)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """Max pooling to a fixed (D, H, W) output size, with each maximum's flat position.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.adaptive_max_pool3d_with_indices(jaxgrad.arange(8.0).reshape(1, 2, 2, 2), 1)
    (tensor([[[[7.]]]]), tensor([[[[7]]]]))
    """
    sizes = _output_sizes(input, output_size, 3)
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: "
                           f"{list(input.shape)}")
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError("adaptive_max_pool3d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {list(input.shape)} "
                               f"with dimension {i} being empty")
    if len(sizes) != 3:
        raise RuntimeError("adaptive_max_pool3d(): internal error: output_size.size() must be 3")
    negative = [s for s in sizes if s < 0]
    if negative:
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: "
                           f"{list(input.shape[:-3]) + list(sizes)}")
    out, indices = _apply(P.ADAPTIVE_MAX_POOL3D, input, output_size=sizes)
    return out, indices


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) input to a fixed output size.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.adaptive_max_pool3d(jaxgrad.arange(8.0).reshape(1, 2, 2, 2), 1)
    tensor([[[[7.]]]])
    """
    out = adaptive_max_pool3d_with_indices(input, output_size)
    return out if return_indices else out[0]


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`max_pool1d` with the indices, always.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.max_pool1d_with_indices(jaxgrad.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    (tensor([[3., 2.]]), tensor([[1, 2]]))
    """
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`max_pool2d` with the indices, always.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.max_pool2d_with_indices(jaxgrad.arange(4.0).reshape(1, 2, 2), 2)
    (tensor([[[3.]]]), tensor([[[3]]]))
    """
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`adaptive_max_pool1d` with the indices, always.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.adaptive_max_pool1d_with_indices(jaxgrad.tensor([[1.0, 3.0, 2.0, 0.0]]), 1)
    (tensor([[3.]]), tensor([[1]]))
    """
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`adaptive_max_pool2d` with the indices, always.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.adaptive_max_pool2d_with_indices(jaxgrad.arange(4.0).reshape(1, 2, 2), 1)
    (tensor([[[3.]]]), tensor([[[3]]]))
    """
    return adaptive_max_pool2d(input, output_size, True)


# --- max unpooling ------------------------------------------------------------------------------


def _unpool_output_size(input: Tensor, kernel: tuple, stride: tuple, padding: tuple,
                        output_size: Any) -> list[int]:
    """torch's ``_unpool_output_size``: the default size, or a checked ``output_size``."""
    n = len(kernel)
    default = [(input.shape[input.ndim - n + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(n)]
    if output_size is None:
        ret = default
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for d in range(n):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < output_size[d] < high:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                                 f"{low} and {high})")
        ret = list(output_size)
    for d in range(n):
        if ret[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={ret[d]}")
    return ret


def _check_unpool(input: Tensor, indices: Tensor, sizes: list[int], n: int) -> None:
    """The checks of torch's max_unpool2d / max_unpool3d kernels."""
    if indices.dtype.name != "int64":
        raise RuntimeError("elements in indices should be type int64 but got: "
                           f"{_scalar_type(indices)}")
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Input to max_unpooling{n}d should be a {n + 1}d or {n + 2}d Tensor, "
                           f"but got a tensor with {input.ndim} dimensions.")
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"max_unpooling{n}d_forward_out_cpu(): Expected input to have "
                               f"non-zero size for non-batch dimensions, but got "
                               f"{list(input.shape)} with dimension {i} being empty.")
    values = indices._value
    if concrete_here(values) and values.size:
        flat = np.asarray(values).reshape(-1)
        bad = flat[(flat < 0) | (flat >= math.prod(sizes))]
        if bad.size:
            raise RuntimeError(f"Found an invalid max index: {bad[0]} (output volumes are of "
                               f"size {'x'.join(map(str, sizes))})")


def _scalar_type(t: Tensor) -> str:
    return {"int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "float32": "Float", "float64": "Double"}.get(t.dtype.name, t.dtype.name)


def _max_unpool(input: Tensor, indices: Tensor, n: int, kernel_size: Any, stride: Any,
                padding: Any, output_size: Any) -> Tensor:
    kernel = _arg(kernel_size, n, None)
    stride_ = _arg(stride, n, None) if stride is not None else kernel
    pad = _arg(padding, n, None)
    sizes = _unpool_output_size(input, kernel, stride_, pad, output_size)
    if n == 1:
        out = _unpool(_shapes.unsqueeze(input, -1), _shapes.unsqueeze(indices, -1),
                      sizes + [1], stride_ + (1,), pad + (0,), 2)
        return _shapes.squeeze(out, -1)
    return _unpool(input, indices, sizes, stride_, pad, n)


def _unpool(input: Tensor, indices: Tensor, sizes: list[int], stride: tuple, padding: tuple,
            n: int) -> Tensor:
    if n == 2 and len(sizes) != 2:
        raise RuntimeError("There should be exactly two elements (height, width) in output_size, "
                           f"but got {len(sizes)} elements.")
    _check_unpool(input, indices, sizes, n)
    if n == 2:
        return _apply(P.MAX_UNPOOL2D, input, aux=(indices,), output_size=tuple(sizes))
    return _apply(P.MAX_UNPOOL3D, input, aux=(indices,), output_size=tuple(sizes),
                  stride=stride, padding=padding)


@tensor_args
def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """A partial inverse of :func:`max_pool1d`: each value placed at its index, zeros elsewhere
    (torch's 2-D unpooling of the input with a unit dim appended).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.max_unpool1d(jaxgrad.tensor([[3.0, 2.0]]), jaxgrad.tensor([[1, 2]]), 2)
    tensor([[0., 3., 2., 0.]])
    """
    return _max_unpool(input, indices, 1, kernel_size, stride, padding, output_size)


@tensor_args
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """A partial inverse of :func:`max_pool2d` (``MaxUnpool2DBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.max_unpool2d(jaxgrad.tensor([[[3.0]]]), jaxgrad.tensor([[[2]]]), 2)
    tensor([[[0., 0.],
             [3., 0.]]])
    """
    return _max_unpool(input, indices, 2, kernel_size, stride, padding, output_size)


@tensor_args
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """A partial inverse of :func:`max_pool3d` (``MaxUnpool3DBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.max_unpool3d(jaxgrad.tensor([[[[3.0]]]]), jaxgrad.tensor([[[[7]]]]), 2).sum()
    tensor(3.)
    """
    return _max_unpool(input, indices, 3, kernel_size, stride, padding, output_size)


# --- power-average pooling ----------------------------------------------------------------------


def _lp_pool(input: Tensor, norm_type: float, kernel_size: Any, stride: Any, ceil_mode: bool,
             n: int) -> Tensor:
    """torch's lp_pool{n}d, op for op: ``avg_pool(x ** p)``, sign * relu(abs), times the window
    volume, to the power 1/p (max pooling of ``abs`` for p = +-inf)."""
    max_pool = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}[n]
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):
        if norm_type > 0:
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    avg_pool = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}[n]
    if stride is not None:
        out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    volume = kernel_size if n == 1 else math.prod(_arg(kernel_size, n, None))
    return (out.sign() * relu(out.abs())).mul(volume).pow(1.0 / norm_type)


@tensor_args
def lp_pool1d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over 1-D windows: ``(sum x**p) ** (1/p)`` per window.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.lp_pool1d(jaxgrad.tensor([[3.0, 4.0]]), 2, 2)
    tensor([[5.]])
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


@tensor_args
def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over 2-D windows: ``(sum x**p) ** (1/p)`` per window.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.lp_pool2d(jaxgrad.tensor([[[3.0], [4.0]]]), 2, (2, 1))
    tensor([[[5.]]])
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


@tensor_args
def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over 3-D windows: ``(sum x**p) ** (1/p)`` per window.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.lp_pool3d(jaxgrad.tensor([[[[3.0]], [[4.0]]]]), 2, (2, 1, 1))
    tensor([[[[5.]]]])
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


# --- fractional max pooling ---------------------------------------------------------------------


def _fractional_max_pool(input: Tensor, kernel_size: Any, output_size: Any, output_ratio: Any,
                         samples: Tensor | None, n: int) -> tuple[Tensor, Tensor]:
    name = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if isinstance(output_ratio, (list, tuple)) and len(output_ratio) > n:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             "of Ints.")
        ratio = output_ratio if isinstance(output_ratio, (list, tuple)) else [output_ratio] * n
        if n == 2 and not isinstance(output_ratio, (list, tuple)):
            raise TypeError(f"object of type '{type(output_ratio).__name__}' has no len()")
        output_size = [int(input.shape[input.ndim - n + d] * ratio[d]) for d in range(n)]
    kernel = _arg(kernel_size, n, f"{name}: kernel_size must either be a single Int or tuple "
                                  "of Ints")
    sizes = _arg(output_size, n, f"{name}: output_size must either be a single Int or tuple "
                                 "of Ints")
    fn = "fractional_max_pool2d()" if n == 2 else "fractional_max_pool3d_out()"
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{fn}: Expected {n + 1}D or {n + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"{fn}: Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(input.shape)} with dimension {i} "
                               "being empty.")
    words = ("height", "width") if n == 2 else ("time", "height", "width")
    for d, word in enumerate(words):
        size = input.shape[input.ndim - n + d]
        if sizes[d] + kernel[d] - 1 > size - (n == 3):  # (torch's 3-D check is strict)
            raise RuntimeError(f"{fn}: pool {word} {kernel[d]} too large relative to input "
                               f"{word} {size}")
    if samples is None:
        batch = 1 if input.ndim == n + 1 else input.shape[0]
        samples = _random.rand(batch, input.shape[input.ndim - n - 1], n, dtype=input.dtype)
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError("Expect _random_samples to be 3d tensor.")
    if samples.shape[0] < (input.shape[0] if input.ndim == n + 2 else 1):
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != input.shape[input.ndim - n - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != n:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got "
                           f"{samples.shape[2]}.")
    out, indices = _apply(P.FRACTIONAL_MAX_POOL[n], input, aux=(samples,), kernel_size=kernel,
                          output_size=sizes)
    return out, indices


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None
                                       ) -> tuple[Tensor, Tensor]:
    """Fractional max pooling over 2-D windows at pseudo-random positions drawn from
    ``_random_samples`` (N, C, 2), with each maximum's flat position.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.fractional_max_pool2d_with_indices(jaxgrad.arange(16.0).reshape(1, 4, 4), 2,
    ...     output_size=1, _random_samples=jaxgrad.full((1, 1, 2), 0.5))
    (tensor([[[15.]]]), tensor([[[15]]]))
    """
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples,
                                2)


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """Fractional max pooling over 2-D windows (``FractionalMaxPool2DBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.fractional_max_pool2d(jaxgrad.arange(16.0).reshape(1, 4, 4), 2, output_size=2,
    ...                         _random_samples=jaxgrad.full((1, 1, 2), 0.5))
    tensor([[[ 5.,  7.],
             [13., 15.]]])
    """
    out = _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None
                                       ) -> tuple[Tensor, Tensor]:
    """Fractional max pooling over 3-D windows with each maximum's flat position.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.fractional_max_pool3d_with_indices(jaxgrad.arange(27.0).reshape(1, 3, 3, 3), 2,
    ...     output_size=1, _random_samples=jaxgrad.full((1, 1, 3), 0.5))
    (tensor([[[[26.]]]]), tensor([[[[26]]]]))
    """
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples,
                                3)


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """Fractional max pooling over 3-D windows (``FractionalMaxPool3DBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.fractional_max_pool3d(jaxgrad.arange(27.0).reshape(1, 3, 3, 3), 2, output_size=1,
    ...                         _random_samples=jaxgrad.full((1, 1, 3), 0.5))
    tensor([[[[26.]]]])
    """
    out = _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return out if return_indices else out[0]
