"""Linear algebra torch composes from other ops: ``linalg.vander``/``vander``,
``linalg.matrix_rank``, ``linalg.cond``, ``linalg.tensorinv``, ``linalg.tensorsolve``,
``nuclear_norm``, ``frobenius_norm``; and ``renorm``/``renorm_`` (a row of ``_ops/linalg.py``)
and ``fill_diagonal_``. Each is built from jaxgrad's ops exactly as torch builds it, so its graph
(grad_fn names) is torch's.
"""

from __future__ import annotations

import math
from typing import Any

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor, _wrap_dim
from .._core.type_info import finfo
from .._engine.dispatch import apply, apply_inplace, apply_view
from .._ops import linalg as L
from .._ops import nn as N
from .._ops import views as V
from .arguments import scalar, warn_once_as_jaxgrad
from .creation import zeros
from .joins import cat
from .linalg import _format_scalar, linalg_matrix_norm, linalg_vector_norm
from .linalg_decomp import _check_square, linalg_eigvalsh, linalg_svdvals
from .linalg_dense import _check_matrices, _inv_ex, _raise_on_info, _singular_pivot, linalg_solve
from .opgen import declare
from .reductions import cumprod
from .shapes import flip, movedim, narrow, reshape, squeeze, unsqueeze

# --- Vandermonde matrices ------------------------------------------------------------------------


@declare('linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor', variants='')
def linalg_vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """The Vandermonde matrix of the last dim of ``x``, increasing powers ``x**0 ... x**(N-1)``
    (``N`` defaults to the size of that dim): ones concatenated to a ``cumprod``.

    >>> import jaxgrad
    >>> jaxgrad.linalg.vander(jaxgrad.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [1, 2, 4],
            [1, 3, 9]])
    """
    d = x.dtype
    if not (d in (_dtypes.float32, _dtypes.float64, _dtypes.complex64, _dtypes.complex128)
            or (not d.is_floating_point and not d.is_complex and d is not _dtypes.bool_)):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, "
                           f"but got {_dtypes.scalar_type_name(d)}")
    x_ = unsqueeze(x, -1) if x.ndim == 0 else x
    shape = list(x_.shape)
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    result = cumprod(unsqueeze(x_, -1).expand(*shape, n - 1), -1)
    return cat([result.new_ones(*shape, 1), result], -1)


@declare('vander(Tensor x, int? N=None, bool increasing=False) -> Tensor', variants='function')
def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """numpy's Vandermonde matrix of a 1-d ``x``: ``N`` columns of powers, decreasing unless
    ``increasing`` (integer inputs give int64), written into a new tensor as torch writes it.

    >>> import jaxgrad
    >>> jaxgrad.vander(jaxgrad.tensor([1, 2, 3]), N=3)
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0]
    if N is not None:
        n = N
        if n < 0:
            raise RuntimeError("N must be non-negative.")
    dtype = _dtypes.promote_types(x.dtype, _dtypes.int64)
    result = x.new_empty((x.shape[0], n), dtype=dtype)
    if n > 0:
        result.fill_(1)
        if n > 1:
            narrow(result, 1, 1, n - 1).copy_(unsqueeze(x, 1))
            narrow(result, 1, 1, n - 1).copy_(cumprod(narrow(result, 1, 1, n - 1), 1))
    return result if increasing else flip(result, [1])


# --- matrix_rank, cond ---------------------------------------------------------------------------

def _tolerance(value: Any) -> Tensor:
    from_tensor = isinstance(value, Tensor)
    t = value.detach() if from_tensor else zeros((), dtype=_dtypes.float64) + float(value)
    if t.is_complex():
        raise RuntimeError("linalg.matrix_rank: atol tensor of complex type is not supported.")
    return t


@declare('linalg_matrix_rank(Tensor A, Any tol=None, bool hermitian=False, *, Any atol=None, '
         'Any rtol=None) -> Tensor', variants='out', differentiable=False)
def linalg_matrix_rank(A: Tensor, tol: Any = None, hermitian: bool = False, *, atol: Any = None,
                       rtol: Any = None) -> Tensor:
    """The number of singular values (absolute eigenvalues with ``hermitian``) of each matrix
    above ``max(atol, rtol * largest)`` (int64; ``rtol`` defaults to ``eps * max(m, n)``, or 0
    where an ``atol > 0`` is given; ``tol``: torch's older name of ``atol``, with ``rtol = 0``).

    >>> import jaxgrad
    >>> jaxgrad.linalg.matrix_rank(jaxgrad.tensor([[1.0, 2.0], [2.0, 4.0]]))
    tensor(1)
    """
    if A.dtype not in (_dtypes.float32, _dtypes.float64, _dtypes.complex64, _dtypes.complex128):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 "
                           "dimensions.")
    if tol is not None:
        atol, rtol = tol, 0.0
    atol_t = _tolerance(0.0 if atol is None else atol)
    if rtol is not None:
        rtol_t = _tolerance(rtol)
    else:
        default = finfo(A.dtype).eps * max(A.shape[-1], A.shape[-2])
        rtol_t = _tolerance(default)
        if atol is not None:
            rtol_t = (atol_t > 0).logical_not() * rtol_t
    if hermitian:
        _check_matrices(A, "linalg.eigh")
    if A.numel() == 0:  # (torch fills its result, or sums into it: version 1)
        return zeros(tuple(A.shape[:-2]), dtype=_dtypes.int64).fill_(0)
    if hermitian:
        S = linalg_eigvalsh(A.detach()).abs()
        largest = S.amax(-1, keepdim=True)
    else:
        S = linalg_svdvals(A.detach())
        largest = narrow(S, -1, 0, 1)
    bound = (rtol_t.unsqueeze(-1) * largest).maximum(atol_t.unsqueeze(-1).to(
        _dtypes.promote_types(atol_t.dtype, largest.dtype)))
    counts = (bound < S).sum(-1)
    return zeros(tuple(counts.shape), dtype=_dtypes.int64).copy_(counts)


def _cond_name(ord: Any) -> str:
    """``ord`` as torch's ``linalg.cond(ord=...)`` prefix prints it (C++ ``to_string``)."""
    if isinstance(ord, str):
        return ord
    if isinstance(ord, float):
        return ("-" if ord < 0 else "") + "inf" if math.isinf(ord) else f"{ord:.6f}"
    return str(ord)


@declare('linalg_cond(Tensor self, Any p=None) -> Tensor', variants='out')
def linalg_cond(input: Tensor, p: Any = None) -> Tensor:
    """The condition number of each matrix in the norm ``p``: ``None``/2/-2 from the singular
    values (any shape), else ``norm(A) * norm(A^{-1})`` (1, -1, ``inf``, ``-inf``, ``'fro'``,
    ``'nuc'``; square matrices, ``inf`` for a singular one), composed as torch composes it.

    >>> import jaxgrad
    >>> jaxgrad.linalg.cond(jaxgrad.tensor([[2.0, 0.0], [0.0, 1.0]]))
    tensor(2.)
    """
    real = input.real.dtype if input.is_complex() else input.dtype
    if isinstance(p, str):
        _check_square(input, f"linalg.cond(ord={p})")
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
        if input.numel() == 0:
            return _empty_cond(input, real)
        if p == "nuc":  # the sum of the singular values times that of their reciprocals
            S = linalg_svdvals(input)
            return S.sum(-1) * S.reciprocal().sum(-1)
        return _cond_from_inverse(input, p)
    if input.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    ord = 2 if p is None else scalar(p)
    if abs(ord) not in (1, 2, math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {_format_scalar(float(ord))}")
    if input.numel() == 0:
        return _empty_cond(input, real)
    if abs(ord) == 2:
        S = linalg_svdvals(input)
        largest, smallest = narrow(S, -1, 0, 1), narrow(S, -1, -1, 1)
        return squeeze(smallest / largest if ord == -2 else largest / smallest, -1)
    _check_square(input, f"linalg.cond(ord={_cond_name(ord)})")
    return _cond_from_inverse(input, ord)


def _empty_cond(input: Tensor, real: Any) -> Tensor:
    """torch's condition numbers of 0x0 matrices: zeros (its result written once: version 1)."""
    return zeros(tuple(input.shape[:-2]), dtype=real).fill_(0)


def _cond_from_inverse(input: Tensor, ord: Any) -> Tensor:
    """torch's _linalg_cond_helper: ``inv_ex`` with ``inf`` for singular matrices, the product
    of the two norms, its NaNs (0 * inf) made ``inf``."""
    inverse, info = _inv_ex(input, False, "linalg.inv")
    info = info.unsqueeze(-1).unsqueeze(-1)
    inverse.masked_fill_(info > 0, math.inf)
    result = linalg_matrix_norm(input, ord) * linalg_matrix_norm(inverse, ord)
    return result.nan_to_num_(math.inf, math.inf, -math.inf)


# --- tensorinv, tensorsolve ----------------------------------------------------------------------

@declare('linalg_tensorinv(Tensor self, int ind=2) -> Tensor', variants='out')
def linalg_tensorinv(input: Tensor, ind: int = 2) -> Tensor:
    """The inverse of ``input`` for ``tensordot`` over ``ind`` dims: ``input`` reshaped to a
    square matrix (``prod(shape[:ind]) == prod(shape[ind:])``), inverted, and reshaped to
    ``shape[ind:] + shape[:ind]``.

    >>> import jaxgrad
    >>> jaxgrad.linalg.tensorinv(jaxgrad.eye(4).reshape(4, 2, 2), ind=1).shape
    jaxgrad.Size([2, 2, 4])
    """
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    head, tail = list(input.shape[:ind]), list(input.shape[ind:])
    n, m = math.prod(tail), math.prod(head)
    if n != m:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {n} != {m}")
    inverse, info = _inv_ex(reshape(input, (n, n)), False, "linalg.inv")
    _raise_on_info(info, "inv", _singular_pivot)
    # torch's inverse is column-major, so its reshape is a _reshape_alias (a view) unless n <= 1
    row = V.RESHAPE_ALIAS if n > 1 else V.VIEW
    return apply_view(row, V.view_geometry, inverse, shape=tuple(tail + head))


@declare('linalg_tensorsolve(Tensor self, Tensor other, int[]? dims=None) -> Tensor',
         variants='out')
def linalg_tensorsolve(input: Tensor, other: Tensor, dims: Any = None) -> Tensor:
    """The ``X`` with ``tensordot(input, X, X.ndim) == other``: ``input`` (its ``dims`` moved
    last) reshaped to a square matrix, ``linalg.solve`` against ``other`` flattened, reshaped.

    >>> import jaxgrad
    >>> jaxgrad.linalg.tensorsolve(jaxgrad.eye(6).reshape(2, 3, 6), jaxgrad.ones(2, 3)).shape
    jaxgrad.Size([6])
    """
    if dims is not None:
        dims = [dims] if isinstance(dims, int) else list(dims)
        input = movedim(input, dims, list(range(input.ndim - len(dims), input.ndim)))
    shape = list(input.shape[other.ndim:])
    n, m = math.prod(shape), other.numel()
    if n != m:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {n} != {m}")
    result = linalg_solve(reshape(input, (n, n)), other.flatten())
    return reshape(result, shape)


# --- norms: nuclear_norm, frobenius_norm, renorm -------------------------------------------------

_DEPRECATED_NORM = ("at::{0} is deprecated and it is just left for JIT compatibility. It will be "
                    "removed in a future PyTorch release. Please use `{1}` instead")


@declare('nuclear_norm(Tensor self, Any dim=None, bool keepdim=False) -> Tensor',
         variants='function out')
def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """torch's deprecated ``nuclear_norm`` (with its warning, once): ``linalg.matrix_norm(input,
    'nuc', dim, keepdim)`` over ``dim`` (the last two dims by default).

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     jaxgrad.nuclear_norm(jaxgrad.tensor([[3.0, 0.0], [0.0, -4.0]]))
    tensor(7.)
    """
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    warn_once_as_jaxgrad(_DEPRECATED_NORM.format(
        "nuclear_norm", "linalg.matrix_norm(A, 'nuc', dim, keepdim)"))
    return linalg_matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)


@declare('frobenius_norm(Tensor self, int[1] dim, bool keepdim=False) -> Tensor',
         variants='function out')
def frobenius_norm(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """torch's deprecated ``frobenius_norm`` (with its warning, once): the 2-norm over at most
    two dims (all where ``dim`` is empty), recorded as torch's ``norm`` (NormBackward1).

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     jaxgrad.frobenius_norm(jaxgrad.tensor([[3.0, 0.0], [0.0, -4.0]]), (0, 1))
    tensor(5.)
    """
    warn_once_as_jaxgrad(_DEPRECATED_NORM.format(
        "frobenius_norm", "linalg.vector_norm(A, 2., dim, keepdim)"))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{_dtypes.scalar_type_name(input.dtype)} instead.")
    axes = tuple(range(input.ndim)) if not dims else tuple(_wrap_dim(d, input.ndim) for d in dims)
    return apply(N.NORM_DIM, input, ord=2.0, dim=axes, keepdim=bool(keepdim), dtype=None)


def _renorm(input: Tensor, p: Any, dim: int, maxnorm: Any, inplace: bool) -> Tensor:
    p, maxnorm = scalar(p), scalar(maxnorm)
    if isinstance(p, complex):
        raise RuntimeError("renorm: p must be real-valued")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if isinstance(maxnorm, complex):
        raise RuntimeError("renorm: maxnorm must be real-valued")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got "
                           f"{_format_scalar(float(maxnorm))}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           "dimensions")
    dim = _wrap_dim(dim, input.ndim)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        linalg_vector_norm(input, p)  # (its dtype error)
    run = apply_inplace if inplace else apply
    return run(L.RENORM, input, aux=(float(maxnorm),), p=float(p), dim=dim)


@declare('renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor',
         variants='function method out')
def renorm(input: Tensor, p: Any, dim: int, maxnorm: Any) -> Tensor:
    """Each slice of ``input`` along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to
    norm ``maxnorm`` (by ``maxnorm / (norm + 1e-7)``); RenormBackward0.

    >>> import jaxgrad
    >>> jaxgrad.renorm(jaxgrad.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    return _renorm(input, p, dim, maxnorm, inplace=False)


@declare('renorm_(Tensor(a!) self, Scalar p, int dim, Scalar maxnorm) -> Tensor(a!)',
         variants='method')
def renorm_(input: Tensor, p: Any, dim: int, maxnorm: Any) -> Tensor:
    """``renorm``, in place.

    >>> import jaxgrad
    >>> jaxgrad.tensor([[3.0, 4.0]]).renorm_(1, 0, 1.4)
    tensor([[0.6000, 0.8000]])
    """
    return _renorm(input, p, dim, maxnorm, inplace=True)


# --- fill_diagonal_ ------------------------------------------------------------------------------

@declare('fill_diagonal_(Tensor(a!) self, Scalar fill_value, bool wrap=False) -> Tensor(a!)',
         variants='method')
def fill_diagonal_(input: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Fill the main diagonal (all indices equal) of a tensor of at least 2 dims; a tall matrix
    with ``wrap`` continues it every ``width + 1`` rows, as numpy's ``fill_diagonal``.

    >>> import jaxgrad
    >>> jaxgrad.zeros(2, 3).fill_diagonal_(5)
    tensor([[5., 0., 0.],
            [0., 5., 0.]])
    """
    if input.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = input.shape[0], input.shape[1]
    if input.ndim > 2 and any(s != height for s in input.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    stride = sum(input.stride())
    offset = input.storage_offset()
    size = min(height, width)
    input.as_strided((size,), (stride,), offset).fill_(fill_value)
    if wrap and input.ndim == 2 and height > width + 1:
        step = width + 1
        wrap_size = (input.numel() + step - 1) // step - size
        input.as_strided((wrap_size,), (stride,), offset + input.stride(0) * step).fill_(
            fill_value)
    return input
