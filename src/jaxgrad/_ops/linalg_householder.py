"""QR in LAPACK's compact form: ``geqrf`` (the Householder vectors below the diagonal of ``a``,
``R`` on and above it, the scalars ``tau``) and ``ormqr`` (the product of ``Q = H_1 ... H_k``,
or ``Q^H``, with a matrix, from either side).

torch has no derivative for geqrf (its row raises torch's error in the backward); ormqr's is
the adjoint of the same product in torch's conjugate convention (torch's ``ormqr_backward``
differentiates the reflectors, which read only the strictly lower part of ``input``).
"""

from __future__ import annotations

import jax.numpy as jnp

from .._core import jax_compat as compat
from ._table import Op


def _geqrf(A):
    """LAPACK's geqrf: ``(a, tau)`` with ``A = Q R``, ``Q = H_1 ... H_k``, ``k = min(m, n)``."""
    m, n = A.shape[-2:]
    if A.size == 0:
        return A, jnp.zeros(A.shape[:-2] + (min(m, n),), A.dtype)
    h, tau = jnp.linalg.qr(A, mode="raw")  # (numpy's raw form: ``a`` transposed)
    return jnp.swapaxes(h, -1, -2), tau


def _geqrf_not_implemented(grads):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


GEQRF = Op(
    "geqrf(Tensor self) -> (Tensor a, Tensor tau)",
    "GeqrfBackward0",
    _geqrf,
    outputs=("a", "tau"),
    grads={"self": _geqrf_not_implemented},
)


def _reflector(A, i: int):
    """``v_i``: column ``i`` of ``A`` below the diagonal, 1 on it, 0 above."""
    rows = jnp.arange(A.shape[-2])
    column = A[..., :, i]
    return jnp.where(rows > i, column, jnp.where(rows == i, 1, 0).astype(A.dtype))


def _ormqr(input, tau, other, left, transpose):
    """``op(Q) C`` (``left``) or ``C op(Q)``, ``op(Q) = Q^H`` with ``transpose``, applying the
    reflectors ``H_i = I - tau_i v_i v_i^H`` one at a time, in LAPACK's order."""
    k = tau.shape[-1]
    forward = left == transpose  # Q^H C and C Q apply H_1 first
    C = other
    for i in range(k) if forward else reversed(range(k)):
        v = _reflector(input, i)
        t = jnp.conj(tau[..., i]) if transpose else tau[..., i]
        if left:  # H C = C - t v (v^H C)
            w = jnp.einsum("...i,...ij->...j", jnp.conj(v), C)
            C = C - t[..., None, None] * v[..., :, None] * w[..., None, :]
        else:  # C H = C - t (C v) v^H
            w = jnp.einsum("...ij,...j->...i", C, v)
            C = C - t[..., None, None] * w[..., :, None] * jnp.conj(v)[..., None, :]
    return C


def _ormqr_grads(grad, self, input2, input3, left, transpose):
    _, pullback = compat.torch_vjp(
        lambda a, t, c: _ormqr(a, t, c, left, transpose), self, input2, input3
    )
    return pullback(grad)


def _ormqr_grad(which: int):
    return lambda grad, self, input2, input3, left, transpose: _ormqr_grads(
        grad, self, input2, input3, left, transpose
    )[which]


ORMQR = Op(
    "ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, "
    "bool transpose=False) -> Tensor",
    "OrmqrBackward0",
    _ormqr,
    grads={"self": _ormqr_grad(0), "input2": _ormqr_grad(1), "input3": _ormqr_grad(2)},
    grad_nodes={"self": "TrilBackward0", "input2": "CopySlices", "input3": "OrmqrBackward0"},
)
