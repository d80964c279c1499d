"""Weight normalisation: ``_weight_norm_interface`` (torch's fused kernel, used by
``_weight_norm`` when ``dim`` is the first or last dimension): ``w = v * (g / norms)`` and the
norms of ``v`` over every dimension but ``dim``. Its backward is torch's
``_weight_norm_differentiable_backward`` (it saves v, g and the norms).
"""

from __future__ import annotations

import jax.numpy as jnp

from ._table import Op
from .reductions import _vector_norm, _vector_norm_grad


def _others(v, dim):
    return tuple(i for i in range(v.ndim) if i != dim % max(v.ndim, 1))


def _weight_norm(v, g, dim):
    norms = jnp.sqrt(jnp.sum(v * v, axis=_others(v, dim), keepdims=True))
    norms = norms.reshape(g.shape)
    return v * (g / norms).reshape(norms.shape + (1,) * (v.ndim - norms.ndim)), norms


def _per_dim_sums(grad, v, dim):
    return jnp.sum(grad * v, axis=_others(v, dim), keepdims=True)


def _grad_v(grad, v, g, result1, dim):
    sums = _per_dim_sums(grad, v, dim)
    norms, gain = result1.reshape(sums.shape), g.reshape(sums.shape)
    return (gain / norms) * (grad - v * (sums / (norms * norms)))


def _grad_g(grad, v, result1, dim):
    sums = _per_dim_sums(grad, v, dim)
    return (sums / result1.reshape(sums.shape)).reshape(result1.shape)


WEIGHT_NORM_INTERFACE = Op(
    "_weight_norm_interface",
    "WeightNormInterfaceBackward0",
    _weight_norm,
    inputs=("v", "g"),
    aux=(),
    outputs=("result0", "result1"),
    nondiff_outputs=(1,),
    grads={"v": _grad_v, "g": _grad_g},
    grad_nodes={"v": "MulBackward0", "g": "DivBackward0"},
)

# at::norm(input, p) as C++ callers use it (norm_except_dim with dim=-1): norm.Scalar,
# NormBackward0, with the vector norm's backward
NORM_ALL = Op(
    "norm",
    "NormBackward0",
    _vector_norm,
    promote="float",
    grads={"self": _vector_norm_grad},
    grad_nodes={"self": "MulBackward0"},
)
