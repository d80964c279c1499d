"""``jaxgrad.nn.functional``: torch.nn.functional's layers, activations and losses.

Each function checks its arguments from shapes (with torch's messages) and then either calls one
op-table row (``jaxgrad._ops.nn``) or composes existing ops exactly as torch composes them, so
the graph has torch's nodes (``F.linear`` on a 2-D input is one ``AddmmBackward0``; ``F.l1_loss``
is ``MeanBackward0(AbsBackward0(SubBackward0))``).

>>> import jaxgrad
>>> import jaxgrad.nn.functional as F
>>> x = jaxgrad.tensor([[1.0, -2.0]], requires_grad=True)
>>> F.relu(x)
tensor([[1., 0.]], grad_fn=<ReluBackward0>)
"""

from __future__ import annotations

import builtins
import functools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes
from .._core.grad_mode import is_grad_enabled, no_grad
from .._core.jax_setup import jit
from .._core.tensor import Tensor
from .._core.warn_once import warn_once
from .._engine import profiling as _profiler
from .._engine.dispatch import apply as _apply
from .._engine.dispatch import apply_inplace as _apply_inplace
from .._functions import arguments as _arguments
from .._functions import creation as _creation
from .._functions import indexing, joins, pointwise, reductions, scatter
from .._functions import linalg as _linalg
from .._functions import random as _random
from .._functions import shapes as _shapes
from .._functions.opgen import tensor_args
from .._ops import elementwise as E
from .._ops import nn as N

# --- linear ---------------------------------------------------------------------------------


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


# --- activations ----------------------------------------------------------------------------


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.relu(jaxgrad.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return pointwise.relu_(input) if inplace else pointwise.relu(input)


@tensor_args
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit, exact (``'none'``) or with the tanh approximation.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.gelu(jaxgrad.tensor([0.0]))
    tensor([0.])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _apply(N.GELU, input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.silu(jaxgrad.tensor([0.0]))
    tensor([0.])
    """
    return _apply_inplace(N.SILU, input) if inplace else _apply(N.SILU, input)


def _check_float_kernel(input: Tensor, kernel: str) -> None:
    """torch's dtype dispatch of the floating-point-only activation kernels."""
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f'"{kernel}_cpu" not implemented for '
                                  f"'{_dtypes.scalar_type_name(input.dtype)}'")


@tensor_args
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``negative_slope * x`` elsewhere (``LeakyReluBackward0``; in place
    ``LeakyReluBackward1``, which saves the result and refuses a negative slope in backward).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.leaky_relu(jaxgrad.tensor([-2.0, 3.0]), 0.1)
    tensor([-0.2000,  3.0000])
    """
    _check_float_kernel(input, "leaky_relu")
    if inplace:
        return _apply_inplace(N.LEAKY_RELU_, input, negative_slope=float(negative_slope))
    return _apply(N.LEAKY_RELU, input, aux=(negative_slope,))


@tensor_args
def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``leaky_relu`` written into ``input``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.leaky_relu_(jaxgrad.tensor([-2.0, 3.0]), 0.5)
    tensor([-1.,  3.])
    """
    return leaky_relu(input, negative_slope, inplace=True)


@tensor_args
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere (``EluBackward0``; in place
    ``EluBackward1``, which saves the result).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.elu(jaxgrad.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    _check_float_kernel(input, "elu")
    if inplace:
        return _apply_inplace(N.ELU_, input, alpha=float(alpha), scale=1.0, input_scale=1.0)
    return _apply(N.ELU, input, aux=(alpha, 1.0, 1.0))


@tensor_args
def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``elu`` written into ``input``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.elu_(jaxgrad.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    return elu(input, alpha, inplace=True)


@tensor_args
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, or ``x`` itself where ``beta * x > threshold``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.softplus(jaxgrad.tensor([0.0, 30.0]))
    tensor([ 0.6931, 30.0000])
    """
    _check_float_kernel(input, "softplus")
    return _apply(N.SOFTPLUS, input, aux=(beta, threshold))


@tensor_args
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]`` (``HardtanhBackward0``, in place too).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.hardtanh(jaxgrad.tensor([-3.0, 0.5, 3.0]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return _apply_inplace(N.HARDTANH, input, aux=(min_val, max_val))
    return _apply(N.HARDTANH, input, aux=(min_val, max_val))


@tensor_args
def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``hardtanh`` written into ``input``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.hardtanh_(jaxgrad.tensor([-3.0, 3.0]))
    tensor([-1.,  1.])
    """
    return hardtanh(input, min_val, max_val, inplace=True)


@tensor_args
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``: torch's ``hardtanh(x, 0, 6)`` (``HardtanhBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.relu6(jaxgrad.tensor([-1.0, 3.0, 8.0]))
    tensor([0., 3., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-input))``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.sigmoid(jaxgrad.tensor([0.0]))
    tensor([0.5000])
    """
    return pointwise.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.tanh(jaxgrad.tensor([0.0]))
    tensor([0.])
    """
    return pointwise.tanh(input)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """``exp(input) / exp(input).sum(dim)``; without ``dim``, torch's deprecated implicit choice.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.softmax(jaxgrad.zeros(2), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, _stacklevel)
    return reductions.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    """``log(softmax(input, dim))``, computed stably.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.log_softmax(jaxgrad.zeros(1), dim=0)
    tensor([0.])
    """
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, _stacklevel)
    return reductions.log_softmax(input, dim, dtype)


# --- losses ---------------------------------------------------------------------------------

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
    if log_target:
        loss = pointwise.mul(pointwise.exp(target), pointwise.sub(target, input))
    else:
        loss = pointwise.sub(_apply(E.XLOGY, target, target), pointwise.mul(target, input))
    reduced = _reduce(loss, red)
    if reduction == "batchmean" and input.ndim != 0:
        reduced = pointwise.div(reduced, input.shape[0])
    return reduced


def _check_targets(target: Tensor, n_classes: int, ignore_index: int) -> None:
    """torch's kernel check that every class index lies in [0, n_classes) (on concrete values;
    a traced target, under ``jaxgrad.func`` or ``jax.jit``, cannot be read)."""
    if isinstance(target._value, jax.core.Tracer):
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
    if target.dtype.name != "int64":
        raise RuntimeError("expected scalar type Long but found "
                           f"{_dtypes.scalar_type_name(target.dtype)}")
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
    return pointwise.add(_apply(N.MUL_SCALAR, nll, aux=(1 - label_smoothing,)),
                         _apply(N.MUL_SCALAR, ret, aux=(label_smoothing / n_classes,)))


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
        target = _apply(N.ADD_SCALAR, _apply(N.MUL_SCALAR, target, aux=(1 - label_smoothing,)),
                       aux=(label_smoothing / n_classes,))
    terms = pointwise.mul(log_probs, target)
    if weight is not None:
        terms = pointwise.mul(terms, _class_weight_view(weight, log_probs, class_dim))
    if reduction == N.NONE:
        return pointwise.neg(reductions.sum(terms, class_dim))
    total = pointwise.neg(reductions.sum(terms))
    if reduction == N.SUM:
        return total
    return _apply(N.DIV_SCALAR, total, aux=(log_probs.numel() / n_classes,))


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


def _python_broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """torch.broadcast_shapes (Python, torch._refs._broadcast_shapes), with its message; the
    common shape it prints is the one built so far."""
    common = [1] * builtins.max(len(s) for s in shapes)
    for index, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            if shape[i] == common[i]:
                continue
            if common[i] == 1:
                common[i] = shape[i]
            if shape[i] != 1 and common[i] != shape[i]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[i]} at {i}! "
                    f"Mismatching argument at index {index} had {shape}; but expected shape "
                    f"should be broadcastable to {common}")
    return tuple(common)


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
    if weight is not None:
        weight = _shapes.expand(weight, _python_broadcast_shapes(target.shape, weight.shape))
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


# --- padding --------------------------------------------------------------------------------

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


# --- convolution ----------------------------------------------------------------------------


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
    if weight.shape[0] != x.shape[1]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected "
            f"input{list(x.shape)} to have {weight.shape[0]} channels, but got {x.shape[1]} "
            "channels instead")
    (oph, opw), (sh, sw), (dh, dw) = (
        (output_padding_, stride_, dilation_) if n == 2
        else ((0, *output_padding_), (1, *stride_), (1, *dilation_)))
    if builtins.any(op >= s and op >= d
                    for op, s, d in zip(output_padding_, stride_, dilation_)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: {oph} output_padding_width: {opw} stride_height: {sh} "
            f"stride_width: {sw} dilation_height: {dh} dilation_width: {dw}")
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


# --- pooling --------------------------------------------------------------------------------


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


# --- normalisation --------------------------------------------------------------------------


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise over all dims but the channel dim 1; training updates the running stats in
    place (unbiased variance) without bumping their version, as torch's kernel does.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> rm, rv = jaxgrad.zeros(1), jaxgrad.ones(1)
    >>> _ = F.batch_norm(jaxgrad.tensor([[1.0], [3.0]]), rm, rv, training=True)
    >>> rm, rv
    (tensor([0.2000]), tensor([1.1000]))
    """
    if training:
        per_channel = math.prod(input.shape) // input.shape[1] if input.ndim > 1 else 1
        if per_channel == 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {input.shape}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    out, mean, _ = _apply(N.NATIVE_BATCH_NORM, input, weight, bias,
                         aux=(running_mean, running_var), training=bool(training),
                         eps=float(eps))
    if training and running_mean is not None and running_var is not None:
        new_mean, new_var = _running_stats(running_mean._value, running_var._value, mean._value,
                                           input._value, momentum)
        running_mean._write(new_mean)
        running_var._write(new_var)
    return out


@jit
def _running_stats(running_mean, running_var, mean, input, momentum):
    """torch's running-stat update, one XLA call per step: the batch variance is the unbiased
    variance of ``input`` itself (recovering it from the saved 1/std would lose precision when
    the std is small next to ``eps``), accumulated in double for float32 as torch's CPU kernel
    does."""
    acc = jnp.float64 if input.dtype in (jnp.float32, jnp.float64) else jnp.float32
    batch_var = jnp.var(input.astype(acc), axis=(0, *range(2, input.ndim)), ddof=1)
    return (((1 - momentum) * running_mean + momentum * mean).astype(running_mean.dtype),
            ((1 - momentum) * running_var + momentum * batch_var).astype(running_var.dtype))


@tensor_args
def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dims.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.layer_norm(jaxgrad.tensor([[1.0, 3.0]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or tuple(input.shape[input.ndim - k:]) != shape or input.ndim < k:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    out, _, _ = _apply(N.NATIVE_LAYER_NORM, input, weight, bias, normalized_shape=shape,
                      eps=float(eps))
    return out


# --- attention ------------------------------------------------------------------------------

_C_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
                 "bfloat16": "c10::BFloat16", "bool": "bool", "int64": "long int"}


def _c_type_name(t: Tensor) -> str:
    return _C_TYPE_NAMES.get(t.dtype.name, t.dtype.name)


def _validate_sdpa_input(query: Tensor, key: Tensor, value: Tensor,
                         attn_mask: Tensor | None) -> None:
    """torch's validate_sdpa_input, with its messages."""
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_c_type_name(query)} key.dtype: {_c_type_name(key)} and value.dtype: "
            f"{_c_type_name(value)} instead.")
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if attn_mask is not None and attn_mask.dtype.name not in ("bool", "float32") and (
            attn_mask.dtype != query.dtype):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_c_type_name(attn_mask)} and  query.dtype: "
            f"{_c_type_name(query)} instead.")


def _use_fused_cpu_attention(query: Tensor, key: Tensor, value: Tensor,
                             attn_mask: Tensor | None, dropout_p: float,
                             enable_gqa: bool) -> bool:
    """torch's CPU backend choice: the fused flash kernel for 4-D float inputs without
    dropout, equal head sizes, non-empty sequences, matching (or grouped) heads and a mask
    that does not require grad; the math composition otherwise."""
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4 or dropout_p > 0.0:
        return False
    if not query.is_floating_point() or not (query.shape[-1] == key.shape[-1]
                                             == value.shape[-1]):
        return False
    if 0 in (query.shape[-2], key.shape[-2]) or query.numel() == 0:
        return False
    if attn_mask is not None and (attn_mask.requires_grad or attn_mask.ndim not in (2, 4)):
        if attn_mask.ndim < 2 and not attn_mask.requires_grad:  # torch's mask-shape check
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but "
                             "got -2)")
        return False
    batch = query.shape[0] == key.shape[0] == value.shape[0]
    if enable_gqa:
        heads = key.shape[1] == value.shape[1] and query.shape[1] % key.shape[1] == 0
    else:
        heads = query.shape[1] == key.shape[1] == value.shape[1]
    return batch and heads


def _repeat_heads(t: Tensor, repeats: int) -> Tensor:
    """``t.repeat_interleave(repeats, -3)``: each head ``repeats`` times in a row."""
    expanded = _shapes.expand(_shapes.unsqueeze(t, -3), (*t.shape[:-2], repeats, *t.shape[-2:]))
    return _shapes.reshape(expanded, (*t.shape[:-3], t.shape[-3] * repeats, *t.shape[-2:]))


def _sdpa_math(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
               dropout_p: float, is_causal: bool, scale: float | None,
               enable_gqa: bool) -> Tensor:
    """torch's _scaled_dot_product_attention_math, op for op: both operands scaled by the
    square root of the scale, a bool mask turned into -inf, ``_safe_softmax``, dropout."""
    if attn_mask is not None and attn_mask.dtype.name == "bool":
        bias = _creation.zeros_like(attn_mask, dtype=query.dtype)
        indexing.masked_fill_(bias, pointwise.logical_not(attn_mask), float("-inf"))
        attn_mask = bias
    negative = scale is not None and scale < 0
    factor = math.sqrt(builtins.abs(scale) if scale is not None
                       else 1 / math.sqrt(query.shape[-1]))
    query = _apply(N.MUL_SCALAR, query, aux=(-factor if negative else factor,))
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        causal = np.tril(np.ones((query.shape[-2], key.shape[-2]), bool))
        attn_mask = Tensor._make(jnp.where(causal, 0.0, -jnp.inf).astype(query._value.dtype))
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        repeats = query.shape[-3] // key.shape[-3]
        key, value = (_repeat_heads(t, repeats) for t in (key, value))
    attn = _linalg.matmul(query, _apply(N.MUL_SCALAR, _shapes.transpose(key, -2, -1),
                                        aux=(factor,)))
    if attn_mask is not None:
        attn = pointwise.add(attn, attn_mask) if attn_mask.requires_grad else pointwise.add_(attn,
                                                                                             attn_mask)
    attn = _apply(N.SAFE_SOFTMAX, attn, dim=attn.ndim - 1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return _linalg.matmul(attn, value)


@tensor_args
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dims. A bool
    ``attn_mask`` marks the positions that take part, a float one is added; ``is_causal``
    masks the upper triangle; ``enable_gqa`` shares each key/value head among a group of
    query heads. As torch on CPU, 4-D inputs without dropout run as one fused node
    (``ScaledDotProductFlashAttentionForCpuBackward0``), other inputs as torch's math
    composition.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> q = k = v = jaxgrad.ones(1, 2, 3, 4, requires_grad=True)
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).grad_fn.name()
    'ScaledDotProductFlashAttentionForCpuBackward0'
    """
    _validate_sdpa_input(query, key, value, attn_mask)
    if _use_fused_cpu_attention(query, key, value, attn_mask, dropout_p, enable_gqa):
        mask = attn_mask
        if mask is not None and mask.dtype.name != "bool" and mask.dtype != query.dtype:
            mask = mask.to(query.dtype)
        out, _ = _apply(N.SDPA_FLASH_CPU, query, key, value, aux=(mask,),
                        is_causal=bool(is_causal), scale=None if scale is None else float(scale))
        return out
    return _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type: Any, other_name: str,
                    target_type: Any, check_other: bool = True) -> Tensor | None:
    """torch's _canonical_mask: a bool mask becomes an additive float mask (-inf where True)."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype.name != "bool" and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      "same type for both instead.", stacklevel=3)
    if not is_float:
        mask = indexing.masked_fill_(_creation.zeros_like(mask, dtype=target_type), mask,
                                     float("-inf"))
    return mask


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor,
                     key_padding_mask: Tensor | None, attn_mask: Tensor | None,
                     num_heads: int) -> bool:
    """torch's _mha_shape_check: whether the input is batched, with its assertions."""
    if query.ndim not in (2, 3):
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.ndim}-D query tensor")
    batched = query.ndim == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be "
                             f"{query.ndim}-D but found {key.ndim}-D and {value.ndim}-D tensors "
                             "respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{query.ndim - 1}-D but found {key_padding_mask.ndim}-D tensor "
                             "instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or "
                                 f"3-D but found {attn_mask.ndim}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                 f"{attn_mask.shape}")
    return batched


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor,
                          b: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """torch's _in_projection_packed: one linear for self-attention, two for a shared
    key/value, three otherwise."""
    e = q.shape[-1]

    def unpack(proj: Tensor, n: int) -> Tensor:
        proj = _shapes.view(proj, (*proj.shape[:-1], n, e))
        return _shapes.contiguous(_shapes.squeeze(_shapes.transpose(_shapes.unsqueeze(proj, 0), 0,
                                                                    -2), -2))

    if k is v:
        if q is k:
            proj = unpack(linear(q, w, b), 3)
            return _shapes.select(proj, 0, 0), _shapes.select(proj, 0, 1), _shapes.select(proj, 0,
                                                                                          2)
        w_q, w_kv = joins.split(w, [e, 2 * e])
        b_q, b_kv = (None, None) if b is None else joins.split(b, [e, 2 * e])
        kv = unpack(linear(k, w_kv, b_kv), 2)
        return linear(q, w_q, b_q), _shapes.select(kv, 0, 0), _shapes.select(kv, 0, 1)
    w_q, w_k, w_v = joins.chunk(w, 3)
    b_q, b_k, b_v = (None, None, None) if b is None else joins.chunk(b, 3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention of (L, N, E) or (L, E) ``query`` over ``key``/``value``, step for
    step as torch's: input projections, masks merged into one additive mask, explicit
    softmax attention when ``need_weights`` (returning the weights, averaged over heads with
    ``average_attn_weights``), ``scaled_dot_product_attention`` otherwise, output projection.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> x = jaxgrad.ones(3, 1, 4)
    >>> out, w = F.multi_head_attention_forward(
    ...     x, x, x, 4, 2, jaxgrad.ones(12, 4), None, None, None, False, 0.0,
    ...     jaxgrad.eye(4), None)
    >>> out.shape, w.shape
    (jaxgrad.Size([3, 1, 4]), jaxgrad.Size([1, 3, 3]))
    """
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = (_shapes.unsqueeze(query, 1), _shapes.unsqueeze(key, 1),
                             _shapes.unsqueeze(value, 1))
        if key_padding_mask is not None:
            key_padding_mask = _shapes.unsqueeze(key_padding_mask, 0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask.dtype,
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else joins.chunk(in_proj_bias, 3)
        q, k, v = (linear(query, q_proj_weight, b_q), linear(key, k_proj_weight, b_k),
                   linear(value, v_proj_weight, b_v))
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, key.shape[0]):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, key.shape[0])}.")
            attn_mask = _shapes.unsqueeze(attn_mask, 0)
        elif tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, key.shape[0]):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(bsz * num_heads, tgt_len, key.shape[0])}.")
    if bias_k is not None and bias_v is not None:
        k = joins.cat([k, _shapes.expand(bias_k, (1, bsz, embed_dim))])
        v = joins.cat([v, _shapes.expand(bias_v, (1, bsz, embed_dim))])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    q = _shapes.transpose(_shapes.view(q, (tgt_len, bsz * num_heads, head_dim)), 0, 1)
    k = static_k if static_k is not None else _shapes.transpose(
        _shapes.view(k, (k.shape[0], bsz * num_heads, head_dim)), 0, 1)
    v = static_v if static_v is not None else _shapes.transpose(
        _shapes.view(v, (v.shape[0], bsz * num_heads, head_dim)), 0, 1)
    if add_zero_attn:
        zeros = (bsz * num_heads, 1, head_dim)
        k = joins.cat([k, _creation.zeros(zeros, dtype=k.dtype)], 1)
        v = joins.cat([v, _creation.zeros(zeros, dtype=v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = _shapes.expand(_shapes.view(key_padding_mask, (bsz, 1, 1, src_len)),
                                          (-1, num_heads, -1, -1))
        key_padding_mask = _shapes.reshape(key_padding_mask, (bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else pointwise.add(attn_mask,
                                                                             key_padding_mask)
    if not training:
        dropout_p = 0.0
    if need_weights:
        q_scaled = _apply(N.MUL_SCALAR, q, aux=(math.sqrt(1.0 / float(q.shape[-1])),))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        k_t = _shapes.transpose(k, -2, -1)
        weights = (_linalg.bmm(q_scaled, k_t) if attn_mask is None
                   else _linalg.baddbmm(attn_mask, q_scaled, k_t))
        weights = softmax(weights, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = _shapes.reshape(_shapes.transpose(_linalg.bmm(weights, v), 0, 1), (tgt_len * bsz,
                                                                                 embed_dim))
        out = linear(out, out_proj_weight, out_proj_bias)
        out = _shapes.view(out, (tgt_len, bsz, out.shape[1]))
        weights = _shapes.view(weights, (bsz, num_heads, tgt_len, src_len))
        if average_attn_weights:
            weights = reductions.mean(weights, 1)
        if not batched:
            out, weights = _shapes.squeeze(out, 1), _shapes.squeeze(weights, 0)
        return out, weights
    if attn_mask is not None:
        attn_mask = (_shapes.unsqueeze(attn_mask,
                                       0) if attn_mask.shape[0] == 1 and attn_mask.ndim == 3
                     else _shapes.view(attn_mask, (bsz, num_heads, -1, src_len)))
    q = _shapes.view(q, (bsz, num_heads, tgt_len, head_dim))
    k = _shapes.view(k, (bsz, num_heads, src_len, head_dim))
    v = _shapes.view(v, (bsz, num_heads, src_len, head_dim))
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = _shapes.reshape(_shapes.permute(out, (2, 0, 1, 3)), (bsz * tgt_len, embed_dim))
    out = linear(out, out_proj_weight, out_proj_bias)
    out = _shapes.view(out, (tgt_len, bsz, out.shape[1]))
    return (out if batched else _shapes.squeeze(out, 1)), None


# --- dropout and embedding --------------------------------------------------------------------


@tensor_args
def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``; the mask
    comes from jaxgrad's seeded generator (``jaxgrad.manual_seed``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> x = jaxgrad.ones(1000)
    >>> sorted(set(F.dropout(x, 0.5).tolist()))
    [0.0, 2.0]
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        noise = Tensor._make(jnp.zeros((), input._value.dtype))
    else:
        noise = Tensor._make(_random.generator_for(input.device).draw(functools.partial(
            _dropout_noise, p=float(p), shape=tuple(input.shape), dtype=input._value.dtype)))
    return pointwise.mul_(input, noise) if inplace else pointwise.mul(input, noise)


@functools.partial(jit, static_argnames=("shape", "dtype"))
def _dropout_noise(key, p, shape, dtype):
    """(next key, scaled keep mask): the device's default generator's ``next_key`` split and a
    Bernoulli(1 - p) mask divided by 1 - p, cached per (shape, dtype); the same stream as
    ``jax.random.bernoulli(_random._key(None), 1 - p, shape)``."""
    key, sub = jax.random.split(key)
    keep = jax.random.bernoulli(sub, 1 - p, shape)
    return key, keep.astype(dtype) / (1 - p).astype(dtype)


def _feature_noise(shape: tuple, p: float, dtype: Any, device: Any) -> Tensor:
    """One Bernoulli(1 - p) draw per (sample, channel) of an input of ``shape``, divided by
    1 - p, shaped to broadcast over the remaining dims (torch's make_feature_noise)."""
    if len(shape) < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1:
        return Tensor._make(jnp.zeros((), dtype))
    return Tensor._make(_random.generator_for(device).draw(functools.partial(
        _dropout_noise, p=float(p), shape=tuple(shape[:2]) + (1,) * (len(shape) - 2),
        dtype=dtype)))


def _channel_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                     batched: bool) -> Tensor:
    """torch's feature_dropout of a batched input, or of an unbatched one given a batch dim of
    1 (in place, jaxgrad multiplies the input directly instead of torch's unsqueeze_/squeeze_
    pair)."""
    if batched:
        if p == 0 or not training or input.numel() == 0:
            return input
        noise = _feature_noise(tuple(input.shape), p, input._value.dtype, input.device)
        return pointwise.mul_(input, noise) if inplace else pointwise.mul(input, noise)
    if not inplace:
        return _shapes.squeeze(_channel_dropout(_shapes.unsqueeze(input, 0), p, training, False,
                                                True), 0)
    if p == 0 or not training or input.numel() == 0:
        return input
    noise = _feature_noise((1, *input.shape), p, input._value.dtype, input.device)
    return pointwise.mul_(input, _shapes.squeeze(noise, 0) if noise.ndim else noise)


@tensor_args
def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of an (N, C, L) or (C, L) input with probability ``p`` and scale
    the rest by ``1 / (1 - p)``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> out = F.dropout1d(jaxgrad.ones(4, 8, 3))
    >>> sorted(set(out.sum(-1).flatten().tolist())) in ([0.0, 6.0], [0.0], [6.0])
    True
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    return _channel_dropout(input, p, training, inplace, input.ndim == 3)


@tensor_args
def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of an (N, C, H, W) input with probability ``p`` (a 3-D input is
    taken as (N, C, L), with torch's warning).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.dropout2d(jaxgrad.ones(1, 2, 2, 2), training=False).sum()
    tensor(8.)
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=3)
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=3)
    return _channel_dropout(input, p, training, inplace, True)


@tensor_args
def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of an (N, C, D, H, W) or (C, D, H, W) input with probability ``p``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.dropout3d(jaxgrad.ones(2, 1, 1, 1), p=0.0).shape
    jaxgrad.Size([2, 1, 1, 1])
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=3)
    return _channel_dropout(input, p, training, inplace, input.ndim == 5)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor with a trailing dim of size ``num_classes`` (by default one more than
    the largest class), 1 at each element's class and 0 elsewhere.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.one_hot(jaxgrad.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    if not isinstance(tensor, Tensor):
        raise TypeError("one_hot(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    if tensor.dtype.name != "int64":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if isinstance(tensor._value, jax.core.Tracer):
        return _traced_one_hot(tensor, num_classes)
    values = np.asarray(tensor._value)
    if values.size == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        if values.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(values.max()) + 1
        elif values.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    classes = np.arange(num_classes)
    out = Tensor._make(jnp.asarray(values[..., None] == classes, jnp.int64))
    if values.size:
        out._vc.value += 2  # torch fills a zeros tensor and scatters the ones in: two writes
    return out


def _traced_one_hot(tensor: Tensor, num_classes: int) -> Tensor:
    """one_hot of traced class indices (``jax.jit``, ``jaxgrad.func``): the values cannot be
    checked or counted, so ``num_classes`` must be given."""
    if num_classes == -1:
        raise RuntimeError("one_hot: num_classes=-1 infers the number of classes from the "
                           "values, which a JAX trace does not have; pass num_classes")
    classes = jnp.arange(num_classes, dtype=jnp.int64)
    out = Tensor._make((tensor._value[..., None] == classes).astype(jnp.int64))
    if tensor.numel():
        out._vc.value += 2
    return out


def _embedding_renorm(weight: Tensor, indices: Tensor, max_norm: float,
                      norm_type: float) -> None:
    """torch's embedding_renorm_: rows used by ``indices`` scaled down to norm ``max_norm``."""
    rows = jnp.unique(indices._value.reshape(-1))
    selected = weight._value[rows]
    norms = jnp.linalg.norm(selected, ord=norm_type, axis=-1, keepdims=True)
    scale = jnp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    with no_grad():
        pointwise.copy_(weight, Tensor._make(weight._value.at[rows].set(selected * scale)))


def _legacy_type(tensor: Tensor) -> str:
    """How torch's argument checks name a CPU tensor's type: ``Tensor.type()`` (e.g.
    ``jaxgrad.FloatTensor``) for the legacy tensor types, ``CPUBoolType`` and the like for
    bool, bfloat16 and complex, which have none."""
    if tensor.dtype.name in ("bool", "bfloat16") or tensor.dtype.is_complex:
        return f"CPU{_dtypes.scalar_type_name(tensor.dtype)}Type"
    return tensor.type()


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input``; ``padding_idx`` gets no gradient.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.embedding(jaxgrad.tensor([1]), jaxgrad.eye(2))
    tensor([[0., 1.]])
    """
    num = weight.shape[0]
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx >= num or padding_idx < -num:
        raise AssertionError("Padding_idx must be within num_embeddings")
    elif padding_idx < 0:
        padding_idx += num
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("jaxgrad's embedding has no scale_grad_by_freq/sparse "
                                  "gradients")
    if input.dtype.name not in ("int64", "int32"):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {_legacy_type(input)} "
                           "instead (while checking arguments for embedding)")
    if not isinstance(input._value, jax.core.Tracer):  # a traced index cannot be checked
        indices = np.asarray(input._value)
        if indices.size and (indices.min() < 0 or indices.max() >= num):
            raise IndexError("index out of range in self")
    if max_norm is not None:
        _embedding_renorm(weight, input, max_norm, norm_type)
    return _apply(N.EMBEDDING, weight, aux=(input,), weight_sym_argsize_0=num,
                 padding_idx=padding_idx)


# --- nn round 2: normalisation, activations, distances ------------------------------------------


def _verify_per_channel(size: list, message: str) -> None:
    if math.prod(size[:1] + size[2:]) == 1:
        raise ValueError(message)


@tensor_args
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each of ``num_groups`` groups of channels over the group's channels and the
    spatial dims, then scale and shift per channel (``NativeGroupNormBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.group_norm(jaxgrad.tensor([[[1.0], [3.0], [0.0], [2.0]]]), 2).flatten()
    tensor([-1.0000,  1.0000, -1.0000,  1.0000])
    """
    if input.dim() < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.shape[0], input.shape[1]
    size = [n * c // num_groups, num_groups, *input.shape[2:]]
    _verify_per_channel(size, "Expected more than 1 value per channel when training, got "
                              f"input size {size}")
    if c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(t.shape)} "
                               f"and input of shape {list(input.shape)}")
    hxw = math.prod(input.shape[2:])
    out, _, _ = _apply(N.NATIVE_GROUP_NORM, input, weight, bias, N=n, C=c, HxW=hxw,
                       group=int(num_groups), eps=float(eps))
    return out


def _repeat_channels(t: Tensor | None, b: int) -> Tensor | None:
    """A per-channel vector repeated once per sample (torch's ``repeat_if_defined``)."""
    if t is None:
        return None
    return _shapes.repeat(t, b)


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial dims: torch's batch norm of the
    input viewed as one sample of N * C channels (``ViewBackward0`` of
    ``NativeBatchNormBackward0``); running statistics are averaged over the samples.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.instance_norm(jaxgrad.tensor([[[1.0, 3.0]]]))
    tensor([[[-1.0000,  1.0000]]])
    """
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"{input.shape}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    b, c = input.shape[0], input.shape[1]
    shape = (1, b * c, *input.shape[2:])
    running = [_repeat_channels(t, b) for t in (running_mean, running_var)]
    with no_grad():
        running = [None if t is None else _shapes.clone(t) for t in running]
    out = batch_norm(_shapes.view(_shapes.contiguous(input), shape), running[0], running[1],
                     _repeat_channels(weight, b), _repeat_channels(bias, b), use_input_stats,
                     momentum, eps)
    if use_input_stats:
        with no_grad():
            for target, stats in zip((running_mean, running_var), running):
                if target is not None:
                    pointwise.copy_(target, reductions.mean(_shapes.view(stats, (b, c)), 0))
    return _shapes.view(out, tuple(input.shape))


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """Divide by the root mean square over the trailing ``normalized_shape`` dims (``eps``
    defaults to the dtype's machine epsilon), then scale by ``weight``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.rms_norm(jaxgrad.tensor([[3.0, -3.0]]), (2,))
    tensor([[ 1., -1.]])
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    if eps is None:
        eps = float(jnp.finfo(input._value.dtype).eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    mean_square = reductions.mean(pointwise.pow(input, 2), dims, keepdim=True)
    inv = pointwise.rsqrt(_apply_inplace(N.ADD_SCALAR, mean_square, aux=(eps,)))
    out = pointwise.mul(input, inv)
    return out if weight is None else pointwise.mul(out, weight)


@tensor_args
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, ``weight * x`` elsewhere, with one slope per channel (dim 1) or
    one for all (``PreluKernelBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.prelu(jaxgrad.tensor([-2.0, 3.0]), jaxgrad.tensor([0.25]))
    tensor([-0.5000,  3.0000])
    """
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{_dtypes.scalar_type_name(input.dtype)} and "
                           f"{_dtypes.scalar_type_name(weight.dtype)}")
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() > 1 else 1
        if channels != weight.numel():
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
    if weight.dim() > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    if input.dim() != weight.dim():
        dims = [1] * input.dim()
        if input.dim() > 1:
            dims[1] = weight.numel()
        weight = _shapes.reshape(weight, tuple(dims))
    return _apply(N.PRELU_KERNEL, input, weight)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably (``LogSigmoidBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.logsigmoid(jaxgrad.tensor([0.0]))
    tensor([-0.6931])
    """
    _check_float_kernel(input, "log_sigmoid")
    return _apply(N.LOG_SIGMOID, input)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants (torch's ``elu``
    node: ``EluBackward0``, in place ``EluBackward1``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.selu(jaxgrad.tensor([0.0, 1.0]))
    tensor([0.0000, 1.0507])
    """
    _check_float_kernel(input, "elu")
    if inplace:
        return _apply_inplace(N.ELU_, input, alpha=_SELU_ALPHA, scale=_SELU_SCALE,
                              input_scale=1.0)
    return _apply(N.ELU, input, aux=(_SELU_ALPHA, _SELU_SCALE, 1.0))


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (``CeluBackward0``; in place
    ``CeluBackward1``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.celu(jaxgrad.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    _check_float_kernel(input, "elu")
    if inplace:
        return _apply_inplace(N.CELU_, input, alpha=float(alpha))
    return _apply(N.CELU, input, aux=(alpha,))


def _unary_row(row: Any, input: Tensor, inplace: bool, kernel: str) -> Tensor:
    _check_float_kernel(input, kernel)
    return _apply_inplace(row, input) if inplace else _apply(row, input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` (``MishBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.mish(jaxgrad.tensor([0.0]))
    tensor([0.])
    """
    return _unary_row(N.MISH, input, inplace, "mish")


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6`` (``HardswishBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.hardswish(jaxgrad.tensor([-4.0, 0.0, 4.0]))
    tensor([-0., 0., 4.])
    """
    return _unary_row(N.HARDSWISH, input, inplace, "hardswish")


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6`` (``HardsigmoidBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.hardsigmoid(jaxgrad.tensor([-4.0, 0.0, 4.0]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    return _unary_row(N.HARDSIGMOID, input, inplace, "hardsigmoid")


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``, composed as torch composes it.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.softsign(jaxgrad.tensor([1.0, -3.0]))
    tensor([ 0.5000, -0.7500])
    """
    return pointwise.div(input, pointwise.add(pointwise.abs(input), 1))


def _check_lambd(input: Tensor, lambd: float) -> None:
    if lambd < 0:
        top = float(jnp.finfo(input._value.dtype).max)
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{_dtypes.scalar_type_name(input.dtype)}, but found {lambd:g}")


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between
    (``SoftshrinkBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.softshrink(jaxgrad.tensor([-1.0, 0.2, 2.0]))
    tensor([-0.5000,  0.0000,  1.5000])
    """
    _check_lambd(input, lambd)
    return _apply(N.SOFTSHRINK, input, aux=(lambd,))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, 0 elsewhere (``HardshrinkBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.hardshrink(jaxgrad.tensor([-1.0, 0.2, 2.0]))
    tensor([-1.,  0.,  2.])
    """
    return _apply(N.HARDSHRINK, input, aux=(lambd,))


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``, composed as torch composes it.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.tanhshrink(jaxgrad.tensor([0.0]))
    tensor([0.])
    """
    return pointwise.sub(input, pointwise.tanh(input))


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``value`` where ``x <= threshold``, ``x`` elsewhere (``ThresholdBackward0``; in place
    ``ThresholdBackward1``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.threshold(jaxgrad.tensor([0.5, 2.0]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    if inplace:
        return _apply_inplace(N.THRESHOLD_, input, threshold=float(threshold),
                              value=float(value))
    return _apply(N.THRESHOLD, input, aux=(threshold, value))


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """``threshold`` written into ``input``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.threshold_(jaxgrad.tensor([0.5, 2.0]), 1.0, 0.0)
    tensor([0., 2.])
    """
    return globals()["threshold"](input, threshold, value, inplace=True)


def relu_(input: Tensor) -> Tensor:
    """``relu`` written into ``input``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.relu_(jaxgrad.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return pointwise.relu_(input)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: the first half of ``dim`` times the sigmoid of the second
    (``GluBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.glu(jaxgrad.tensor([2.0, 0.0]))
    tensor([1.])
    """
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    wrapped = dim % input.dim()
    if input.shape[wrapped] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {wrapped} is size "
                           f"{input.shape[wrapped]}")
    return _apply(N.GLU, input, dim=wrapped)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """``softmax(-input, dim)``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.softmin(jaxgrad.zeros(2), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim, _stacklevel)
    return reductions.softmax(pointwise.neg(input), dim, dtype)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.normalize(jaxgrad.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """
    denom = _shapes.expand(pointwise.clamp_min(_linalg.norm(input, p, dim, keepdim=True), eps),
                           tuple(input.shape))
    if out is None:
        return pointwise.div(input, denom)
    return pointwise.div(input, denom, out=out)


@tensor_args
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (norms clamped to ``eps``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.cosine_similarity(jaxgrad.tensor([[1.0, 0.0]]), jaxgrad.tensor([[1.0, 1.0]]))
    tensor([0.7071])
    """
    if tuple(x1.shape) != tuple(x2.shape):  # torch's expand_outplace: both, or neither
        shape = _arguments.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
        x1, x2 = _shapes.expand(x1, shape), _shapes.expand(x2, shape)
    norms = [_shapes.clone(_linalg.linalg_vector_norm(t, 2, [dim], True)) for t in (x1, x2)]
    with no_grad():
        for n in norms:
            pointwise.clamp_(n, min=eps)
    return reductions.sum(pointwise.mul(pointwise.div(x1, norms[0]), pointwise.div(x2, norms[1])),
                          dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of ``x1 - x2 + eps`` along the last dim (``NormBackward1``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.pairwise_distance(jaxgrad.tensor([[3.0, 4.0]]), jaxgrad.zeros(1, 2), eps=0.0)
    tensor([5.])
    """
    last = builtins.max(x1.dim(), x2.dim()) - 1
    diff = _apply(N.ADD_SCALAR, pointwise.sub(x1, x2), aux=(eps,))
    return _apply(N.NORM_DIM, diff, ord=float(p), dim=(last,), keepdim=bool(keepdim),
                  dtype=None)


# --- nn round 2: losses -------------------------------------------------------------------------


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
    unclamped = _apply(N.ADD_SCALAR, pointwise.mul(pointwise.neg(target), pointwise.sub(input1,
                                                                                        input2)),
                       aux=(margin,))
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
    mag1 = _apply(N.ADD_SCALAR, reductions.sum(pointwise.mul(input1, input1), targ_dim),
                  aux=(1e-12,))
    mag2 = _apply(N.ADD_SCALAR, reductions.sum(pointwise.mul(input2, input2), targ_dim),
                  aux=(1e-12,))
    cos = pointwise.div(prod_sum, pointwise.sqrt_(pointwise.mul(mag1, mag2)))
    zeros = _creation.zeros_like(cos)
    pos = pointwise.sub(_number(1, cos), cos)
    neg = pointwise.clamp_min_(_apply(N.SUB_SCALAR, cos, aux=(margin,)), 0)
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
        loss = pointwise.sub(input, pointwise.mul(target, pointwise.log(_apply(N.ADD_SCALAR, input,
                                                                               aux=(eps,)))))
    if full:
        stirling = pointwise.add(pointwise.sub(pointwise.mul(target, pointwise.log(target)),
                                               target),
                                 pointwise.mul(pointwise.log(pointwise.mul(target, 2 * math.pi)),
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
    output = pointwise.clamp_min(pointwise.sub(_apply(N.ADD_SCALAR, dist_pos, aux=(margin,)),
                                               dist_neg), 0)
    return _reduce(output, red)


# --- nn round 2: 1-D and adaptive pooling, resampling -------------------------------------------


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


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resample (N, C, L) or (N, C, H, W) input to ``size`` or by ``scale_factor``:
    ``'nearest'``, ``'linear'`` (3-D input) or ``'bilinear'`` (4-D input), with
    ``align_corners`` for the linear modes.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.interpolate(jaxgrad.tensor([[[1.0, 2.0]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    """
    dims = input.ndim - 2
    linear = {1: "linear", 2: "bilinear"}
    if mode not in ("nearest",) + tuple(linear.values()):
        raise NotImplementedError(f"jaxgrad's interpolate has no mode {mode!r}")
    if mode == "nearest" and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if dims not in (1, 2) or (mode != "nearest" and linear[dims] != mode):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the "
            f"modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact "
            f"(got {mode})")
    if antialias:
        raise NotImplementedError("jaxgrad's interpolate has no antialias")
    if (size is None) == (scale_factor is None):
        raise ValueError("either size or scale_factor should be defined" if size is None
                         else "only one of size or scale_factor should be defined")
    if size is not None:
        sizes = tuple(int(s) for s in (size if isinstance(size, (list, tuple))
                                       else [size] * dims))
        scales: tuple = (None,) * dims
    else:
        factors = tuple(float(s) for s in (scale_factor if isinstance(scale_factor,
                                                                      (list, tuple))
                                           else [scale_factor] * dims))
        sizes = tuple(math.floor(n * f) for n, f in zip(input.shape[2:], factors))
        scales = (None,) * dims if recompute_scale_factor else factors
    if mode == "nearest":
        return _apply(N.UPSAMPLE_NEAREST[dims], input, output_size=sizes, scales=scales)
    return _apply(N.UPSAMPLE_LINEAR[dims], input, output_size=sizes,
                  align_corners=bool(align_corners), scales=scales)


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


@functools.partial(jit, static_argnames=("shape", "dtype"))
def _exponential_noise(key, shape, dtype):
    """(next key, Exponential(1) draws): ``exponential_`` on an ``empty_like``."""
    key, sub = jax.random.split(key)
    return key, jax.random.exponential(sub, shape, dtype)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with
    Gumbel(0, 1) noise ``g`` from jaxgrad's generator; ``hard`` returns one-hot vectors whose
    gradient is the soft sample's (straight-through).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> y = F.gumbel_softmax(jaxgrad.zeros(2, 3), hard=True)
    >>> y.sum(-1)
    tensor([1., 1.])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    noise = _random.generator_for(logits.device).draw(functools.partial(
        _exponential_noise, shape=tuple(logits.shape), dtype=logits._value.dtype))
    gumbels = pointwise.neg(pointwise.log(Tensor._make(noise)))
    y_soft = reductions.softmax(pointwise.div(pointwise.add(logits, gumbels), tau), dim)
    if not hard:
        return y_soft
    index = reductions.max(y_soft, dim, keepdim=True)[1]
    y_hard = scatter.scatter_(_creation.zeros_like(logits), dim, index, 1.0)
    return pointwise.add(pointwise.sub(y_hard, y_soft.detach()), y_soft)
