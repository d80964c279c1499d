"""``pad`` (torch's ``nn.functional.pad``) with each mode's graph: ``constant`` through
``constant_pad_nd``, ``reflect``/``replicate`` through the ``reflection_pad{1,2,3}d`` /
``replication_pad{1,2,3}d`` rows with their kernels' checks, ``circular`` as torch's slice copies.
It lives below the public namespaces because torch's Python-level ``stft`` pads with it too.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import numpy as np

from .._core.tensor import Tensor
from .._engine.dispatch import apply as _apply
from .._ops import nn as N
from . import pointwise
from . import shapes as _shapes
from .opgen import tensor_args

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


_PAD_SUPPORT = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)


@tensor_args
def pad(
    input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
) -> Tensor:
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
            raise TypeError(
                "pad(): argument 'pad' (position 2) must be tuple of ints, but "
                f"found element of type {type(p).__name__} at pos {i}"
            )
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input "
            f"dimension but got padding length {len(pad)} and input of dimension "
            f"{input.ndim}"
        )
    if mode == "constant":
        return constant_pad(input, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    n = len(pad) // 2
    if n not in (1, 2, 3) or input.ndim not in (n + 1, n + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D "
            f"input tensor.\n{_PAD_SUPPORT}"
        )
    if mode == "circular":
        return _pad_circular(input, pad)
    _check_pad_input(input, pad, mode)
    row = (N.REFLECTION_PAD if mode == "reflect" else N.REPLICATION_PAD)[n]
    return _apply(row, input, padding=pad)


def constant_pad(input: Tensor, pad: tuple[int, ...], value: float) -> Tensor:
    """torch's constant_pad_nd: negative pads narrow first, so their errors are narrow's.

    >>> import jaxgrad
    >>> from jaxgrad._functions.padding import constant_pad
    >>> constant_pad(jaxgrad.ones(2), (1, -1), 0.0)
    tensor([0., 1.])
    """
    sizes = list(input.shape)
    for dim in range(input.ndim - len(pad) // 2, input.ndim):
        k = 2 * (input.ndim - dim - 1)
        for p in pad[k : k + 2]:
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
        raise RuntimeError(
            f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with possibly 0 "
            "batch size and other non-zero dimensions for input, but got: "
            f"{shape}"
        )
    dims = range(input.ndim - 1, input.ndim - 1 - n, -1)  # W, H, D
    sizes = [shape[d] for d in dims]
    outs = [shape[d] + pad[2 * i] + pad[2 * i + 1] for i, d in enumerate(dims)]
    if mode == "reflect":
        for i, d in enumerate(dims):
            if pad[2 * i] >= shape[d] or pad[2 * i + 1] >= shape[d]:
                raise RuntimeError(
                    f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                    f"input dimension, but got: padding ({pad[2 * i]}, {pad[2 * i + 1]}) at "
                    f"dimension {d} of input {shape}"
                )
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
        out_shape = shape[: input.ndim - n] + outs[::-1]
        if mode == "reflect" and n == 2:  # torch's 2-D reflection kernel allocates unchecked
            raise RuntimeError("numel: integer multiplication overflow")
        negative = next(o for o in out_shape if o < 0)
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {negative}: {out_shape}"
        )
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
        out_slice = _shapes.narrow_slice(
            out_slice, dim, builtins.max(lo, 0), out_shape[dim] - builtins.max(hi, 0), 1
        )
        in_slice = _shapes.narrow_slice(
            in_slice, dim, builtins.max(-lo, 0), input.shape[dim] - builtins.max(-hi, 0), 1
        )
    pointwise.copy_(out_slice, in_slice)
    for i in range(n):
        dim = n - i + lead - 1
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            end = out_shape[dim] - builtins.max(hi, 0)
            pointwise.copy_(
                _shapes.narrow_slice(out, dim, 0, lo, 1),
                _shapes.narrow_slice(out, dim, end - lo, end, 1),
            )
        if hi > 0:
            start = builtins.max(lo, 0)
            pointwise.copy_(
                _shapes.narrow_slice(out, dim, out_shape[dim] - hi, out_shape[dim], 1),
                _shapes.narrow_slice(out, dim, start, start + hi, 1),
            )
    return out
