"""Sampling rows of ``jaxgrad.nn.functional``: ``im2col`` (``F.unfold``), ``col2im``
(``F.fold``), ``affine_grid_generator`` and ``grid_sampler_2d``/``_3d`` (``F.grid_sample``).

Both are linear and each is the other's adjoint, as derivatives.yaml writes them: im2col's
backward is col2im of the gradient (it saves only the input's spatial size), col2im's is im2col
of the gradient (it saves nothing). Leading dims (the optional batch) pass through. The grid
sampler saves input and grid; its gradients are ``jax.vjp`` of a forward written as ATen's
kernel computes (clip and reflection with torch's gradient at their ends).
"""

from __future__ import annotations

import functools
import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ._table import Op
from .nn import _vjp


def sliding_blocks(size, kernel, dilation, padding, stride):
    """torch's count of sliding blocks along one spatial dim (may be < 1 for a bad shape)."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _block_index(size, kernel, dilation, padding, stride):
    """(kernel, blocks) coordinates in the padded input each block element reads."""
    blocks = sliding_blocks(size, kernel, dilation, padding, stride)
    return np.arange(kernel)[:, None] * dilation + np.arange(blocks)[None, :] * stride


def _indices(spatial, kernel_size, dilation, padding, stride):
    rows, cols = (_block_index(*args) for args in
                  zip(spatial, kernel_size, dilation, padding, stride))
    return rows[:, None, :, None], cols[None, :, None, :]


def _im2col(x, kernel_size, dilation, padding, stride):
    """(..., C, H, W) -> (..., C*kh*kw, L): each column one block, channels outermost."""
    lead, (h, w) = x.shape[:-2], x.shape[-2:]
    pad = [(0, 0)] * (x.ndim - 2) + [(padding[0], padding[0]), (padding[1], padding[1])]
    rows, cols = _indices((h, w), kernel_size, dilation, padding, stride)
    blocks = jnp.pad(x, pad)[..., rows, cols]  # (..., C, kh, kw, oh, ow)
    c = x.shape[-3]
    k = kernel_size[0] * kernel_size[1]
    return blocks.reshape(lead[:-1] + (c * k, rows.shape[2] * cols.shape[3]))


def _col2im(cols, output_size, kernel_size, dilation, padding, stride):
    """(..., C*kh*kw, L) -> (..., C, H, W): the blocks summed back where they were read."""
    rows, colix = _indices(output_size, kernel_size, dilation, padding, stride)
    kh, kw = kernel_size
    oh, ow = rows.shape[2], colix.shape[3]
    lead = cols.shape[:-2]
    c = cols.shape[-2] // (kh * kw)
    blocks = cols.reshape(lead + (c, kh, kw, oh, ow))
    ph, pw = padding
    h, w = output_size
    if cols.dtype == jnp.bool_:  # torch's bool col2im: an overlap of Trues is True
        return _col2im(cols.astype(jnp.int32), output_size, kernel_size, dilation, padding,
                       stride) != 0
    out = jnp.zeros(lead + (c, h + 2 * ph, w + 2 * pw), cols.dtype)
    out = out.at[..., rows, colix].add(blocks)
    return out[..., ph:ph + h, pw:pw + w]


def _im2col_grad(grad, self_shape, kernel_size, dilation, padding, stride):
    return _col2im(grad, tuple(self_shape[-2:]), kernel_size, dilation, padding, stride)


def _col2im_grad(grad, kernel_size, dilation, padding, stride):
    return _im2col(grad, kernel_size, dilation, padding, stride)


IM2COL = Op("im2col", "Im2ColBackward0", _im2col, grads={"self": _im2col_grad},
            grad_nodes={"self": "Col2ImBackward0"})
COL2IM = Op("col2im", "Col2ImBackward0", _col2im,
            grads={"self": lambda grad, output_size, kernel_size, dilation, padding, stride:
                   _col2im_grad(grad, kernel_size, dilation, padding, stride)},
            grad_nodes={"self": "Im2ColBackward0"})


# --- affine grids and grid sampling -----------------------------------------------------------


def _linspace_from_neg_one(steps, align_corners, dtype):
    """torch's base-grid coordinates along one dim (its linspace, computed from both ends)."""
    if steps <= 1:
        return np.zeros(1, dtype)
    step = (1.0 - -1.0) / (steps - 1)
    i = np.arange(steps)
    values = np.where(i < steps // 2, -1.0 + step * i, 1.0 - step * (steps - 1 - i))
    values = values.astype(dtype)
    if not align_corners:
        values = values * dtype(steps - 1) / dtype(steps)
    return values.astype(dtype)


def _base_grid(spatial, align_corners, dtype):
    """(*spatial, nd + 1) homogeneous coordinates: x (the last dim) first, then y (, z), then 1."""
    dtype = np.dtype(dtype).type
    axes = [_linspace_from_neg_one(s, align_corners, dtype) for s in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack(list(mesh[::-1]) + [np.ones(tuple(spatial), dtype)], axis=-1)


def _affine_grid(theta, size, align_corners):
    spatial = tuple(size[2:])
    base = jnp.asarray(_base_grid(spatial, align_corners, theta.dtype.name))
    flat = base.reshape(-1, base.shape[-1])
    grid = jnp.einsum("pk,njk->npj", flat, theta, precision="highest")
    return grid.reshape((size[0],) + spatial + (theta.shape[1],))


def _affine_grid_grad(grad, size, align_corners):
    spatial = tuple(size[2:])
    base = jnp.asarray(_base_grid(spatial, align_corners, grad.dtype.name))
    flat = base.reshape(-1, base.shape[-1])
    g = grad.reshape(grad.shape[0], -1, grad.shape[-1])
    return jnp.einsum("pk,npj->njk", flat, g, precision="highest")


AFFINE_GRID_GENERATOR = Op("affine_grid_generator", "AffineGridGeneratorBackward0",
                           _affine_grid, inputs=("theta",),
                           grads={"theta": _affine_grid_grad},
                           grad_nodes={"theta": "TransposeBackward0"})

BILINEAR, NEAREST, BICUBIC = 0, 1, 2
ZEROS, BORDER, REFLECTION = 0, 1, 2


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return (coord + 1) * (size / 2) - 0.5


def _clip(coord, size):
    """torch's clip_coordinates; its gradient is 1 strictly inside (0, size - 1), 0 at the ends
    ("borders are considered out of bounds")."""
    coord = jnp.where(coord <= 0, jnp.zeros_like(coord), coord)
    return jnp.where(coord >= size - 1, jnp.full_like(coord, size - 1), coord)


def _reflect(coord, twice_low, twice_high):
    """torch's reflect_coordinates (gradient sign +1 at the reflection points, as torch's)."""
    if twice_low == twice_high:
        return jnp.zeros_like(coord)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    shifted = coord - low
    shifted = jnp.where(shifted < 0, -shifted, shifted)
    extra = jnp.fmod(shifted, span)
    flips = jnp.floor(jax.lax.stop_gradient(shifted) / span)
    even = jnp.fmod(flips, 2) == 0
    return jnp.where(even, extra + low, span - extra + low)


def _pad_coordinate(coord, size, padding_mode, align_corners):
    """torch's compute_coordinates: the padding mode applied to an unnormalised coordinate."""
    if padding_mode == BORDER:
        return _clip(coord, size)
    if padding_mode == REFLECTION:
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


def _cubic_coefficients(t):
    """torch's cubic convolution weights (A = -0.75) of the four taps around ``t``."""
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners):
    """(N, C, *S) sampled at (N, *O, nd) normalised points -> (N, C, *O)."""
    nd = grid.shape[-1]
    sizes = input.shape[2:]
    n, c = input.shape[:2]
    out_spatial = grid.shape[1:-1]
    if n * c * math.prod(out_spatial) == 0:
        return jnp.zeros((n, c) + tuple(out_spatial), input.dtype)
    points = grid.reshape(n, -1, nd)
    flat = input.reshape(n, c, -1)
    strides = [math.prod(sizes[k + 1:]) for k in range(nd)]

    def tap(index):
        """Values at integer coordinates (one (N, P) array per spatial dim), 0 outside."""
        valid = functools.reduce(jnp.logical_and, [(i >= 0) & (i < s) for i, s in
                                                   zip(index, sizes)])
        linear = sum(jnp.clip(i, 0, s - 1) * st for i, s, st in zip(index, sizes, strides))
        values = jnp.take_along_axis(flat, linear[:, None, :], axis=2)
        return jnp.where(valid[:, None, :], values, jnp.zeros((), input.dtype))

    raw = [_unnormalize(points[..., nd - 1 - k], sizes[k], align_corners) for k in range(nd)]
    if interpolation_mode == BICUBIC:
        start = [jnp.floor(x) for x in raw]
        coeffs = [_cubic_coefficients(x - s) for x, s in zip(raw, start)]
        out = None
        for offsets in itertools.product(range(4), repeat=nd):
            index = [_pad_coordinate(jax.lax.stop_gradient(s) - 1 + o, size, padding_mode,
                                     align_corners).astype(jnp.int32)
                     for s, o, size in zip(start, offsets, sizes)]
            weight = functools.reduce(jnp.multiply, [cf[o] for cf, o in zip(coeffs, offsets)])
            term = tap(index) * weight[:, None, :]
            out = term if out is None else out + term
    else:
        coords = [_pad_coordinate(x, s, padding_mode, align_corners) for x, s in zip(raw, sizes)]
        if interpolation_mode == NEAREST:
            out = tap([jnp.round(x).astype(jnp.int32) for x in coords])
        else:
            start = [jnp.floor(x) for x in coords]
            frac = [x - s for x, s in zip(coords, start)]
            base = [s.astype(jnp.int32) for s in start]
            out = None
            for corner in itertools.product((0, 1), repeat=nd):
                weight = functools.reduce(jnp.multiply, [t if b else 1 - t for t, b in
                                                         zip(frac, corner)])
                term = tap([i + b for i, b in zip(base, corner)]) * weight[:, None, :]
                out = term if out is None else out + term
    return out.reshape((n, c) + tuple(out_spatial))


def _grid_sample_grad(argnum):
    def formula(grad, input, grid, interpolation_mode, padding_mode, align_corners):
        return _vjp(_grid_sample, argnum, grad, input, grid,
                    interpolation_mode=interpolation_mode, padding_mode=padding_mode,
                    align_corners=align_corners)

    return formula


GRID_SAMPLER = {
    n: Op(f"grid_sampler_{n}d", f"GridSampler{n}DBackward0", _grid_sample,
          inputs=("input", "grid"),
          grads={"input": _grid_sample_grad(0), "grid": _grid_sample_grad(1)},
          grad_nodes={"input": f"GridSampler{n}DBackwardBackward0",
                      "grid": f"GridSampler{n}DBackwardBackward0"})
    for n in (2, 3)}
