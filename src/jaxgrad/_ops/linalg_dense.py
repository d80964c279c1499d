"""Dense linear algebra rows: inverse, determinants, solve, Cholesky (torch's ``linalg_inv_ex``,
``_linalg_det``, ``_linalg_slogdet``, ``_linalg_solve_ex``, ``linalg_cholesky_ex``), with the
backward formulas of torch's derivatives.yaml / FunctionsManual.cpp.

The ``info`` outputs are LAPACK's: the 1-based index of the first zero pivot of the LU
factorisation (getrf), or the order of the first leading minor that is not positive-definite
(potrf); 0 on success. They are not differentiable.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from ._table import Op


def _mH(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def _mT(x):
    return jnp.swapaxes(x, -1, -2)


def lu_info(a):
    """getrf's ``info`` of each matrix of ``a``: the 1-based index of its first zero pivot."""
    n = a.shape[-1]
    if n == 0 or a.size == 0:
        return jnp.zeros(a.shape[:-2], jnp.int32)
    lu, _, _ = lax.linalg.lu(a)
    zero = jnp.diagonal(lu, axis1=-2, axis2=-1) == 0
    return jnp.where(zero.any(-1), jnp.argmax(zero, axis=-1) + 1, 0).astype(jnp.int32)


def _eye_like(a):
    return jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)


# --- inverse -------------------------------------------------------------------------------------

def _inv_ex(a):
    if a.size == 0:
        return a, lu_info(a)
    return jnp.linalg.inv(a), lu_info(a)


LINALG_INV_EX = Op("linalg_inv_ex", "LinalgInvExBackward0", _inv_ex, inputs=("A",),
                   outputs=("inverse", "info"), nondiff_outputs=(1,),
                   grads={"A": lambda grad, inverse: -(_mH(inverse) @ grad @ _mH(inverse))},
                   grad_nodes={"A": "NegBackward0"})


# --- determinants --------------------------------------------------------------------------------

def _det_grad(grad, A, result):
    """torch's linalg_det_backward: ``grad * det.conj() * A^{-H}``; 0 where det is 0 (torch's
    first-order path: ``det.conj()`` is 0 there, its perturbed LU solve finite)."""
    singular = (result == 0)[..., None, None]
    safe = jnp.where(singular, _eye_like(A), A)
    g = (grad * jnp.conj(result))[..., None, None] * _mH(jnp.linalg.inv(safe))
    return jnp.where(singular, jnp.zeros((), g.dtype), g)


def _det(a):
    if a.shape[-1] == 0:
        return jnp.ones(a.shape[:-2], a.dtype)
    return jnp.linalg.det(a)


LINALG_DET = Op("linalg_det", "LinalgDetBackward0", _det, inputs=("A",),
                grads={"A": _det_grad}, grad_nodes={"A": "LinalgSolveExBackward0"})


def _slogdet(a):
    if a.shape[-1] == 0:
        return (jnp.ones(a.shape[:-2], a.dtype),
                jnp.zeros(a.shape[:-2], jnp.finfo(a.dtype).dtype))
    sign, logabsdet = jnp.linalg.slogdet(a)
    return sign.astype(a.dtype), logabsdet


def _slogdet_grad(grads, A, sign):
    """torch's slogdet_backward: ``g * A^{-H}``, ``g`` the logabsdet gradient (plus
    ``i * imag(grad_sign * sign.conj())`` for complex inputs; real signs have no gradient)."""
    grad_sign, g = grads
    if jnp.iscomplexobj(A):
        g = g + 1j * jnp.imag(grad_sign * jnp.conj(sign))
    return g[..., None, None] * _mH(jnp.linalg.inv(A))


LINALG_SLOGDET = Op("linalg_slogdet", "LinalgSlogdetBackward0", _slogdet, inputs=("A",),
                    outputs=("sign", "logabsdet"), grads={"A": _slogdet_grad},
                    grad_nodes={"A": "LinalgSolveExBackward0"})


# --- solve ---------------------------------------------------------------------------------------

def is_vector_rhs(a_shape: tuple, b_shape: tuple) -> bool:
    """torch's ``linalg_solve_is_vector_rhs``: B is a (batch of) vector(s)."""
    return len(b_shape) == 1 or (len(a_shape) - 1 == len(b_shape)
                                 and tuple(b_shape) == tuple(a_shape[:-1]))


def _broadcast_batch(a, b):
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return (jnp.broadcast_to(a, batch + a.shape[-2:]), jnp.broadcast_to(b, batch + b.shape[-2:]))


def _solve(a, b, left: bool):
    """``A^{-1} B`` (``left``) or ``B A^{-1}``, over broadcast batches."""
    if is_vector_rhs(a.shape, b.shape):
        return _solve(a, b[..., None], left)[..., 0]
    if not left:
        return _mT(_solve(_mT(a), _mT(b), True))
    a, b = _broadcast_batch(a, b)
    if b.size == 0 or a.size == 0:
        return jnp.zeros(b.shape, b.dtype)
    return jnp.linalg.solve(a, b)


def _solve_ex(A, B, left):
    return _solve(A, B, left), lu_info(A)  # (info: one per matrix of A, as torch's)


def _solve_grad_A(grad, A, result, left):
    """linalg_solve_backward: ``gA = -gB X^H`` (left) or ``-X^H gB``."""
    gB = _solve(_mH(A), grad, left)
    if is_vector_rhs(A.shape, grad.shape):
        gB, result = gB[..., None], result[..., None]
    return -(gB @ _mH(result)) if left else -(_mH(result) @ gB)


LINALG_SOLVE_EX = Op(
    "linalg_solve_ex", "LinalgSolveExBackward0", _solve_ex, inputs=("A", "B"),
    outputs=("result", "info"), nondiff_outputs=(1,),
    grads={"A": _solve_grad_A,
           "B": lambda grad, A, left, result: _solve(_mH(A), grad, left)},
    grad_nodes={"A": "NegBackward0",
                "B": lambda A, result: "SqueezeBackward1" if is_vector_rhs(
                    A.shape, result.shape) else "LinalgSolveExBackward0"})


# --- Cholesky ------------------------------------------------------------------------------------

def potrf_info(a):
    """potrf's ``info`` of each matrix of ``a`` (its lower triangle read): the order of the first
    leading minor that is not positive-definite, 0 if none (a left-looking Cholesky)."""
    n = a.shape[-1]
    rows = jnp.arange(n)

    def step(k, carry):
        low, info = carry
        row = jnp.where(rows < k, low[..., k, :], 0)
        d = jnp.real(a[..., k, k]) - jnp.sum(jnp.abs(row) ** 2, axis=-1)
        bad = ~(d > 0)
        info = jnp.where((info == 0) & bad, k + 1, info)
        dk = jnp.sqrt(jnp.where(bad, 1, d)).astype(a.dtype)
        col = a[..., :, k] - jnp.einsum("...ij,...j->...i", low, jnp.conj(row))
        col = jnp.where(rows > k, col / dk[..., None], jnp.where(rows == k, dk[..., None], 0))
        return low.at[..., :, k].set(col), info

    init = (jnp.zeros(a.shape, a.dtype), jnp.zeros(a.shape[:-2], jnp.int32))
    return lax.fori_loop(0, n, step, init)[1]


def _cholesky_ex(a, upper: bool):
    if upper:  # potrf("U") reads the upper triangle: the lower one of A^H
        low, info = _cholesky_ex(_mH(a), False)
        return _mH(low), info
    if a.size == 0:
        return a, jnp.zeros(a.shape[:-2], jnp.int32)
    low = lax.linalg.cholesky(a, symmetrize_input=False)
    failed = jnp.isnan(low).any()
    info = lax.cond(failed, potrf_info, lambda x: jnp.zeros(x.shape[:-2], jnp.int32), a)
    return low, info


def cholesky_grad(grad, L, upper):
    """torch's cholesky_backward: ``gA = L^{-H} Φ(L^H gL) L^{-1}``, ``Φ`` taking the lower
    triangle with half its diagonal, made Hermitian."""
    low, g = (_mH(L), _mH(grad)) if upper else (L, grad)
    gA = jnp.tril(_mH(low) @ g)
    gA = 0.5 * (gA + _mH(jnp.tril(gA, -1)))
    gA = lax.linalg.triangular_solve(low, gA, left_side=True, lower=True, transpose_a=True,
                                     conjugate_a=True)
    return lax.linalg.triangular_solve(low, gA, left_side=False, lower=True)


LINALG_CHOLESKY_EX = Op("linalg_cholesky_ex", "LinalgCholeskyExBackward0", _cholesky_ex,
                        inputs=("A",), outputs=("L", "info"), nondiff_outputs=(1,),
                        grads={"A": cholesky_grad})
CHOLESKY = Op("cholesky", "CholeskyBackward0", lambda a, upper: _cholesky_ex(a, upper)[0],
              inputs=("A",), outputs=("L",), grads={"A": cholesky_grad})
