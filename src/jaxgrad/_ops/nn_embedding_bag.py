"""``_embedding_bag``: sums, means or maxima of bags of embedding rows.

Bags are given by ``offsets`` into a flat ``indices``; entries equal to ``padding_idx`` (>= 0,
or -1 for none) are left out of their bag (and of a mean's count). Outputs as torch's CPU
kernel gives them: the bags, ``offset2bag`` (each index's bag), ``bag_size`` (zeros for sum)
and ``max_indices`` (the row each maximum came from; the bag sizes for mean, zeros for sum).
The weight's gradient is a function of the gradient alone (no graph of its own for sum and
mean); the per-sample weights' one reads the weight and has no derivative in torch.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._table import Op

SUM, MEAN, MAX = 0, 1, 2


def _bags(indices, offsets, include_last_offset, padding_idx):
    """(bag count, offset2bag, membership mask (bags, indices) of the entries counted)."""
    n = indices.shape[0]
    starts = offsets[:-1] if include_last_offset else offsets
    bags = starts.shape[0]
    position = jnp.arange(n)
    offset2bag = jnp.sum(position[:, None] >= starts[None, 1:], axis=1) if bags else \
        jnp.zeros((n,), jnp.int64)
    # (with include_last_offset the last bag runs to the end of ``indices``, whatever the last
    # offset says, as torch's general CPU path has it)
    keep = jnp.ones((n,), bool) if padding_idx < 0 else indices != padding_idx
    member = (offset2bag[None, :] == jnp.arange(bags)[:, None]) & keep[None, :]
    return bags, offset2bag.astype(jnp.int64), member


def _embedding_bag(weight, per_sample_weights, indices, offsets, mode, include_last_offset,
                   padding_idx, scale_grad_by_freq=False):
    bags, offset2bag, member = _bags(indices, offsets, include_last_offset, padding_idx)
    rows = weight[indices]
    dtype = weight.dtype
    zero = jnp.zeros((), dtype)
    count = jnp.sum(member, axis=1)
    if mode == MAX:
        candidates = jnp.where(member[:, :, None], rows[None], -jnp.inf)
        which = jnp.argmax(candidates, axis=1)  # (the first of tied maxima, as torch's kernel)
        picked = rows[which, jnp.arange(rows.shape[1])[None, :]]
        empty = (count == 0)[:, None]
        out = jnp.where(empty, zero, picked)
        max_indices = jnp.where(empty, 0, indices[which]).astype(jnp.int64)
        return out, offset2bag, count.astype(jnp.int64), max_indices
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    out = jnp.einsum("bn,nd->bd", member.astype(dtype), rows)
    if mode == MEAN:
        out = jnp.where((count == 0)[:, None], zero, out / jnp.maximum(count, 1)[:, None]
                        .astype(dtype))
        size = count.astype(jnp.int64)
        return out, offset2bag, size, size
    zeros = jnp.zeros((bags,), jnp.int64)
    return out, offset2bag, zeros, zeros


def _weight_grad(grad, indices, offsets, per_sample_weights, result2, result3, weight_shape,
                 mode, include_last_offset, padding_idx, scale_grad_by_freq):
    """sum/mean: each counted entry's bag gradient (times its per-sample weight, over the bag's
    size) to its row, divided by the row's frequency with ``scale_grad_by_freq``; max: each
    bag's gradient to the rows its maxima came from (``result3``)."""
    if mode == MAX:
        g = jnp.where((result2 == 0)[:, None], jnp.zeros((), grad.dtype), grad)
        column = jnp.broadcast_to(jnp.arange(weight_shape[1]), g.shape)
        return jnp.zeros(weight_shape, grad.dtype).at[result3, column].add(g)

    def bags_of(w):
        return _embedding_bag(w, per_sample_weights, indices, offsets, mode,
                              include_last_offset, padding_idx)[0]

    out = jax.vjp(bags_of, jnp.zeros(weight_shape, grad.dtype))[1](grad)[0]
    if scale_grad_by_freq:
        out = out / _frequency_divisors(indices, weight_shape[0], grad.dtype)[:, None]
    return out


def _frequency_divisors(indices, rows, dtype):
    """Per row, what torch's CPU kernel divides its gradient by under scale_grad_by_freq: the
    i-th distinct index (in sorted order) is scaled by the count of ``sorted(indices)[i]``
    (``counts[indices_data[i]]`` in _embedding_bag_dense_backward_cpu_sum_mean), which is its
    own count only while no earlier index repeats."""
    freq = jnp.zeros((rows,), jnp.int32).at[indices].add(1)
    rank = jnp.cumsum(freq > 0) - 1
    ordered = jnp.sort(indices)
    divisor = freq[ordered[jnp.clip(rank, 0, indices.shape[0] - 1)]]
    return jnp.maximum(divisor, 1).astype(dtype)


def _per_sample_weights_grad(grad, weight, indices, offsets, include_last_offset,
                             padding_idx):
    _, offset2bag, member = _bags(indices, offsets, include_last_offset, padding_idx)
    counted = jnp.any(member, axis=0)
    dots = jnp.sum(grad[offset2bag] * weight[indices], axis=1)
    return jnp.where(counted, dots, jnp.zeros((), dots.dtype))


EMBEDDING_BAG = Op(
    "_embedding_bag", "EmbeddingBagBackward0", _embedding_bag,
    inputs=("weight", "per_sample_weights"), aux=("indices", "offsets"),
    outputs=("result0", "result1", "result2", "result3"), nondiff_outputs=(1, 2, 3),
    grads={"weight": _weight_grad, "per_sample_weights": _per_sample_weights_grad},
    grad_not_implemented={"weight": "_embedding_bag_backward"},
    grad_nodes={"weight": "EmbeddingBagBackwardBackward0", "per_sample_weights": "NotImplemented"})
