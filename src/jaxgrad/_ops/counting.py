"""Counting ops, not differentiable: bincount (its weights record torch's NotImplemented node)
and histc. Their output lengths are static arguments, worked out by the public functions."""

from __future__ import annotations

import jax.numpy as jnp

from ._table import Op


def _bincount(input, weights, length, dtype):
    weights = None if weights is None else weights.astype(dtype)
    counts = jnp.bincount(input, weights, length=length)
    return counts.astype(dtype)


def _weights_not_implemented(grad):
    raise RuntimeError("derivative for aten::bincount is not implemented")


BINCOUNT = Op("bincount", None, lambda input, length, dtype: _bincount(input, None, length, dtype),
              inputs=("self",))
BINCOUNT_WEIGHTS = Op("bincount", "NotImplemented", _bincount, inputs=("self", "weights"),
                      grads={"weights": _weights_not_implemented})


def _histc(input, low, high, bins):
    """torch's histogramdd linear kernel: bin ``(x - low) * bins / (high - low)`` truncated, the
    right edge in the last bin, elements outside [low, high] (and NaNs) not counted."""
    x = input.reshape(-1)
    low, high = jnp.asarray(low, x.dtype), jnp.asarray(high, x.dtype)
    inside = (x >= low) & (x <= high)
    pos = ((x - low) * bins / (high - low))
    pos = jnp.where(inside, pos, 0).astype(jnp.int32)
    pos = jnp.where(pos == bins, bins - 1, pos)
    return jnp.zeros(bins, x.dtype).at[pos].add(inside.astype(x.dtype))


HISTC = Op("histc", None, _histc, inputs=("self",), aux=("low", "high"))


def _histogram(input, weight, edges, density):
    """torch's histogram over ``edges`` (increasing): element x falls in the bin whose left edge
    is the last one <= x, the last edge in the last bin; elements outside (and NaNs) are not
    counted; ``density`` divides by the total and the bin widths."""
    x = input.reshape(-1)
    e = edges.astype(x.dtype)
    bins = e.shape[0] - 1
    inside = (x >= e[0]) & (x <= e[-1])
    pos = jnp.clip(jnp.searchsorted(e, x, side="right") - 1, 0, bins - 1)
    ones = inside.astype(x.dtype)
    w = ones if weight is None else jnp.where(inside, weight.reshape(-1).astype(x.dtype), 0)
    hist = jnp.zeros(bins, x.dtype).at[pos].add(w)
    if density:
        hist = hist / (hist.sum() * jnp.diff(e))
    return hist, e


def _histogram_not_implemented(grads):
    raise RuntimeError("derivative for aten::histogram is not implemented")


# torch records its NotImplemented node on both outputs where an input requires grad
HISTOGRAM = Op("histogram", "NotImplemented",
               lambda input, edges, density: _histogram(input, None, edges, density),
               inputs=("self",), aux=("edges",), outputs=("hist", "bin_edges"),
               grads={"self": _histogram_not_implemented})
HISTOGRAM_WEIGHT = Op("histogram", "NotImplemented", _histogram, inputs=("self", "weight"),
                      aux=("edges",), outputs=("hist", "bin_edges"),
                      grads={"self": _histogram_not_implemented,
                             "weight": _histogram_not_implemented})


def _histogramdd(input, weight, edges, counts, density):
    """histogram of the rows of ``input`` (N, D) over the D edge lists (concatenated in
    ``edges``, ``counts[d] + 1`` each): the D-dimensional bin of each row, as ``_histogram``
    bins each coordinate; a row outside any dim's edges is not counted."""
    x = input.reshape(-1, len(counts))
    e = edges.astype(x.dtype)
    per_dim, flat, inside, start = [], jnp.zeros(x.shape[0], jnp.int32), True, 0
    for d, bins in enumerate(counts):
        ed = e[start:start + bins + 1]
        start += bins + 1
        per_dim.append(ed)
        col = x[:, d]
        inside = inside & (col >= ed[0]) & (col <= ed[-1])
        flat = flat * bins + jnp.clip(jnp.searchsorted(ed, col, side="right") - 1, 0, bins - 1)
    w = inside.astype(x.dtype) if weight is None else jnp.where(
        inside, weight.reshape(-1).astype(x.dtype), 0)
    size = 1
    for bins in counts:
        size *= bins
    hist = jnp.zeros(size, x.dtype).at[flat].add(w).reshape(counts)
    if density:
        volume = 1
        for d, ed in enumerate(per_dim):
            shape = [1] * len(counts)
            shape[d] = -1
            volume = volume * jnp.diff(ed).reshape(shape)
        hist = hist / (hist.sum() * volume)
    return (hist, *per_dim)


HISTOGRAMDD = Op("histogramdd", "NotImplemented",
                 lambda input, edges, counts, density: _histogramdd(input, None, edges, counts,
                                                                    density),
                 inputs=("self",), aux=("edges",), grads={"self": _histogram_not_implemented})
HISTOGRAMDD_WEIGHT = Op("histogramdd", "NotImplemented", _histogramdd, inputs=("self", "weight"),
                        aux=("edges",), grads={"self": _histogram_not_implemented,
                                               "weight": _histogram_not_implemented})
