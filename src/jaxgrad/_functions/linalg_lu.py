"""The LU family: ``linalg.lu_factor``/``lu_factor_ex``, ``linalg.lu``, ``lu_unpack``,
``linalg.lu_solve``, the deprecated ``lu`` (``Tensor.lu``) and ``lu_solve``, on the rows of
``_ops/linalg_lu.py``, with torch's argument checks and messages.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core import dtypes as _dtypes
from .._core import return_types
from .._core.tensor import Tensor
from .._engine.dispatch import apply
from .._ops import linalg_lu as LU_
from .arguments import warn_once_as_jaxgrad
from .linalg_triangular import check_batch_broadcast, check_kernel_dtype
from .opgen import declare


def _lu_factor_ex(A: Tensor, pivot: bool, name: str) -> tuple[Tensor, Tensor, Tensor]:
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    check_kernel_dtype(A, "lu_cpu")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    return apply(LU_.LINALG_LU_FACTOR_EX, A, pivot=True)


def _raise_zero_pivot(info: Tensor, name: str) -> None:
    """torch's lu_factor error for the first matrix with a zero on ``U``'s diagonal."""
    codes = np.asarray(info._value).reshape(-1)
    bad = np.flatnonzero(codes)
    if not bad.size:
        return
    prefix = f"(Batch element {bad[0]}): " if info.ndim else ""
    i = int(codes[bad[0]])  # (torch prints getrf's 1-based info as the index)
    raise RuntimeError(
        f"{name}: {prefix}U[{i},{i}] is zero and using it on lu_solve would result in a division "
        "by zero. If you still want to perform the factorization, consider calling "
        "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


@declare('linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> '
         '(Tensor LU, Tensor pivots, Tensor info)', variants='')
def linalg_lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> Any:
    """The packed LU factorisation ``A = P L U`` of each matrix (``L`` below the diagonal of
    ``LU``, ``U`` on and above it), LAPACK's 1-based ``pivots`` and ``info`` (the first zero on
    ``U``'s diagonal, 0 if none); LinalgLuFactorExBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.lu_factor_ex(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]])).pivots
    tensor([2, 2], dtype=jaxgrad.int32)
    """
    LU, pivots, info = _lu_factor_ex(A, pivot, "jaxgrad.lu_factor")
    if check_errors:
        _raise_zero_pivot(info, "jaxgrad.linalg.lu_factor_ex")
    return return_types.linalg_lu_factor_ex(LU, pivots, info)


@declare('linalg_lu_factor(Tensor A, *, bool pivot=True) -> (Tensor LU, Tensor pivots)',
         variants='')
def linalg_lu_factor(A: Tensor, *, pivot: bool = True) -> Any:
    """``linalg.lu_factor_ex`` without ``info``: a zero on ``U``'s diagonal raises.

    >>> import jaxgrad
    >>> jaxgrad.linalg.lu_factor(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]])).LU
    tensor([[3.0000, 4.0000],
            [0.3333, 0.6667]])
    """
    LU, pivots, info = _lu_factor_ex(A, pivot, "jaxgrad.lu_factor")
    _raise_zero_pivot(info, "jaxgrad.linalg.lu_factor")
    return return_types.linalg_lu_factor(LU, pivots)


@declare('linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)',
         variants='')
def linalg_lu(A: Tensor, *, pivot: bool = True) -> Any:
    """``A = P L U``: the permutation ``P`` (not differentiable), unit lower-trapezoidal ``L``
    and upper-trapezoidal ``U``; LinalgLuBackward0.

    >>> import jaxgrad
    >>> jaxgrad.linalg.lu(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]])).P
    tensor([[0., 1.],
            [1., 0.]])
    """
    if A.ndim < 2:
        raise RuntimeError(f"linalg.lu: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    check_kernel_dtype(A, "lu_cpu")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    return return_types.linalg_lu(*apply(LU_.LINALG_LU, A, pivot=True))


# --- lu_unpack -----------------------------------------------------------------------------------

@declare('lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, '
         'bool unpack_pivots=True) -> (Tensor P, Tensor L, Tensor U)', variants='function')
def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> Any:
    """``(P, L, U)`` of a packed factorisation from ``linalg.lu_factor`` (empty ``L``, ``U``
    without ``unpack_data``, empty ``P`` without ``unpack_pivots``); LuUnpackBackward0.

    >>> import jaxgrad
    >>> LU, pivots = jaxgrad.linalg.lu_factor(jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> jaxgrad.lu_unpack(LU, pivots).L
    tensor([[1.0000, 0.0000],
            [0.3333, 1.0000]])
    """
    if LU_pivots.dtype is not _dtypes.int32:
        raise RuntimeError(
            "jaxgrad.lu_unpack: LU_pivots is expected to be a contiguous tensor of jaxgrad.int32 "
            "dtype.\nNote: this function is intended to be used with the output produced by "
            "jaxgrad.linalg.lu_factor")
    if LU_data.ndim < 2:
        raise RuntimeError("jaxgrad.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data.shape)} instead")
    return return_types.lu_unpack(*apply(LU_.LU_UNPACK, LU_data, aux=(LU_pivots,),
                                         unpack_data=bool(unpack_data),
                                         unpack_pivots=bool(unpack_pivots)))


# --- lu_solve ------------------------------------------------------------------------------------

def _lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, left: bool, adjoint: bool) -> Tensor:
    name = "linalg.lu_solve"
    if LU.ndim < 2:
        raise RuntimeError(f"jaxgrad.{name}: The input tensor A must have at least 2 dimensions.")
    if LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError(f"jaxgrad.{name}: A must be batches of square matrices, but they are "
                           f"{LU.shape[-2]} by {LU.shape[-1]} matrices")
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    n = LU.shape[-1]
    rows, cols = B.shape[-2], B.shape[-1]
    if (rows if left else cols) != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {rows}x{cols})")
    if LU.dtype is not B.dtype:
        raise RuntimeError(
            f"{name}: Expected LU and B to have the same dtype, but found LU of type "
            f"{_dtypes.scalar_type_name(LU.dtype)} and B of type "
            f"{_dtypes.scalar_type_name(B.dtype)} instead")
    if pivots.dtype is not _dtypes.int32:
        raise RuntimeError(f"{name}: pivots should be a Tensor of scalar type jaxgrad.int32")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LU.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots.shape)} instead")
    check_batch_broadcast(tuple(B.shape[:-2]), tuple(LU.shape[:-2]))
    check_kernel_dtype(LU, "lu_solve_cpu")
    return apply(LU_.LINALG_LU_SOLVE, LU, B, aux=(pivots,), left=bool(left),
                 adjoint=bool(adjoint))


@declare('linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, '
         'bool adjoint=False) -> Tensor', variants='out')
def linalg_lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
                    adjoint: bool = False) -> Tensor:
    """The solution of ``A X = B`` from ``A``'s packed LU factorisation (``adjoint``: of
    ``A^H X = B``; ``left=False``: ``X A = B``), over broadcast batches;
    LinalgLuSolveBackward0.

    >>> import jaxgrad
    >>> LU, pivots = jaxgrad.linalg.lu_factor(jaxgrad.tensor([[2.0, 0.0], [0.0, 4.0]]))
    >>> jaxgrad.linalg.lu_solve(LU, pivots, jaxgrad.tensor([[2.0], [2.0]]))
    tensor([[1.0000],
            [0.5000]])
    """
    return _lu_solve(LU, pivots, B, left, adjoint)


_LU_SOLVE_WARNING = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
    "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
    "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
    "X = torch.linalg.lu_solve(LU, pivots, B)")


@declare('lu_solve(Tensor self, Tensor LU_data, Tensor LU_pivots) -> Tensor',
         variants='function method out', out_name='linalg_lu_solve')
def lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """torch's deprecated ``lu_solve`` (with its warning, once): ``linalg.lu_solve`` with its
    arguments in the older order ``(B, LU, pivots)``.

    >>> import jaxgrad, warnings
    >>> LU, pivots = jaxgrad.linalg.lu_factor(jaxgrad.tensor([[2.0, 0.0], [0.0, 4.0]]))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     jaxgrad.lu_solve(jaxgrad.tensor([[2.0], [4.0]]), LU, pivots)
    tensor([[1.],
            [1.]])
    """
    warn_once_as_jaxgrad(_LU_SOLVE_WARNING)
    return _lu_solve(LU_data, LU_pivots, input, True, False)


_LU_WARNING = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
    "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\n"
    "should be replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")


@declare('lu(Tensor self, bool pivot=True, bool get_infos=False) -> Any',
         variants='function method', python_level=True)
def lu(input: Tensor, pivot: bool = True, get_infos: bool = False) -> Any:
    """torch's deprecated ``lu`` (with its warning, once): ``(LU, pivots)``, or ``(LU, pivots,
    info)`` with ``get_infos``, as a plain tuple; LinalgLuFactorExBackward0.

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]).lu()[1]
    tensor([2, 2], dtype=jaxgrad.int32)
    """
    warn_once_as_jaxgrad(_LU_WARNING)
    LU, pivots, info = _lu_factor_ex(input, pivot, "jaxgrad.lu_factor")
    return (LU, pivots, info) if get_infos else (LU, pivots)
