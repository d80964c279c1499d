"""Differential tests of ``geqrf`` (values, ``torch.return_types.geqrf``, its not-implemented
derivative), ``ormqr`` (left/right, transposed, real and complex, first and second derivatives
of all three inputs) and ``linalg.ldl_factor_ex``/``ldl_factor``/``ldl_solve`` (LAPACK's
Bunch-Kaufman pivots, ``hermitian``, info, not differentiable); torch's errors."""

from __future__ import annotations

import numpy as np
import pytest

from differential import next_functions, ok, raises, val

torch = pytest.importorskip("torch")

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
