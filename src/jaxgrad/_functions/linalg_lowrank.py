"""``svd_lowrank`` and ``pca_lowrank``: torch's randomized low-rank SVD and PCA (Halko, Martinsson
and Tropp's range finder with ``niter`` power iterations), written with jaxgrad's ops as torch
writes them in Python (``torch._lowrank``), so they are differentiable through those ops. The
random test matrix comes from jaxgrad's generator: results differ from torch's in the
directions a rank-``q`` sketch misses, and agree exactly where ``q`` covers the rank of ``A``.

>>> import jaxgrad
>>> A = jaxgrad.tensor([[3.0, 0.0], [0.0, 0.0], [0.0, 2.0]])
>>> U, S, V = jaxgrad.svd_lowrank(A, q=2)
>>> S.round(decimals=4)
tensor([3., 2.])
"""

from __future__ import annotations

from typing import Any

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor
from . import complex_numbers, pointwise, random, reductions, shapes
from .linalg import matmul
from .linalg_decomp import linalg_qr, linalg_svd


def _floating_dtype(A: Tensor) -> Any:
    return A.dtype if A.dtype.is_floating_point else _dtypes.float32


def _minus(X: Tensor, M: Tensor | None, R: Tensor) -> Tensor:
    return X if M is None else pointwise.sub(X, matmul(M, R))


def get_approximate_basis(
    A: Tensor, q: int, niter: int | None = 2, M: Tensor | None = None
) -> Tensor:
    """An ``(m, q)`` matrix ``Q`` with orthonormal columns whose range approximates that of
    ``A - M`` (``niter`` power iterations sharpen it), as torch's ``_lowrank``.

    >>> import jaxgrad
    >>> from jaxgrad._functions.linalg_lowrank import get_approximate_basis
    >>> get_approximate_basis(jaxgrad.eye(4), 2).shape
    jaxgrad.Size([4, 2])
    """
    niter = 2 if niter is None else niter
    dtype = _floating_dtype(A) if not A.is_complex() else A.dtype
    R = random.randn(A.shape[-1], q, dtype=dtype, device=A.device)
    Q = linalg_qr(_minus(matmul(A, R), M, R)).Q
    for _ in range(niter):
        Q = linalg_qr(
            _minus(
                matmul(complex_numbers.adjoint(A), Q),
                None if M is None else complex_numbers.adjoint(M),
                Q,
            )
        ).Q
        Q = linalg_qr(_minus(matmul(A, Q), M, Q)).Q
    return Q


def svd_lowrank(
    A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """``(U, S, V)`` with ``A - M ≈ U diag(S) V^H``: the ``q`` leading singular triplets, from a
    randomized sketch of ``A - M`` (``M`` broadcast to ``A``'s shape; none by default).

    >>> import jaxgrad
    >>> U, S, V = jaxgrad.svd_lowrank(jaxgrad.diag(jaxgrad.tensor([4.0, 1.0, 2.0])), q=3)
    >>> S.round(decimals=4)
    tensor([4., 2., 1.])
    """
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = shapes.broadcast_to(M, A.size())
    if m < n:
        A = complex_numbers.adjoint(A)
        if M is not None:
            M = complex_numbers.adjoint(M)
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    Qh = complex_numbers.adjoint(Q)
    B = _minus(matmul(Qh, A), None if M is None else Qh, M)
    U, S, Vh = linalg_svd(B, full_matrices=False)
    V = complex_numbers.adjoint(Vh)
    U = matmul(Q, U)
    if m < n:
        U, V = V, U
    return U, S, V


def pca_lowrank(
    A: Tensor, q: int | None = None, center: bool = True, niter: int = 2
) -> tuple[Tensor, Tensor, Tensor]:
    """Principal component analysis of the rows of ``A``: :func:`svd_lowrank` of ``A`` minus
    its column means (``center``), ``q`` defaulting to ``min(6, m, n)``.

    >>> import jaxgrad
    >>> A = jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> U, S, V = jaxgrad.pca_lowrank(A, q=1)
    >>> S.round(decimals=4)
    tensor([4.])
    """
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter, M=None)
    C = reductions.mean(A, dim=(-2,), keepdim=True)
    return svd_lowrank(pointwise.sub(A, C), q, niter=niter, M=None)
