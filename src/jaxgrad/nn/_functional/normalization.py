"""Normalisation and distances: batch_norm, layer_norm, group_norm, instance_norm,
rms_norm, normalize, cosine_similarity, pairwise_distance; weight norm (``norm_except_dim``,
``_weight_norm``, ``_weight_norm_interface``).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence

import jax.numpy as jnp

from ..._core import dtypes as _dtypes
from ..._core.grad_mode import no_grad
from ..._core.jax_setup import jit
from ..._core.tensor import Tensor
from ..._engine.dispatch import apply as _apply
from ..._engine.dispatch import apply_inplace as _apply_inplace
from ..._functions import arguments as _arguments
from ..._functions import linalg as _linalg
from ..._functions import pointwise, reductions
from ..._functions import shapes as _shapes
from ..._functions.opgen import tensor_args
from ..._ops import nn as N
from ..._ops import nn_weight_norm as N_WN
from ..._ops import scalar_overloads as SO


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
    _check_batch_norm_arguments(input, running_mean, running_var, weight, bias, training)
    return native_batch_norm(input, weight, bias, running_mean, running_var, training,
                             momentum, eps)[0]


def _check_batch_norm_arguments(input: Tensor, running_mean: Tensor | None,
                                running_var: Tensor | None, weight: Tensor | None,
                                bias: Tensor | None, training: bool) -> None:
    """torch's ``_batch_norm_impl_index`` checks: the statistics exist in evaluation, and
    every per-channel tensor has one element per channel."""
    if input.numel() == 0:
        return
    num_features = input.shape[1] if input.ndim > 1 else 1
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != num_features:
            raise RuntimeError(f"{name} should contain {num_features} elements not {t.numel()}")
        if t is None and not training and name.startswith("running"):
            raise RuntimeError(f"{name} must be defined in evaluation mode")


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                      momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """torch's ``native_batch_norm``: the output, and the batch mean and 1/std it saves
    (empty in evaluation); training updates the running stats in place.

    >>> import jaxgrad
    >>> out, mean, invstd = jaxgrad.native_batch_norm(jaxgrad.tensor([[1.0], [3.0]]), None,
    ...                                               None, None, None, True, 0.1, 0.0)
    >>> mean, invstd
    (tensor([2.]), tensor([1.]))
    """
    out, mean, invstd = _apply(N.NATIVE_BATCH_NORM, input, weight, bias,
                               aux=(running_mean, running_var), training=bool(training),
                               eps=float(eps))
    if training and running_mean is not None and running_var is not None:
        new_mean, new_var = _running_stats(running_mean._value, running_var._value, mean._value,
                                           input._value, momentum)
        running_mean._write(new_mean)
        running_var._write(new_var)
    return out, mean, invstd


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
    return native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


def native_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None,
                      bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """torch's ``native_layer_norm``: the output, and the mean and 1/std it saves (the
    normalised dims kept as size 1).

    >>> import jaxgrad
    >>> out, mean, rstd = jaxgrad.native_layer_norm(jaxgrad.tensor([[1.0, 3.0]]), [2], None,
    ...                                             None, 0.0)
    >>> mean
    tensor([[2.]])
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or tuple(input.shape[input.ndim - k:]) != shape or input.ndim < k:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    return _apply(N.NATIVE_LAYER_NORM, input, weight, bias, normalized_shape=shape,
                  eps=float(eps))


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
    return native_group_norm(input, weight, bias, n, c, hxw, num_groups, eps)[0]


_GROUP_NORM_ROW = N.NATIVE_GROUP_NORM  # (native_group_norm's parameter ``N`` hides the module)


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int,
                      C: int, HxW: int, group: int,
                      eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """torch's ``native_group_norm``: the output, and the (N, group) mean and 1/std it saves.

    >>> import jaxgrad
    >>> out, mean, rstd = jaxgrad.native_group_norm(jaxgrad.tensor([[[1.0], [3.0]]]), None,
    ...                                             None, 1, 2, 1, 1, 0.0)
    >>> mean
    tensor([[2.]])
    """
    return _apply(_GROUP_NORM_ROW, input, weight, bias, N=int(N), C=int(C), HxW=int(HxW),
                  group=int(group), eps=float(eps))


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
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError('"rms_norm" not implemented for '
                                  f"'{_dtypes.scalar_type_name(input.dtype)}'")
    if eps is None:
        eps = float(jnp.finfo(input._value.dtype).eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    mean_square = reductions.mean(pointwise.pow(input, 2), dims, keepdim=True)
    inv = pointwise.rsqrt(_apply_inplace(SO.ADD_SCALAR, mean_square, aux=(eps, 1)))
    out = pointwise.mul(input, inv)
    return out if weight is None else pointwise.mul(out, weight)


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
    diff = pointwise.with_scalar(SO.ADD_SCALAR, pointwise.sub(x1, x2), eps)
    return _apply(N.NORM_DIM, diff, ord=float(p), dim=(last,), keepdim=bool(keepdim),
                  dtype=None)


def norm_except_dim(v: Tensor, pow: int = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dimension but ``dim``, shaped to broadcast against
    ``v`` (``dim=-1``: the norm of everything), composed as torch composes it.

    >>> import jaxgrad
    >>> jaxgrad.norm_except_dim(jaxgrad.tensor([[3.0, 4.0], [0.0, 1.0]]), 2, 0)
    tensor([[5.],
            [1.]])
    """
    if dim == -1:
        return _apply(N_WN.NORM_ALL, v, ord=float(pow), dim=None, keepdim=False, dtype=None)
    output_size = [1] * v.dim()
    if dim == 0:
        output_size[0] = v.size(0)
        rows = v.contiguous().view(v.size(0), -1)
        return _apply(N.NORM_DIM, rows, ord=float(pow), dim=(1,), keepdim=False,
                      dtype=None).view(output_size)
    if dim == v.dim() - 1:
        output_size[-1] = v.size(-1)
        columns = v.contiguous().view(-1, v.size(-1))
        return _apply(N.NORM_DIM, columns, ord=float(pow), dim=(0,), keepdim=False,
                      dtype=None).view(output_size)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm_interface(v: Tensor, g: Tensor, dim: int = 0) -> tuple[Tensor, Tensor]:
    """torch's fused weight-norm kernel: ``(v * (g / norms), norms)`` with the 2-norms of ``v``
    over every dimension but ``dim`` (the first or the last); WeightNormInterfaceBackward0.

    >>> import jaxgrad
    >>> w, norms = jaxgrad._weight_norm_interface(jaxgrad.tensor([[3.0, 4.0]]),
    ...                                           jaxgrad.tensor([[10.0]]))
    >>> w, norms
    (tensor([[6., 8.]]), tensor([[5.]]))
    """
    return _apply(N_WN.WEIGHT_NORM_INTERFACE, v, g, dim=dim)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * (g / norm_except_dim(v, 2, dim))``: the fused kernel where ``dim`` is the first or
    last dimension (and nothing is half precision), torch's composition otherwise.

    >>> import jaxgrad
    >>> jaxgrad._weight_norm(jaxgrad.tensor([[3.0, 4.0]]), jaxgrad.tensor([[10.0]]), 0)
    tensor([[6., 8.]])
    """
    if v.device != g.device:
        raise RuntimeError("weight_norm: expected v_in and g_in to be on the same device, but "
                           f"v_in is on {v.device} and g_in is on {g.device}")
    v, g = v.contiguous(), g.contiguous()
    half = _dtypes.float16
    if v.dtype is not half and g.dtype is not half and dim in (0, v.dim() - 1):
        return _weight_norm_interface(v, g, dim)[0]
    return pointwise.mul(v, pointwise.div(g, norm_except_dim(v, 2, dim)))
