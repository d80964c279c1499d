"""Decompositions and matrix functions: ``linalg.eigh``/``eigvalsh``, ``linalg.eig``/
``eigvals``, ``linalg.svd``/``svdvals``/``svd``, ``linalg.qr``/``qr``, ``linalg.pinv``/
``pinverse``, ``linalg.matrix_exp``/``matrix_exp`` and ``linalg.matrix_power``/
``matrix_power`` (composed from ``matmul`` and ``linalg.inv`` as torch composes it), on the
rows of ``_ops/linalg_decomp.py``, with torch's argument checks and messages.
"""

from __future__ import annotations

from typing import Any

from .._core import dtypes as _dtypes
from .._core import return_types
from .._core.memory_format import contiguous_format
from .._core.tensor import Tensor
from .._core.type_info import finfo
from .._engine.dispatch import apply
from .._ops import linalg_decomp as DC
from .arguments import infer_size, warn_once_as_jaxgrad
from .creation import eye
from .linalg import matmul
from .linalg_dense import linalg_inv
from .linalg_triangular import check_kernel_dtype
from .opgen import declare


def _check_matrix(A: Tensor, name: str) -> None:
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")


def _check_square(A: Tensor, name: str) -> None:
    _check_matrix(A, name)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _check_floating(A: Tensor, name: str) -> None:
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{_dtypes.scalar_type_name(A.dtype)}")


# --- eigh, eigvalsh ------------------------------------------------------------------------------

def _eigh(A: Tensor, UPLO: str) -> tuple[Tensor, Tensor]:
    _check_square(A, "linalg.eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    check_kernel_dtype(A, "linalg_eigh_cpu")
    return apply(DC.LINALG_EIGH, A, UPLO=UPLO)


@declare('linalg_eigh(Tensor self, str UPLO="L") -> (Tensor eigenvalues, Tensor eigenvectors)',
         variants='')
def linalg_eigh(input: Tensor, UPLO: str = "L") -> Any:
    """The eigenvalues (ascending, real) and orthonormal eigenvectors of each Hermitian matrix of
    ``input``, read from its lower (``UPLO='L'``) or upper triangle; LinalgEighBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.eigh(jaxgrad.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
    tensor([1., 2.])
    """
    return return_types.linalg_eigh(*_eigh(input, UPLO))


@declare('linalg_eigvalsh(Tensor self, str UPLO="L") -> Tensor', variants='out',
         out_name='_linalg_eigh')
def linalg_eigvalsh(input: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of each Hermitian matrix, ascending; LinalgEighBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.eigvalsh(jaxgrad.tensor([[2.0, 1.0], [1.0, 2.0]]))
    tensor([1., 3.])
    """
    return _eigh(input, UPLO)[0]


# --- eig, eigvals --------------------------------------------------------------------------------

def _eig(A: Tensor, name: str) -> tuple[Tensor, Tensor]:
    _check_square(A, name)
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"Unknown Complex ScalarType for {_dtypes.scalar_type_name(A.dtype)}")
    check_kernel_dtype(A, "linalg_eig_out_cpu")
    return apply(DC.LINALG_EIG, A)


@declare('linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)', variants='')
def linalg_eig(input: Tensor) -> Any:
    """The (complex) eigenvalues and unit-norm eigenvectors of each square matrix, as LAPACK's
    geev orders them; LinalgEigBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.eig(jaxgrad.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
    tensor([2.+0.j, 1.+0.j])
    """
    return return_types.linalg_eig(*_eig(input, "linalg.eig"))


@declare('linalg_eigvals(Tensor self) -> Tensor', variants='out', differentiable=False)
def linalg_eigvals(input: Tensor) -> Tensor:
    """The (complex) eigenvalues of each square matrix; LinalgEigBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.eigvals(jaxgrad.tensor([[0.0, 1.0], [-1.0, 0.0]]))
    tensor([0.+1.j, 0.-1.j])
    """
    return _eig(input, "linalg.eigvals")[0]


# --- svd -----------------------------------------------------------------------------------------

def _svd(A: Tensor, full_matrices: bool, driver: Any) -> tuple[Tensor, Tensor, Tensor]:
    _check_matrix(A, "linalg.svd")
    _check_floating(A, "linalg.svd")
    check_kernel_dtype(A, "linalg_svd_cpu")
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")
    return apply(DC.LINALG_SVD, A, full_matrices=bool(full_matrices))


@declare('linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> '
         '(Tensor U, Tensor S, Tensor Vh)', variants='')
def linalg_svd(A: Tensor, full_matrices: bool = True, *, driver: Any = None) -> Any:
    """The singular value decomposition ``A = U diag(S) Vh`` of each matrix (``S``
    descending; ``full_matrices=False``: the reduced one); LinalgSvdBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.svd(jaxgrad.tensor([[3.0, 0.0], [0.0, -4.0]])).S
    tensor([4., 3.])
    """
    return return_types.linalg_svd(*_svd(A, full_matrices, driver))


@declare('linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor', variants='out',
         out_name='_linalg_svd')
def linalg_svdvals(A: Tensor, *, driver: Any = None) -> Tensor:
    """The singular values of each matrix, descending; LinalgSvdBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.svdvals(jaxgrad.tensor([[3.0, 0.0], [0.0, -4.0]]))
    tensor([4., 3.])
    """
    return _svd(A, False, driver)[1]


@declare('svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, '
         'Tensor V)', variants='function method')
def svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> Any:
    """torch's older ``svd``: ``(U, S, V)`` with ``V = Vh.mH`` (a conjugate view for complex
    input); ``compute_uv=False`` gives zero ``U`` and ``V`` of the full shapes.

    >>> import jaxgrad
    >>> jaxgrad.svd(jaxgrad.tensor([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False).V
    tensor([[0., 0.],
            [0., 0.]])
    """
    if compute_uv:
        U, S, Vh = _svd(input, not some, None)
        return return_types.svd(U, S, Vh.mH)
    S = _svd(input, False, None)[1]
    m, n = input.shape[-2:]
    batch = tuple(input.shape[:-2])
    U = input.new_zeros(batch + (m, m))
    V = input.new_zeros(batch + (n, n))
    return return_types.svd(U, S, V)


# --- qr ------------------------------------------------------------------------------------------

def _qr(A: Tensor, mode: str) -> tuple[Tensor, Tensor]:
    _check_matrix(A, "linalg.qr")
    _check_floating(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    check_kernel_dtype(A, "linalg_qr_cpu")
    return apply(DC.LINALG_QR, A, mode=mode)


@declare("linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)", variants='')
def linalg_qr(A: Tensor, mode: str = "reduced") -> Any:
    """The QR decomposition ``A = Q R`` of each matrix (``mode``: ``'reduced'``,
    ``'complete'``, or ``'r'``: ``R`` only, ``Q`` empty); LinalgQrBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.qr(jaxgrad.tensor([[2.0, 0.0], [0.0, 3.0]])).R
    tensor([[2., 0.],
            [0., 3.]])
    """
    return return_types.linalg_qr(*_qr(A, mode))


_QR_WARNING = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
    "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
    "Q, R = torch.qr(A, some)\nshould be replaced with\n"
    "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")


@declare('qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)', variants='function method')
def qr(input: Tensor, some: bool = True) -> Any:
    """torch's deprecated ``qr`` (with its warning, once): ``linalg.qr`` with ``mode='reduced'``
    (``some=True``) or ``'complete'``.

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     jaxgrad.qr(jaxgrad.tensor([[2.0, 0.0], [0.0, 3.0]])).R
    tensor([[2., 0.],
            [0., 3.]])
    """
    warn_once_as_jaxgrad(_QR_WARNING)
    return return_types.qr(*_qr(input, "reduced" if some else "complete"))


# --- pinv ----------------------------------------------------------------------------------------

def _pinv(A: Tensor, atol: Any, rtol: Any, hermitian: bool) -> Tensor:
    if A.ndim < 2 or not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype in (
            _dtypes.float16, _dtypes.bfloat16):
        raise RuntimeError(
            f"linalg.pinv({_dtypes.scalar_type_name(A.dtype)}{{{list(A.shape)}}}): expected a "
            "tensor with 2 or more dimensions of float, double, cfloat or cdouble types")
    if hermitian:
        _check_square(A, "linalg.eigh")
    atol = float(atol) if atol is not None else 0.0
    if rtol is None:  # torch's default: eps * max(m, n), or 0 where an atol > 0 is given
        rtol = 0.0 if atol > 0 else float(
            finfo(A.dtype).eps * max(A.shape[-2], A.shape[-1]))
    return apply(DC.LINALG_PINV, A, atol=atol, rtol=float(rtol), hermitian=bool(hermitian))


@declare('linalg_pinv(Tensor self, float? rcond=None, bool hermitian=False, *, float? atol=None, '
         'float? rtol=None) -> Tensor', variants='out')
def linalg_pinv(input: Tensor, rcond: Any = None, hermitian: bool = False, *, atol: Any = None,
                rtol: Any = None) -> Tensor:
    """The pseudo-inverse of each matrix: singular values (eigenvalues with ``hermitian``) at
    most ``max(atol, rtol * largest)`` count as zero (``rcond``: torch's older name of
    ``rtol``); LinalgPinvBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.pinv(jaxgrad.tensor([[2.0, 0.0], [0.0, 0.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    """
    if rcond is not None:
        return _pinv(input, 0.0, rcond, hermitian)
    return _pinv(input, atol, rtol, hermitian)


@declare('pinverse(Tensor self, float rcond=1e-15) -> Tensor', variants='function method')
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``linalg.pinv(input, rcond)``, torch's older name.

    >>> import jaxgrad
    >>> jaxgrad.tensor([[2.0, 0.0], [0.0, 4.0]]).pinverse()
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    return _pinv(input, 0.0, rcond, False)


# --- matrix_exp, matrix_power --------------------------------------------------------------------

def _matrix_exp(A: Tensor) -> Tensor:
    _check_square(A, "linalg.matrix_exp")
    _check_floating(A, "linalg.matrix_exp")
    return apply(DC.LINALG_MATRIX_EXP, A)


@declare('linalg_matrix_exp(Tensor self) -> Tensor', variants='')
def linalg_matrix_exp(input: Tensor) -> Tensor:
    """The matrix exponential of each square matrix; LinalgMatrixExpBackward0 (the top-right
    block of the exponential of ``[[A^H, G], [0, A^H]]``).

    >>> import jaxgrad
    >>> jaxgrad.linalg.matrix_exp(jaxgrad.zeros(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    return _matrix_exp(input)


@declare('matrix_exp(Tensor self) -> Tensor', variants='function method')
def matrix_exp(input: Tensor) -> Tensor:
    """``linalg.matrix_exp`` as a function and a method.

    >>> import jaxgrad
    >>> jaxgrad.tensor([[0.0, 0.0], [0.0, 0.0]]).matrix_exp()
    tensor([[1., 0.],
            [0., 1.]])
    """
    return _matrix_exp(input)


def _matrix_power(A: Tensor, n: int) -> Tensor:
    """torch's linalg_matrix_power_impl: a copy of the identity (n = 0), a clone (1),
    ``linalg.inv`` (-1 and, first, any n < 0), then matmuls over the binary digits of ``|n|``."""
    _check_square(A, "linalg.matrix_power")
    if n == -1:
        return linalg_inv(A)
    if n == 0:
        return A.clone(memory_format=contiguous_format).copy_(
            eye(A.shape[-1], dtype=A.dtype).expand_as(A))
    if n < 0:
        A = linalg_inv(A)
        n = -n
    if n == 1:
        return A.clone(memory_format=contiguous_format)
    if n == 2:
        return matmul(A, A)
    if n == 3:
        return matmul(matmul(A, A), A)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


@declare('linalg_matrix_power(Tensor self, int n) -> Tensor', variants='out',
         out_name='matmul')
def linalg_matrix_power(input: Tensor, n: int) -> Tensor:
    """The ``n``-th power of each square matrix (``n`` negative: of its inverse), composed from
    ``matmul`` and ``linalg.inv`` as torch composes it.

    >>> import jaxgrad
    >>> jaxgrad.linalg.matrix_power(jaxgrad.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
    tensor([[1., 3.],
            [0., 1.]])
    """
    return _matrix_power(input, n)


@declare('matrix_power(Tensor self, int n) -> Tensor', variants='function method out',
         out_name='matmul')
def matrix_power(input: Tensor, n: int) -> Tensor:
    """``linalg.matrix_power`` as a function and a method.

    >>> import jaxgrad
    >>> jaxgrad.tensor([[2.0, 0.0], [0.0, 1.0]]).matrix_power(-1)
    tensor([[0.5000, 0.0000],
            [0.0000, 1.0000]])
    """
    return _matrix_power(input, n)



# --- lstsq ---------------------------------------------------------------------------------------

_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@declare('linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> '
         '(Tensor solution, Tensor residuals, Tensor rank, Tensor singular_values)', variants='')
def linalg_lstsq(input: Tensor, b: Tensor, rcond: Any = None, *, driver: Any = None) -> Any:
    """The least-squares solution of ``input @ X = b`` with what LAPACK's ``driver`` (CPU
    default ``'gelsy'``) gives besides: ``residuals`` (a tall full-rank ``input``, not gelsy),
    ``rank`` (not gels) and ``singular_values`` (gelsd, gelss), empty where not given;
    LinalgLstsqBackward0 (its gradient goes through ``pinv``).

    >>> import jaxgrad
    >>> A = jaxgrad.tensor([[2.0, 0.0], [0.0, 4.0]])
    >>> jaxgrad.linalg.lstsq(A, jaxgrad.tensor([2.0, 2.0])).solution
    tensor([1.0000, 0.5000])
    """
    if driver is None:
        driver = "gelsy"
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, "
                           "gelsd, gelss)")
    if input.dtype not in (_dtypes.float32, _dtypes.float64, _dtypes.complex64,
                           _dtypes.complex128):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if input.dtype is not b.dtype:
        raise RuntimeError(
            f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
            f"input's dtype {_dtypes.scalar_type_name(input.dtype)} and other's dtype "
            f"{_dtypes.scalar_type_name(b.dtype)}")
    if input.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if b.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    dim_diff = input.ndim - b.ndim
    if not 0 <= dim_diff <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to "
                           "other.dim() and (input.dim() - other.dim()) <= 1")
    vector = b.ndim == 1 or (dim_diff == 1 and tuple(b.shape) == tuple(input.shape[:-1]))
    if (b.shape[-1] if vector else b.shape[-2]) != input.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size("
                           f"{-1 if vector else -2})")
    batch = tuple(input.shape[:-2])
    if dim_diff and not vector:  # a matrix one dimension short: torch sizes the solution's batch
        # as if it were a batch of vectors, then copies it in, broadcast as a matrix
        batch = infer_size(batch, tuple(b.shape[:-1]))
        b = b.expand(infer_size((*batch, *b.shape[-2:]), tuple(b.shape)))
    if rcond is None:
        rcond = finfo(input.dtype).eps * max(input.shape[-2], input.shape[-1])
    out = apply(DC.LINALG_LSTSQ, input, b, rcond=float(rcond), driver=driver)
    solution, residuals, rank, values = out
    own = tuple(input.shape[:-2])
    if rank.ndim and tuple(rank.shape) != own:  # rank, singular values: of input's batch alone
        rank, values = (_of_batch(t, own, 1 if t is values else 0) for t in (rank, values))
    n = input.shape[-1]
    if driver in ("gelsd", "gelss") and residuals.numel() and bool((rank != n).any()):
        residuals = residuals.new_empty((0,))  # (LAPACK gives none for a rank-deficient input)
    return return_types.linalg_lstsq(solution, residuals, rank, values)


def _of_batch(t: Tensor, batch: tuple, tail: int) -> Tensor:
    """``t`` (batch dims, then ``tail`` more) computed over a broadcast batch, cut down to
    ``batch`` (its values repeat along the dims broadcast)."""
    if not t.numel() and t.ndim == 1:
        return t
    extra = t.ndim - tail - len(batch)
    index = (0,) * extra + tuple(slice(0, 1) if n == 1 else slice(None) for n in batch)
    return t[index].clone()


# --- householder_product, orgqr ------------------------------------------------------------------

def _householder_product(A: Tensor, tau: Tensor) -> Tensor:
    name = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.ndim and A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if A.ndim - tau.ndim != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.ndim} and input.ndim is equal to {A.ndim}")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype is not A.dtype:
        raise RuntimeError(f"{name}: tau dtype {_dtypes.scalar_type_name(tau.dtype)} does not "
                           f"match input dtype {_dtypes.scalar_type_name(A.dtype)}")
    check_kernel_dtype(A, "orgqr_cpu")
    return apply(DC.LINALG_HOUSEHOLDER_PRODUCT, A, tau)


@declare('linalg_householder_product(Tensor input, Tensor tau) -> Tensor', variants='out')
def linalg_householder_product(input: Tensor, tau: Tensor) -> Tensor:
    """The first ``n`` columns of the product of Householder reflectors ``I - tau_i v_i v_i^H``
    (``v_i`` below the diagonal of column ``i`` of ``input``, as ``geqrf`` stores them);
    LinalgHouseholderProductBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.householder_product(jaxgrad.zeros(2, 2), jaxgrad.tensor([2.0, 0.0]))
    tensor([[-1.,  0.],
            [ 0.,  1.]])
    """
    return _householder_product(input, tau)


@declare('orgqr(Tensor self, Tensor input2) -> Tensor', variants='function method out')
def orgqr(input: Tensor, input2: Tensor) -> Tensor:
    """``linalg.householder_product`` (LAPACK's name), as a function and a method.

    >>> import jaxgrad
    >>> jaxgrad.zeros(2, 1).orgqr(jaxgrad.tensor([2.0]))
    tensor([[-1.],
            [ 0.]])
    """
    return _householder_product(input, input2)
