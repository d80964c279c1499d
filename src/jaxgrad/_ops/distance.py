"""Distances: ``dist`` (the p-norm of a difference), ``_cdist_forward`` (every pair of rows of
two batches of matrices), ``_euclidean_dist`` (its matrix-product form for p = 2) and
``_pdist_forward`` (every pair of rows of one matrix).

The backward formulas are ATen's distance kernels' (``Distance.cpp``): a gradient of 0 where a
distance is 0 (p = 2 and the general p), ``sign(diff)`` for p = 1 (0 at a zero difference), for
p = inf the full gradient to every coordinate whose difference ties the maximum, and none at
all for p = 0. torch has no derivative of ``_cdist_backward``/``_pdist_backward``: a second
backward through them raises its NotImplementedError.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ._table import Op
from .reductions import _vector_norm, _vector_norm_grad


def _not_differentiable_again(name: str):
    """The identity, whose derivative raises torch's error for ``name`` (a formula torch's
    derivatives.yaml marks ``not_implemented``). A formula applies it to the saved values it
    reads, not to ``grad``: JAX still transposes the formula in ``grad`` (the row's kernel
    carries it to ``jax.grad``), while a create_graph gradient's own backward raises."""

    @jax.custom_vjp
    def identity(x):
        return x

    def forward(x):
        return x, None

    def backward(_, g):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")

    identity.defvjp(forward, backward)
    return identity


_CDIST_TWICE = _not_differentiable_again("_cdist_backward")
_PDIST_TWICE = _not_differentiable_again("_pdist_backward")


# --- dist ----------------------------------------------------------------------------------------

def _dist(x, y, p):
    return _vector_norm(x - y, p, None, False, None)


def _dist_grad(sign: float):
    def formula(grad, self, other, result, p):
        g = _vector_norm_grad(grad, self - other, result, p, None, False)
        if g is None and sign < 0:  # torch's ``-norm_backward(...)`` of an undefined tensor
            raise RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor "
                               "in C++) for argument #0 'self'")
        return None if g is None else sign * g

    return formula


# ``p`` is static here (the formula's branches are torch's per value of p)
DIST = Op("dist", "DistBackward0", _dist, inputs=("self", "other"), promote="common",
          grads={"self": _dist_grad(1.0), "other": _dist_grad(-1.0)},
          grad_nodes={"self": "MulBackward0", "other": "NegBackward0"})


# --- cdist, pdist: the pairwise kernels -----------------------------------------------------------

def _pairwise(diff, p):
    """ATen's ``map``/``red``/``finish`` of a distance over the last dim of ``diff``."""
    a = jnp.abs(diff)
    if p == 0:
        return jnp.sum(jnp.minimum(jnp.ceil(a), 1), axis=-1)
    if p == 1:
        return jnp.sum(a, axis=-1)
    if p == 2:
        return jnp.sqrt(jnp.sum(a * a, axis=-1))
    if math.isinf(p):
        return jnp.max(a, axis=-1)
    return jnp.sum(a ** p, axis=-1) ** (1 / p)


def _pair_grad(diff, grad, dist, p):
    """ATen's per-coordinate ``backward(diff, grad, dist, p)`` of a distance (``grad`` and
    ``dist`` broadcast over the last dim of ``diff``)."""
    grad, dist = grad[..., None], dist[..., None]
    zero = jnp.zeros((), diff.dtype)
    if p == 1:
        return grad * jnp.sign(diff)
    if math.isinf(p):
        return grad * jnp.sign(diff) * (1 - jnp.minimum(1, jnp.ceil(jnp.abs(
            jnp.abs(diff) - dist))))
    safe = jnp.where(dist == 0, jnp.ones_like(dist), dist)
    if p == 2:
        return jnp.where(dist == 0, zero, grad * diff / safe)
    if p < 2:
        a = jnp.abs(diff)
        value = jnp.where(dist == 0, zero,
                          jnp.sign(diff) * a ** (p - 1) * grad / safe ** (p - 1))
        return jnp.where((diff == 0) & (p < 1), zero, value)
    return jnp.where(dist == 0, zero, diff * jnp.abs(diff) ** (p - 2) * grad / safe ** (p - 1))


def _batch_shapes(x1, x2):
    batch = np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    return batch + x1.shape[-2:], batch + x2.shape[-2:]


def _cdist(x1, x2, p, compute_mode):
    s1, s2 = _batch_shapes(x1, x2)
    x1, x2 = jnp.broadcast_to(x1, s1), jnp.broadcast_to(x2, s2)
    return _pairwise(x1[..., :, None, :] - x2[..., None, :, :], p)


def _cdist_backward(grad, x1, x2, p, dist):
    """torch's ``_cdist_backward(grad, x1, x2, p, cdist)``: the gradient of ``x1`` (of the
    broadcast batch shape)."""
    s1, s2 = _batch_shapes(x1, x2)
    x1, x2 = jnp.broadcast_to(x1, s1), jnp.broadcast_to(x2, s2)
    if p == 0 or 0 in x1.shape or 0 in x2.shape:
        return jnp.zeros(x1.shape, grad.dtype)
    x1, x2, dist = _CDIST_TWICE(x1), _CDIST_TWICE(x2), _CDIST_TWICE(dist)
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    return jnp.sum(_pair_grad(diff, grad, dist, p), axis=-2)


CDIST = Op("_cdist_forward", "CdistBackward0", _cdist, inputs=("x1", "x2"), promote="common",
           grads={"x1": lambda grad, x1, x2, result, p: _cdist_backward(grad, x1, x2, p, result),
                  "x2": lambda grad, x1, x2, result, p: _cdist_backward(
                      jnp.swapaxes(grad, -1, -2), x2, x1, p, jnp.swapaxes(result, -1, -2))},
           grad_nodes={"x1": "CdistBackwardBackward0", "x2": "CdistBackwardBackward0"})


def _euclidean_dist(x1, x2):
    """ATen's ``_euclidean_dist``: ``|x1|^2 - 2 x1.x2 + |x2|^2`` as one matrix product, clamped
    at 0, square-rooted (the p = 2 form ``cdist`` uses for more than 25 rows)."""
    x1_norm = jnp.sum(x1 * x1, axis=-1, keepdims=True)
    x2_norm = jnp.sum(x2 * x2, axis=-1, keepdims=True)
    x1_ = jnp.concatenate([x1 * -2, x1_norm, jnp.ones_like(x1_norm)], axis=-1)
    x2_ = jnp.concatenate([x2, jnp.ones_like(x2_norm), x2_norm], axis=-1)
    result = jnp.matmul(x1_, jnp.swapaxes(x2_, -1, -2), precision=jax.lax.Precision.HIGHEST)
    return jnp.sqrt(jnp.maximum(result, 0))


def _euclidean_ratio(grad, result):
    safe = jnp.where(result == 0, jnp.ones_like(result), result)
    return jnp.where(result == 0, jnp.zeros((), grad.dtype), grad / safe)


EUCLIDEAN_DIST = Op(
    "_euclidean_dist", "EuclideanDistBackward0", _euclidean_dist, inputs=("x1", "x2"),
    promote="common",
    grads={"x1": lambda grad, x1, x2, result: x1 * jnp.sum(
        _euclidean_ratio(grad, result), axis=-1, keepdims=True) - jnp.matmul(
        _euclidean_ratio(grad, result), x2, precision=jax.lax.Precision.HIGHEST),
           "x2": lambda grad, x1, x2, result: x2 * jnp.sum(
        _euclidean_ratio(grad, result), axis=-2)[..., None] - jnp.matmul(
        jnp.swapaxes(_euclidean_ratio(grad, result), -1, -2), x1,
        precision=jax.lax.Precision.HIGHEST)},
                     grad_nodes={"x1": "SubBackward0", "x2": "SubBackward0"})


def _pairs(n: int):
    i, j = np.triu_indices(n, 1)
    return i, j


def _pdist(x, p):
    n, m = x.shape
    if n <= 1:
        return jnp.zeros((0,), x.dtype)
    i, j = _pairs(n)
    if m == 0:
        return jnp.zeros((len(i),), x.dtype)
    return _pairwise(x[i] - x[j], p)


def _pdist_grad(grad, self, result, p):
    n, m = self.shape
    if p == 0 or n <= 1 or m == 0:
        return jnp.zeros(self.shape, grad.dtype)
    i, j = _pairs(n)
    self, result = _PDIST_TWICE(self), _PDIST_TWICE(result)
    g = _pair_grad(self[i] - self[j], grad, result, p)
    return jnp.zeros(self.shape, g.dtype).at[i].add(g).at[j].add(-g)


PDIST = Op("_pdist_forward", "PdistBackward0", _pdist, grads={"self": _pdist_grad})
