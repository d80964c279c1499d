"""``linear_cross_entropy``: ``cross_entropy(linear(input, linear_weight), target)``, with torch
2.13's checks, its K-dimensional form and its opt-in chunked path (``options``)."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

from ..._core import dtypes as _dtypes
from ..._core.grad_mode import is_grad_enabled
from ..._core.tensor import Tensor
from .convolution import linear
from .linear_cross_entropy_chunked import NoReductionOp, ScalarReductionOp
from .losses import cross_entropy

if TYPE_CHECKING:
    from ..modules.linear_cross_entropy_options import LinearCrossEntropyOptions


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options: LinearCrossEntropyOptions | None = None,
) -> Tensor:
    """Cross entropy of ``linear(input, linear_weight, linear_bias)`` against ``target``.

    ``linear_weight`` is ``(C, in_features)`` or ``(C, d_1, ..., d_K, in_features)`` for a
    K-dimensional loss; ``ignore_index=None`` means -100 for class indices. With ``options`` (a
    :class:`jaxgrad.nn.LinearCrossEntropyOptions`) the batch is processed in chunks, as torch's
    chunked custom ops (no double backward; unsupported settings warn and take the plain path).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.linear_cross_entropy(jaxgrad.ones(1, 2), jaxgrad.zeros(3, 2), jaxgrad.tensor([0]))
    tensor(1.0986)
    """
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}"
        )
    batch_shape = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively"
        )
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(
            f"expected linear_bias shape {(num_classes, *out_features)}, got "
            f"{tuple(linear_bias.shape)}"
        )
    if out_features and not batch_shape:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}"
        )
    logits_shape = (*batch_shape, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    chunkable = (
        reduction in {"mean", "sum", "none"}
        and label_smoothing == 0.0
        and target.dtype == _dtypes.int64
        and not out_features
    )
    if options is not None and not chunkable:
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
            "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features "
            f"== (). Got reduction={reduction!r}, label_smoothing={label_smoothing}, "
            f"target.dtype={target.dtype}, out_features={out_features}, tracing=False, "
            "linear_bias.shape="
            f"{tuple(linear_bias.shape) if linear_bias is not None else None}.",
            stacklevel=2,
        )
    if options is not None and chunkable:
        return _chunked(
            input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options
        )
    if out_features:
        linear_weight = linear_weight.reshape(
            (math.prod(out_features, start=num_classes), in_features)
        )
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(
        logits,
        target,
        weight=weight,
        reduction=reduction,
        ignore_index=ignore_index,
        label_smoothing=label_smoothing,
    )


def _chunked(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    linear_bias: Tensor | None,
    weight: Tensor | None,
    reduction: str,
    ignore_index: int,
    options: LinearCrossEntropyOptions,
) -> Tensor:
    """torch's dispatch to its chunked custom ops (an unbatched input is a batch of one)."""
    batched = input.dim() == 2
    if not batched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    options = options._adjust(
        num_batches=input.shape[0],
        in_features=input.shape[-1],
        num_classes=linear_weight.shape[0],
        dtype=input.dtype,
        device=input.device,
    )
    if reduction == "none":
        result = NoReductionOp.apply(
            input,
            linear_weight,
            target,
            linear_bias,
            weight,
            ignore_index,
            options.batch_chunk_size,
            options.acc_policy,
            options.acc_dtype,
        )
    else:
        grad = is_grad_enabled()
        result = ScalarReductionOp.apply(
            input,
            linear_weight,
            target,
            linear_bias,
            weight,
            reduction,
            ignore_index,
            options.batch_chunk_size,
            options.acc_policy,
            options.acc_dtype,
            options.allow_retain_graph,
            input.requires_grad and grad,
            linear_weight.requires_grad and grad,
            linear_bias is not None and linear_bias.requires_grad and grad,
        )
    return result if batched else result.squeeze(0)
