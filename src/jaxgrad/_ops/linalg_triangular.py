"""Triangular solvers: ``linalg_solve_triangular``, the legacy ``triangular_solve``,
``cholesky_solve`` and ``cholesky_inverse``, with the backward formulas of torch's
derivatives.yaml / FunctionsManual.cpp (``linalg_solve_triangular_backward``,
``triangular_solve_backward``, ``cholesky_solve_backward``, ``cholesky_inverse_backward``).

Each formula names what torch's node saves, even where the gradient it computes does not read
it (the formulas of torch's joint backward functions share one saved set).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from ._table import Op, rule_of
from .linalg_dense import _broadcast_batch, _mH


def triangle(x, upper: bool, unitriangular: bool = False):
    """The triangle a triangular solver reads (without its diagonal when ``unitriangular``)."""
    return jnp.triu(x, int(unitriangular)) if upper else jnp.tril(x, -int(unitriangular))


def solve_triangular(A, B, upper: bool, left: bool = True, unitriangular: bool = False):
    """``A^{-1} B`` (``left``) or ``B A^{-1}`` for triangular ``A``, over broadcast batches."""
    A, B = _broadcast_batch(A, B.astype(A.dtype))
    if A.size == 0 or B.size == 0:
        return jnp.zeros(B.shape, A.dtype)
    return lax.linalg.triangular_solve(A, B, left_side=left, lower=not upper,
                                       unit_diagonal=unitriangular)


# --- linalg.solve_triangular ---------------------------------------------------------------------

def _solve_triangular_grad_B(grad, self, result, upper, left, unitriangular):
    """``gB = A^{-H} gX`` (left) or ``gX A^{-H}``."""
    return solve_triangular(_mH(self), grad, not upper, left, unitriangular)


def _solve_triangular_grad_A(grad, self, result, upper, left, unitriangular):
    """``gA = -gB X^H`` (left) or ``-X^H gB``, projected on ``A``'s triangle."""
    gB = _solve_triangular_grad_B(grad, self, result, upper, left, unitriangular)
    gA = -(gB @ _mH(result)) if left else -(_mH(result) @ gB)
    return triangle(gA, upper, unitriangular)


LINALG_SOLVE_TRIANGULAR = Op(
    "linalg_solve_triangular", "LinalgSolveTriangularBackward0", solve_triangular,
    inputs=("self", "B"),
    grads={"self": _solve_triangular_grad_A, "B": _solve_triangular_grad_B},
    grad_nodes={"self": lambda upper: "TriuBackward0" if upper else "TrilBackward0",
                "B": "LinalgSolveTriangularBackward0"})


# --- triangular_solve (legacy) -------------------------------------------------------------------

def _triangular_solve(b, A, upper, transpose, unitriangular):
    """``(X, A)``: the solution of ``op(A) X = b`` and a copy of ``A`` broadcast to the batch."""
    A, b = _broadcast_batch(A, b)
    if A.size == 0 or b.size == 0:
        return jnp.zeros(b.shape, b.dtype), A
    x = lax.linalg.triangular_solve(A, b, left_side=True, lower=not upper,
                                    transpose_a=transpose, unit_diagonal=unitriangular)
    return x, A


def _triangular_solve_grad_b(grads, self, A, solution, upper, transpose, unitriangular):
    """``grad_b = op(A)^{-H} grad_x``."""
    x = _triangular_solve(grads[0], jnp.conj(A), upper, not transpose, unitriangular)[0]
    return x


def _triangular_solve_grad_A(grads, self, A, solution, upper, transpose, unitriangular):
    """``-grad_b X^H`` (``-X̄ grad_bᵀ`` transposed) on A's triangle, plus the copy's gradient."""
    grad_b = _triangular_solve_grad_b(grads, self, A, solution, upper, transpose, unitriangular)
    grad_a = (-(jnp.conj(solution) @ jnp.swapaxes(grad_b, -1, -2)) if transpose
              else -(grad_b @ _mH(solution)))
    return triangle(grad_a, upper, unitriangular) + grads[1]


TRIANGULAR_SOLVE = Op(
    "triangular_solve", "TriangularSolveBackward0", _triangular_solve, inputs=("self", "A"),
    outputs=("solution", "cloned_coefficient"),
    grads={"self": _triangular_solve_grad_b, "A": _triangular_solve_grad_A})


# --- cholesky_solve, cholesky_inverse ------------------------------------------------------------

def cholesky_solve(b, L, upper: bool):
    """``(L L^H)^{-1} b`` (``(U^H U)^{-1} b`` when ``upper``) over broadcast batches."""
    L, b = _broadcast_batch(L, b)
    if L.size == 0 or b.size == 0:
        return jnp.zeros(b.shape, b.dtype)
    y = lax.linalg.triangular_solve(L, b, left_side=True, lower=not upper,
                                    transpose_a=upper, conjugate_a=upper)
    return lax.linalg.triangular_solve(L, y, left_side=True, lower=not upper,
                                       transpose_a=not upper, conjugate_a=not upper)


def _cholesky_solve_grad_self(grad, self, input2, result, upper):
    """``gB = cholesky_solve(gX, L)``, differentiated again as torch's cholesky_solve is."""
    return rule_of(CHOLESKY_SOLVE, upper=upper)(grad, input2)


def _cholesky_solve_grad_input2(grad, self, input2, result, upper):
    """``-L (gB X^H + X gB^H)`` (upper) or ``-(gB X^H + X gB^H) L``."""
    common = _cholesky_solve_grad_self(grad, self, input2, result, upper) @ _mH(result)
    common = common + _mH(common)
    return -(input2 @ common) if upper else -(common @ input2)


CHOLESKY_SOLVE = Op(
    "cholesky_solve", "CholeskySolveBackward0", cholesky_solve, inputs=("self", "input2"),
    grads={"self": _cholesky_solve_grad_self, "input2": _cholesky_solve_grad_input2},
    grad_nodes={"self": "CholeskySolveBackward0"})


def triangular_info(a):
    """trtri's ``info`` of each triangular matrix of ``a``: the 1-based index of its first zero
    diagonal element, 0 if none."""
    zero = jnp.diagonal(a, axis1=-2, axis2=-1) == 0
    return jnp.where(zero.any(-1), jnp.argmax(zero, axis=-1) + 1, 0).astype(jnp.int32)


def _cholesky_inverse(L, upper):
    """``((L L^H)^{-1}, info)`` (``(U^H U)^{-1}`` when ``upper``)."""
    if L.size == 0:
        return L, jnp.zeros(L.shape[:-2], jnp.int32)
    eye = jnp.broadcast_to(jnp.eye(L.shape[-1], dtype=L.dtype), L.shape)
    inv = lax.linalg.triangular_solve(L, eye, left_side=True, lower=not upper)
    out = inv @ _mH(inv) if upper else _mH(inv) @ inv
    return out, triangular_info(L)


def _cholesky_inverse_grad(grad, self, upper, result):
    """``-L (A^{-1} (G + G^H) A^{-1})`` (upper) or ``-(A^{-1} (G + G^H) A^{-1}) L``."""
    common = result @ ((grad + _mH(grad)) @ result)
    return -(self @ common) if upper else -(common @ self)


CHOLESKY_INVERSE = Op(
    "cholesky_inverse", "CholeskyInverseBackward0", _cholesky_inverse, inputs=("self",),
    outputs=("result", "info"), nondiff_outputs=(1,), grads={"self": _cholesky_inverse_grad})
