"""torch.fft's three kernels, one row each, with derivatives.yaml's formulas: ``_fft_r2c`` (a
real signal to its spectrum, ``onesided``: only the non-redundant half of the last dim),
``_fft_c2r`` (a onesided Hermitian spectrum to its real signal of ``last_dim_size`` points) and
``_fft_c2c``; every ``jaxgrad.fft`` function composes them as torch's SpectralOps.cpp does.

``normalization`` is torch's ``fft_norm_mode``: 0 none, 1 by ``1/sqrt(n)``, 2 by ``1/n``, ``n``
the number of points of the signal (the product over ``dim``). The kernels compute unnormalized
transforms (JAX's ``ifft`` with ``norm="forward"`` is the unscaled inverse) and then scale, so the
backward of each is the kernel of the adjoint direction at the same ``normalization``
(FunctionsManual.cpp's ``fft_r2c_backward``, ``fft_c2r_backward``).
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from ._table import Op

NORM_NONE, NORM_BY_ROOT_N, NORM_BY_N = 0, 1, 2


def _scaled(y, sizes, normalization: int):
    """``y`` scaled by torch's ``fft_norm_mode`` for a signal of ``sizes`` points."""
    if normalization == NORM_NONE:
        return y
    n = math.prod(sizes)
    factor = 1 / math.sqrt(n) if normalization == NORM_BY_ROOT_N else 1 / n
    return y * jnp.asarray(factor, jnp.finfo(y.dtype).dtype)


def fft_c2c(x, dim, normalization, forward):
    """The complex-to-complex transform over ``dim`` (the inverse, unscaled, without
    ``forward``), normalized."""
    dim = tuple(dim)
    if not dim:
        return x
    y = jnp.fft.fftn(x, axes=dim) if forward else jnp.fft.ifftn(x, axes=dim, norm="forward")
    return _scaled(y, [x.shape[d] for d in dim], normalization)


def fft_r2c(x, dim, normalization, onesided):
    """The transform of a real ``x`` over ``dim``; ``onesided``: the last dim keeps its
    ``n // 2 + 1`` non-redundant points."""
    dim = tuple(dim)
    if onesided:
        y = jnp.fft.rfftn(x, axes=dim)
    else:
        y = jnp.fft.fftn(x.astype(jnp.result_type(x.dtype, jnp.complex64)), axes=dim)
    return _scaled(y, [x.shape[d] for d in dim], normalization)


def fft_c2r(x, dim, normalization, last_dim_size):
    """The inverse (unscaled) transform of a onesided spectrum to a real signal with
    ``last_dim_size`` points in ``dim[-1]``, normalized."""
    dim = tuple(dim)
    sizes = [x.shape[d] for d in dim[:-1]] + [last_dim_size]
    y = jnp.fft.irfftn(x, s=sizes, axes=dim, norm="forward")
    return _scaled(y, sizes, normalization)


def _r2c_grad(grad, self_shape, dim, normalization, onesided):
    """torch's fft_r2c_backward: a onesided gradient zero-filled to the signal's length, then
    ``real(_fft_c2c(grad, dim, normalization, forward=False))``."""
    if onesided:
        last = dim[-1]
        missing = self_shape[last] - grad.shape[last]
        if missing > 0:
            widths = [(0, 0)] * grad.ndim
            widths[last] = (0, missing)
            grad = jnp.pad(grad, widths)
    return jnp.real(fft_c2c(grad, dim, normalization, False))


def _doubled(last_dim_size: int) -> int:
    """How many points of a onesided spectrum stand for two of the ``last_dim_size`` signal."""
    return last_dim_size - (last_dim_size // 2 + 1)


def _c2r_grad(grad, dim, normalization):
    """torch's fft_c2r_backward: ``_fft_r2c(grad, dim, normalization, onesided=True)`` with the
    points that stand for two (1 .. n - n // 2 - 1 of the last dim) doubled in place."""
    result = fft_r2c(grad, dim, normalization, True)
    last = dim[-1]
    double = _doubled(grad.shape[last])
    if double > 0:
        index = (slice(None),) * last + (slice(1, 1 + double),)
        result = result.at[index].multiply(2)
    return result


FFT_R2C = Op(
    "_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor",
    "FftR2CBackward0", fft_r2c, grads={"self": _r2c_grad},
    grad_nodes={"self": "SelectBackward0"})
FFT_C2R = Op(
    "_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor",
    "FftC2RBackward0", fft_c2r, grads={"self": _c2r_grad},
    grad_version=lambda last_dim_size: 1 if _doubled(last_dim_size) > 0 else 0,
    grad_nodes={"self": lambda last_dim_size:
                "CopySlices" if _doubled(last_dim_size) > 0 else "FftR2CBackward0"})
FFT_C2C = Op(
    "_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor",
    "FftC2CBackward0", fft_c2c,
    grads={"self": lambda grad, dim, normalization, forward: fft_c2c(
        grad, dim, normalization, not forward)},
    grad_nodes={"self": "FftC2CBackward0"})
