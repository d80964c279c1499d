"""Differential tests of ``geqrf`` (values, ``torch.return_types.geqrf``, its not-implemented
derivative), ``ormqr`` (left/right, transposed, real and complex, first and second derivatives
of all three inputs) and ``linalg.ldl_factor_ex``/``ldl_factor``/``ldl_solve`` (LAPACK's
Bunch-Kaufman pivots, ``hermitian``, info, not differentiable); torch's errors."""

from __future__ import annotations

import numpy as np
import pytest

from differential import next_functions, ok, raises, val

torch = pytest.importorskip("torch")
import jaxgrad  # noqa: E402

_RS = np.random.RandomState(0)
TALL = _RS.randn(2, 5, 3)
TALL_IMAG = _RS.randn(2, 5, 3)
OTHER = _RS.randn(2, 5, 4)
OTHER_IMAG = _RS.randn(2, 5, 4)


def _matrix(T, values, imag, dtype, requires_grad=False):
    data = values + 1j * imag if dtype.startswith("complex") else values
    return T.tensor(data, dtype=getattr(T, dtype), requires_grad=requires_grad)


def _loss(T, y):
    r = T.view_as_real(y) if y.is_complex() else y
    w = T.tensor(np.cos(np.arange(r.numel())).reshape(tuple(r.shape)), dtype=r.dtype)
    return ((r * w) ** 2).sum() + (r * w).sum()


def test_geqrf_like_torch():
    def program(T):
        out = {}
        for dtype in ("float64", "float32", "complex128", "complex64"):
            for shape in ((5, 3), (3, 5), (2, 4, 4)):
                A = _matrix(T, _RS_FIXED[shape], _RS_FIXED_IMAG[shape], dtype)
                result = T.geqrf(A)
                out[dtype, shape] = (type(result).__name__, result.a, result.tau)
        A = T.tensor(TALL, requires_grad=True)
        a, tau = A.geqrf()
        out["graph"] = (a, tau, next_functions(a.grad_fn))
        out["empty"] = tuple(T.geqrf(T.zeros(2, 0, 3, dtype=T.float64)))
        return out

    ok(program, rtol=1e-5)


_RS_FIXED = {s: np.random.RandomState(1).randn(*s) for s in ((5, 3), (3, 5), (2, 4, 4))}
_RS_FIXED_IMAG = {s: np.random.RandomState(2).randn(*s) for s in ((5, 3), (3, 5), (2, 4, 4))}


def test_geqrf_derivative_is_not_implemented_like_torch():
    raises(lambda T: T.geqrf(T.tensor(TALL, requires_grad=True)).a.sum().backward())


def _factors(T, dtype):
    a, tau = T.geqrf(_matrix(T, TALL, TALL_IMAG, dtype))
    return a.detach().requires_grad_(), tau.detach().requires_grad_()


def test_ormqr_values_and_derivatives_like_torch():
    def program(T):
        out = {}
        for dtype, left, transpose in (
            ("float64", True, False),
            ("float64", False, True),
            ("complex128", True, True),
            ("complex128", False, False),
        ):
            a, tau = _factors(T, dtype)
            values = OTHER if left else OTHER.swapaxes(-1, -2)
            imag = OTHER_IMAG if left else OTHER_IMAG.swapaxes(-1, -2)
            c = _matrix(T, values, imag, dtype, requires_grad=True)
            y = T.ormqr(a, tau, c, left=left, transpose=transpose)
            _loss(T, y).backward()
            out[dtype, left, transpose] = (
                y,
                next_functions(y.grad_fn),
                val(a.grad),
                val(tau.grad),
                val(c.grad),
            )
        a, tau = _factors(T, "complex128")
        c = _matrix(T, OTHER, OTHER_IMAG, "complex128", requires_grad=True)
        grads = T.autograd.grad(
            _loss(T, a.ormqr(tau, c, transpose=True)), (a, tau, c), create_graph=True
        )
        again = T.autograd.grad(sum(_loss(T, g) for g in grads), (a, tau, c))
        out["second"] = ([val(g) for g in grads], [val(g) for g in again])
        a, tau = _factors(T, "float32")
        out["float32"] = T.ormqr(a, tau, T.tensor(OTHER, dtype=T.float32))
        a, tau = T.geqrf(T.tensor(TALL[0].T))
        out["wide"] = T.ormqr(a, tau, T.tensor(OTHER[0, :3]))
        return out

    ok(program)


ORMQR_ERRORS = [
    lambda T, a, t, c: T.ormqr(a[0, 0], t[0], c[0]),
    lambda T, a, t, c: T.ormqr(a[0], t[0], c[0, 0]),
    lambda T, a, t, c: T.ormqr(a, t, c, left=False),
    lambda T, a, t, c: T.ormqr(a, t, c[:, :4]),
    lambda T, a, t, c: T.ormqr(a, t[:, :2], c),
    lambda T, a, t, c: T.ormqr(a[0], t, c[0]),
    lambda T, a, t, c: T.ormqr(a, t, c[0]),
    lambda T, a, t, c: T.ormqr(a, t[:1].expand(3, 3), c),
    lambda T, a, t, c: T.ormqr(a, t, c[:1]),
    lambda T, a, t, c: T.ormqr(a, t.float(), c),
    lambda T, a, t, c: T.ormqr(a, t, c.float()),
    lambda T, a, t, c: T.ormqr(a.int(), t.int(), c.int()),
    lambda T, a, t, c: T.ormqr(a[0], t[0, 0], c[0]),
    lambda T, a, t, c: T.geqrf(a[0, 0]),
    lambda T, a, t, c: T.geqrf(a.int()),
    lambda T, a, t, c: T.geqrf(a.half()),
]


@pytest.mark.parametrize("case", range(len(ORMQR_ERRORS)))
def test_geqrf_ormqr_errors_like_torch(case):
    def program(T):
        a, tau = T.geqrf(T.tensor(TALL))
        return ORMQR_ERRORS[case](T, a, tau, T.tensor(OTHER))

    raises(program)


def _symmetric_cases():
    """Matrices whose Bunch-Kaufman factorisations take 1x1 and 2x2 pivots with interchanges
    (a zero diagonal; tiny diagonal entries), zero columns (``info``), in a batch."""
    rs = np.random.RandomState(3)
    out = []
    for n in (3, 5):
        a = rs.randn(n, n)
        out.append(a + a.T)
    z = rs.randn(5, 5)
    z = z + z.T
    np.fill_diagonal(z, 0)
    out.append(z)
    t = rs.randn(6, 6) * 0.1
    t = t + t.T
    t[np.arange(6), np.arange(6)] = [1e-3, 5, 1e-4, 2, 1e-3, 1e-5]
    out.append(t)
    singular = np.eye(5)
    singular[2, 2] = singular[3, 3] = 0
    out.append(singular)
    return [(m, np.random.RandomState(i).randn(*m.shape)) for i, m in enumerate(out)]


SYMMETRIC = _symmetric_cases()


def test_ldl_factor_and_solve_like_torch():
    """LAPACK's pivots and factors, exactly; real symmetric, complex symmetric and Hermitian;
    the solves; a batch; float32; only the lower triangle is read."""

    def program(T):
        out = {}
        for i, (real, imag) in enumerate(SYMMETRIC):
            for hermitian, dtype in (
                (False, "float64"),
                (False, "complex128"),
                (True, "complex128"),
            ):
                A = _matrix(T, real, imag, dtype)
                LD, pivots, info = T.linalg.ldl_factor_ex(A, hermitian=hermitian)
                B = (T.arange(2.0 * A.shape[-1]).reshape(-1, 2) + 1).to(A.dtype)
                X = T.linalg.ldl_solve(LD, pivots, B, hermitian=hermitian) if not info else None
                out[i, hermitian, dtype] = (LD, pivots, info, X)
        batch = T.tensor(np.stack([SYMMETRIC[1][0], np.tril(SYMMETRIC[2][0]) + 3 * np.eye(5)]))
        result = T.linalg.ldl_factor(batch)
        B = T.tensor(OTHER[:, :, :3])
        out["batch"] = (type(result).__name__, *result, T.linalg.ldl_solve(*result, B))
        out["float32"] = T.linalg.ldl_factor_ex(T.tensor(SYMMETRIC[2][0], dtype=T.float32))
        out["empty"] = tuple(T.linalg.ldl_factor_ex(T.zeros(2, 0, 0)))
        return out

    ok(program)


def test_ldl_is_not_differentiable_like_torch():
    def program(T):
        A = T.tensor(SYMMETRIC[0][0], requires_grad=True)
        LD, pivots = T.linalg.ldl_factor(A)
        B = T.ones(3, 2, dtype=T.float64, requires_grad=True)
        X = T.linalg.ldl_solve(LD.detach(), pivots, B)
        errors = []
        for y in (LD, X):
            try:
                y.sum().backward()
            except RuntimeError as e:
                errors.append(str(e))
        return LD, X, errors

    ok(program)


def test_ldl_factor_of_a_zero_column_raises_like_torch():
    """torch reports it through an internal assert (its message names the C++ file): compared
    by class and by the part that is torch's own message."""
    for f in (
        lambda T, A: T.linalg.ldl_factor(A),
        lambda T, A: T.linalg.ldl_factor_ex(A, check_errors=True),
    ):
        messages = []
        for T in (torch, jaxgrad):
            with pytest.raises(RuntimeError) as caught:
                f(T, T.zeros(3, 3, dtype=T.float64))
            messages.append(str(caught.value).replace("torch", "jaxgrad"))
        assert messages[0].endswith(messages[1]), messages


LDL_ERRORS = [
    lambda T, LD, p, B: T.linalg.ldl_factor(LD[0]),
    lambda T, LD, p, B: T.linalg.ldl_factor_ex(LD[:2]),
    lambda T, LD, p, B: T.linalg.ldl_factor(LD.int()),
    lambda T, LD, p, B: T.linalg.ldl_factor(LD.half()),
    lambda T, LD, p, B: T.linalg.ldl_solve(LD, p.float(), B),
    lambda T, LD, p, B: T.linalg.ldl_solve(LD[:2], p, B),
    lambda T, LD, p, B: T.linalg.ldl_solve(LD[0], p, B),
    lambda T, LD, p, B: T.linalg.ldl_solve(LD.int(), p, B),
    lambda T, LD, p, B: T.linalg.ldl_solve(LD, p, B.float()),
    lambda T, LD, p, B: T.linalg.ldl_solve(LD, p, B[:2]),
    lambda T, LD, p, B: T.linalg.ldl_solve(LD, p, B[0]),
    lambda T, LD, p, B: T.linalg.ldl_solve(LD, p[:2], B),
    lambda T, LD, p, B: T.linalg.ldl_solve(LD.expand(2, 3, 3), p.expand(2, 3), B.expand(3, 3, 2)),
    lambda T, LD, p, B: T.linalg.ldl_solve(LD.half(), p, B.half()),
]


@pytest.mark.parametrize("case", range(len(LDL_ERRORS)))
def test_ldl_errors_like_torch(case):
    def program(T):
        LD, pivots = T.linalg.ldl_factor(T.tensor(SYMMETRIC[0][0]))
        return LDL_ERRORS[case](T, LD, pivots, T.ones(3, 2, dtype=T.float64))

    raises(program)
