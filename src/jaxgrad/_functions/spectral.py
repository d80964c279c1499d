"""``torch.fft``: the transforms composed from the rows of ``_ops/spectral.py`` (``_fft_r2c``,
``_fft_c2r``, ``_fft_c2c``) as torch's SpectralOps.cpp composes them, so their graphs are
torch's: a real input of a complex transform is converted (ToCopyBackward0), ``n``/``s`` first
crop (SliceBackward0) or zero-pad (ConstantPadNdBackward0) the input, an inverse real transform
conjugates the result (ConjBackward0); and ``fftfreq``/``rfftfreq``/``fftshift``/``ifftshift``.
``jaxgrad.fft`` exports them under torch's short names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor, _wrap_dim
from .._engine.dispatch import apply
from .._ops import nn as _nn
from .._ops import spectral as SP
from .complex_numbers import conj, conj_physical
from .creation import tensor
from .opgen import declare
from .shapes import narrow, roll

# --- torch's helpers (SpectralOps.cpp) ---------------------------------------------------------


def _norm_mode(norm: str | None, forward: bool) -> int:
    """norm_from_string: numpy's names, whose meaning depends on the direction."""
    if norm is None or norm == "backward":
        return SP.NORM_NONE if forward else SP.NORM_BY_N
    if norm == "forward":
        return SP.NORM_BY_N if forward else SP.NORM_NONE
    if norm == "ortho":
        return SP.NORM_BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x: Tensor, require_complex: bool = False) -> Tensor:
    """promote_tensor_fft: integers become the default float dtype, and with
    ``require_complex`` every real dtype its complex one; half precision is refused."""
    if x.is_complex():
        return x
    dtype = x.dtype if x.dtype.is_floating_point else _dtypes.get_default_dtype()
    if dtype not in (_dtypes.float32, _dtypes.float64):
        raise RuntimeError(f"Unsupported dtype {_dtypes.scalar_type_name(dtype)}")
    if require_complex:
        dtype = _dtypes.complex64 if dtype == _dtypes.float32 else _dtypes.complex128
    return x if dtype == x.dtype else x.to(dtype)


def _wrap(dim: int, ndim: int) -> int:
    """maybe_wrap_dim without wrapping scalars: a 0-d tensor has no dim to transform."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, ndim)


def _check_points(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x: Tensor, dims: Sequence[int], sizes: Sequence[int]) -> Tensor:
    """resize_fft_input: ``x`` cropped (a slice) or zero-padded (constant_pad_nd) to ``sizes``
    in ``dims``."""
    pad = [0] * (2 * x.ndim)
    padded = False
    for d, n in zip(dims, sizes):
        if n == -1:
            continue
        if x.shape[d] < n:
            padded = True
            pad[len(pad) - 2 * d - 1] = n - x.shape[d]
        if x.shape[d] > n:
            x = narrow(x, d, 0, n)
    return apply(_nn.CONSTANT_PAD_ND, x, aux=(0,), pad=tuple(pad)) if padded else x


def _c2c(x: Tensor, dims: Sequence[int], norm: int, forward: bool) -> Tensor:
    return apply(SP.FFT_C2C, x, dim=tuple(dims), normalization=norm, forward=forward)


def _r2c(x: Tensor, dims: Sequence[int], norm: int, onesided: bool) -> Tensor:
    return apply(SP.FFT_R2C, x, dim=tuple(dims), normalization=norm, onesided=onesided)


def _c2r(x: Tensor, dims: Sequence[int], norm: int, last_dim_size: int) -> Tensor:
    return apply(SP.FFT_C2R, x, dim=tuple(dims), normalization=norm,
                 last_dim_size=last_dim_size)


# --- one-dimensional transforms ----------------------------------------------------------------

def _fft_c2c(name: str, x: Tensor, n: int | None, dim: int, norm: str | None,
             forward: bool) -> Tensor:
    d = _wrap(dim, x.ndim)
    points = x.shape[d] if n is None else n
    _check_points(points)
    if n is not None:
        x = _resize(x, (d,), (points,))
    return _c2c(x, (d,), _norm_mode(norm, forward), forward)


def _fft_r2c(name: str, x: Tensor, n: int | None, dim: int, norm: str | None, forward: bool,
             onesided: bool) -> Tensor:
    if x.is_complex():
        raise RuntimeError(f"{name} expects a real input tensor, but got "
                           f"{_dtypes.scalar_type_name(x.dtype)}")
    x = _promote(x)
    d = _wrap(dim, x.ndim)
    points = x.shape[d] if n is None else n
    _check_points(points)
    if n is not None:
        x = _resize(x, (d,), (points,))
    result = _r2c(x, (d,), _norm_mode(norm, forward), onesided)
    return result if forward else conj(result)  # (torch's r2c has no inverse: a conjugate)


def _fft_c2r(name: str, x: Tensor, n: int | None, dim: int, norm: str | None,
             forward: bool) -> Tensor:
    x = _promote(x, require_complex=True)
    d = _wrap(dim, x.ndim)
    points = 2 * (x.shape[d] - 1) if n is None else n
    _check_points(points)
    if n is not None:
        x = _resize(x, (d,), (points // 2 + 1,))
    mode = _norm_mode(norm, forward)
    if forward:  # (torch's c2r has no forward: the conjugate's inverse)
        x = conj(x)
    return _c2r(x, (d,), mode, points)


@declare('fft_fft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor',
         variants='out')
def fft_fft(input: Tensor, n: int | None = None, dim: int = -1,
            norm: str | None = None) -> Tensor:
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim`` (``n``: the
    signal cropped or zero-padded to ``n`` points; ``norm``: ``"backward"`` (no scaling),
    ``"forward"`` (by ``1/n``) or ``"ortho"``); a real input gives its full complex spectrum.

    >>> import jaxgrad
    >>> jaxgrad.fft.fft(jaxgrad.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
    """
    if input.is_complex():
        return _fft_c2c("fft", input, n, dim, norm, True)
    return _fft_r2c("fft", input, n, dim, norm, True, False)


@declare('fft_ifft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor',
         variants='out')
def fft_ifft(input: Tensor, n: int | None = None, dim: int = -1,
             norm: str | None = None) -> Tensor:
    """The one-dimensional inverse discrete Fourier transform (``norm="backward"``: scaled by
    ``1/n``).

    >>> import jaxgrad
    >>> jaxgrad.fft.ifft(jaxgrad.tensor([10+0j, -2+2j, -2+0j, -2-2j]))
    tensor([1.+0.j, 2.+0.j, 3.+0.j, 4.+0.j])
    """
    if input.is_complex():
        return _fft_c2c("ifft", input, n, dim, norm, False)
    return _fft_r2c("ifft", input, n, dim, norm, False, False)


@declare('fft_rfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor',
         variants='out', out_name='_fft_r2c')
def fft_rfft(input: Tensor, n: int | None = None, dim: int = -1,
             norm: str | None = None) -> Tensor:
    """The transform of a real signal: the ``n // 2 + 1`` non-redundant points of its
    spectrum.

    >>> import jaxgrad
    >>> jaxgrad.fft.rfft(jaxgrad.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j])
    """
    return _fft_r2c("rfft", input, n, dim, norm, True, True)


@declare('fft_irfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor',
         variants='out', out_name='_fft_c2r')
def fft_irfft(input: Tensor, n: int | None = None, dim: int = -1,
              norm: str | None = None) -> Tensor:
    """The inverse of :func:`fft_rfft`: the real signal of ``n`` points (by default
    ``2 * (m - 1)`` for ``m`` input points) whose onesided spectrum is ``input``.

    >>> import jaxgrad
    >>> jaxgrad.fft.irfft(jaxgrad.tensor([10+0j, -2+2j, -2+0j]))
    tensor([1., 2., 3., 4.])
    """
    return _fft_c2r("irfft", input, n, dim, norm, False)


@declare('fft_hfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor',
         variants='out', out_name='_fft_c2r')
def fft_hfft(input: Tensor, n: int | None = None, dim: int = -1,
             norm: str | None = None) -> Tensor:
    """The transform of a Hermitian-symmetric signal given by its onesided half: a real
    spectrum of ``n`` points (by default ``2 * (m - 1)``).

    >>> import jaxgrad
    >>> jaxgrad.fft.hfft(jaxgrad.tensor([1+0j, 2+0j, 3+0j]))
    tensor([ 8., -2.,  0., -2.])
    """
    return _fft_c2r("hfft", input, n, dim, norm, True)


@declare('fft_ihfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor',
         variants='out')
def fft_ihfft(input: Tensor, n: int | None = None, dim: int = -1,
              norm: str | None = None) -> Tensor:
    """The inverse of :func:`fft_hfft`: the onesided half of the inverse transform of a real
    signal.

    >>> import jaxgrad
    >>> jaxgrad.fft.ihfft(jaxgrad.tensor([8.0, -2.0, 0.0, -2.0]))
    tensor([1.-0.j, 2.-0.j, 3.-0.j])
    """
    return _fft_r2c("ihfft", input, n, dim, norm, False, True)


# --- n-dimensional transforms ------------------------------------------------------------------

def _int_list(value: Any) -> list[int] | None:
    if value is None:
        return None
    return [int(value)] if isinstance(value, int) else [int(v) for v in value]


def _shape_and_dims(x: Tensor, s: Any, dim: Any) -> tuple[list[int], list[int]]:
    """canonicalize_fft_shape_and_dim_args: the dims to transform and the signal's points in
    each (``s`` alone: the last ``len(s)`` dims; ``-1`` in ``s``: the input's size)."""
    s, dim = _int_list(s), _int_list(dim)
    ndim = x.ndim
    dims: list[int] = []
    if dim is not None:
        dims = [_wrap(d, ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        if dim is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    elif dim is None:
        dims, shape = list(range(ndim)), list(x.shape)
    else:
        shape = [x.shape[d] for d in dims]
    for n in shape:
        _check_points(n)
    return shape, dims


def _fftn(x: Tensor, s: Any, dim: Any, norm: str | None, forward: bool) -> Tensor:
    shape, dims = _shape_and_dims(x, s, dim)
    x = _resize(_promote(x, require_complex=True), dims, shape)
    return _c2c(x, dims, _norm_mode(norm, forward), forward)


def _rfftn(x: Tensor, s: Any, dim: Any, norm: str | None) -> Tensor:
    if x.is_complex():
        raise RuntimeError("rfftn expects a real-valued input tensor, but got "
                           f"{_dtypes.scalar_type_name(x.dtype)}")
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(x), dims, shape)
    return _r2c(x, dims, _norm_mode(norm, True), True)


def _c2r_shape_and_dims(name: str, x: Tensor, s: Any,
                        dim: Any) -> tuple[list[int], list[int], int]:
    """canonicalize_fft_c2r_shape_and_dim_args: also the real signal's points in the last dim
    (by default ``2 * (m - 1)``), the input cropped or padded to half of them plus one."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    s = _int_list(s)
    last = 2 * (x.shape[dims[-1]] - 1) if s is None or s[-1] == -1 else shape[-1]
    _check_points(last)
    shape[-1] = last // 2 + 1
    return shape, dims, last


def _irfftn(x: Tensor, s: Any, dim: Any, norm: str | None) -> Tensor:
    shape, dims, last = _c2r_shape_and_dims("irfftn", x, s, dim)
    x = _resize(_promote(x, require_complex=True), dims, shape)
    return _c2r(x, dims, _norm_mode(norm, False), last)


def _hfftn(x: Tensor, s: Any, dim: Any, norm: str | None) -> Tensor:
    shape, dims, last = _c2r_shape_and_dims("hfftn", x, s, dim)
    x = _resize(_promote(x, require_complex=True), dims, shape)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = _c2c(x, dims[:-1], mode, True)
    return _c2r(conj(x), dims[-1:], mode, last)


def _ihfftn(x: Tensor, s: Any, dim: Any, norm: str | None) -> Tensor:
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resize(_promote(x), dims, shape)
    mode = _norm_mode(norm, False)
    if x.is_complex():  # (the r2c kernel's check)
        raise RuntimeError("Only supports floating-point dtypes, but found: "
                           f"{_dtypes.scalar_type_name(x.dtype)}")
    result = _r2c(x, dims[-1:], mode, True)
    if len(dims) == 1:
        return conj(result)
    return _c2c(conj_physical(result), dims[:-1], mode, False)


@declare('fft_fft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) '
         '-> Tensor', variants='out', out_name='_fft_c2c')
def fft_fft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
             norm: str | None = None) -> Tensor:
    """The two-dimensional discrete Fourier transform (:func:`fft_fftn` over ``dim``).

    >>> import jaxgrad
    >>> jaxgrad.fft.fft2(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[10.+0.j, -2.+0.j],
            [-4.+0.j,  0.+0.j]])
    """
    return _fftn(input, s, dim, norm, True)


@declare('fft_ifft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) '
         '-> Tensor', variants='out', out_name='_fft_c2c')
def fft_ifft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
              norm: str | None = None) -> Tensor:
    """The two-dimensional inverse discrete Fourier transform.

    >>> import jaxgrad
    >>> jaxgrad.fft.ifft2(jaxgrad.tensor([[10+0j, -2+0j], [-4+0j, 0j]]))
    tensor([[1.+0.j, 2.+0.j],
            [3.+0.j, 4.+0.j]])
    """
    return _fftn(input, s, dim, norm, False)


@declare('fft_rfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) '
         '-> Tensor', variants='out', out_name='_fft_r2c')
def fft_rfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
              norm: str | None = None) -> Tensor:
    """The two-dimensional transform of a real signal (onesided in the last of ``dim``).

    >>> import jaxgrad
    >>> jaxgrad.fft.rfft2(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[10.+0.j, -2.+0.j],
            [-4.+0.j,  0.+0.j]])
    """
    return _rfftn(input, s, dim, norm)


@declare('fft_irfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) '
         '-> Tensor', variants='out', out_name='_fft_c2r')
def fft_irfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
               norm: str | None = None) -> Tensor:
    """The inverse of :func:`fft_rfft2`.

    >>> import jaxgrad
    >>> jaxgrad.fft.irfft2(jaxgrad.tensor([[10+0j, -2+0j], [-4+0j, 0j]]))
    tensor([[1., 2.],
            [3., 4.]])
    """
    return _irfftn(input, s, dim, norm)


@declare('fft_hfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) '
         '-> Tensor', variants='out', out_name='_fft_c2r')
def fft_hfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
              norm: str | None = None) -> Tensor:
    """The two-dimensional transform of a Hermitian-symmetric signal given by its onesided
    half (in the last of ``dim``): a real spectrum.

    >>> import jaxgrad
    >>> jaxgrad.fft.hfft2(jaxgrad.tensor([[1+0j, 2+0j], [3+0j, 4+0j]]))
    tensor([[10., -2.],
            [-4.,  0.]])
    """
    return _hfftn(input, s, dim, norm)


@declare('fft_ihfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) '
         '-> Tensor', variants='out', out_name='_fft_c2c')
def fft_ihfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
               norm: str | None = None) -> Tensor:
    """The inverse of :func:`fft_hfft2`: the onesided half of the inverse transform of a
    real signal.

    >>> import jaxgrad
    >>> jaxgrad.fft.ihfft2(jaxgrad.tensor([[10.0, -2.0], [-4.0, 0.0]]))
    tensor([[1.-0.j, 2.-0.j],
            [3.+0.j, 4.+0.j]])
    """
    return _ihfftn(input, s, dim, norm)


@declare('fft_fftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) '
         '-> Tensor', variants='out', out_name='_fft_c2c')
def fft_fftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
             norm: str | None = None) -> Tensor:
    """The n-dimensional discrete Fourier transform over ``dim`` (by default all dims, or the
    last ``len(s)``), the signal cropped or zero-padded to ``s``.

    >>> import jaxgrad
    >>> jaxgrad.fft.fftn(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=(0,))
    tensor([[ 4.+0.j,  6.+0.j],
            [-2.+0.j, -2.+0.j]])
    """
    return _fftn(input, s, dim, norm, True)


@declare('fft_ifftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) '
         '-> Tensor', variants='out', out_name='_fft_c2c')
def fft_ifftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
              norm: str | None = None) -> Tensor:
    """The n-dimensional inverse discrete Fourier transform.

    >>> import jaxgrad
    >>> jaxgrad.fft.ifftn(jaxgrad.tensor([[4+0j, 6+0j], [-2+0j, -2+0j]]), dim=0)
    tensor([[1.+0.j, 2.+0.j],
            [3.+0.j, 4.+0.j]])
    """
    return _fftn(input, s, dim, norm, False)


@declare('fft_rfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) '
         '-> Tensor', variants='out', out_name='_fft_r2c')
def fft_rfftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
              norm: str | None = None) -> Tensor:
    """The n-dimensional transform of a real signal, onesided in the last of ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.fft.rfftn(jaxgrad.tensor([[1.0, 2.0, 3.0]]))
    tensor([[ 6.0000+0.0000j, -1.5000+0.8660j]])
    """
    return _rfftn(input, s, dim, norm)


@declare('fft_irfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) '
         '-> Tensor', variants='out', out_name='_fft_c2r')
def fft_irfftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
               norm: str | None = None) -> Tensor:
    """The inverse of :func:`fft_rfftn` (the last of ``dim`` gets ``s[-1]`` points, by default
    ``2 * (m - 1)``).

    >>> import jaxgrad
    >>> jaxgrad.fft.irfftn(jaxgrad.tensor([[6+0j, -1.5+0.8660254j]]), s=(1, 3))
    tensor([[1., 2., 3.]])
    """
    return _irfftn(input, s, dim, norm)


@declare('fft_hfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) '
         '-> Tensor', variants='out', out_name='_fft_c2r')
def fft_hfftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
              norm: str | None = None) -> Tensor:
    """The n-dimensional transform of a Hermitian-symmetric signal given by its onesided half
    in the last of ``dim``: a real spectrum.

    >>> import jaxgrad
    >>> jaxgrad.fft.hfftn(jaxgrad.tensor([[1+0j, 2+0j, 3+0j]]))
    tensor([[ 8., -2.,  0., -2.]])
    """
    return _hfftn(input, s, dim, norm)


@declare('fft_ihfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) '
         '-> Tensor', variants='out', out_name='_fft_c2c')
def fft_ihfftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
               norm: str | None = None) -> Tensor:
    """The inverse of :func:`fft_hfftn`.

    >>> import jaxgrad
    >>> jaxgrad.fft.ihfftn(jaxgrad.tensor([[8.0, -2.0, 0.0, -2.0]]))
    tensor([[1.-0.j, 2.-0.j, 3.-0.j]])
    """
    return _ihfftn(input, s, dim, norm)


# --- sample frequencies, shifts ----------------------------------------------------------------

def _frequencies(name: str, n: int, d: float, ks: Any, dtype: Any, device: Any,
                 requires_grad: bool) -> Tensor:
    """torch's ``arange`` into ``dtype``, then ``mul_(1.0 / (n * d))`` (computed in ``dtype``)."""
    dtype = _dtypes.get_default_dtype() if dtype is None else _dtypes.to_dtype(dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if dtype.is_complex:
        raise NotImplementedError(
            f"\"arange_cpu\" not implemented for '{_dtypes.scalar_type_name(dtype)}'")
    numpy_dtype = np.float32 if dtype == _dtypes.float32 else np.float64
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.float64(1.0) / (np.float64(n) * np.float64(d))
        values = np.asarray(ks, numpy_dtype) * numpy_dtype(factor)
    return tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


@declare('fft_fftfreq(int n, float d=1.0, *, ScalarType? dtype=None, Layout? layout=None, '
         'Device? device=None, bool? pin_memory=None) -> Tensor', variants='')
def fft_fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, layout: Any = None,
                device: Any = None, pin_memory: bool | None = None,
                requires_grad: bool = False) -> Tensor:
    """The sample frequencies of :func:`fft_fft` for a signal of ``n`` points spaced ``d``
    apart: ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (n * d)``.

    >>> import jaxgrad
    >>> jaxgrad.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    ks = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)]) if n > 0 else []
    return _frequencies("fftfreq", n, d, ks, dtype, device, requires_grad)


@declare('fft_rfftfreq(int n, float d=1.0, *, ScalarType? dtype=None, Layout? layout=None, '
         'Device? device=None, bool? pin_memory=None) -> Tensor', variants='')
def fft_rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, layout: Any = None,
                 device: Any = None, pin_memory: bool | None = None,
                 requires_grad: bool = False) -> Tensor:
    """The sample frequencies of :func:`fft_rfft`: ``[0, 1, ..., n // 2] / (n * d)``.

    >>> import jaxgrad
    >>> jaxgrad.fft.rfftfreq(4)
    tensor([0.0000, 0.2500, 0.5000])
    """
    ks = np.arange(n // 2 + 1) if n >= 0 else []
    return _frequencies("rfftfreq", n, d, ks, dtype, device, requires_grad)


def _shift(x: Tensor, dim: Any, half: Any) -> Tensor:
    """roll by ``half(size)`` along ``dim`` (default_alldims: every dim when None)."""
    dims = list(range(x.ndim)) if dim is None else [_wrap_dim(d, x.ndim) for d in
                                                    _int_list(dim)]
    return roll(x, [half(x.shape[d]) for d in dims], dims)


@declare('fft_fftshift(Tensor self, int[1]? dim=None) -> Tensor', variants='')
def fft_fftshift(input: Tensor, dim: Sequence[int] | None = None) -> Tensor:
    """The zero frequency moved to the centre of ``dim`` (a roll by half the size;
    RollBackward0).

    >>> import jaxgrad
    >>> jaxgrad.fft.fftshift(jaxgrad.fft.fftfreq(4))
    tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    return _shift(input, dim, lambda size: size // 2)


@declare('fft_ifftshift(Tensor self, int[1]? dim=None) -> Tensor', variants='')
def fft_ifftshift(input: Tensor, dim: Sequence[int] | None = None) -> Tensor:
    """The inverse of :func:`fft_fftshift`.

    >>> import jaxgrad
    >>> jaxgrad.fft.ifftshift(jaxgrad.tensor([-0.5, -0.25, 0.0, 0.25]))
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    return _shift(input, dim, lambda size: (size + 1) // 2)
