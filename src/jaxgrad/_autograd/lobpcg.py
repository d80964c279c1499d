"""``jaxgrad.lobpcg``: the ``k`` extreme eigenpairs of a symmetric (generalized) eigenproblem,
with torch's contract: its arguments, checks and messages, its ``LOBPCGAutogradFunction`` node
and its limits on the backward (none through ``B``, no complex inputs).

The eigenpairs come from a dense solver, not from LOBPCG's iterations: ``eigh`` of ``A`` (of
``L^-1 A L^-T`` with ``B = L L^T``, the eigenvectors mapped back so that ``U^T B U = I``), of
which the ``k`` largest (or smallest) are kept. They are the pairs LOBPCG converges to, exact
instead of to ``tol``. The backward is JAX's derivative of that ``eigh``: the gradient of the
kept pairs through the whole eigenspace, which is torch's formula (the complete-eigenspace part in
``span(U)`` plus the solution of its Sylvester equation in the complement); written as a
``jax_op``, it is differentiable to any order.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax.scipy.linalg import solve_triangular

from .._core.tensor import Tensor
from .._func.jax_op import jax_op
from .function import Function


def _extreme_eigenpairs(A, B, k: int, largest: bool):
    """The ``k`` largest (``largest``) or smallest eigenvalues of ``A x = d B x`` (``B`` None:
    the identity), in that order, and their ``B``-orthonormal eigenvectors as columns."""
    if B is None:
        values, vectors = jnp.linalg.eigh(A)
    else:
        L = jnp.linalg.cholesky(B)
        C = solve_triangular(L, jnp.swapaxes(solve_triangular(L, A, lower=True), -1, -2),
                            lower=True)
        values, vectors = jnp.linalg.eigh(C)
        vectors = solve_triangular(jnp.swapaxes(L, -1, -2), vectors, lower=False)
    if largest:
        values, vectors = values[..., ::-1], vectors[..., ::-1]
    return values[..., :k], vectors[..., :k]


def _eigenpairs_vjp(A, D_grad, U_grad, k: int, largest: bool):
    """The gradient with respect to ``A`` of ``<D_grad, D> + <U_grad, U>``."""
    _, pullback = jax.vjp(lambda a: _extreme_eigenpairs(a, None, k, largest), A)
    return pullback((D_grad, U_grad))[0]


_EIGENPAIRS = jax_op(_extreme_eigenpairs, name="lobpcg_forward",
                     static_argnames=("k", "largest"))
_EIGENPAIRS_BACKWARD = jax_op(_eigenpairs_vjp, name="lobpcg_backward",
                              static_argnames=("k", "largest"))


class LOBPCGAutogradFunction(Function):
    """torch's node for ``lobpcg`` (``LOBPCGAutogradFunctionBackward``): saves ``A``, ``B`` and
    the eigenpairs; its backward refuses ``B`` and complex inputs with torch's messages.

    >>> import jaxgrad
    >>> A = jaxgrad.diag(jaxgrad.tensor([1.0, 2.0, 3.0])).requires_grad_()
    >>> jaxgrad.lobpcg(A, k=1)[0].grad_fn.name()
    'LOBPCGAutogradFunctionBackward'
    """

    @staticmethod
    def forward(ctx, A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None,
                largest=None, method=None, tracker=None, ortho_iparams=None,
                ortho_fparams=None, ortho_bparams=None):
        D, U = _solve(A, k, B, X, n, largest)
        ctx.save_for_backward(A, B, D, U)
        ctx.largest = largest
        ctx.k = D.shape[-1]
        return D, U

    @staticmethod
    def backward(ctx, D_grad, U_grad):
        # (the eigenpairs are unpacked for torch's check that nothing modified them in place;
        # the gradient is recomputed from A)
        A, B, _eigenvalues, _eigenvectors = ctx.saved_tensors
        if A.is_complex() or (B is not None and B.is_complex()):
            raise ValueError("lobpcg.backward does not support complex input yet. Note that "
                             "lobpcg.forward does though.")
        if B is not None:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        largest = True if ctx.largest is None else ctx.largest
        A_grad = _EIGENPAIRS_BACKWARD(A, D_grad, U_grad, k=ctx.k, largest=largest)
        return (A_grad,) + (None,) * 13


def _solve(A: Tensor, k: Any, B: Tensor | None, X: Tensor | None, n: Any,
           largest: Any) -> tuple[Tensor, Tensor]:
    """torch's checks of ``_lobpcg``, then the dense solver."""
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) "
                         f"is smaller than 3 x the number of requested eigenpairs (={n})")
    if X is not None and X.shape[-2:] != (m, n):
        raise AssertionError(f"X shape mismatch: got {X.shape[-2:]}, expected {(m, n)}")
    largest = True if largest is None else bool(largest)
    return _EIGENPAIRS(A.detach(), None if B is None else B.detach(), k=k, largest=largest)


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None,
           n: int | None = None, iK: Tensor | None = None, niter: int | None = None,
           tol: float | None = None, largest: bool | None = None, method: str | None = None,
           tracker: None = None, ortho_iparams: dict[str, int] | None = None,
           ortho_fparams: dict[str, float] | None = None,
           ortho_bparams: dict[str, bool] | None = None) -> tuple[Tensor, Tensor]:
    """The ``k`` largest (``largest=False``: smallest) eigenvalues of the symmetric problem
    ``A x = d B x`` (``B`` None: the identity), in that order, and their eigenvectors as the
    columns of ``X`` (``B``-orthonormal), for ``A`` of shape ``(*, m, m)``; torch's signature and
    checks (``m >= 3 n``, ``n`` the number of pairs asked for).

    Unlike torch, the pairs come from a dense ``eigh`` (exact; ``X``, ``n``, ``iK``, ``niter``,
    ``tol``, ``method``, ``tracker`` and the ``ortho_*`` parameters only shape the checks).
    The gradient with respect to ``A`` (symmetrised, as torch does) is torch's; there is none
    with respect to ``B``, as in torch.

    >>> import jaxgrad
    >>> A = jaxgrad.diag(jaxgrad.tensor([1.0, 5.0, 2.0, 4.0, 3.0, 0.0]))
    >>> jaxgrad.lobpcg(A, k=2)[0]
    tensor([5., 4.])
    """
    if A.requires_grad or (B is not None and B.requires_grad):
        # torch symmetrises first, so that A.grad is symmetric (and A - lr * A.grad stays so)
        A_sym = (A + A.mT) / 2
        B_sym = (B + B.mT) / 2 if B is not None else None
        return LOBPCGAutogradFunction.apply(A_sym, k, B_sym, X, n, iK, niter, tol, largest,
                                            method, tracker, ortho_iparams, ortho_fparams,
                                            ortho_bparams)
    return _solve(A, k, B, X, n, largest)
