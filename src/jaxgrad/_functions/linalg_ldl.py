"""``linalg.ldl_factor_ex``, ``linalg.ldl_factor`` and ``linalg.ldl_solve`` on the rows of
``_ops/linalg_ldl.py`` (LAPACK's Bunch-Kaufman LDL), with torch's checks in torch's order."""

from __future__ import annotations

from typing import Any

from .._core import dtypes as _dtypes
from .._core import return_types
from .._core.tensor import Tensor
from .._engine.dispatch import apply
from .._ops import linalg_ldl as LDL
from .linalg_triangular import check_batch_broadcast, check_kernel_dtype
from .opgen import declare

_INTEGERS = (_dtypes.uint8, _dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64)


def _check_square_floating(A: Tensor, name: str) -> None:
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got "
            f"{_dtypes.scalar_type_name(A.dtype)}"
        )


def _unknown_error(name: str, info: Tensor) -> None:
    """torch reports a zero column of sytrf (``info > 0``) through an internal assert."""
    code = int(info.max()) if info.numel() else 0
    if code > 0:
        raise RuntimeError(f"{name}: Unknown error code: {code}.")


def _ldl_factor_ex(A: Tensor, hermitian: bool, check_errors: bool, name: str) -> tuple:
    _check_square_floating(A, "torch.linalg.ldl_factor_ex")
    check_kernel_dtype(A, "ldl_factor_kernel_cpu")
    LD, pivots, info = apply(LDL.LINALG_LDL_FACTOR_EX, A, hermitian=bool(hermitian))
    if check_errors:
        _unknown_error(name, info)
    return LD, pivots, info


@declare(
    "linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) "
    "-> (Tensor LD, Tensor pivots, Tensor info)",
    variants="",
)
def linalg_ldl_factor_ex(
    input: Tensor, *, hermitian: bool = False, check_errors: bool = False
) -> Any:
    """The LDL factorisation of symmetric (``hermitian``: Hermitian) matrices, from their lower
    triangles, with LAPACK's Bunch-Kaufman pivoting: ``(LD, pivots, info)`` (``info``: the
    first zero column, 1-based, or 0); not differentiable (torch's NotImplemented node).

    >>> import jaxgrad
    >>> jaxgrad.linalg.ldl_factor_ex(jaxgrad.tensor([[4.0, 2.0], [2.0, 3.0]])).LD
    tensor([[4.0000, 0.0000],
            [0.5000, 2.0000]])
    """
    name = "torch.linalg.ldl_factor_ex"
    return return_types.linalg_ldl_factor_ex(*_ldl_factor_ex(input, hermitian, check_errors, name))


@declare(
    "linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> (Tensor LD, Tensor pivots)",
    variants="",
)
def linalg_ldl_factor(input: Tensor, *, hermitian: bool = False) -> Any:
    """``linalg.ldl_factor_ex`` without ``info``, raising where a column is zero.

    >>> import jaxgrad
    >>> jaxgrad.linalg.ldl_factor(jaxgrad.tensor([[0.0, 1.0], [1.0, 0.0]])).pivots
    tensor([-2, -2], dtype=jaxgrad.int32)
    """
    LD, pivots, _ = _ldl_factor_ex(input, hermitian, True, "torch.linalg.ldl_factor")
    return return_types.linalg_ldl_factor(LD, pivots)


@declare(
    "linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor",
    variants="",
)
def linalg_ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """The solution ``X`` of ``A X = B`` from ``A``'s LDL factorisation ``(LD, pivots)``
    (``linalg.ldl_factor``; ``hermitian`` as given there); not differentiable.

    >>> import jaxgrad
    >>> A = jaxgrad.tensor([[4.0, 2.0], [2.0, 3.0]])
    >>> LD, pivots = jaxgrad.linalg.ldl_factor(A)
    >>> jaxgrad.linalg.ldl_solve(LD, pivots, A @ jaxgrad.tensor([[1.0], [2.0]]))
    tensor([[1.],
            [2.]])
    """
    name = "torch.linalg.ldl_solve"
    _check_square_floating(LD, name)
    if B.dtype is not LD.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type "
            f"{_dtypes.scalar_type_name(B.dtype)} and A of type "
            f"{_dtypes.scalar_type_name(LD.dtype)} instead."
        )
    if B.size(-2) != LD.shape[-1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for {name}: each A matrix is "
            f"{LD.shape[-2]} by {LD.shape[-1]} but each b matrix is "
            f"{B.shape[-2]} by {B.shape[-1]}"
        )
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(
            f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, "
            f"but got pivots with shape {list(pivots.shape)} instead"
        )
    if pivots.dtype not in _INTEGERS:
        raise RuntimeError(
            f"{name}: Expected pivots to be integers. Got {_dtypes.scalar_type_name(pivots.dtype)}"
        )
    check_batch_broadcast(tuple(B.shape[:-2]), tuple(LD.shape[:-2]))
    check_kernel_dtype(LD, "ldl_solve_kernel_cpu")
    return apply(LDL.LINALG_LDL_SOLVE, LD, pivots, B, hermitian=bool(hermitian))
