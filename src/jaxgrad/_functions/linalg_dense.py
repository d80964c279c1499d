"""Dense linear algebra: ``linalg.inv``/``inv_ex``/``inverse``, ``linalg.det``/``det``,
``linalg.slogdet``/``slogdet``/``logdet``, ``linalg.solve``/``solve_ex`` and
``linalg.cholesky``/``cholesky_ex``/``cholesky``, on the rows of ``_ops/linalg_dense.py``, with
torch's argument checks and its ``LinAlgError`` messages (read from the ``info`` outputs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core import dtypes as _dtypes
from .._core import return_types
from .._core.tensor import Tensor
from .._core.typename import public_path
from .._engine.dispatch import apply
from .._ops import linalg_dense as D
from .arguments import warn_once_as_jaxgrad
from .indexing import where
from .opgen import declare
from .pointwise import log


@public_path("jaxgrad.linalg")
class _LinAlgError(RuntimeError):
    """torch's ``linalg.LinAlgError``: a matrix the factorisation cannot handle (singular, not
    positive-definite); a ``RuntimeError``.

    >>> import jaxgrad
    >>> issubclass(jaxgrad.linalg.LinAlgError, RuntimeError)
    True
    """


def _check_matrices(A: Tensor, name: str) -> None:
    """torch's squareCheckInputs and checkFloatingOrComplex (no half precision)."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    _check_dtype(A, name)


def _check_dtype(A: Tensor, name: str) -> None:
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{_dtypes.scalar_type_name(A.dtype)}")
    if A.dtype in (_dtypes.float16, _dtypes.bfloat16):
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got "
                           f"{_dtypes.scalar_type_name(A.dtype)}")


def _raise_on_info(info: Tensor, name: str, message: Any) -> None:
    """torch's ``_linalg_check_errors``: the first matrix whose ``info`` is not 0 raises
    ``message(info)``, prefixed with its batch element where the input is a batch."""
    codes = np.asarray(info._value).reshape(-1)
    bad = np.flatnonzero(codes)
    if not bad.size:
        return
    prefix = f"(Batch element {bad[0]}): " if info.ndim else ""
    raise _LinAlgError(f"{name}: {prefix}{message(int(codes[bad[0]]))}")


def _singular_pivot(code: int) -> str:
    return (f"The diagonal element {code} is zero, the inversion could not be completed "
            "because the input matrix is singular.")


def _not_positive_definite(code: int) -> str:
    return ("The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {code} is not positive-definite).")


# --- inverse -------------------------------------------------------------------------------------

def _inv_ex(A: Tensor, check_errors: bool, name: str) -> Any:
    _check_matrices(A, name)
    inverse, info = apply(D.LINALG_INV_EX, A)
    if check_errors:
        _raise_on_info(info, name, _singular_pivot)
    return return_types.linalg_inv_ex(inverse, info)


@declare('linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)',
         variants='')
def linalg_inv_ex(A: Tensor, *, check_errors: bool = False) -> Any:
    """The inverse of each square matrix of ``A`` and LAPACK's ``info`` (the first zero pivot of
    its LU factorisation, 0 for an invertible matrix) instead of an error; LinalgInvExBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.inv_ex(jaxgrad.tensor([[2.0, 0.0], [0.0, 4.0]]))
    jaxgrad.return_types.linalg_inv_ex(
    inverse=tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]]),
    info=tensor(0, dtype=jaxgrad.int32))
    """
    return _inv_ex(A, check_errors, "linalg.inv_ex")


@declare('linalg_inv(Tensor A) -> Tensor', variants='out')
def linalg_inv(A: Tensor) -> Tensor:
    """The inverse of each square matrix of ``A``; a singular one raises
    ``jaxgrad.linalg.LinAlgError``. Its gradient is ``-A^{-H} grad A^{-H}``.

    >>> import jaxgrad
    >>> jaxgrad.linalg.inv(jaxgrad.tensor([[2.0, 0.0], [0.0, 4.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    return _inv_ex(A, True, "linalg.inv").inverse


@declare('inverse(Tensor self) -> Tensor', variants='function method out')
def inverse(input: Tensor) -> Tensor:
    """``linalg.inv``, torch's older name.

    >>> import jaxgrad
    >>> jaxgrad.tensor([[1.0, 2.0], [0.0, 1.0]]).inverse()
    tensor([[ 1., -2.],
            [ 0.,  1.]])
    """
    return _inv_ex(input, True, "linalg.inv").inverse


# --- determinants --------------------------------------------------------------------------------

@declare('linalg_det(Tensor A) -> Tensor', variants='out')
def linalg_det(A: Tensor) -> Tensor:
    """The determinant of each square matrix of ``A``; LinalgDetBackward0 (``grad * det.conj()
    * A^{-H}``).

    >>> import jaxgrad
    >>> jaxgrad.linalg.det(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor(-2.)
    """
    _check_matrices(A, "linalg.det")
    return apply(D.LINALG_DET, A)


@declare('det(Tensor self) -> Tensor', variants='function method')
def det(input: Tensor) -> Tensor:
    """``linalg.det``, as a function and a method.

    >>> import jaxgrad
    >>> jaxgrad.tensor([[2.0, 0.0], [0.0, 3.0]]).det()
    tensor(6.)
    """
    _check_matrices(input, "linalg.det")
    return apply(D.LINALG_DET, input)


def _slogdet(A: Tensor, name: str) -> tuple[Tensor, Tensor]:
    _check_matrices(A, name)
    return apply(D.LINALG_SLOGDET, A)


@declare('linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)', variants='')
def linalg_slogdet(A: Tensor) -> Any:
    """``(sign, logabsdet)`` of each square matrix of ``A``: its determinant is
    ``sign * exp(logabsdet)`` (``sign`` of ``A``'s dtype, 0 for a singular matrix).

    >>> import jaxgrad
    >>> jaxgrad.linalg.slogdet(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    jaxgrad.return_types.linalg_slogdet(
    sign=tensor(-1.),
    logabsdet=tensor(0.6931))
    """
    return return_types.linalg_slogdet(*_slogdet(A, "linalg.slogdet"))


@declare('slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)', variants='function method')
def slogdet(input: Tensor) -> Any:
    """``linalg.slogdet`` as a function and a method.

    >>> import jaxgrad
    >>> jaxgrad.slogdet(jaxgrad.tensor([[2.0, 0.0], [0.0, 3.0]])).logabsdet
    tensor(1.7918)
    """
    return return_types.slogdet(*_slogdet(input, "linalg.slogdet"))


@declare('logdet(Tensor self) -> Tensor', variants='function method')
def logdet(input: Tensor) -> Tensor:
    """The log of each determinant, composed as torch composes it: NaN for a negative real
    determinant (``where(sign == -1, nan, logabsdet)``), ``sign.log() + logabsdet`` for complex.

    >>> import jaxgrad
    >>> jaxgrad.logdet(jaxgrad.tensor([[2.0, 0.0], [0.0, 3.0]]))
    tensor(1.7918)
    """
    sign, logabsdet = _slogdet(input, "logdet")
    if input.is_complex():
        return log(sign) + logabsdet
    return where(sign == -1.0, float("nan"), logabsdet)


# --- solve ---------------------------------------------------------------------------------------

def _solve_ex(A: Tensor, B: Tensor, left: bool, check_errors: bool, name: str) -> Any:
    _check_matrices(A, "linalg.solve")
    if A.dtype is not B.dtype:
        raise RuntimeError(
            f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
            f"{_dtypes.scalar_type_name(A.dtype)} and B of type "
            f"{_dtypes.scalar_type_name(B.dtype)} instead")
    vector = D.is_vector_rhs(tuple(A.shape), tuple(B.shape))
    rows, cols = ((B.shape[-1], 1) if vector else tuple(B.shape[-2:])) if B.ndim else (1, 1)
    n = A.shape[-1]
    if (rows if left else cols) != n or (vector and not left):
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {rows}x{cols})")
    batch_b = tuple(B.shape[:-1] if vector else B.shape[:-2])
    try:
        np.broadcast_shapes(tuple(A.shape[:-2]), batch_b)
    except ValueError:
        raise RuntimeError(
            f"The size of tensor a ({A.shape[-3]}) must match the size of tensor b "
            f"({batch_b[-1]}) at non-singleton dimension {A.ndim - 3}") from None
    result, info = apply(D.LINALG_SOLVE_EX, A, B, left=bool(left))
    if check_errors:
        _raise_on_info(info, name,
                       lambda code: "The solver failed because the input matrix is singular.")
    return return_types.linalg_solve_ex(result, info)


@declare('linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> '
         '(Tensor result, Tensor info)', variants='')
def linalg_solve_ex(A: Tensor, B: Tensor, *, left: bool = True,
                    check_errors: bool = False) -> Any:
    """``linalg.solve`` with LAPACK's ``info`` (one per matrix of ``A``: its first zero LU
    pivot, 0 when it is invertible) in place of the error; LinalgSolveExBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.solve_ex(jaxgrad.tensor([[2.0, 0.0], [0.0, 4.0]]),
    ...                         jaxgrad.tensor([2.0, 2.0])).result
    tensor([1.0000, 0.5000])
    """
    return _solve_ex(A, B, left, check_errors, "linalg.solve_ex")


@declare('linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor', variants='out')
def linalg_solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """The solution ``X`` of ``A X = B`` (or ``X A = B`` with ``left=False``) over broadcast
    batches; ``B`` may be a (batch of) vector(s). A singular ``A`` raises
    ``jaxgrad.linalg.LinAlgError``.

    >>> import jaxgrad
    >>> jaxgrad.linalg.solve(jaxgrad.tensor([[2.0, 0.0], [0.0, 4.0]]), jaxgrad.tensor([2.0, 2.0]))
    tensor([1.0000, 0.5000])
    """
    return _solve_ex(A, B, left, True, "jaxgrad.linalg.solve").result


# --- Cholesky ------------------------------------------------------------------------------------

def _cholesky_ex(input: Tensor, upper: bool, check_errors: bool, name: str) -> Any:
    _check_matrices(input, name)
    low, info = apply(D.LINALG_CHOLESKY_EX, input, upper=bool(upper))
    if check_errors:
        _raise_on_info(info, name, _not_positive_definite)
    return return_types.linalg_cholesky_ex(low, info)


@declare('linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> '
         '(Tensor L, Tensor info)', variants='')
def linalg_cholesky_ex(input: Tensor, *, upper: bool = False,
                       check_errors: bool = False) -> Any:
    """``linalg.cholesky`` with LAPACK's ``info`` (the order of the first leading minor that is
    not positive-definite, 0 if none) in place of the error; LinalgCholeskyExBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.cholesky_ex(jaxgrad.tensor([[4.0, 2.0], [2.0, 2.0]])).info
    tensor(0, dtype=jaxgrad.int32)
    """
    return _cholesky_ex(input, upper, check_errors, "linalg.cholesky_ex")


@declare('linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor', variants='out')
def linalg_cholesky(input: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor ``L`` (lower-triangular, ``A = L L^H``; ``upper=True``: ``U = L^H``)
    of each Hermitian positive-definite matrix, read from ``input``'s lower triangle (upper with
    ``upper=True``); a matrix that is not positive-definite raises ``LinAlgError``.

    >>> import jaxgrad
    >>> jaxgrad.linalg.cholesky(jaxgrad.tensor([[4.0, 2.0], [2.0, 2.0]]))
    tensor([[2., 0.],
            [1., 1.]])
    """
    return _cholesky_ex(input, upper, True, "linalg.cholesky").L


_CHOLESKY_WARNING = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
    "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
    "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\n"
    "should be replaced with\nU = torch.linalg.cholesky(A).mH\n"
    "This transform will produce equivalent results for all valid (symmetric positive definite) "
    "inputs.")


@declare('cholesky(Tensor self, bool upper=False) -> Tensor', variants='function method out')
def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """torch's deprecated ``cholesky`` (with its warning, once): ``linalg.cholesky`` recorded
    as CholeskyBackward0.

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     jaxgrad.cholesky(jaxgrad.tensor([[4.0, 2.0], [2.0, 2.0]]), upper=True)
    tensor([[2., 1.],
            [0., 1.]])
    """
    warn_once_as_jaxgrad(_CHOLESKY_WARNING)
    _check_matrices(input, "cholesky")
    low = apply(D.CHOLESKY, input, upper=bool(upper))
    if np.isnan(np.asarray(low._value)).any():  # (LAPACK's potrf failed: find where)
        info = apply(D.LINALG_CHOLESKY_EX, input.detach(), upper=bool(upper))[1]
        _raise_on_info(info, "cholesky", _not_positive_definite)
    return low
