"""Losses, with torch's reductions (``reduction=``, the legacy ``size_average``/``reduce``).
"""

from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from ..._core import dtypes as _dtypes
from ..._core.grad_mode import is_grad_enabled, no_grad
from ..._core.tensor import Tensor
from ..._core.tensor_repr import concrete_here
from ..._engine.dispatch import apply as _apply
from ..._engine.dispatch import apply_inplace as _apply_inplace
from ..._functions import arguments as _arguments
from ..._functions import creation as _creation
from ..._functions import indexing, pointwise, queries, reductions
from ..._functions import shapes as _shapes
from ..._functions.opgen import tensor_args
from ..._ops import elementwise as E
from ..._ops import nn as N
from ..._ops import nn_ctc as NC
from ..._ops import nn_margin as NM
from ..._ops import scalar_overloads as SO
from .activations import logsigmoid
from .normalization import pairwise_distance

_REDUCTIONS = {"none": N.NONE, "mean": N.MEAN, "sum": N.SUM}


def _reduction(reduction: str, size_average: bool | None = None,
               reduce: bool | None = None) -> int:
    """torch's reduction enum, honouring the legacy size_average/reduce flags."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else "mean" if size_average else "sum"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _warn_target_size(input: Tensor, target: Tensor) -> None:
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", stacklevel=4)


def _broadcast_pair(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """torch.broadcast_tensors: only a tensor whose shape changes gets an ``expand``; shapes
    that do not broadcast raise torch's "The size of tensor a ... must match" error."""
    shape = _arguments.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    return tuple(t if tuple(t.shape) == shape else _shapes.expand(t, shape) for t in (a, b))


def _weighted_reduce(errors: Tensor, weight: Tensor, input: Tensor, reduction: int) -> Tensor:
    """The weighted branch of torch's mse_loss/l1_loss."""
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    weighted = pointwise.mul(errors, weight)
    if reduction == N.NONE:
        return weighted
    total = reductions.sum(weighted)
    return total if reduction == N.SUM else pointwise.div(total, reductions.sum(weight))


@tensor_args
def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """Mean squared error (``reduction`` 'mean', 'sum' or 'none').

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.mse_loss(jaxgrad.tensor([1.0, 3.0]), jaxgrad.tensor([0.0, 0.0]))
    tensor(5.)
    """
    _warn_target_size(input, target)
    red = _reduction(reduction, size_average, reduce)
    expanded_input, expanded_target = _broadcast_pair(input, target)
    if weight is not None:
        errors = pointwise.pow(pointwise.sub(expanded_input, expanded_target), 2)
        return _weighted_reduce(errors, weight, input, red)
    return _apply(N.MSE_LOSS, expanded_input, expanded_target, reduction=red)


def _reduce(loss: Tensor, reduction: int) -> Tensor:
    """torch's apply_loss_reduction."""
    if reduction == N.MEAN:
        return reductions.mean(loss)
    return reductions.sum(loss) if reduction == N.SUM else loss


@tensor_args
def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """Mean absolute error; torch composes it as ``(input - target).abs()`` then the reduction.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.l1_loss(jaxgrad.tensor([1.0, -3.0]), jaxgrad.tensor([0.0, 0.0]))
    tensor(2.)
    """
    _warn_target_size(input, target)
    red = _reduction(reduction, size_average, reduce)
    expanded_input, expanded_target = _broadcast_pair(input, target)
    errors = pointwise.abs(pointwise.sub(expanded_input, expanded_target))
    if weight is not None:
        return _weighted_reduce(errors, weight, input, red)
    return _reduce(errors, red)


@tensor_args
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """Squared error ``0.5 * x**2 / beta`` where ``|x| < beta``, ``|x| - 0.5 * beta`` elsewhere
    (``x = input - target``); ``beta=0`` is torch's ``l1_loss``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.smooth_l1_loss(jaxgrad.tensor([0.5, 3.0]), jaxgrad.zeros(2))
    tensor(1.3125)
    """
    _warn_target_size(input, target)
    red = _reduction(reduction, size_average, reduce)
    expanded_input, expanded_target = _broadcast_pair(input, target)
    if beta == 0.0:
        return _reduce(pointwise.abs(pointwise.sub(expanded_input, expanded_target)), red)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _apply(N.SMOOTH_L1_LOSS, expanded_input, expanded_target, reduction=red,
                  beta=float(beta))


@tensor_args
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """Squared error ``0.5 * x**2`` where ``|x| < delta``, ``delta * (|x| - 0.5 * delta)``
    elsewhere; an optional ``weight`` scales the elementwise losses before the reduction.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.huber_loss(jaxgrad.tensor([0.5, 3.0]), jaxgrad.zeros(2), delta=2.0)
    tensor(2.0625)
    """
    _warn_target_size(input, target)
    expanded_input, expanded_target = _broadcast_pair(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return _apply(N.HUBER_LOSS, expanded_input, expanded_target,
                      reduction=_reduction(reduction), delta=float(delta))
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = pointwise.mul(_apply(N.HUBER_LOSS, expanded_input, expanded_target, reduction=N.NONE,
                                delta=float(delta)), weight)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return reductions.sum(loss)
    if reduction == "mean":
        return reductions.mean(loss)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


@tensor_args
def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None,
           reduce: bool | None = None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence of log-probabilities ``input`` from ``target``
    (probabilities, or log-probabilities with ``log_target``): torch's composition
    ``xlogy(t, t) - t * input`` (``exp(t) * (t - input)``) and the reduction ('batchmean'
    divides the sum by the batch size; 'mean' warns that it divides by every element).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.kl_div(jaxgrad.tensor([[-1.0, -1.0]]), jaxgrad.tensor([[0.5, 0.5]]),
    ...          reduction="batchmean")
    tensor(0.3069)
    """
    if size_average is not None or reduce is not None:
        red = _reduction(reduction, size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the "
                "support size.'batchmean' divides only by the batch size, and aligns with the KL "
                "div math definition.'mean' will be changed to behave the same as 'batchmean' in "
                "the next major release.", stacklevel=3)
        red = _reduction("sum" if reduction == "batchmean" else reduction)
    reduced = kl_div_reduced(input, target, red, log_target)
    if reduction == "batchmean" and input.ndim != 0:
        reduced = pointwise.div(reduced, input.shape[0])
    return reduced


def kl_div_reduced(input: Tensor, target: Tensor, reduction: int, log_target: bool) -> Tensor:
    """torch's aten ``kl_div`` (an enum ``reduction``): the composition and the reduction."""
    if log_target:
        loss = pointwise.mul(pointwise.exp(target), pointwise.sub(target, input))
    else:
        loss = pointwise.sub(_apply(E.XLOGY, target, target), pointwise.mul(target, input))
    return _reduce(loss, reduction)


def _check_targets(target: Tensor, n_classes: int, ignore_index: int) -> None:
    """torch's kernel check that every class index lies in [0, n_classes) (on concrete values;
    a traced target, under ``jaxgrad.func`` or ``jax.jit``, cannot be read, nor one spanning
    processes that this process does not hold)."""
    if not concrete_here(target._value):
        return
    values = np.asarray(target._value)
    bad = values[((values < 0) | (values >= n_classes)) & (values != ignore_index)]
    if bad.size:
        raise IndexError(f"Target {int(bad.flat[0])} is out of bounds.")


def _check_nll_target_dtype(target: Tensor) -> None:
    """The target check of torch's nll_loss/nll_loss2d kernels (Long or Byte class indices)."""
    if target.dtype.name not in ("int64", "uint8"):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{_dtypes.scalar_type_name(target.dtype)}")


def _check_weight_grad(weight: Tensor | None, kernel: str) -> None:
    """autograd's check, before the kernel's own: nll_loss has no gradient for ``weight``."""
    if weight is not None and weight.requires_grad and is_grad_enabled():
        raise RuntimeError(f"The function '{kernel}' is not differentiable with respect to "
                           "argument 'weight'. This input cannot have requires_grad True.")


def _check_weight_dtype(input: Tensor, weight: Tensor | None) -> None:
    """The class-weight kernels' check (nll_loss, nll_loss2d, multi_margin_loss): ``weight``
    read in the input's dtype, before any target is."""
    if weight is not None:
        _dtypes.check_scalar_type(weight.dtype, input.dtype)


def _nll_loss(input: Tensor, target: Tensor, weight: Tensor | None, static: dict) -> tuple:
    """torch's nll_loss_forward: its meta checks, then the kernel's bounds check."""
    _check_weight_grad(weight, "nll_loss_forward")
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    _check_nll_target_dtype(target)
    n_classes = input.shape[-1]
    if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes "
                           f"or no classes but got weight tensor of shape: {list(weight.shape)}")
    _check_weight_dtype(input, weight)
    _check_targets(target, n_classes, static["ignore_index"])
    return _apply(N.NLL_LOSS, input, aux=(target, weight), **static)


def _nll_loss2d(input: Tensor, target: Tensor, weight: Tensor | None, static: dict) -> tuple:
    """torch's nll_loss2d_forward: check_inputs_nll_loss2d, then the kernel (Long targets only,
    in bounds)."""
    _check_weight_grad(weight, "nll_loss2d_forward")
    if target.ndim != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {target.ndim}")
    _check_nll_target_dtype(target)
    if weight is not None and weight.numel() != input.shape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if (input.shape[0], *input.shape[2:]) != tuple(target.shape):
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                           f"{list(target.shape)}")
    _check_weight_dtype(input, weight)
    _dtypes.check_scalar_type(target.dtype, _dtypes.int64)
    _check_targets(target, input.shape[1], static["ignore_index"])
    return _apply(N.NLL_LOSS2D, input, aux=(target, weight), **static)


def _nll_loss_nd(input: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                 ignore_index: int) -> tuple[Tensor, Tensor]:
    """torch's nll_loss_nd: nll_loss for 1-2 dims, nll_loss2d for 4, folded to 4 otherwise.
    Returns the loss and the row's ``total_weight`` output (the summed class weights of the
    targets not ignored)."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0]}).")
    static = {"reduction": reduction, "ignore_index": ignore_index}
    if input.ndim <= 2:
        return _nll_loss(input, target, weight, static)
    if input.ndim == 4:
        return _nll_loss2d(input, target, weight, static)
    n, c = input.shape[:2]
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {list((n, *input.shape[2:]))}, got "
                           f"{list(target.shape)}")
    folded = _shapes.view(_shapes.contiguous(input), (n, c, 1, -1))
    folded_target = _shapes.view(_shapes.contiguous(target), (n, 1, -1))
    out, total_weight = _nll_loss2d(folded, folded_target, weight, static)
    return (out if reduction != N.NONE else _shapes.view(out, (n, *input.shape[2:]))), total_weight


@tensor_args(name="nll_loss_nd")
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: bool | None = None, ignore_index: int = -100,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of class indices ``target`` under log-probabilities ``input``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.nll_loss(jaxgrad.tensor([[-1.0, -2.0]]), jaxgrad.tensor([1]))
    tensor(2.)
    """
    return _nll_loss_nd(input, target, weight, _reduction(reduction, size_average, reduce),
                        ignore_index)[0]


def _class_weight_view(weight: Tensor, input: Tensor, class_dim: int) -> Tensor:
    shape = [1] * input.ndim
    shape[class_dim] = weight.shape[0]
    return _shapes.view(weight, tuple(shape))


def _label_smoothed(log_probs: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                    ignore_index: int, label_smoothing: float, class_dim: int) -> Tensor:
    """torch's cross_entropy_loss_label_smoothing, node for node."""
    n_classes = log_probs.shape[class_dim]
    nll, total_weight = _nll_loss_nd(log_probs, target, weight, reduction, ignore_index)
    ignore = target._value == ignore_index
    weighted = log_probs if weight is None else pointwise.mul(
        log_probs, _class_weight_view(weight, log_probs, class_dim))
    smooth = pointwise.neg(reductions.sum(weighted, class_dim))
    _apply_inplace(E.MASKED_FILL, smooth, aux=(ignore, 0.0))
    if reduction == N.MEAN:
        # torch divides by the summed class weights of the targets not ignored, or without
        # ``weight`` by their count (an int64 tensor): the nll row's ``total_weight`` output
        denominator = total_weight if weight is not None else total_weight.long()
        ret = pointwise.div(reductions.sum(smooth), denominator)
    else:
        ret = reductions.sum(smooth) if reduction == N.SUM else smooth
    return pointwise.add(pointwise.with_scalar(SO.MUL_SCALAR, nll, 1 - label_smoothing),
                         pointwise.with_scalar(SO.MUL_SCALAR, ret, label_smoothing / n_classes))


def _check_label_smoothing(label_smoothing: float) -> None:
    """torch checks only a positive label_smoothing, and prints it as C++ streams a double."""
    if label_smoothing > 1.0:
        raise RuntimeError("label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing:g}")


def _cross_entropy_probabilities(log_probs: Tensor, target: Tensor, weight: Tensor | None,
                                 reduction: int, label_smoothing: float,
                                 class_dim: int) -> Tensor:
    """torch's cross_entropy_loss_prob_target."""
    if not target.is_floating_point():
        raise RuntimeError("Expected floating point type for target with class probabilities, "
                           f"got {_dtypes.scalar_type_name(target.dtype)}")
    n_classes = log_probs.shape[class_dim]
    if label_smoothing > 0:
        _check_label_smoothing(label_smoothing)
        target = pointwise.with_scalar(
            SO.ADD_SCALAR, pointwise.with_scalar(SO.MUL_SCALAR, target, 1 - label_smoothing),
            label_smoothing / n_classes)
    terms = pointwise.mul(log_probs, target)
    if weight is not None:
        terms = pointwise.mul(terms, _class_weight_view(weight, log_probs, class_dim))
    if reduction == N.NONE:
        return pointwise.neg(reductions.sum(terms, class_dim))
    total = pointwise.neg(reductions.sum(terms))
    if reduction == N.SUM:
        return total
    return pointwise.with_scalar(SO.DIV_SCALAR, total, log_probs.numel() / n_classes)


@tensor_args(name="cross_entropy_loss")
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of logits ``input`` against class indices or class probabilities.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.cross_entropy(jaxgrad.zeros(1, 2), jaxgrad.tensor([0]))
    tensor(0.6931)
    """
    red = _reduction(reduction, size_average, reduce)
    class_dim = 0 if input.ndim == 1 else 1
    log_probs = reductions.log_softmax(input, class_dim)
    if input.shape == target.shape:
        if target.is_floating_point() and ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probabilities(log_probs, target, weight, red, label_smoothing,
                                            class_dim)
    if label_smoothing > 0:
        _check_label_smoothing(label_smoothing)
        return _label_smoothed(log_probs, target, weight, red, ignore_index, label_smoothing,
                               class_dim)
    return _nll_loss_nd(log_probs, target, weight, red, ignore_index)[0]


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """Binary cross entropy of probabilities ``input`` (log terms clamped at -100 as torch).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.binary_cross_entropy(jaxgrad.tensor([0.5]), jaxgrad.tensor([1.0]))
    tensor(0.6931)
    """
    red = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    if target.dtype != input.dtype:  # (the kernel's TensorIterator: one dtype for both)
        raise RuntimeError(f"Found dtype {_dtypes.scalar_type_name(target.dtype)} but expected "
                           f"{_dtypes.scalar_type_name(input.dtype)}")
    if weight is not None:
        weight = _shapes.expand(weight, queries.broadcast_shapes(target.shape, weight.shape))
        if tuple(weight.shape) != tuple(input.shape):  # the kernel's TensorIterator check
            raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the "
                               f"broadcast shape {list(weight.shape)}")
    return _apply(N.BINARY_CROSS_ENTROPY, input, target, aux=(weight,), reduction=red)


@tensor_args
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None,
                                     size_average: bool | None = None,
                                     reduce: bool | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Binary cross entropy of logits, computed stably through ``log_sigmoid``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.binary_cross_entropy_with_logits(jaxgrad.tensor([0.0]), jaxgrad.tensor([1.0]))
    tensor(0.6931)
    """
    red = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    return _apply(N.BINARY_CROSS_ENTROPY_WITH_LOGITS, input, target, aux=(weight, pos_weight),
                 reduction=red)


def _number(value: float, like: Tensor) -> Tensor:
    """A number as torch's C++ wraps it next to a tensor: a 0-dim tensor of ``like``'s dtype."""
    return Tensor._make(jnp.asarray(value, like._value.dtype))


@tensor_args
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``, reduced.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.margin_ranking_loss(jaxgrad.tensor([1.0]), jaxgrad.tensor([2.0]), jaxgrad.tensor([1.0]))
    tensor(1.)
    """
    red = _reduction(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    unclamped = pointwise.with_scalar(
        SO.ADD_SCALAR, pointwise.mul(pointwise.neg(target), pointwise.sub(input1, input2)), margin)
    return _reduce(pointwise.clamp_min_(unclamped, 0), red)


@tensor_args
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """``x`` where ``target == 1``, ``max(0, margin - x)`` where ``target == -1``, reduced.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.hinge_embedding_loss(jaxgrad.tensor([0.3, 2.0]), jaxgrad.tensor([-1.0, 1.0]))
    tensor(1.3500)
    """
    red = _reduction(reduction, size_average, reduce)
    zeros = _creation.zeros_like(input)
    margin_clamp = pointwise.clamp_min_(pointwise.sub(_number(margin, input), input), 0)
    output_margin = indexing.where(pointwise.ne(target, 1), margin_clamp, zeros)
    output_self = indexing.where(pointwise.ne(target, -1), input, zeros)
    return _reduce(pointwise.add(output_margin, output_self), red)


@tensor_args
def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``, reduced (``SoftMarginLossBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.soft_margin_loss(jaxgrad.tensor([0.0]), jaxgrad.tensor([1.0]))
    tensor(0.6931)
    """
    red = _reduction(reduction, size_average, reduce)
    return _apply(N.SOFT_MARGIN_LOSS, input, aux=(target,), reduction=red)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of ``sigmoid(input)`` per class, averaged over the classes (the
    last dim), then reduced.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.multilabel_soft_margin_loss(jaxgrad.zeros(1, 2), jaxgrad.tensor([[1.0, 0.0]]))
    tensor(0.6931)
    """
    if size_average is not None or reduce is not None:
        reduction = ["none", "mean", "sum"][_reduction(reduction, size_average, reduce)]
    loss = pointwise.neg(pointwise.add(pointwise.mul(target, logsigmoid(input)),
                                       pointwise.mul(pointwise.rsub(target, 1),
                                                     logsigmoid(pointwise.neg(input)))))
    if weight is not None:
        loss = pointwise.mul(loss, weight)
    class_dim = input.dim() - 1
    loss = pointwise.div(reductions.sum(loss, class_dim), input.size(class_dim))
    if reduction == "none":
        return loss
    if reduction == "mean":
        return reductions.mean(loss)
    if reduction == "sum":
        return reductions.sum(loss)
    raise ValueError(reduction + " is not valid")


@tensor_args
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1``, reduced.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> x = jaxgrad.tensor([[1.0, 0.0]])
    >>> F.cosine_embedding_loss(x, x, jaxgrad.tensor([1.0]))
    tensor(0.)
    """
    red = _reduction(reduction, size_average, reduce)
    targ_dim = target.dim()
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if targ_dim == 1 else 1
    if input1.dim() != want or input2.dim() != want:
        raise RuntimeError(f"{targ_dim}D target tensor expects {want}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    prod_sum = reductions.sum(pointwise.mul(input1, input2), targ_dim)
    mag1 = pointwise.with_scalar(
        SO.ADD_SCALAR, reductions.sum(pointwise.mul(input1, input1), targ_dim), 1e-12)
    mag2 = pointwise.with_scalar(
        SO.ADD_SCALAR, reductions.sum(pointwise.mul(input2, input2), targ_dim), 1e-12)
    cos = pointwise.div(prod_sum, pointwise.sqrt_(pointwise.mul(mag1, mag2)))
    zeros = _creation.zeros_like(cos)
    pos = pointwise.sub(_number(1, cos), cos)
    neg = pointwise.clamp_min_(pointwise.with_scalar(SO.SUB_SCALAR, cos, margin), 0)
    output = pointwise.add(indexing.where(pointwise.eq(target, 1), pos, zeros),
                           indexing.where(pointwise.eq(target, -1), neg, zeros))
    return _reduce(output, red)


@tensor_args
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of ``target`` under Poisson(``exp(input)``) (or Poisson(input)
    when not ``log_input``), with Stirling's term when ``full``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.poisson_nll_loss(jaxgrad.tensor([0.0]), jaxgrad.tensor([1.0]))
    tensor(1.)
    """
    if size_average is not None or reduce is not None:
        reduction = ["none", "mean", "sum"][_reduction(reduction, size_average, reduce)]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = pointwise.sub(pointwise.exp(input), pointwise.mul(target, input))
    else:
        loss = pointwise.sub(input, pointwise.mul(target, pointwise.log(
            pointwise.with_scalar(SO.ADD_SCALAR, input, eps))))
    if full:
        stirling = pointwise.add(pointwise.sub(pointwise.mul(target, pointwise.log(target)),
                                               target),
                                 pointwise.with_scalar(SO.MUL_SCALAR, pointwise.log(
                                     pointwise.with_scalar(SO.MUL_SCALAR, target, 2 * math.pi)),
                                     0.5))
        loss = pointwise.add_(loss, indexing.masked_fill(stirling, pointwise.le(target, 1), 0))
    return _reduce(loss, _REDUCTIONS[reduction])


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of ``target`` under Normal(``input``, ``var``) (``var``
    clamped to ``eps``; the constant term only when ``full``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.gaussian_nll_loss(jaxgrad.tensor([1.0]), jaxgrad.tensor([3.0]), jaxgrad.tensor([1.0]))
    tensor(2.)
    """
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = pointwise.mul(_creation.ones_like(input), var)
    elif bool(reductions.any(pointwise.lt(var, 0))):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = _shapes.unsqueeze(var, -1)
        elif input.ndim != var.ndim or builtins.sum(
                y for x, y in zip(input.shape, var.shape) if x != y) != 1:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = _shapes.clone(var)
    with no_grad():
        pointwise.clamp_(var, min=eps)
    loss = pointwise.mul(pointwise.add(pointwise.log(var),
                                       pointwise.div(pointwise.pow(pointwise.sub(input, target),
                                                                   2), var)), 0.5)
    if full:
        loss = pointwise.add_(loss, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, _REDUCTIONS[reduction])


@tensor_args
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``pairwise_distance`` as ``d`` (``swap``
    uses the smaller of ``d(a, n)`` and ``d(p, n)``), reduced.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> a = jaxgrad.zeros(1, 2)
    >>> F.triplet_margin_loss(a, a, a + 3.0, eps=0.0)
    tensor(0.)
    """
    red = _reduction(reduction, size_average, reduce)
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {dims[0]}D, positive "
                           f"{dims[1]}D, and negative {dims[2]}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = pointwise.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    output = pointwise.clamp_min(pointwise.sub(
        pointwise.with_scalar(SO.ADD_SCALAR, dist_pos, margin), dist_neg), 0)
    return _reduce(output, red)


# --- multi-class margin losses --------------------------------------------------------------------


def _check_margin_input(input: Tensor) -> None:
    """The shape check shared by torch's multi_margin_loss and multilabel_margin_loss kernels."""
    ndim = input.ndim
    if not ((ndim == 2 and input.shape[1] != 0) or (ndim == 1 and input.shape[0] != 0)
            or ndim == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")


def _check_long_target(target: Tensor) -> None:
    _dtypes.check_scalar_type(target.dtype, _dtypes.int64)


def _check_margin_kernel_dtype(input: Tensor, kernel: str) -> None:
    if not input.is_floating_point():
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dtypes.scalar_type_name(input.dtype)}'")


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: bool | None = None,
                      reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss: per sample, ``sum_{j != y} max(0, margin - x[y] + x[j])**p``
    (scaled by ``weight[y]``) over the number of classes, then reduced
    (``MultiMarginLossBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.multi_margin_loss(jaxgrad.tensor([[0.1, 0.2, 0.4, 0.8]]), jaxgrad.tensor([3]))
    tensor(0.3250)
    """
    red = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _check_weight_grad(weight, "multi_margin_loss")
    _check_margin_input(input)
    nframe = 1 if input.ndim <= 1 else input.shape[0]
    dim = 1 if input.ndim == 0 else input.shape[-1]
    if target.ndim > 1 or target.numel() != nframe:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{nframe}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != dim:
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got "
                           f"{list(weight.shape)}")
    _check_long_target(target)
    _check_weight_dtype(input, weight)
    _check_margin_kernel_dtype(input, "multi_margin_loss_cpu_kernel")
    if concrete_here(target._value):
        values = np.asarray(target._value)
        if ((values < 0) | (values >= dim)).any():
            raise RuntimeError("target out of range")
    return _apply(NM.MULTI_MARGIN_LOSS, input, aux=(target, weight), p=int(p),
                  margin=float(margin), reduction=red)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Multi-label hinge loss: ``target`` lists class indices up to the first -1; per sample,
    ``sum max(0, 1 - (x[y] - x[k]))`` over listed ``y`` and unlisted ``k``, over the number of
    classes, then reduced (``MultilabelMarginLossBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.multilabel_margin_loss(jaxgrad.tensor([[0.1, 0.2, 0.4, 0.8]]),
    ...                          jaxgrad.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    red = _reduction(reduction, size_average, reduce)
    _check_margin_input(input)
    dim = 1 if input.ndim == 0 else input.shape[-1]
    if input.ndim <= 1:
        good = target.ndim <= 1 and target.numel() == dim
    else:
        good = target.ndim == 2 and tuple(target.shape) == tuple(input.shape)
    if not good:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    _check_long_target(target)
    _check_margin_kernel_dtype(input, "multilabel_margin_loss_forward_out_frame")
    if concrete_here(target._value):
        values = np.asarray(target._value)
        if ((values < -1) | (values >= dim)).any():
            raise RuntimeError("argument #2 'target' is out of range")
    return _apply(NM.MULTILABEL_MARGIN_LOSS, input, aux=(target,), reduction=red)[0]


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor]
                                      | None = None, margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with any distance ``d`` (``pairwise_distance``
    by default; ``swap`` uses the smaller of ``d(a, n)`` and ``d(p, n)``), reduced.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> a = jaxgrad.zeros(1, 2)
    >>> F.triplet_margin_with_distance_loss(a, a, a + 3.0)
    tensor(0.)
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {dims[0]}D, positive "
                           f"{dims[1]}D, and negative {dims[2]}D inputs")
    distance = pairwise_distance if distance_function is None else distance_function
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = pointwise.minimum(dist_neg, distance(positive, negative))
    loss = pointwise.clamp_min(pointwise.sub(margin + dist_pos, dist_neg), 0)
    if reduction == "sum":
        return reductions.sum(loss)
    return reductions.mean(loss) if reduction == "mean" else loss


# --- CTC --------------------------------------------------------------------------------------


def _lengths(lengths: Any, name: str) -> tuple[int, ...]:
    """An int[] of lengths from a tensor (integral) or a sequence of ints."""
    if isinstance(lengths, Tensor):
        if lengths.is_floating_point() or lengths.is_complex():
            raise RuntimeError(f"{name} must be integral")
        return tuple(int(v) for v in np.asarray(lengths._value).reshape(-1))
    if isinstance(lengths, int):
        return (lengths,)
    return tuple(int(v) for v in lengths)


def _check_ctc(log_probs: Tensor, targets: Tensor, input_lengths: tuple, target_lengths: tuple,
               blank: int) -> None:
    """torch's ctc_loss_allocate_outputs checks, in its order and words."""
    where = " (while checking arguments for ctc_loss_allocate_outputs)"
    t_count, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    total = builtins.sum(target_lengths)
    if targets.ndim == 1 and targets.shape[0] != total:
        raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got size "
                           f"{targets.shape[0]} for argument #2 'targets'{where}")
    for length in target_lengths:
        if length < 0:
            raise RuntimeError("Expected target_lengths to have value at least 0, but got value "
                               f"{length}{where}")
        if targets.ndim != 1 and length > targets.shape[1]:
            raise RuntimeError(f"Expected tensor to have size at least {length} at dimension 1, "
                               f"but got size {targets.shape[1]} for argument #2 'targets'{where}")
    for length in input_lengths:
        if length < 0 or length > t_count:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_count}, but got "
                               f"value {length}{where}")


def ctc_loss_enum(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
                  blank: int, reduction: int, zero_infinity: bool) -> Tensor:
    """torch's aten ``ctc_loss`` (an enum ``reduction``): ``_ctc_loss`` (``CtcLossBackward0``)
    per sample, infinities zeroed with ``zero_infinity``, then the reduction ('mean' divides
    each loss by its target length first)."""
    input_lengths = _lengths(input_lengths, "input_lengths")
    target_lengths = _lengths(target_lengths, "target_lengths")
    batched = log_probs.dim() == 3
    lp = log_probs if batched else _shapes.unsqueeze(log_probs, 1)
    if not batched and targets.ndim == 1 and len(target_lengths) == 1:
        targets = _shapes.unsqueeze(targets, 0)
    _check_ctc(lp, targets, input_lengths, target_lengths, blank)
    res = _apply(NC.CTC_LOSS, lp, aux=(targets,), input_lengths=input_lengths,
                 target_lengths=target_lengths, blank=int(blank),
                 zero_infinity=bool(zero_infinity))[0]
    if zero_infinity:
        res = indexing.where(pointwise.eq(res, math.inf), _creation.zeros((), dtype=res.dtype),
                             res)
    if reduction == N.MEAN:
        lengths = pointwise.clamp_min(_creation.tensor(list(target_lengths), dtype=res.dtype), 1)
        return reductions.mean(pointwise.div(res, lengths))
    if reduction == N.SUM:
        return reductions.sum(res)
    return res if batched else _shapes.squeeze(res, 0)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification loss of (T, N, C) (or unbatched (T, C))
    log-probabilities against padded (N, S) or concatenated targets, with torch's gradient.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> lp = jaxgrad.full((2, 1, 2), 0.5).log()
    >>> F.ctc_loss(lp, jaxgrad.tensor([[1]]), [2], [1], reduction="sum")
    tensor(0.2877)
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return ctc_loss_enum(log_probs, targets, input_lengths, target_lengths, blank,
                         _REDUCTIONS[reduction], zero_infinity)
