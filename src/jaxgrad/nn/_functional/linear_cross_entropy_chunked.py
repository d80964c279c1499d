"""The chunked path of ``linear_cross_entropy`` (torch 2.13's ``torch_nn`` custom ops).

The batch is processed ``batch_chunk_size`` rows at a time, so the ``(N, C)`` logits are never
whole. As torch's ops, the loss is accumulated into one tensor in place (``add_``/``sub_`` per
chunk for the scalar reductions, a ``copy_`` into a slice per chunk for ``reduction='none'``), so
its ``_version`` counts the chunks. The scalar reductions compute their gradients in the forward
and their backward scales them by the upstream gradient, consuming them unless
``allow_retain_graph``; ``reduction='none'`` recomputes them in its backward. Both are
``autograd.Function``s named after torch's generated classes, so ``grad_fn`` prints as torch's.
"""

from __future__ import annotations

import math

from ..._autograd.function import Function
from ..._core import dtypes as _dtypes
from ..._core.dtypes import dtype as _dtype
from ..._core.grad_mode import no_grad
from ..._core.tensor import Tensor
from ..._functions import creation as _creation
from ..._functions import indexing, joins, pointwise, scatter

_HALF = (_dtypes.float16, _dtypes.bfloat16)
_TWICE_MESSAGE = (
    "linear_cross_entropy chunked backward called twice; retain_graph=True / "
    "double backward are not supported."
)


def _layout(dtype: _dtype, acc_dtype: _dtype, acc_policy: str) -> tuple[_dtype, _dtype, _dtype]:
    """(output, logits, per-row weight) dtypes of torch's ``_ChunkContext.build``."""
    if dtype != acc_dtype and not (dtype in _HALF and acc_dtype == _dtypes.float32):
        raise RuntimeError(
            "linear_cross_entropy supports float32 acc_dtype with float16/bfloat16 inputs, but "
            f"got {acc_dtype} acc_dtype and {dtype} inputs."
        )
    if dtype == acc_dtype:
        return dtype, dtype, dtype
    memory_like = acc_policy in {"balanced", "compact"}
    output_dtype = acc_dtype if dtype == _dtypes.float16 else dtype
    logits_dtype = dtype if dtype == _dtypes.float16 and memory_like else acc_dtype
    return output_dtype, logits_dtype, acc_dtype


def _check_matmul_dtypes(dtype: _dtype, logits_dtype: _dtype, weight_dtype: _dtype) -> None:
    """torch's mm error where the chunk's logits are computed in the input's dtype (the linear
    weight is cast only when the logits are in a wider accumulation dtype)."""
    if logits_dtype == dtype and weight_dtype != dtype:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{_dtypes.c_type_name(dtype)} != {_dtypes.c_type_name(weight_dtype)}"
        )


def _row_weights(
    target: Tensor,
    weight: Tensor | None,
    ignore_index: int,
    num_classes: int,
    reduction: str,
    row_dtype: _dtype,
    loss_grad_output: Tensor | None,
) -> tuple[Tensor, Tensor]:
    """The target with ignored rows pointed at class 0, and each row's signed weight:
    ``-w[t] / sum(w[t])`` for 'mean', ``-w[t]`` for 'sum', ``w[t]`` for 'none' (times the
    upstream gradient, negated, in its backward); 0 on ignored rows."""
    mask = pointwise.eq(target, ignore_index)
    if ignore_index < 0 or ignore_index >= num_classes:
        target = indexing.where(mask, 0, target)
    if weight is None:
        rows = pointwise.logical_not(mask).to(row_dtype)
    else:
        rows = indexing.where(mask, 0, scatter.index_select(weight, 0, target).to(row_dtype))
    if reduction == "mean":
        d = rows.sum()
        rows = pointwise.div(rows, indexing.where(pointwise.eq(d, 0), math.nan, pointwise.neg(d)))
    elif reduction == "sum":
        rows = pointwise.neg(rows)
    elif loss_grad_output is not None:
        rows = pointwise.mul(pointwise.neg(rows), loss_grad_output.to(rows.dtype))
    return target, rows


def _shifted_logits(
    input: Tensor, linear_weight: Tensor, linear_bias: Tensor | None, logits_dtype: _dtype
) -> Tensor:
    logits = input.to(logits_dtype).mm(linear_weight.to(logits_dtype).t())
    if linear_bias is not None:
        logits = pointwise.add(logits, linear_bias.to(logits_dtype))
    return pointwise.sub(logits, logits.amax(1, keepdim=True))


def _chunks(num_batches: int, batch_chunk_size: int):
    for start in range(0, num_batches, batch_chunk_size):
        yield start, min(batch_chunk_size, num_batches - start)


def _per_sample_loss(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    linear_bias: Tensor | None,
    weight: Tensor | None,
    ignore_index: int,
    batch_chunk_size: int,
    acc_policy: str,
    acc_dtype: _dtype,
) -> Tensor:
    """reduction='none' forward: each row's loss, copied chunk by chunk into one tensor."""
    dtype = input.dtype
    _, logits_dtype, row_dtype = _layout(dtype, acc_dtype, acc_policy)
    num_batches, num_classes = input.shape[0], linear_weight.shape[0]
    target, rows = _row_weights(target, weight, ignore_index, num_classes, "none", row_dtype, None)
    out = _creation.empty(num_batches, dtype=dtype)
    for start, size in _chunks(num_batches, batch_chunk_size):
        _check_matmul_dtypes(dtype, logits_dtype, linear_weight.dtype)
        logits = _shifted_logits(
            input.narrow(0, start, size), linear_weight, linear_bias, logits_dtype
        )
        target_chunk = target.narrow(0, start, size)
        at_target = logits.gather(1, target_chunk.unsqueeze(1)).squeeze(1)
        denom = pointwise.exp(logits).sum(1, dtype=acc_dtype)
        loss = pointwise.sub(pointwise.log(denom), at_target.to(denom.dtype))
        loss = pointwise.mul(loss, rows.narrow(0, start, size).to(denom.dtype))
        out.narrow(0, start, size).copy_(loss)
    return out


def _loss_and_grads(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    linear_bias: Tensor | None,
    weight: Tensor | None,
    reduction: str,
    ignore_index: int,
    batch_chunk_size: int,
    acc_policy: str,
    acc_dtype: _dtype,
    compute_input_grad: bool,
    compute_linear_weight_grad: bool,
    compute_linear_bias_grad: bool,
    loss_grad_output: Tensor | None = None,
) -> tuple[Tensor, ...]:
    """torch's ``_linear_cross_entropy_batch_chunked_accumulator`` grad loop: the loss (a 0-d
    tensor that each chunk updates with ``add_`` and ``sub_``) and the gradients of input,
    linear_weight and linear_bias (None where not asked for)."""
    dtype = input.dtype
    output_dtype, logits_dtype, row_dtype = _layout(dtype, acc_dtype, acc_policy)
    num_batches, num_classes = input.shape[0], linear_weight.shape[0]
    target, rows = _row_weights(
        target, weight, ignore_index, num_classes, reduction, row_dtype, loss_grad_output
    )
    output = _creation.zeros((), dtype=output_dtype)
    if reduction == "mean" and num_batches == 0:
        output.fill_(math.nan)
    compute_grads = compute_input_grad or compute_linear_weight_grad or compute_linear_bias_grad
    input_grads = []
    grad_weight = _creation.zeros(tuple(linear_weight.shape), dtype=logits_dtype)
    grad_bias = _creation.zeros(tuple(linear_weight.shape[:-1]), dtype=logits_dtype)
    weight_cast = linear_weight.to(logits_dtype)
    for start, size in _chunks(num_batches, batch_chunk_size):
        _check_matmul_dtypes(dtype, logits_dtype, linear_weight.dtype)
        input_chunk = input.narrow(0, start, size).to(logits_dtype)
        target_chunk = target.narrow(0, start, size)
        row_chunk = rows.narrow(0, start, size)
        logits = _shifted_logits(input_chunk, weight_cast, linear_bias, logits_dtype)
        at_target = logits.gather(1, target_chunk.unsqueeze(1)).squeeze(1)
        output.add_(row_chunk.dot(at_target.to(row_chunk.dtype)))
        exp_logits = pointwise.exp(logits)
        denom = exp_logits.sum(1, dtype=acc_dtype)
        output.sub_(row_chunk.to(denom.dtype).dot(pointwise.log(denom)))
        if not compute_grads:
            continue
        # softmax times each row's weight; the gradient of the logits is onehot * w - this
        scaled = pointwise.mul(
            exp_logits, pointwise.div(row_chunk, denom).to(logits_dtype).unsqueeze(1)
        )
        row_weights = row_chunk.to(logits_dtype)
        if compute_linear_bias_grad:
            grad_bias = pointwise.sub(grad_bias, scaled.sum(0))
            grad_bias.index_add_(0, target_chunk, row_weights)
        if compute_input_grad:
            picked = pointwise.mul(
                scatter.index_select(weight_cast, 0, target_chunk), row_weights.unsqueeze(1)
            )
            input_grads.append(pointwise.sub(picked, scaled.mm(weight_cast)))
        if compute_linear_weight_grad:
            grad_weight = pointwise.sub(grad_weight, scaled.t().mm(input_chunk))
            grad_weight.index_add_(
                0, target_chunk, pointwise.mul(input_chunk, row_weights.unsqueeze(1))
            )
    grad_input = (
        joins.cat(input_grads).to(dtype)
        if input_grads
        else _creation.zeros(tuple(input.shape), dtype=dtype)
    )
    loss = output
    if output_dtype != dtype:  # torch's _to_copy inside a custom op: empty, then copy_
        loss = _creation.empty((), dtype=dtype)
        loss.copy_(output)
    return (
        loss,
        grad_input if compute_input_grad else None,
        grad_weight.to(dtype) if compute_linear_weight_grad else None,
        grad_bias.to(dtype) if compute_linear_bias_grad else None,
    )


class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default(Function):
    """torch's ``torch_nn::_linear_cross_entropy_batch_chunked`` (reductions 'mean', 'sum'):
    the forward computes the loss and the gradients, the backward scales them."""

    @staticmethod
    def forward(
        ctx,
        input,
        linear_weight,
        target,
        linear_bias,
        weight,
        reduction,
        ignore_index,
        batch_chunk_size,
        acc_policy,
        acc_dtype,
        allow_retain_graph,
        compute_input_grad,
        compute_linear_weight_grad,
        compute_linear_bias_grad,
    ):
        """The loss; the gradients kept on ``ctx``."""
        loss, ctx._gi, ctx._gw, ctx._gb = _loss_and_grads(
            input,
            linear_weight,
            target,
            linear_bias,
            weight,
            reduction,
            ignore_index,
            batch_chunk_size,
            acc_policy,
            acc_dtype,
            compute_input_grad,
            compute_linear_weight_grad,
            compute_linear_bias_grad,
        )
        ctx.allow_retain_graph = allow_retain_graph
        ctx.compute_input_grad = compute_input_grad
        ctx.compute_linear_weight_grad = compute_linear_weight_grad
        ctx.compute_linear_bias_grad = compute_linear_bias_grad
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        """The stored gradients times ``grad_output`` (in place, once, unless retained)."""
        result = [None] * 14
        for index, flag, name in (
            (0, "compute_input_grad", "_gi"),
            (1, "compute_linear_weight_grad", "_gw"),
            (3, "compute_linear_bias_grad", "_gb"),
        ):
            if not getattr(ctx, flag):
                continue
            if ctx.allow_retain_graph:
                result[index] = pointwise.mul(getattr(ctx, name), grad_output)
                continue
            grad = getattr(ctx, name)
            setattr(ctx, name, None)
            if grad is None:
                raise RuntimeError(_TWICE_MESSAGE)
            result[index] = grad.mul_(grad_output)
        return tuple(result)


class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default(
    Function
):
    """torch's ``torch_nn::_linear_cross_entropy_batch_chunked_no_reduction``: the per-sample
    loss; the backward recomputes the chunked gradients with the upstream gradient folded in."""

    @staticmethod
    def forward(
        ctx,
        input,
        linear_weight,
        target,
        linear_bias,
        weight,
        ignore_index,
        batch_chunk_size,
        acc_policy,
        acc_dtype,
    ):
        """The loss of each row; the inputs saved (detached) for the backward."""
        ctx.save_for_backward(
            input.detach(),
            linear_weight.detach(),
            target,
            None if linear_bias is None else linear_bias.detach(),
            None if weight is None else weight.detach(),
        )
        ctx._ignore_index = ignore_index
        ctx._batch_chunk_size = batch_chunk_size
        ctx._acc_policy = acc_policy
        ctx._acc_dtype = acc_dtype
        return _per_sample_loss(
            input,
            linear_weight,
            target,
            linear_bias,
            weight,
            ignore_index,
            batch_chunk_size,
            acc_policy,
            acc_dtype,
        )

    @staticmethod
    def backward(ctx, grad_output):
        """The chunked gradients of ``sum(grad_output * loss)``."""
        input, linear_weight, target, linear_bias, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        compute_bias = linear_bias is not None and needs[3]
        result = [None] * 9
        if not (needs[0] or needs[1] or compute_bias):
            return tuple(result)
        with no_grad():
            _, grad_input, grad_weight, grad_bias = _loss_and_grads(
                input,
                linear_weight,
                target,
                linear_bias,
                weight,
                "none",
                ctx._ignore_index,
                ctx._batch_chunk_size,
                ctx._acc_policy,
                ctx._acc_dtype,
                needs[0],
                needs[1],
                compute_bias,
                loss_grad_output=grad_output,
            )
        result[0], result[1], result[3] = grad_input, grad_weight, grad_bias
        return tuple(result)


# short names for the callers (the classes keep torch's generated names: grad_fn prints them)
ScalarReductionOp = GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default
NoReductionOp = (
    GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default
)
