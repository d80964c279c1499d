"""3-D pooling, max unpooling and ``conv_tbc`` rows of ``jaxgrad.nn.functional``.

The 3-D pooling rows share the n-d kernels of the 2-D rows (``nn.max_pool``, ``nn.avg_pool``,
``nn.adaptive_avg_pool``, ``nn.adaptive_max_pool``): windows over the last three dims, indices
flat over D*H*W. Max pooling saves self and the indices; max unpooling saves only the indices
(its gradient gathers ``grad`` there, derivatives.yaml's ``max_pool_double_backward``).
``conv_tbc`` saves self, weight and bias.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from ._table import Op
from .nn import _conv, _vjp, adaptive_avg_pool, adaptive_max_pool, avg_pool, max_pool, max_pool_grad

MAX_POOL3D = Op("max_pool3d_with_indices", "MaxPool3DWithIndicesBackward0", max_pool,
                outputs=("result0", "result1"), nondiff_outputs=(1,), saves=("self",),
                grads={"self": max_pool_grad(3)},
                grad_nodes={"self": "MaxPool3DWithIndicesBackwardBackward0"})

AVG_POOL3D = Op(
    "avg_pool3d", "AvgPool3DBackward0", avg_pool,
    grads={"self": lambda grad, self, kernel_size, stride, padding, ceil_mode,
           count_include_pad, divisor_override: _vjp(
               avg_pool, 0, grad, self, kernel_size=kernel_size, stride=stride,
               padding=padding, ceil_mode=ceil_mode, count_include_pad=count_include_pad,
               divisor_override=divisor_override)},
    grad_nodes={"self": "AvgPool3DBackwardBackward0"})

ADAPTIVE_AVG_POOL3D = Op(
    "_adaptive_avg_pool3d", "AdaptiveAvgPool3DBackward0", adaptive_avg_pool,
    grads={"self": lambda grad, self, output_size: _vjp(
        adaptive_avg_pool, 0, grad, self, output_size=output_size)},
    grad_nodes={"self": "AdaptiveAvgPool3DBackwardBackward0"})

ADAPTIVE_MAX_POOL3D = Op("adaptive_max_pool3d", "AdaptiveMaxPool3DBackward0", adaptive_max_pool,
                         outputs=("result0", "result1"), nondiff_outputs=(1,), saves=("self",),
                         grads={"self": max_pool_grad(3)},
                         grad_nodes={"self": "AdaptiveMaxPool3DBackwardBackward0"})


def _max_unpool(x, indices, output_size):
    """Each value of ``x`` written at its flat index into a zero (..., *output_size)."""
    n = len(output_size)
    lead = x.shape[:x.ndim - n]
    flat_x = x.reshape((-1, math.prod(x.shape[x.ndim - n:])))
    flat_idx = indices.reshape(flat_x.shape)
    rows = jnp.arange(flat_x.shape[0])[:, None]
    out = jnp.zeros((flat_x.shape[0], math.prod(output_size)), x.dtype)
    return out.at[rows, flat_idx].set(flat_x).reshape(lead + tuple(output_size))


def _unpool_grad(n):
    """max_pool_double_backward(grad, indices, n): ``grad`` read at the indices."""

    def formula(grad, indices):
        lead = grad.shape[:grad.ndim - n]
        flat = grad.reshape(lead + (-1,))
        idx = indices.reshape(lead + (-1,))
        return jnp.take_along_axis(flat, idx, -1).reshape(indices.shape)

    return formula


MAX_UNPOOL2D = Op("max_unpool2d", "MaxUnpool2DBackward0",
                  lambda x, indices, output_size: _max_unpool(x, indices, output_size),
                  aux=("indices",), grads={"self": _unpool_grad(2)})
MAX_UNPOOL3D = Op("max_unpool3d", "MaxUnpool3DBackward0",
                  lambda x, indices, output_size, stride, padding: _max_unpool(
                      x, indices, output_size), aux=("indices",), grads={"self": _unpool_grad(3)})


def _conv_tbc(x, weight, bias, pad):
    """(time, batch, channel) convolution: ``weight`` is (kernel, in, out)."""
    out = _conv(jnp.transpose(x, (1, 2, 0)), jnp.transpose(weight, (2, 1, 0)), bias, (1,),
                ((pad, pad),), (1,), 1)
    return jnp.transpose(out, (2, 0, 1))


def _conv_tbc_grad(argnum):
    def formula(grad, self, weight, bias, pad):
        return _vjp(_conv_tbc, argnum, grad, self, weight, bias, pad=pad)

    return formula


CONV_TBC = Op("conv_tbc", "ConvTbcBackward0", _conv_tbc, inputs=("self", "weight", "bias"),
              promote="common",
              grads={"self": _conv_tbc_grad(0), "weight": _conv_tbc_grad(1),
                     "bias": _conv_tbc_grad(2)})


def _fractional_starts(sample, size, out, pool):
    """torch's generate_intervals: each output's window start along one dim, computed in the
    samples' dtype; the last window ends at the input's end."""
    alpha = (jnp.asarray(size - pool, sample.dtype) / jnp.asarray(max(out - 1, 1), sample.dtype))
    i = jnp.arange(out, dtype=sample.dtype)
    starts = (jnp.trunc((i + sample[..., None]) * alpha).astype(jnp.int64)
              - jnp.trunc(sample * alpha).astype(jnp.int64)[..., None])
    return starts.at[..., out - 1].set(size - pool)


def _fractional_max_pool(x, samples, kernel_size, output_size):
    """Fractional max pooling of the last n dims of (N, C, *spatial) or (C, *spatial) ``x``;
    ``samples`` is (N, C, n), in torch's order (2-D: W then H; 3-D: T, H, W)."""
    n = len(kernel_size)
    batched = x.ndim == n + 2
    xb = x if batched else x[None]
    s = samples[:xb.shape[0]]
    order = (1, 0) if n == 2 else (0, 1, 2)  # which sample each spatial dim uses
    sizes = xb.shape[2:]
    flat = jnp.zeros((), jnp.int64)
    for d in range(n):
        starts = _fractional_starts(s[..., order[d]], sizes[d], output_size[d], kernel_size[d])
        pos = starts[..., :, None] + jnp.arange(kernel_size[d])  # (N, C, out, k)
        shape = list(pos.shape[:2]) + [1] * (2 * n)
        shape[2 + d], shape[2 + n + d] = output_size[d], kernel_size[d]
        flat = flat * sizes[d] + pos.reshape(shape)
    flat = flat.reshape(flat.shape[:2 + n] + (-1,))
    values = jnp.take_along_axis(xb.reshape(xb.shape[:2] + (1,) * n + (-1,)), flat, -1)
    best = jnp.argmax(jnp.where(jnp.isnan(values), jnp.inf, values), -1)
    out = jnp.take_along_axis(values, best[..., None], -1)[..., 0]
    idx = jnp.take_along_axis(flat, best[..., None], -1)[..., 0]
    return (out, idx) if batched else (out[0], idx[0])


FRACTIONAL_MAX_POOL = {
    n: Op(f"fractional_max_pool{n}d", f"FractionalMaxPool{n}DBackward0", _fractional_max_pool,
          aux=("random_samples",), outputs=("result0", "result1"), nondiff_outputs=(1,),
          saves=("self",), grads={"self": max_pool_grad(n)},
          grad_nodes={"self": f"FractionalMaxPool{n}DBackwardBackward0"})
    for n in (2, 3)}
