"""Sliding-block rows of ``jaxgrad.nn.functional``: ``im2col`` (``F.unfold``) and ``col2im``
(``F.fold``).

Both are linear and each is the other's adjoint, as derivatives.yaml writes them: im2col's
backward is col2im of the gradient (it saves only the input's spatial size), col2im's is im2col
of the gradient (it saves nothing). Leading dims (the optional batch) pass through.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ._table import Op


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
