"""The resampling rows of ``interpolate``: torch's ``upsample_*`` kernels, one row per torch op.

Every mode resamples each spatial dim on its own (torch's separable CPU kernels), so a row is
a chain of per-dim steps: nearest modes gather the source position torch picks, the others
contract the dim with an (out, in) matrix of torch's weights (linear, cubic with A = -0.75, and
the antialiased filters: triangle, cubic with A = -0.5, Lanczos-3). The weights are computed as
torch's kernels compute them, in the input's precision (``in_float32`` for halves). The ops are
linear in the input, so a gradient is the adjoint (``jax.vjp``), and so is its gradient.
Nothing is saved: as torch's, a gradient needs only the sizes and scales.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ._table import Op
from .half_precision import in_float32
from .nn import _vjp


def _scale(in_size, out_size, align_corners, scale, dtype):
    """torch's area_pixel_compute_scale: source steps per output step."""
    if align_corners:
        return dtype((in_size - 1) / (out_size - 1)) if out_size > 1 else dtype(0)
    return dtype(1.0 / scale) if scale else dtype(in_size) / dtype(out_size)


def _source(scale, dst, align_corners, cubic, dtype):
    """torch's area_pixel_compute_source_index for each output position ``dst``."""
    if align_corners:
        return scale * dst
    src = scale * (dst + dtype(0.5)) - dtype(0.5)
    return src if cubic else np.maximum(src, dtype(0))


def _index_and_lambda(real, in_size, dtype):
    """torch's guard_index_and_lambda: the source cell and the fraction into it."""
    index = np.minimum(np.floor(real).astype(np.int64), in_size - 1)
    return index, np.clip(real - index, 0, 1).astype(dtype)


def _scatter(rows, cols, weights, out_size, in_size, dtype):
    """An (out, in) matrix with ``weights`` added at (``rows``, ``cols``)."""
    m = np.zeros((out_size, in_size), dtype)
    np.add.at(m, (rows, np.clip(cols, 0, in_size - 1)), weights)
    return m


def _linear_matrix(in_size, out_size, align_corners, scale, dtype):
    """torch's linear interpolation weights along one dim."""
    s = _scale(in_size, out_size, align_corners, scale, dtype)
    i0, lam = _index_and_lambda(_source(s, np.arange(out_size, dtype=dtype), align_corners,
                                        False, dtype), in_size, dtype)
    rows = np.arange(out_size)
    return (_scatter(rows, i0, dtype(1) - lam, out_size, in_size, dtype)
            + _scatter(rows, i0 + (i0 < in_size - 1), lam, out_size, in_size, dtype))


def _cubic_matrix(in_size, out_size, align_corners, scale, dtype):
    """torch's bicubic weights along one dim (cubic convolution, A = -0.75, edges clamped)."""
    s = _scale(in_size, out_size, align_corners, scale, dtype)
    index, t = _index_and_lambda(_source(s, np.arange(out_size, dtype=dtype), align_corners,
                                         True, dtype), in_size, dtype)
    a, one = dtype(-0.75), dtype(1)

    def near(x):  # cubic_convolution1, |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + one

    def far(x):  # cubic_convolution2, 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    coefficients = (far(t + one), near(t), near(one - t), far(one - t + one))
    rows = np.arange(out_size)
    return sum(_scatter(rows, index - 1 + k, c, out_size, in_size, dtype)
               for k, c in enumerate(coefficients))


def _triangle(x):
    x = np.abs(x)
    return np.where(x < 1, 1 - x, 0)


def _cubic_aa(x):  # (Pillow's bicubic filter: A = -0.5)
    a, x = -0.5, np.abs(x)
    return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                    np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0))


def _lanczos3(x):
    return np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0)


_AA_FILTERS = {"bilinear": (_triangle, 2), "bicubic": (_cubic_aa, 4), "lanczos": (_lanczos3, 6)}


def _antialias_matrix(kind, in_size, out_size, align_corners, scale, dtype):
    """torch's antialiased weights along one dim (_compute_weights_aa): the filter widened by
    the downscale factor, over the source cells it covers, normalised to sum to one."""
    fn, interp_size = _AA_FILTERS[kind]
    s = _scale(in_size, out_size, align_corners, scale, dtype)
    support = dtype(interp_size * 0.5) * s if s >= 1 else dtype(interp_size * 0.5)
    max_size = math.ceil(support) * 2 + 1
    inverse = dtype(1) / s if s >= 1 else dtype(1)
    m = np.zeros((out_size, in_size), dtype)
    for i in range(out_size):  # (torch's mixed float/double arithmetic, step by step)
        center = s * dtype(i + 0.5)
        start = max(int(np.float64(center - support) + 0.5), 0)
        size = int(np.clip(min(int(np.float64(center + support) + 0.5), in_size) - start, 0,
                           max_size))
        offsets = (np.arange(start, start + size, dtype=dtype) - center).astype(np.float64)
        weights = fn(((offsets + 0.5) * np.float64(inverse)).astype(dtype)).astype(dtype)
        total = np.cumsum(weights)[-1] if size else dtype(0)  # (summed in order, as torch)
        m[i, start:start + size] = weights / total if total != 0 else weights
    return m


def _nearest_index(in_size, out_size, scale, exact=False):
    """torch's nearest_idx (or nearest_exact_idx): the source of each output position, in
    float32 arithmetic."""
    if not exact and out_size == in_size:
        return np.arange(out_size)
    if not exact and out_size == 2 * in_size:
        return np.arange(out_size) >> 1
    s = np.float32(1.0 / scale if scale else np.float32(in_size) / np.float32(out_size))
    if exact:
        src = np.floor(((np.arange(out_size) + 0.5) * np.float64(s)).astype(np.float32))
    else:
        src = np.floor(np.arange(out_size, dtype=np.float32) * s)
    return np.minimum(src.astype(np.int64), in_size - 1)


def _resample_nearest(x, output_size, scales, exact=False):
    for k, (size, scale) in enumerate(zip(output_size, scales)):
        axis = x.ndim - len(output_size) + k
        x = jnp.take(x, _nearest_index(x.shape[axis], size, scale, exact), axis=axis)
    return x


def _resample_matrix(x, output_size, scales, matrix):
    dtype = np.dtype(x.dtype).type  # (the weights in x's precision: float32 for halves)
    for k, (size, scale) in enumerate(zip(output_size, scales)):
        axis = x.ndim - len(output_size) + k
        m = jnp.asarray(matrix(x.shape[axis], size, scale, dtype))
        x = jnp.moveaxis(jnp.tensordot(x, m, axes=((axis,), (1,)),
                                       precision=jax.lax.Precision.HIGHEST), -1, axis)
    return x


# (each forward takes torch's ``input_size`` too, unread: its backward op's argument, so that a
# gradient needs no saved input, as torch's saves none)
def _nearest(x, output_size, scales, input_size):
    return _resample_nearest(x, output_size, scales)


def _nearest_exact(x, output_size, scales, input_size):
    return _resample_nearest(x, output_size, scales, exact=True)


@in_float32  # (half inputs computed in float32, rounded once, as torch's opmath)
def _linear(x, output_size, align_corners, scales, input_size):
    return _resample_matrix(x, output_size, scales, lambda n, size, scale, dtype: _linear_matrix(
        n, size, align_corners, scale, dtype))


@in_float32
def _bicubic(x, output_size, align_corners, scales, input_size):
    return _resample_matrix(x, output_size, scales, lambda n, size, scale, dtype: _cubic_matrix(
        n, size, align_corners, scale, dtype))


def _antialiased(kind):
    @in_float32
    def forward(x, output_size, align_corners, scales, input_size):
        return _resample_matrix(x, output_size, scales, lambda n, size, scale, dtype: (
            _antialias_matrix(kind, n, size, align_corners, scale, dtype)))

    return forward


def _nearest_row(name: str, node: str, forward) -> Op:
    """A nearest resampling row: its gradient is the adjoint of ``forward`` (and so on)."""

    def grad(grad, output_size, scales, input_size):
        return _vjp(forward, 0, grad, jnp.zeros(input_size, grad.dtype), output_size=output_size,
                    scales=scales, input_size=input_size)

    return Op(name, node, forward, grads={"self": grad},
              grad_nodes={"self": node.replace("Backward0", "BackwardBackward0")})


def _interpolating_row(name: str, node: str, forward) -> Op:
    """A resampling row with ``align_corners``: its gradient is the adjoint of ``forward``."""

    def grad(grad, output_size, align_corners, scales, input_size):
        return _vjp(forward, 0, grad, jnp.zeros(input_size, grad.dtype), output_size=output_size,
                    align_corners=align_corners, scales=scales, input_size=input_size)

    return Op(name, node, forward, grads={"self": grad},
              grad_nodes={"self": node.replace("Backward0", "BackwardBackward0")})


UPSAMPLE_NEAREST = {n: _nearest_row(f"upsample_nearest{n}d", f"UpsampleNearest{n}DBackward0",
                                    _nearest)
                    for n in (1, 2, 3)}
UPSAMPLE_NEAREST_EXACT = {n: _nearest_row(f"_upsample_nearest_exact{n}d",
                                          f"UpsampleNearestExact{n}DBackward0", _nearest_exact)
                          for n in (1, 2, 3)}
UPSAMPLE_LINEAR = {n: _interpolating_row(f"upsample_{kind}{n}d",
                                         f"Upsample{kind.title()}{n}DBackward0", _linear)
                   for n, kind in ((1, "linear"), (2, "bilinear"), (3, "trilinear"))}
UPSAMPLE_BICUBIC = _interpolating_row("upsample_bicubic2d", "UpsampleBicubic2DBackward0", _bicubic)
UPSAMPLE_ANTIALIASED = {kind: _interpolating_row(f"_upsample_{kind}2d_aa",
                                                 f"Upsample{kind.title()}2DAaBackward0",
                                                 _antialiased(kind))
                        for kind in _AA_FILTERS}
