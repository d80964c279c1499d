"""The LU family: ``linalg_lu_factor_ex``, ``linalg_lu``, ``lu_unpack`` and ``linalg_lu_solve``,
with the backward formulas of torch's FunctionsManual.cpp (``lu_factor_ex_backward``,
``linalg_lu_backward``, ``lu_unpack_backward``, ``linalg_lu_solve_LU``).

Pivots are LAPACK's (getrf): 1-based, int32, row ``i`` swapped with row ``pivots[i]`` in turn,
so that ``A = P L U``. ``info`` is getrf's: the 1-based index of the first zero on ``U``'s
diagonal, 0 if none.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from ._table import Op, rule_of
from .linalg_dense import _broadcast_batch, _mH
from .linalg_triangular import LINALG_SOLVE_TRIANGULAR


def _solve_triangular(A, B, upper, left=True, unitriangular=False):
    """``linalg.solve_triangular`` in a formula, differentiated again by torch's rule."""
    return rule_of(LINALG_SOLVE_TRIANGULAR, upper=upper, left=left,
                   unitriangular=unitriangular)(A, B)


def permutation(pivots, m: int, dtype):
    """The matrix ``P`` of 1-based LAPACK ``pivots`` (``A = P L U``) of order ``m``."""
    if pivots.shape[-1] == 0 or m == 0:
        return jnp.broadcast_to(jnp.eye(m, dtype=dtype), pivots.shape[:-1] + (m, m))
    perm = lax.linalg.lu_pivots_to_permutation(pivots.astype(jnp.int32) - 1, m)
    return jnp.swapaxes(jax.nn.one_hot(perm, m, dtype=dtype), -1, -2)


def unpack(LU, pivots, unpack_pivots: bool = True):
    """``(P, L, U)`` of a packed factorisation (``L`` unit lower-trapezoidal ``m x k``, ``U``
    upper-trapezoidal ``k x n``)."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    L = jnp.tril(LU[..., :, :k], -1) + jnp.eye(m, k, dtype=LU.dtype)
    U = jnp.triu(LU[..., :k, :])
    P = permutation(pivots, m, LU.dtype) if unpack_pivots else None
    return P, L, U


# --- lu_factor_ex, lu ----------------------------------------------------------------------------

def _lu_factor_ex(A, pivot):
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = A.shape[:-2]
    if A.size == 0:
        pivots = jnp.broadcast_to(jnp.arange(1, k + 1, dtype=jnp.int32), batch + (k,))
        return A, pivots, jnp.zeros(batch, jnp.int32)
    LU, pivots, _ = lax.linalg.lu(A)
    zero = jnp.diagonal(LU, axis1=-2, axis2=-1) == 0
    info = jnp.where(zero.any(-1), jnp.argmax(zero, axis=-1) + 1, 0).astype(jnp.int32)
    return LU, (pivots + 1).astype(jnp.int32), info


def lu_backward(L_grad, U_grad, P, L, U, pivot):
    """torch's linalg_lu_backward: for square ``A``, ``gA = P L^{-H} [tril_{-1}(L^H gL) +
    triu(gU U^H)] U^{-H}``; wide and tall matrices add the gradients of the trailing blocks
    of ``U`` / ``L``."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        gA = jnp.tril(_mH(L) @ L_grad, -1) + jnp.triu(U_grad @ _mH(U))
        gA = _solve_triangular(_mH(U), gA, upper=False, left=False)
        gA = _solve_triangular(_mH(L), gA, upper=True, left=True, unitriangular=True)
    elif m < n:
        gA = _mH(L) @ L_grad - jnp.triu(U_grad) @ _mH(U)
        gA = _solve_triangular(_mH(U[..., :k]), jnp.tril(gA, -1), upper=False, left=False)
        gA = jnp.concatenate([gA + jnp.triu(U_grad[..., :k]), U_grad[..., k:]], axis=-1)
        gA = _solve_triangular(_mH(L), gA, upper=True, left=True, unitriangular=True)
    else:
        gA = U_grad @ _mH(U) - _mH(L) @ jnp.tril(L_grad, -1)
        gA = _solve_triangular(_mH(L[..., :k, :]), jnp.triu(gA), upper=True, left=True,
                               unitriangular=True)
        gA = jnp.concatenate([gA + jnp.tril(L_grad[..., :k, :], -1), L_grad[..., k:, :]],
                             axis=-2)
        gA = _solve_triangular(_mH(U), gA, upper=False, left=False)
    return P @ gA if pivot else gA


def _lu_factor_ex_grad(grad, LU, pivots, pivot):
    """torch's lu_factor_ex_backward: ``linalg_lu_backward`` of the packed gradient's
    trapezoids (its first ``k`` columns for ``L``, first ``k`` rows for ``U``)."""
    k = min(LU.shape[-2:])
    P, L, U = unpack(LU, pivots)
    return lu_backward(grad[..., :, :k], grad[..., :k, :], P, L, U, pivot)


LINALG_LU_FACTOR_EX = Op(
    "linalg_lu_factor_ex", "LinalgLuFactorExBackward0", _lu_factor_ex, inputs=("A",),
    outputs=("LU", "pivots", "info"), nondiff_outputs=(1, 2),
    grads={"A": _lu_factor_ex_grad}, grad_nodes={"A": "MmBackward0"})


def _lu(A, pivot):
    LU, pivots, _ = _lu_factor_ex(A, pivot)
    return unpack(LU, pivots)


LINALG_LU = Op(
    "linalg_lu", "LinalgLuBackward0", _lu, inputs=("A",), outputs=("P", "L", "U"),
    nondiff_outputs=(0,),
    grads={"A": lambda grads, P, L, U, pivot: lu_backward(grads[1], grads[2], P, L, U, pivot)},
    grad_nodes={"A": lambda U: "MmBackward0" if U.ndim == 2 else "UnsafeViewBackward0"})


# --- lu_unpack -----------------------------------------------------------------------------------

def _lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots):
    m = LU_data.shape[-2]
    P = (permutation(LU_pivots, m, LU_data.dtype) if unpack_pivots
         else jnp.zeros((0,), LU_data.dtype))
    if not unpack_data:
        empty = jnp.zeros((0,), LU_data.dtype)
        return P, empty, empty
    _, L, U = unpack(LU_data, LU_pivots, False)
    return P, L, U


def _lu_unpack_grad(grads, LU_data_shape):
    """torch's lu_unpack_backward: ``tril_{-1}(gL) + triu(gU)`` on the square block, the
    trailing rows of ``gL`` (tall) or columns of ``gU`` (wide) beyond it."""
    _, gL, gU = grads
    m, n = LU_data_shape[-2:]
    k = min(m, n)
    A1 = jnp.tril(gL[..., :k, :], -1) + jnp.triu(gU[..., :, :k])
    if m > n:
        return jnp.concatenate([A1, gL[..., k:, :]], axis=-2)
    if m < n:
        return jnp.concatenate([A1, gU[..., :, k:]], axis=-1)
    return A1


LU_UNPACK = Op("lu_unpack", "LuUnpackBackward0", _lu_unpack, inputs=("LU_data",),
               aux=("LU_pivots",), outputs=("P", "L", "U"), nondiff_outputs=(0,),
               grads={"LU_data": _lu_unpack_grad})


# --- lu_solve ------------------------------------------------------------------------------------

def lu_solve(LU, B, pivots, left: bool = True, adjoint: bool = False):
    """``A^{-1} B`` (``adjoint``: ``A^{-H} B``; ``left=False``: ``B A^{-1}`` / ``B A^{-H}``)
    for ``A = P L U`` given packed, over broadcast batches."""
    if not left:
        return _mH(lu_solve(LU, _mH(B), pivots, True, not adjoint))
    batch = jnp.broadcast_shapes(LU.shape[:-2], B.shape[:-2])
    LU, B = _broadcast_batch(LU, B)
    pivots = jnp.broadcast_to(pivots, batch + pivots.shape[-1:])
    if LU.size == 0 or B.size == 0:
        return jnp.zeros(B.shape, B.dtype)
    P, _, _ = unpack(LU, pivots)
    if adjoint:
        y = lax.linalg.triangular_solve(LU, B, left_side=True, lower=False, transpose_a=True,
                                        conjugate_a=True)
        y = lax.linalg.triangular_solve(LU, y, left_side=True, lower=True, transpose_a=True,
                                        conjugate_a=True, unit_diagonal=True)
        return P @ y
    y = jnp.swapaxes(P, -1, -2) @ B
    y = lax.linalg.triangular_solve(LU, y, left_side=True, lower=True, unit_diagonal=True)
    return lax.linalg.triangular_solve(LU, y, left_side=True, lower=False)


def _lu_solve_grad_LU(grad, LU, pivots, result, left, adjoint):
    """torch's linalg_lu_solve_LU."""
    gX, X = grad, result
    P, L, U = unpack(LU, pivots)
    if left != adjoint:
        gR = _solve_triangular(_mH(U), -((gX if left else _mH(gX)) @ (_mH(X) if left else X)),
                               upper=False)
        gL = jnp.tril(_solve_triangular(_mH(L), gR @ _mH(U), upper=True, left=True,
                                        unitriangular=True), -1)
        return gL + jnp.triu(gR)
    gR = -(jnp.swapaxes(P, -1, -2) @ (X if left else _mH(X)) @ (_mH(gX) if left else gX) @ P)
    gR = _solve_triangular(_mH(L), gR, upper=True, left=False, unitriangular=True)
    gU = jnp.triu(_solve_triangular(_mH(U), _mH(L) @ gR, upper=False, left=False))
    return jnp.tril(gR, -1) + gU


def _lu_solve_grad_B(grad, LU, pivots, left, adjoint):
    """``lu_solve(LU, pivots, grad, left, not adjoint)``, differentiated again as torch's is."""
    return rule_of(LINALG_LU_SOLVE, left=left, adjoint=not adjoint)(LU, grad, pivots)


# (``pivots`` is not differentiable: an ``aux`` operand, not an edge of the node, as in torch)
LINALG_LU_SOLVE = Op(
    "linalg_lu_solve", "LinalgLuSolveBackward0", lu_solve, inputs=("LU", "B"), aux=("pivots",),
    grads={"LU": _lu_solve_grad_LU, "B": _lu_solve_grad_B},
    grad_nodes={"B": "LinalgLuSolveBackward0"})
