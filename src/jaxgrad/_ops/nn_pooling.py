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
