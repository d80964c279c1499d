"""Rows of random ops whose backward is more than a zero: rrelu (torch's ``rrelu_with_noise``).

The noise is drawn outside the kernel (``jaxgrad._functions.random``) and reaches the row as a
traced operand, so a new draw never compiles a new kernel. derivatives.yaml:

- ``rrelu_with_noise``: ``self: rrelu_with_noise_backward(grad, self, noise, lower, upper,
  training, false)``, which is ``grad * noise`` in training (when ``upper - lower > 1e-6``),
  else ``leaky_relu_backward`` with the slope ``(lower + upper) / 2``; it saves self and noise;
- ``rrelu_with_noise_``: the same on the result (``is_result=true``), which refuses a negative
  slope in the leaky_relu branch, as ``leaky_relu_``'s backward does.
"""

from __future__ import annotations

import jax.numpy as jnp

from ._table import Op
from .half_precision import in_float32, times_scalar
from .nn import refuse_negative_inplace_slope


def _rrelu(x, noise, slope, training, use_noise):
    """Training: ``x * noise`` (the noise is 1 where ``x > 0``, the drawn slope elsewhere, as
    torch's ``_rrelu_with_noise_train`` writes it); eval: leaky_relu with ``slope``."""
    if training:
        return x * noise.astype(x.dtype)
    return jnp.where(x > 0, x, x * slope)


def _rrelu_backward(grad, x, noise, slope, training, use_noise):
    if training and use_noise:
        return grad * noise.astype(grad.dtype)
    return jnp.where(x > 0, grad, times_scalar(grad, slope))


def _rrelu_grad(grad, self, noise, slope, training, use_noise):
    return _rrelu_backward(grad, self, noise, slope, training, use_noise)


def _inplace_rrelu_grad(grad, result, noise, slope, training, use_noise):
    if not (training and use_noise):
        refuse_negative_inplace_slope(slope)
    return _rrelu_backward(grad, result, noise, slope, training, use_noise)


# ``slope`` is the eval slope ``(lower + upper) / 2`` (computed in double, as torch does);
# ``use_noise``: training with ``upper - lower > 1e-6`` (the backward multiplies by the noise)
RRELU_WITH_NOISE = Op("rrelu_with_noise", "RreluWithNoiseBackward0", in_float32(_rrelu),
                      aux=("noise", "slope"), grads={"self": in_float32(_rrelu_grad)},
                      grad_nodes={"self": "RreluWithNoiseBackwardBackward0"})
# in place the slope is static, so that the backward can refuse a negative one as torch's does
RRELU_WITH_NOISE_ = Op("rrelu_with_noise_", "RreluWithNoiseBackward1", in_float32(_rrelu),
                       aux=("noise",), grads={"self": in_float32(_inplace_rrelu_grad)})
