"""Decompositions and matrix functions: ``_linalg_eigh``, ``linalg_eig``, ``_linalg_svd``,
``linalg_qr``, ``linalg_pinv``, ``linalg_matrix_exp``, with the backward formulas of torch's
FunctionsManual.cpp (``linalg_eig_backward``, ``svd_backward``, ``linalg_qr_backward``,
``pinv_backward``, ``linalg_matrix_exp_differential``).

JAX's CPU kernels are LAPACK's, as torch's are (syevd/heevd, geev, gesdd, geqrf/orgqr): the
eigen- and singular vectors come out with the same phases. Where torch's formula undefined
gradients of unused outputs take shortcuts (``eigvalsh``, ``svdvals``), the engine hands these
formulas zeros, for which the full formulas give the same values.

torch checks, in its complex eigenvector/singular-vector backward, that the loss does not
depend on the vectors' phases (``allclose`` of a diagonal to zero) and raises otherwise: the
rows' ``backward_checks`` make the same test on the incoming gradients.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import jax.scipy.linalg as jsl

from .._core import jax_compat as compat
from ._table import Op, rule_of
from .linalg_dense import _mH
from .linalg_householder import _ormqr
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


def _phase_dependent(message):
    """A backward check: the loss depends on the phases of the eigenvectors ``V`` (complex
    ``V`` and ``Im diag(V^H gV)`` not within 1e-2 of 0, torch's ``allclose``)."""
    def predicate(grads, eigenvectors, **_):
        if not jnp.iscomplexobj(eigenvectors):
            return False
        imag = jnp.imag(_diagonal(_mH(eigenvectors) @ grads[1]))
        return not bool(jnp.allclose(imag, 0, rtol=1e-2, atol=1e-2))
    return (predicate, message)


_PHASE = ("The eigenvectors in the complex case are specified up to multiplication by e^{i phi}. "
          "The specified loss function depends on this quantity, so it is ill-defined.")


def _eigh(A, UPLO):
    if A.size == 0:
        return jnp.zeros(A.shape[:-1], jnp.finfo(A.dtype).dtype), A
    L, V = jnp.linalg.eigh(A, UPLO=UPLO, symmetrize_input=False)
    return L, V


LINALG_EIGH = Op(
    "_linalg_eigh", "LinalgEighBackward0", _eigh, inputs=("A",),
    outputs=("eigenvalues", "eigenvectors"),
    grads={"A": lambda grads, eigenvalues, eigenvectors: eig_backward(
        grads[0], grads[1], eigenvalues, eigenvectors, True)},
    backward_checks=(_phase_dependent(f"linalg_eigh_backward: {_PHASE}"),))


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
        grads[0], grads[1], eigenvalues, eigenvectors, False)},
    backward_checks=(_phase_dependent(f"linalg_eig_backward: {_PHASE}"),))


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


def _svd_phase_dependent(grads, U, Vh, full_matrices, **_):
    """svd_backward's check: ``Im diag(U^H gU) = -Im diag(V^H gV)`` (within torch's
    ``allclose`` tolerances), else the loss depends on the singular vectors' phases."""
    if not jnp.iscomplexobj(U):
        return False
    gU, _, gVh = grads
    if full_matrices:
        k = min(U.shape[-2], Vh.shape[-1])
        U, gU, Vh, gVh = U[..., :k], gU[..., :k], Vh[..., :k, :], gVh[..., :k, :]
    im_u = 2 * jnp.imag(_diagonal(_mH(U) @ gU))
    im_v = 2 * jnp.imag(_diagonal(Vh @ _mH(gVh)))
    return not bool(jnp.allclose(im_u, -im_v, rtol=1e-2, atol=1e-2))


LINALG_SVD = Op(
    "_linalg_svd", "LinalgSvdBackward0", _svd, inputs=("A",), outputs=("U", "S", "Vh"),
    grads={"A": svd_backward}, grad_nodes={"A": "MmBackward0"},
    backward_checks=((_svd_phase_dependent,
                      "svd_backward: The singular vectors in the complex case are specified up "
                      "to multiplication by e^{i phi}. The specified loss function depends on "
                      "this phase term, making it ill-defined."),))


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
               grads={"A": _qr_grad},
               # (torch's formula ends in a triangular solve, or for a wide A in a sum)
               grad_nodes={"A": lambda R: "AddBackward0" if R.shape[-2] < R.shape[-1]
                           else "LinalgSolveTriangularBackward0"})


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
                 grads={"self": _pinv_grad}, grad_nodes={"self": "AddBackward0"})


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
                       inputs=("self",), grads={"self": _matrix_exp_grad},
                       grad_nodes={"self": "SliceBackward0"})


# --- lstsq ---------------------------------------------------------------------------------------

def _lstsq(A, B, rcond, driver):
    """torch's linalg_lstsq on CPU: the minimum-norm least-squares solution (singular values at
    most ``rcond`` times the largest count as zero), the residuals ``|A X - B|^2`` where torch's
    driver gives them (a tall ``A``, not gelsy), the rank (not gels) and the singular values
    (gelsd, gelss); an output a driver does not fill is empty."""
    vector = len(B.shape) == 1 or (len(A.shape) - 1 == len(B.shape) and B.shape == A.shape[:-1])
    if vector:
        B = B[..., None]
    batch = jnp.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = jnp.broadcast_to(A, batch + A.shape[-2:])
    B = jnp.broadcast_to(B, batch + B.shape[-2:])
    m, n = A.shape[-2:]
    real = jnp.finfo(A.dtype).dtype
    U, S, Vh = jnp.linalg.svd(A, full_matrices=False)
    keep = rcond * S[..., :1] < S
    inv = jnp.where(keep, 1 / jnp.where(keep, S, 1), 0).astype(A.dtype)
    X = _mH(Vh) @ (inv[..., None] * (_mH(U) @ B))
    empty = jnp.zeros((0,), real)
    residuals = (jnp.sum(jnp.abs(A @ X - B) ** 2, axis=-2).astype(real)
                 if m > n and driver != "gelsy" else empty)
    rank = jnp.zeros((0,), jnp.int64) if driver == "gels" else keep.sum(-1).astype(jnp.int64)
    values = S.astype(real) if driver in ("gelsd", "gelss") else empty
    return (X[..., 0] if vector else X), residuals, rank, values


def _lstsq_grads(grads, self, b, solution):
    """torch's linalg_lstsq_backward: the solution's gradient through ``pinv(A)`` (the default
    tolerance), whatever the driver (``gA = pinv_backward(gX B^H)``, ``gB = pinv(A)^H gX``); the
    residuals' with the solution held fixed (``R = A X - B``: ``gA += 2 R gL X^H``,
    ``gB -= 2 R gL``)."""
    (gX, gL), A, B, X = grads[:2], self, b, solution
    vector = len(B.shape) == 1 or (len(A.shape) - 1 == len(B.shape) and B.shape == A.shape[:-1])
    if vector:
        gX, B, X = gX[..., None], B[..., None], X[..., None]
    pinvA = _pinv(A, 0.0, float(jnp.finfo(A.dtype).eps) * max(A.shape[-2:]), False)
    gA = _pinv_grad(gX @ _mH(B), A, pinvA)
    gB = _mH(pinvA) @ gX
    if gL.size:
        scaled = (A @ X - B) * (2 * gL[..., None, :])
        gA, gB = gA + scaled @ _mH(X), gB - scaled
    return gA, (gB[..., 0] if vector else gB)


def _lstsq_self_node(self):
    """The op torch's lstsq backward ends in for ``A``: pinv_backward's last sum (a difference
    for a tall ``A``)."""
    return "SubBackward0" if self.shape[-2] > self.shape[-1] else "AddBackward0"


def _lstsq_b_node(self, b):
    """The op torch's lstsq backward ends in for ``b``: ``pinv(A)^H @ gX`` (a batched matmul is
    an mm of a reshape; a vector ``b`` is squeezed back)."""
    if b.ndim == 1 or (self.ndim - 1 == b.ndim and tuple(b.shape) == tuple(self.shape[:-1])):
        return "SqueezeBackward1"
    return "MmBackward0" if max(self.ndim, b.ndim) == 2 else "UnsafeViewBackward0"


LINALG_LSTSQ = Op("linalg_lstsq", "LinalgLstsqBackward0", _lstsq, inputs=("self", "b"),
                  outputs=("solution", "residuals", "rank", "singular_values"),
                  nondiff_outputs=(2, 3),
                  grads={"self": lambda grads, self, b, solution: _lstsq_grads(
                      grads, self, b, solution)[0],
                         "b": lambda grads, self, b, solution: _lstsq_grads(
                             grads, self, b, solution)[1]},
                  undefined_grads=lambda shapes: shapes[0] is None and (
                      shapes[1] is None or math.prod(shapes[1]) == 0),
                  grad_nodes={"self": _lstsq_self_node, "b": _lstsq_b_node})


# --- householder_product -------------------------------------------------------------------------

def _householder_product(A, tau):
    """LAPACK's orgqr/ungqr: the first ``n`` columns of ``H_1 ... H_k`` with
    ``H_i = I - tau_i v_i v_i^H`` (``v_i``: column ``i`` of ``A`` below the diagonal, 1 on it),
    which is ormqr's ``Q`` applied to the identity's first ``n`` columns."""
    m, n = A.shape[-2:]
    return _ormqr(A, tau, jnp.broadcast_to(jnp.eye(m, n, dtype=A.dtype), A.shape), True, False)


def _householder_grads(grad, input, tau):
    """torch's householder_product_backward (the adjoint of the same product, in torch's
    conjugate convention)."""
    _, pullback = compat.torch_vjp(_householder_product, input, tau)
    return pullback(grad)


LINALG_HOUSEHOLDER_PRODUCT = Op(
    "linalg_householder_product", "LinalgHouseholderProductBackward0", _householder_product,
    inputs=("input", "tau"),
    grads={"input": lambda grad, input, tau: _householder_grads(grad, input, tau)[0],
           "tau": lambda grad, input, tau: _householder_grads(grad, input, tau)[1]},
    grad_nodes={"input": "TrilBackward0", "tau": "CopySlices"})
