"""Triangular solvers: ``linalg.solve_triangular``, the deprecated ``triangular_solve``,
``cholesky_solve`` and ``cholesky_inverse``, on the rows of ``_ops/linalg_triangular.py``, with
torch's argument checks and messages.
"""

from __future__ import annotations

from typing import Any

from .._core import dtypes as _dtypes
from .._core import return_types
from .._core.tensor import Tensor
from .._engine.dispatch import apply
from .._ops import linalg_triangular as TR
from .arguments import warn_once_as_jaxgrad
from .linalg_dense import _raise_on_info, _singular_pivot
from .opgen import declare


def no_kernel(kernel: str, dtype: Any) -> NotImplementedError:
    """torch's dispatch error for a dtype its CPU kernel ``kernel`` does not cover."""
    return NotImplementedError(f'"{kernel}" not implemented for '
                               f"'{_dtypes.scalar_type_name(dtype)}'")


def check_kernel_dtype(A: Tensor, kernel: str) -> None:
    """LAPACK kernels take float32/64 and complex64/128 only."""
    if not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype in (
            _dtypes.float16, _dtypes.bfloat16):
        raise no_kernel(kernel, A.dtype)


def check_batch_broadcast(a: tuple, b: tuple) -> None:
    """torch's ``infer_size`` error for batch shapes ``a`` and ``b`` that do not broadcast."""
    ndim = max(len(a), len(b))
    for i in range(ndim - 1, -1, -1):
        offset = ndim - 1 - i
        size_a = a[len(a) - 1 - offset] if len(a) - 1 - offset >= 0 else 1
        size_b = b[len(b) - 1 - offset] if len(b) - 1 - offset >= 0 else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise RuntimeError(f"The size of tensor a ({size_a}) must match the size of tensor b "
                               f"({size_b}) at non-singleton dimension {i}")


def check_is_matrix(B: Tensor, name: str, what: str = "B") -> None:
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")


# --- linalg.solve_triangular ---------------------------------------------------------------------

@declare('linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, '
         'bool unitriangular=False) -> Tensor', variants='out')
def linalg_solve_triangular(input: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                            unitriangular: bool = False) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``left=False``: ``X A = B``) for triangular ``A``
    (its upper triangle read with ``upper=True``, the lower one otherwise; ``unitriangular``:
    its diagonal taken as ones), over broadcast batches; LinalgSolveTriangularBackward0.

    >>> import jaxgrad
    >>> A = jaxgrad.tensor([[2.0, 1.0], [0.0, 4.0]])
    >>> jaxgrad.linalg.solve_triangular(A, jaxgrad.tensor([[3.0], [4.0]]), upper=True)
    tensor([[1.],
            [1.]])
    """
    name = "linalg.solve_triangular"
    _check_shapes(input, B, name)
    n = input.shape[-1]
    rows, cols = B.shape[-2], B.shape[-1]
    if (rows if left else cols) != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {rows}x{cols})")
    check_batch_broadcast(tuple(B.shape[:-2]), tuple(input.shape[:-2]))
    check_kernel_dtype(input, "triangular_solve_cpu")
    if B.dtype is not input.dtype:
        B = B.to(input.dtype)
    return apply(TR.LINALG_SOLVE_TRIANGULAR, input, B, upper=bool(upper), left=bool(left),
                 unitriangular=bool(unitriangular))


def _check_shapes(A: Tensor, B: Tensor, name: str) -> None:
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    check_is_matrix(B, name)


# --- triangular_solve ----------------------------------------------------------------------------

_TRIANGULAR_SOLVE_WARNING = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
    "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
    "reversed and does not return a copy of one of the inputs.\n"
    "X = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
    "X = torch.linalg.solve_triangular(A, B).")


def _check_solver_pair(b: Tensor, A: Tensor, name: str, kernel: str) -> None:
    """torch's linearSolveCheckInputs (``b`` and ``A`` of one dtype, square ``A``, ``A``'s order
    rows in ``b``) and batch broadcasting, then the kernel's dtypes."""
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_dtypes.scalar_type_name(b.dtype)} and A of type "
                           f"{_dtypes.scalar_type_name(A.dtype)} instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is "
                           f"{A.shape[-1]} by {A.shape[-1]} but each b matrix is "
                           f"{b.shape[-2]} by {b.shape[-1]}")
    check_batch_broadcast(tuple(b.shape[:-2]), tuple(A.shape[:-2]))
    check_kernel_dtype(A, kernel)


@declare('triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False, '
         'bool unitriangular=False) -> (Tensor solution, Tensor cloned_coefficient)',
         variants='function method')
def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Any:
    """torch's deprecated ``triangular_solve`` (with its warning, once): the solution of
    ``op(A) X = b`` (``op`` the transpose with ``transpose=True``) and a copy of ``A`` broadcast
    to the batch, both recorded as TriangularSolveBackward0.

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     jaxgrad.triangular_solve(jaxgrad.tensor([[3.0], [4.0]]),
    ...                              jaxgrad.tensor([[2.0, 1.0], [0.0, 4.0]])).solution
    tensor([[1.],
            [1.]])
    """
    warn_once_as_jaxgrad(_TRIANGULAR_SOLVE_WARNING)
    if input.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, "
                           f"but it has {input.ndim} dimensions instead")
    if A.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, "
                           f"but it has {A.ndim} dimensions instead")
    _check_solver_pair(input, A, "triangular_solve", "triangular_solve_cpu")
    solution, coefficient = apply(TR.TRIANGULAR_SOLVE, input, A, upper=bool(upper),
                                  transpose=bool(transpose),
                                  unitriangular=bool(unitriangular))
    return return_types.triangular_solve(solution, coefficient)


# --- cholesky_solve, cholesky_inverse ------------------------------------------------------------

@declare('cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor',
         variants='function method out')
def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    """The solution ``X`` of ``A X = B`` given ``A``'s Cholesky factor ``input2`` (``A = L L^H``,
    or ``U^H U`` with ``upper=True``), over broadcast batches; CholeskySolveBackward0.

    >>> import jaxgrad
    >>> L = jaxgrad.tensor([[2.0, 0.0], [1.0, 1.0]])
    >>> jaxgrad.cholesky_solve(jaxgrad.tensor([[6.0], [3.0]]), L)
    tensor([[1.5000],
            [0.0000]])
    """
    if input.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {input.ndim} "
                           f"dimensions instead")
    if input2.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {input2.ndim} "
                           f"dimensions instead")
    _check_solver_pair(input, input2, "cholesky_solve", "cholesky_solve_cpu")
    return apply(TR.CHOLESKY_SOLVE, input, input2, upper=bool(upper))


@declare('cholesky_inverse(Tensor self, bool upper=False) -> Tensor',
         variants='function method out')
def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:
    """The inverse of ``A = L L^H`` (``U^H U`` with ``upper=True``) from its Cholesky factor; a
    zero on the factor's diagonal raises ``LinAlgError``; CholeskyInverseBackward0.

    >>> import jaxgrad
    >>> jaxgrad.cholesky_inverse(jaxgrad.tensor([[2.0, 0.0], [0.0, 1.0]]))
    tensor([[0.2500, 0.0000],
            [0.0000, 1.0000]])
    """
    _check_matrices_named(input, "cholesky_inverse")
    check_kernel_dtype(input, "cholesky_inverse_out_cpu")
    result, info = apply(TR.CHOLESKY_INVERSE, input, upper=bool(upper))
    _raise_on_info(info, "cholesky_inverse", _singular_pivot)
    return result


def _check_matrices_named(A: Tensor, name: str) -> None:
    """torch's squareCheckInputs, without the floating-point check (the kernel's comes later)."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")

