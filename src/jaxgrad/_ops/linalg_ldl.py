"""The LDL factorisation of symmetric (or Hermitian) matrices as LAPACK's sytrf/hetrf computes
it for torch (``uplo='L'``, Bunch-Kaufman diagonal pivoting, the unblocked sytf2/hetf2 steps),
and its solve (sytrs/hetrs), written as ``lax.fori_loop`` over the columns.

``LD`` holds ``L`` (unit lower triangular, not stored on the diagonal) below the diagonal and
the 1x1 or 2x2 blocks of ``D`` on and just below it; above the diagonal it is zero (torch
clears it). ``pivots`` are LAPACK's, 1-based: ``p > 0`` a 1x1 block whose row and column were
swapped with ``p``; ``-p`` twice, a 2x2 block whose second row was swapped with ``p``. ``info``:
the first column (1-based) that was zero, 0 if none. Only the lower triangle of the input is
read; a complex symmetric factorisation compares sizes with ``|re| + |im|``, as LAPACK does.

torch has no derivative for either op (its NotImplemented node).
"""

from __future__ import annotations

import math

import jax.numpy as jnp
from jax import lax

from ._table import Op

_ALPHA = (1 + math.sqrt(17)) / 8  # Bunch-Kaufman's threshold


def _abs1(x):
    """LAPACK's size of an entry: ``|x|`` for reals, ``|re| + |im|`` (cabs1) for complex."""
    if jnp.iscomplexobj(x):
        return jnp.abs(jnp.real(x)) + jnp.abs(jnp.imag(x))
    return jnp.abs(x)


def _conj_if(x, hermitian: bool):
    return jnp.conj(x) if hermitian else x


def _full(A, hermitian: bool):
    """The whole symmetric (Hermitian) matrix of its lower triangle."""
    lower = jnp.tril(A, -1)
    diag = jnp.diagonal(A)
    return lower + _conj_if(lower, hermitian).T + jnp.diag(diag)


def _factor_step(k, A, hermitian: bool):
    """One step of sytf2/hetf2 at column ``k``: ``(A, kp, kstep, zero)``."""
    n = A.shape[-1]
    idx = jnp.arange(n)
    real = jnp.finfo(A.dtype).dtype
    column = A[:, k]
    akk = A[k, k]
    absakk = jnp.abs(jnp.real(akk)) if hermitian else _abs1(akk)
    below = idx > k
    sizes = jnp.where(below, _abs1(column), -1).astype(real)
    imax = jnp.argmax(sizes)
    colmax = jnp.maximum(sizes[imax], 0)
    zero = (jnp.maximum(absakk, colmax) == 0) | jnp.isnan(absakk)
    row_sizes = jnp.where((idx >= k) & (idx < imax), _abs1(A[imax, :]), 0)
    col_sizes = jnp.where(idx > imax, _abs1(A[:, imax]), 0)
    rowmax = jnp.maximum(row_sizes.max(), col_sizes.max())
    aimax = A[imax, imax]
    absaimax = jnp.abs(jnp.real(aimax)) if hermitian else _abs1(aimax)
    keep = absakk >= _ALPHA * colmax
    keep = keep | (absakk >= _ALPHA * colmax * (colmax / rowmax))
    one_by_one = keep | (absaimax >= _ALPHA * rowmax)
    kp = jnp.where(zero | keep, k, imax)
    kstep = jnp.where(zero | one_by_one, 1, 2)
    kk = k + kstep - 1
    # the interchange of rows and columns kk and kp of the trailing matrix A[k:, k:]
    perm = jnp.where(idx == kk, kp, jnp.where(idx == kp, kk, idx))
    full = _full(A, hermitian)
    swapped = full[perm][:, perm]
    trailing = (idx[:, None] >= k) & (idx[None, :] >= k)
    A = jnp.where(trailing & ~zero, jnp.tril(swapped), A)
    if hermitian:
        A = jnp.where((idx[:, None] == idx[None, :]) & trailing & ~zero, jnp.real(A), A)
    # the update of the trailing matrix by the 1x1 or 2x2 pivot block
    x = jnp.where(below, A[:, k], 0)
    lower_rest = (idx[:, None] >= idx[None, :]) & (idx[None, :] > k)
    d11 = 1 / (jnp.real(A[k, k]) if hermitian else A[k, k])
    one = A + x[:, None] * ((-d11) * _conj_if(x, hermitian))[None, :]
    one = jnp.where(lower_rest, one, A)
    one = one.at[:, k].set(jnp.where(below, d11 * x, A[:, k]))
    two = _two_by_two(A, k, idx, hermitian)
    update = jnp.where(kstep == 1, one, two)
    A = jnp.where(zero, A, update)
    if hermitian:
        diagonal = (idx[:, None] == idx[None, :]) & (idx[None, :] > k)
        A = jnp.where(diagonal, jnp.real(A), A)
    return A, kp, kstep, zero


def _two_by_two(A, k, idx, hermitian: bool):
    """sytf2/hetf2's update by the 2x2 block in rows and columns ``k``, ``k + 1``."""
    n = A.shape[-1]
    k1 = jnp.minimum(k + 1, n - 1)
    rest = idx > k + 1
    ak, ak1 = jnp.where(rest, A[:, k], 0), jnp.where(rest, A[:, k1], 0)
    if hermitian:
        d = jnp.abs(A[k1, k])
        d11 = jnp.real(A[k1, k1]) / d
        d22 = jnp.real(A[k, k]) / d
        tt = 1 / (d11 * d22 - 1)
        d21 = A[k1, k] / d
        d = tt / d
        wk = d * (d11 * ak - d21 * ak1)
        wkp1 = d * (d22 * ak1 - jnp.conj(d21) * ak)
        update = ak[:, None] * jnp.conj(wk)[None, :] + ak1[:, None] * jnp.conj(wkp1)[None, :]
    else:
        d21 = A[k1, k]
        d11 = A[k1, k1] / d21
        d22 = A[k, k] / d21
        t = 1 / (d11 * d22 - 1)
        d21 = t / d21
        wk = d21 * (d11 * ak - ak1)
        wkp1 = d21 * (d22 * ak1 - ak)
        update = ak[:, None] * wk[None, :] + ak1[:, None] * wkp1[None, :]
    lower_rest = (idx[:, None] >= idx[None, :]) & rest[None, :]
    out = jnp.where(lower_rest, A - update, A)
    out = out.at[:, k].set(jnp.where(rest, wk, A[:, k]))
    return out.at[:, k1].set(jnp.where(rest, wkp1, out[:, k1]))


def _ldl_factor_one(A, hermitian: bool):
    n = A.shape[-1]
    A = jnp.tril(A)
    if hermitian:
        A = jnp.where(jnp.eye(n, dtype=bool), jnp.real(A), A)

    def body(k, carry):
        A, pivots, info, skip = carry

        def step(_):
            A2, kp, kstep, zero = _factor_step(k, A, hermitian)
            p = (kp + 1).astype(jnp.int32)
            piv = jnp.where(
                kstep == 1,
                pivots.at[k].set(p),
                pivots.at[k].set(-p).at[jnp.minimum(k + 1, n - 1)].set(-p),
            )
            found = jnp.where((info == 0) & zero, k + 1, info).astype(jnp.int32)
            return A2, piv, found, kstep == 2

        def skipped(_):
            return A, pivots, info, jnp.array(False)

        return lax.cond(skip, skipped, step, None)

    start = (A, jnp.zeros(n, jnp.int32), jnp.array(0, jnp.int32), jnp.array(False))
    A, pivots, info, _ = lax.fori_loop(0, n, body, start)
    return jnp.tril(A), pivots, info


def _ldl_factor_ex(A, hermitian):
    n = A.shape[-1]
    batch = A.shape[:-2]
    if A.size == 0:
        pivots = jnp.broadcast_to(jnp.arange(1, n + 1, dtype=jnp.int32), batch + (n,))
        return A, pivots, jnp.zeros(batch, jnp.int32)
    factor = jnp.vectorize(lambda a: _ldl_factor_one(a, hermitian), signature="(n,n)->(n,n),(n),()")
    return factor(A)


def _ldl_not_implemented(grads):
    raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")


LINALG_LDL_FACTOR_EX = Op(
    "linalg_ldl_factor_ex",
    "NotImplemented",
    _ldl_factor_ex,
    outputs=("LD", "pivots", "info"),
    nondiff_outputs=(1, 2),
    grads={"self": _ldl_not_implemented},
)


def _swap_rows(B, i, j):
    row_i, row_j = B[i], B[j]
    return B.at[i].set(row_j).at[j].set(row_i)


def _ldl_solve_one(LD, pivots, B, hermitian: bool):
    """sytrs/hetrs: ``A X = B`` with ``A = P L D L^T P^T`` (``L^H`` with ``hermitian``)."""
    n = LD.shape[-1]
    idx = jnp.arange(n)

    def forward(k, carry):  # L D Y = P B, k ascending
        B, skip = carry

        def step(_):
            p = pivots[k]
            k1 = jnp.minimum(k + 1, n - 1)

            def one(B):
                B = _swap_rows(B, k, p - 1)
                column = jnp.where(idx > k, LD[:, k], 0)
                B = B - column[:, None] * B[k][None, :]
                diag = jnp.real(LD[k, k]) if hermitian else LD[k, k]
                return B.at[k].set(B[k] * (1 / diag))

            def two(B):
                B = _swap_rows(B, k1, -p - 1)
                rest = idx > k + 1
                B = B - jnp.where(rest, LD[:, k], 0)[:, None] * B[k][None, :]
                B = B - jnp.where(rest, LD[:, k1], 0)[:, None] * B[k1][None, :]
                akm1k = LD[k1, k]
                first = _conj_if(akm1k, hermitian)
                akm1 = LD[k, k] / first
                ak = LD[k1, k1] / akm1k
                denom = akm1 * ak - 1
                bkm1, bk = B[k] / first, B[k1] / akm1k
                return B.at[k].set((ak * bkm1 - bk) / denom).at[k1].set((akm1 * bk - bkm1) / denom)

            return lax.cond(p > 0, one, two, B), p < 0

        return lax.cond(skip, lambda _: (B, jnp.array(False)), step, None)

    def backward(i, carry):  # L^T X = Y, k descending
        B, skip = carry
        k = n - 1 - i

        def step(_):
            p = pivots[k]

            def minus(B, col):
                below = jnp.where(idx > k, _conj_if(LD[:, col], hermitian), 0)
                return B.at[col].add(-(below[:, None] * B).sum(0))

            def one(B):
                return _swap_rows(minus(B, k), k, p - 1)

            def two(B):
                k0 = jnp.maximum(k - 1, 0)
                return _swap_rows(minus(minus(B, k), k0), k, -p - 1)

            return lax.cond(p > 0, one, two, B), p < 0

        return lax.cond(skip, lambda _: (B, jnp.array(False)), step, None)

    B, _ = lax.fori_loop(0, n, forward, (B, jnp.array(False)))
    B, _ = lax.fori_loop(0, n, backward, (B, jnp.array(False)))
    return B


def _ldl_solve(LD, pivots, B, hermitian):
    batch = jnp.broadcast_shapes(LD.shape[:-2], pivots.shape[:-1], B.shape[:-2])
    n = LD.shape[-1]
    LD = jnp.broadcast_to(LD, batch + LD.shape[-2:])
    pivots = jnp.broadcast_to(pivots.astype(jnp.int32), batch + (n,))
    B = jnp.broadcast_to(B, batch + B.shape[-2:])
    if B.size == 0 or n == 0:
        return B
    solve = jnp.vectorize(
        lambda a, p, b: _ldl_solve_one(a, p, b, hermitian), signature="(n,n),(n),(n,k)->(n,k)"
    )
    return solve(LD, pivots, B)


def _ldl_solve_not_implemented(grad):
    raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")


LINALG_LDL_SOLVE = Op(
    "linalg_ldl_solve",
    "NotImplemented",
    _ldl_solve,
    inputs=("LD", "pivots", "B"),
    grads={"LD": _ldl_solve_not_implemented, "B": _ldl_solve_not_implemented},
)
