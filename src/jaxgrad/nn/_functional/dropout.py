"""Dropout: dropout, dropout1d/2d/3d (whole channels), alpha_dropout and feature_alpha_dropout
(SELU's self-normalising dropout).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import jax
import jax.numpy as jnp

from ..._core.jax_setup import jit
from ..._core.tensor import Tensor
from ..._functions import pointwise
from ..._functions import random as _random
from ..._functions import shapes as _shapes
from ..._functions.opgen import tensor_args


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
    key, keep = _keep_mask(key, p, shape, dtype)
    return key, keep / (1 - p).astype(dtype)


@functools.partial(jit, static_argnames=("shape", "dtype"))
def _keep_mask(key, p, shape, dtype):
    """(next key, Bernoulli(1 - p) mask of 0s and 1s in ``dtype``)."""
    key, sub = jax.random.split(key)
    # the probability at the input's width: a float32 model draws float32 uniforms (no 64-bit
    # values inside a user's jax.jit that runs with x64 off)
    width = dtype if jnp.issubdtype(dtype, jnp.floating) else jnp.float32
    return key, jax.random.bernoulli(sub, jnp.asarray(1 - p, width), shape).astype(dtype)


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


_SELU_ALPHA = 1.7580993408473766  # -SELU's scale * alpha: the value a dropped unit takes


@tensor_args
def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's zero mean and unit variance: each element is, with probability
    ``p``, set to SELU's negative saturation, then all are scaled and shifted back (torch's
    ``alpha_dropout``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> x = jaxgrad.randn(10000)
    >>> y = F.alpha_dropout(x, 0.2, training=True)
    >>> round(y.mean().item(), 1) == 0.0 and round(y.std().item(), 1) == 1.0
    True
    """
    _check_p(p)
    return _alpha_dropout(input, p, training, inplace, feature=False)


@tensor_args
def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels of an (N, C, ...) input (torch's
    ``feature_alpha_dropout``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.feature_alpha_dropout(jaxgrad.ones(2, 3, 4), 0.5, training=False).sum()
    tensor(24.)
    """
    _check_p(p)
    return _alpha_dropout(input, p, training, inplace, feature=True)


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                   feature: bool) -> Tensor:
    """torch's ``_dropout_impl`` for the alpha variants: ``input * (noise * a) + b`` with a keep
    mask ``noise``, ``a = ((alpha^2 p + 1)(1 - p))^-1/2`` and ``b = (noise - 1) alpha a +
    alpha a p``."""
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = Tensor._make(jnp.zeros((), input._value.dtype))
        return pointwise.mul_(input, zero) if inplace else pointwise.mul(input, zero)
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape)
    if feature:
        shape = shape[:2] + (1,) * (len(shape) - 2)
    keep = _random.generator_for(input.device).draw(functools.partial(
        _keep_mask, p=float(p), shape=shape, dtype=input._value.dtype))
    a = 1.0 / ((_SELU_ALPHA ** 2 * p + 1) * (1 - p)) ** 0.5
    b = Tensor._make((keep - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p)
    scale = Tensor._make(keep * a)
    if inplace:
        return pointwise.add_(pointwise.mul_(input, scale), b)
    return pointwise.add(pointwise.mul(input, scale), b)
