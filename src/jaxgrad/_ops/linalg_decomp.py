"""Decompositions and matrix functions: ``_linalg_eigh``, ``linalg_eig``, ``_linalg_svd``,
``linalg_qr``, ``linalg_pinv``, ``linalg_matrix_exp``, with the backward formulas of torch's
FunctionsManual.cpp (``linalg_eig_backward``, ``svd_backward``, ``linalg_qr_backward``,
``pinv_backward``, ``linalg_matrix_exp_differential``).

JAX's CPU kernels are LAPACK's, as torch's are (syevd/heevd, geev, gesdd, geqrf/orgqr): the
eigen- and singular vectors come out with the same phases. Where torch's formula undefined
gradients of unused outputs take shortcuts (``eigvalsh``, ``svdvals``), the engine hands these
formulas zeros, for which the full formulas give the same values.

torch checks, in its complex eigenvector/singular-vector backward, that the loss does not
depend on the vectors' phases (``allclose`` of a diagonal to zero) and raises otherwise; these
formulas run inside a compiled backward and do not make that data-dependent check.
"""

from __future__ import annotations

import jax.numpy as jnp
import jax.scipy.linalg as jsl

from ._table import Op, rule_of
from .linalg_dense import _mH
from .linalg_triangular import LINALG_SOLVE_TRIANGULAR


def _set_diagonal(x, d):
    """``x`` with its diagonal replaced by ``d`` (torch's ``x.diagonal().copy_(d)``)."""
    eye = jnp.eye(x.shape[-1], dtype=bool)
    return jnp.where(eye, _diag_embed(d.astype(x.dtype)), x)


def _diag_embed(d):
    return d[..., :, None] * jnp.eye(d.shape[-1], dtype=d.dtype)


def _diagonal(x):
    return jnp.diagonal(x, axis1=-2, axis2=-1)


def _solve_triangular(A, B, upper, left=True):
    """``linalg.solve_triangular`` in a formula, differentiated again by torch's rule."""
    return rule_of(LINALG_SOLVE_TRIANGULAR, upper=upper, left=left, unitriangular=False)(A, B)


# --- eigendecompositions -------------------------------------------------------------------------

def eig_backward(gL, gV, L, V, hermitian: bool):
    """torch's linalg_eig_backward: ``gA = V^{-H} (diag(gL) + P(V^H gV) / E*) V^H``, ``P`` the
    projection on skew-Hermitian matrices (Hermitian case) or removing ``V^H V diag(Re(V^H
    gV))`` (unit-norm eigenvectors), ``E_ij = L_j - L_i`` (1 on the diagonal)."""
    Vh = _mH(V)
    VhgV = Vh @ gV
    if hermitian:
        VhgV = 0.5 * (VhgV - _mH(VhgV))
    else:
        VhgV = VhgV - Vh @ (V * jnp.real(_diagonal(VhgV))[..., None, :])
    Lc = jnp.conj(L)
    E = Lc[..., None, :] - Lc[..., :, None]
    E = jnp.where(jnp.eye(L.shape[-1], dtype=bool), jnp.ones((), E.dtype), E)
    gA = _set_diagonal(VhgV / E, gL)
    if hermitian:
        return V @ (gA @ Vh)
    return jnp.linalg.solve(Vh, gA @ Vh)


def _eigh(A, UPLO):
    if A.size == 0:
        return jnp.zeros(A.shape[:-1], jnp.finfo(A.dtype).dtype), A
    L, V = jnp.linalg.eigh(A, UPLO=UPLO, symmetrize_input=False)
    return L, V


LINALG_EIGH = Op(
    "_linalg_eigh", "LinalgEighBackward0", _eigh, inputs=("A",),
    outputs=("eigenvalues", "eigenvectors"),
    grads={"A": lambda grads, eigenvalues, eigenvectors: eig_backward(
        grads[0], grads[1], eigenvalues, eigenvectors, True)})


def _eig(A):
    complex_dtype = jnp.result_type(A.dtype, jnp.complex64)
    if A.size == 0:
        return (jnp.zeros(A.shape[:-1], complex_dtype), jnp.zeros(A.shape, complex_dtype))
    L, V = jnp.linalg.eig(A)
    return L.astype(complex_dtype), V.astype(complex_dtype)


LINALG_EIG = Op(
    "linalg_eig", "LinalgEigBackward0", _eig, inputs=("self",),
    outputs=("eigenvalues", "eigenvectors"),
    grads={"self": lambda grads, eigenvalues, eigenvectors: eig_backward(
        grads[0], grads[1], eigenvalues, eigenvectors, False)})


# --- SVD -----------------------------------------------------------------------------------------

def _svd(A, full_matrices):
    m, n = A.shape[-2:]
    if A.size == 0:
        k = min(m, n)
        batch = A.shape[:-2]
        eye = (lambda r: jnp.broadcast_to(jnp.eye(r, dtype=A.dtype), batch + (r, r)))
        return ((eye(m) if full_matrices else jnp.zeros(batch + (m, k), A.dtype)),
                jnp.zeros(batch + (k,), jnp.finfo(A.dtype).dtype),
                (eye(n) if full_matrices else jnp.zeros(batch + (k, n), A.dtype)))
    U, S, Vh = jnp.linalg.svd(A, full_matrices=full_matrices)
    return U, S, Vh


def svd_backward(grads, U, S, Vh, full_matrices):
    """torch's svd_backward (on the first ``k = min(m, n)`` singular vectors when
    ``full_matrices``): ``gA = U [(skew(U^H gU) / E) S + S (skew(V^H gV) / E) + diag(gS)
    (+ i Im diag(U^H gU) / S for complex)] V^H``, plus the projections of ``gU``/``gV`` off
    the span of ``U``/``V`` for rectangular ``A``."""
    gU, gS, gVh = grads
    k = S.shape[-1]
    if full_matrices:
        U, gU, Vh, gVh = U[..., :k], gU[..., :k], Vh[..., :k, :], gVh[..., :k, :]
    m, n = U.shape[-2], Vh.shape[-1]
    UhgU = _mH(U) @ gU
    UhgU = UhgU - _mH(UhgU)
    VhgV = Vh @ _mH(gVh)
    VhgV = VhgV - _mH(VhgV)
    S2 = S * S
    E = S2[..., None, :] - S2[..., :, None]
    E = jnp.where(jnp.eye(k, dtype=bool), jnp.ones((), E.dtype), E)
    gA = (UhgU * S[..., None, :] + S[..., :, None] * VhgV) / E
    gA = gA + _diag_embed(gS).astype(gA.dtype)
    if jnp.iscomplexobj(U):
        gA = gA + _diag_embed(_diagonal(UhgU) / (2.0 * S))
    if m > n:
        gA = U @ gA
        gUSinv = gU / S[..., None, :]
        gA = gA + gUSinv - U @ (_mH(U) @ gUSinv)
        return gA @ Vh
    if m < n:
        gA = gA @ Vh
        SinvgVh = gVh / S[..., :, None]
        gA = gA + SinvgVh - (SinvgVh @ _mH(Vh)) @ Vh
        return U @ gA
    return U @ (gA @ Vh)


LINALG_SVD = Op("_linalg_svd", "LinalgSvdBackward0", _svd, inputs=("A",),
                outputs=("U", "S", "Vh"), grads={"A": svd_backward})


# --- QR ------------------------------------------------------------------------------------------

def _qr(A, mode):
    m, n = A.shape[-2:]
    if mode == "r":
        R = (jnp.zeros(A.shape[:-2] + (min(m, n), n), A.dtype) if A.size == 0
             else jnp.linalg.qr(A, mode="r"))
        return jnp.zeros((0,), A.dtype), R
    if A.size == 0:
        k = m if mode == "complete" else min(m, n)
        eye = jnp.broadcast_to(jnp.eye(m, k, dtype=A.dtype), A.shape[:-2] + (m, k))
        return eye, jnp.zeros(A.shape[:-2] + (k, n), A.dtype)
    Q, R = jnp.linalg.qr(A, mode=mode)
    return Q, R


def _qr_grad(grads, Q, R, mode):
    """torch's linalg_qr_backward (with its errors for ``mode='r'`` and for a complete
    factorisation of a tall matrix)."""
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                           "to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    gQ, gR = grads
    gA = gR @ _mH(R) - _mH(Q) @ gQ
    if m >= n:
        X = jnp.triu(gA)
        X = X + _mH(X)
        X = X - 0.5 * _diag_embed(jnp.real(_diagonal(X))).astype(X.dtype)
        gA = Q @ X + gQ
        return _solve_triangular(_mH(R), gA, upper=False, left=False)
    X = -gA
    X = jnp.tril(X - _mH(X))
    if jnp.iscomplexobj(X):
        X = X - 0.5j * _diag_embed(jnp.imag(_diagonal(X))).astype(X.dtype)
    gA = _solve_triangular(_mH(R[..., :m]), Q @ X, upper=False, left=False)
    gA = jnp.concatenate([gA, jnp.zeros(gA.shape[:-1] + (n - m,), gA.dtype)], axis=-1)
    return gA + Q @ gR


LINALG_QR = Op("linalg_qr", "LinalgQrBackward0", _qr, inputs=("A",), outputs=("Q", "R"),
               grads={"A": _qr_grad})


# --- pinv ----------------------------------------------------------------------------------------

def _pinv(A, atol, rtol, hermitian):
    """torch's linalg_pinv: the inverse of the singular values (eigenvalues when ``hermitian``)
    above ``max(atol, rtol * largest)``, 0 for the others."""
    m, n = A.shape[-2:]
    if A.size == 0:
        return jnp.zeros(A.shape[:-2] + (n, m), A.dtype)
    real = jnp.finfo(A.dtype).dtype
    if hermitian:
        S, U = jnp.linalg.eigh(A, symmetrize_input=False)
        largest = jnp.abs(S).max(-1, keepdims=True)
        tol = jnp.maximum(jnp.asarray(atol, real), rtol * largest)
        inv = jnp.where(jnp.abs(S) > tol, 1 / S, 0).astype(A.dtype)
        return (U * inv[..., None, :]) @ _mH(U)
    U, S, Vh = jnp.linalg.svd(A, full_matrices=False)
    tol = jnp.maximum(jnp.asarray(atol, real), rtol * S[..., :1])
    inv = jnp.where(tol < S, 1 / S, 0).astype(A.dtype)
    return (_mH(Vh) * inv[..., None, :]) @ _mH(U)


def _pinv_grad(grad, self, result):
    """torch's pinv_backward."""
    A, pinvA = self, result
    m, n = A.shape[-2:]
    pinvAh, gradh = _mH(pinvA), _mH(grad)
    if m <= n:
        K = gradh @ pinvA
        KpinvAh = K @ pinvAh
        return (-_mH(pinvA @ K) + KpinvAh - (A @ pinvA) @ KpinvAh
                + (pinvAh @ pinvA) @ (gradh - K @ A))
    K = pinvA @ gradh
    pinvAhK = pinvAh @ K
    return (-_mH(K @ pinvA) + (gradh - A @ K) @ pinvA @ pinvAh + pinvAhK
            - pinvAhK @ pinvA @ A)


LINALG_PINV = Op("linalg_pinv", "LinalgPinvBackward0", _pinv, inputs=("self",),
                 grads={"self": _pinv_grad})


# --- matrix_exp ----------------------------------------------------------------------------------

def _matrix_exp(A):
    if A.size == 0:
        return A
    if A.dtype in (jnp.float16, jnp.bfloat16):
        return jsl.expm(A.astype(jnp.float32)).astype(A.dtype)
    return jsl.expm(A)


def _matrix_exp_grad(grad, self):
    """torch's linalg_matrix_exp_differential (adjoint): the top-right block of
    ``matrix_exp([[A^H, G], [0, A^H]])``."""
    A = _mH(self).astype(grad.dtype)
    n = A.shape[-1]
    meta = jnp.concatenate([jnp.concatenate([A, grad], -1),
                            jnp.concatenate([jnp.zeros_like(A), A], -1)], -2)
    return rule_of(LINALG_MATRIX_EXP)(meta)[..., :n, n:]


LINALG_MATRIX_EXP = Op("linalg_matrix_exp", "LinalgMatrixExpBackward0", _matrix_exp,
                       inputs=("self",), grads={"self": _matrix_exp_grad})
