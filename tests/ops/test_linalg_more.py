"""The rest of torch.linalg against torch: triangular solvers (``linalg.solve_triangular``,
``triangular_solve``, ``cholesky_solve``, ``cholesky_inverse``), values, gradients and second
derivatives, grad_fn graphs, errors (``differential.same``) on real and complex, single and
batched (broadcast) matrices; float64/complex128 finite differences, first and second order.

Programs bundle several ops so that one differential run compiles once per dtype: the suite
stays short on one core.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxgrad
from differential import captured_warnings, ok, raises, torch, val

DTYPES = ["float32", "float64", "complex64", "complex128"]


def tensor(T, shape, dtype, seed=0, shift=3.0, requires_grad=True):
    """A well-conditioned matrix (batch): ``shift * I + R/2`` (complex where ``dtype`` is); a
    shape given as ``("factor", shape)`` has a real diagonal, as a Cholesky factor has."""
    factor = shape[0] == "factor"
    shape = shape[1] if factor else shape
    rs = np.random.RandomState(seed)
    m = rs.randn(*shape) / 2
    if "complex" in dtype:
        m = m + 1j * rs.randn(*shape) / 2
        if factor:
            m = m - 1j * np.imag(m) * np.eye(shape[-1])
    if shift and len(shape) >= 2:
        m = m + shift * np.eye(shape[-2], shape[-1])
    return T.tensor(m, dtype=getattr(T, dtype), requires_grad=requires_grad)


def loss(T, outs):
    """A real, non-uniform weighting of every output (real and imaginary parts)."""
    total = 0
    for o in outs:
        w = (T.arange(o.numel(), dtype=T.float64).reshape(o.shape) + 1).to(o.dtype) / o.numel()
        total = total + ((o * w).real.sum() + (o * w).imag.sum() / 3 if o.is_complex()
                         else (o * w).sum())
    return total


def edges(fn):
    """The grad_fn's name and its next functions' names (one level: the graphs below are those
    of the ops the program composes, tested with those ops)."""
    return (type(fn).__name__, [(type(n).__name__, i) for n, i in fn.next_functions])


def differential(f, shapes, dtype, seeds=None):
    """The program: ``f(T, *inputs)``'s outputs, grad_fn names and next functions, first
    gradients (create_graph) and second gradients of a weighted loss."""
    def program(T):
        args = [tensor(T, s, dtype, seed=i if seeds is None else seeds[i])
                for i, s in enumerate(shapes)]
        out = f(T, *args)
        outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
                if o.requires_grad]
        g = T.autograd.grad(loss(T, outs), args, create_graph=True, allow_unused=True)
        used = [(x, a) for x, a in zip(g, args) if x is not None]
        gg = T.autograd.grad(loss(T, [x for x, _ in used]), [a for _, a in used],
                             allow_unused=True)
        return (out, [type(o.grad_fn).__name__ for o in outs],
                [edges(o.grad_fn) for o in outs],
                [None if x is None else x.detach() for x in g],
                [None if x is None else val(x) for x in gg])
    return program


def tol(dtype):
    return 1e-9 if dtype in ("float64", "complex128") else 5e-4


def quiet(f):
    """``f`` with torch's (and jaxgrad's) deprecation warnings silenced."""
    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return f(*args)
    return run


# --- triangular solvers --------------------------------------------------------------------------

TRIANGULAR = {  # name: (program, input shapes)
    "solve_triangular": (lambda T, a, b: [
        T.linalg.solve_triangular(a, b, upper=True),
        T.linalg.solve_triangular(a, b, upper=False, unitriangular=True),
        T.linalg.solve_triangular(a, b.mT, upper=True, left=False),
        T.linalg.solve_triangular(a, b.mT, upper=False, left=False, unitriangular=True)],
        [(2, 3, 3), (3, 2)]),
    "solve_triangular_broadcast": (lambda T, a, b: T.linalg.solve_triangular(
        a, b, upper=False), [(3, 3), (2, 1, 3, 4)]),
    "triangular_solve": (quiet(lambda T, b, a: [
        *T.triangular_solve(b, a), *T.triangular_solve(b, a, upper=False, transpose=True),
        b.triangular_solve(a, True, False, True).solution]), [(2, 1, 3, 2), (4, 3, 3)]),
    "cholesky_solve": (lambda T, b, f: [
        T.cholesky_solve(b, f), T.cholesky_solve(b, f, upper=True),
        b.cholesky_solve(f.tril())], [(3, 2), ("factor", (2, 3, 3))]),
    "cholesky_inverse": (lambda T, f: [
        T.cholesky_inverse(f), T.cholesky_inverse(f, upper=True), f.tril().cholesky_inverse(),
        f.cholesky_inverse(True)], [("factor", (2, 3, 3))]),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(TRIANGULAR))
def test_triangular_matches_torch(name, dtype):
    f, shapes = TRIANGULAR[name]
    ok(differential(f, shapes, dtype), rtol=tol(dtype))


TRIANGULAR_GRADCHECKS = {  # (function, input shapes)
    "solve_triangular": (lambda a, b: (
        jaxgrad.linalg.solve_triangular(a, b, upper=True),
        jaxgrad.linalg.solve_triangular(a, b.mT, upper=False, left=False, unitriangular=True)),
        [(2, 2, 2), (2, 2)]),
    "triangular_solve": (quiet(lambda b, a: (
        *jaxgrad.triangular_solve(b, a), jaxgrad.triangular_solve(b, a, False, True).solution)),
        [(2, 1), (2, 2, 2)]),
    # (cholesky_solve's formula for input2 is the derivative through a triangular factor)
    "cholesky_solve": (lambda b, f: (jaxgrad.cholesky_solve(b, f.tril()),
                                     jaxgrad.cholesky_solve(b, f.triu(), upper=True)),
                       [(2, 2, 1), ("factor", (2, 2))]),
    "cholesky_inverse": (lambda f: (jaxgrad.cholesky_inverse(f.tril()),
                                    jaxgrad.cholesky_inverse(f.triu(), upper=True)),
                         [("factor", (2, 2, 2))]),
}


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("name", list(TRIANGULAR_GRADCHECKS))
def test_triangular_finite_differences(name, dtype):
    f, shapes = TRIANGULAR_GRADCHECKS[name]
    args = [tensor(jaxgrad, s, dtype, seed=i + 1) for i, s in enumerate(shapes)]
    assert jaxgrad.autograd.gradcheck(f, args)
    assert jaxgrad.autograd.gradgradcheck(f, args)


def test_triangular_solve_warns_as_torch():
    torch.set_warn_always(True)
    jaxgrad.set_warn_always(True)
    try:
        def program(T):
            return T.triangular_solve(T.ones(2, 1), T.eye(2))
        assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)
        assert captured_warnings(program, torch)
    finally:
        torch.set_warn_always(False)
        jaxgrad.set_warn_always(False)


def test_triangular_mixed_dtypes_and_singular_values():
    """``solve_triangular`` computes in A's dtype; a zero pivot gives inf/nan, not an error."""
    def program(T):
        a = T.tensor([[2.0, 1.0], [0.0, 4.0]], requires_grad=True)
        b = T.tensor([[1.0], [3.0]], dtype=T.float64, requires_grad=True)
        x = T.linalg.solve_triangular(a, b, upper=True)
        x.sum().backward()
        return (x, a.grad, b.grad, T.linalg.solve_triangular(
            T.eye(2, dtype=T.float64), T.ones(2, 1, dtype=T.int64), upper=True))

    ok(program)


ERRORS = {
    "st_vector_B": lambda T: T.linalg.solve_triangular(T.eye(3), T.ones(3), upper=True),
    "st_1d_A": lambda T: T.linalg.solve_triangular(T.ones(3), T.ones(3, 2), upper=True),
    "st_not_square": lambda T: T.linalg.solve_triangular(T.ones(3, 2), T.ones(3, 2), upper=True),
    "st_rows": lambda T: T.linalg.solve_triangular(T.eye(3), T.ones(2, 2), upper=True),
    "st_right_cols": lambda T: T.linalg.solve_triangular(T.eye(3), T.ones(3, 2), upper=True,
                                                         left=False),
    "st_batch": lambda T: T.linalg.solve_triangular(T.ones(2, 3, 3), T.ones(4, 3, 2),
                                                    upper=True),
    "st_int": lambda T: T.linalg.solve_triangular(T.eye(3, dtype=T.int64),
                                                  T.ones(3, 2, dtype=T.int64), upper=True),
    "st_half": lambda T: T.linalg.solve_triangular(T.eye(3, dtype=T.float16),
                                                   T.ones(3, 2, dtype=T.float16), upper=True),
    "ts_vector": quiet(lambda T: T.triangular_solve(T.ones(3), T.eye(3))),
    "ts_rows": quiet(lambda T: T.triangular_solve(T.ones(2, 2), T.eye(3))),
    "ts_dtypes": quiet(lambda T: T.triangular_solve(T.ones(3, 2, dtype=T.float64), T.eye(3))),
    "ts_not_square": quiet(lambda T: T.triangular_solve(T.ones(3, 2), T.ones(3, 2))),
    "ts_int": quiet(lambda T: T.triangular_solve(T.ones(3, 2, dtype=T.int64),
                                                 T.eye(3, dtype=T.int64))),
    "cs_vector": lambda T: T.cholesky_solve(T.ones(3), T.eye(3)),
    "cs_rows": lambda T: T.cholesky_solve(T.ones(2, 2), T.eye(3)),
    "cs_dtypes": lambda T: T.cholesky_solve(T.ones(3, 2, dtype=T.float64), T.eye(3)),
    "cs_not_square": lambda T: T.cholesky_solve(T.ones(3, 2), T.ones(3, 2)),
    "cs_int": lambda T: T.cholesky_solve(T.ones(3, 2, dtype=T.int64), T.eye(3, dtype=T.int64)),
    "cs_batch": lambda T: T.cholesky_solve(T.ones(2, 3, 2), T.ones(4, 3, 3)),
    "ci_not_square": lambda T: T.cholesky_inverse(T.ones(3, 2)),
    "ci_1d": lambda T: T.cholesky_inverse(T.ones(3)),
    "ci_int": lambda T: T.cholesky_inverse(T.eye(3, dtype=T.int64)),
    "ci_singular": lambda T: T.cholesky_inverse(T.zeros(3, 3)),
    "ci_batch_singular": lambda T: T.cholesky_inverse(
        T.stack([T.eye(3), T.diag(T.tensor([1.0, 0.0, 1.0]))])),
    # decompositions
    "eigh_int": lambda T: T.linalg.eigh(T.ones(3, 3, dtype=T.int64)),
    "eigvalsh_1d": lambda T: T.linalg.eigvalsh(T.ones(3)),
    "eigh_not_square": lambda T: T.linalg.eigh(T.ones(2, 3)),
    "eigh_uplo": lambda T: T.linalg.eigh(T.eye(2), UPLO="X"),
    "eig_int": lambda T: T.linalg.eig(T.ones(3, 3, dtype=T.int64)),
    "eigvals_1d": lambda T: T.linalg.eigvals(T.ones(3)),
    "eig_not_square": lambda T: T.linalg.eig(T.ones(2, 3)),
    "svd_int": lambda T: T.linalg.svd(T.ones(3, 3, dtype=T.int64)),
    "svd_half": lambda T: T.linalg.svd(T.ones(2, 3, dtype=T.float16)),
    "svdvals_1d": lambda T: T.linalg.svdvals(T.ones(3)),
    "torch_svd_int": lambda T: T.svd(T.ones(3, 3, dtype=T.int64)),
    "qr_int": lambda T: T.linalg.qr(T.ones(3, 3, dtype=T.int64)),
    "qr_1d": lambda T: T.linalg.qr(T.ones(3)),
    "qr_mode": lambda T: T.linalg.qr(T.eye(2), mode="X"),
    "pinv_int": lambda T: T.linalg.pinv(T.ones(3, 3, dtype=T.int64)),
    "pinv_1d": lambda T: T.linalg.pinv(T.ones(3)),
    "pinv_hermitian_not_square": lambda T: T.linalg.pinv(T.ones(2, 3), hermitian=True),
    "matrix_exp_int": lambda T: T.linalg.matrix_exp(T.ones(3, 3, dtype=T.int64)),
    "matrix_exp_not_square": lambda T: T.matrix_exp(T.ones(2, 3)),
    "matrix_power_1d": lambda T: T.linalg.matrix_power(T.ones(3), 2),
    "matrix_power_not_square": lambda T: T.matrix_power(T.ones(2, 3), 0),
    "matrix_power_int_inverse": lambda T: T.linalg.matrix_power(T.ones(3, 3, dtype=T.int64), -1),
    "matrix_power_singular": lambda T: T.linalg.matrix_power(T.zeros(2, 2), -2),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors(case):
    raises(ERRORS[case])


BACKWARD_ERRORS = {
    "qr_mode_r": lambda T, a: T.linalg.qr(a, mode="r").R,
    "qr_complete_tall": lambda T, a: T.linalg.qr(a, mode="complete").Q,
}


@pytest.mark.parametrize("case", list(BACKWARD_ERRORS))
def test_backward_errors(case):
    def program(T):
        a = T.ones(3, 2, dtype=T.float64, requires_grad=True) + T.eye(3, 2, dtype=T.float64)
        out = BACKWARD_ERRORS[case](T, a)
        return type(out.grad_fn).__name__, T.autograd.grad(out.sum(), a)

    raises(program)


def test_deprecated_qr_warns_as_torch():
    torch.set_warn_always(True)
    jaxgrad.set_warn_always(True)
    try:
        def program(T):
            return T.qr(T.eye(2))
        assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)
        assert captured_warnings(program, torch)
    finally:
        torch.set_warn_always(False)
        jaxgrad.set_warn_always(False)


def test_single_precision_decompositions():
    """float32 and complex64: values, gradients and dtypes of every decomposition at once."""
    def f(T, a, b):
        h = a + a.mH
        outs = [T.linalg.eigvalsh(h), T.linalg.eigh(h).eigenvectors.abs() ** 2,
                T.linalg.svdvals(b), T.linalg.svd(b, full_matrices=False).U.abs() ** 2,
                *T.linalg.qr(b), T.linalg.pinv(b), T.linalg.matrix_exp(a / 4),
                T.linalg.matrix_power(a, 3), T.linalg.eigvals(a)]
        return outs

    for dtype in ("float32", "complex64"):
        ok(differential(f, [(2, 3, 3), (3, 2)], dtype), rtol=2e-3)


def test_out_variants():
    def program(T):
        a = T.tensor([[2.0, 0.0], [1.0, 3.0]])
        outs = [T.empty(0) for _ in range(3)]
        T.linalg.solve_triangular(a, T.ones(2, 1), upper=False, out=outs[0])
        T.cholesky_solve(T.ones(2, 1), a, out=outs[1])
        T.cholesky_inverse(a, out=outs[2])
        return outs

    ok(program)


# --- decompositions and matrix functions ---------------------------------------------------------
# Eigen- and singular vectors are compared as they come (JAX and torch call the same LAPACK
# routines), but losses only read gauge-invariant functions of them (torch rejects others for
# complex inputs).

def _hermitian(a):
    return a + a.mH


DECOMPOSITIONS = {  # name: (program, input shapes)
    "eigh": (lambda T, a: [
        *(lambda L, V: (L, V.detach()))(*T.linalg.eigh(_hermitian(a))),
        T.linalg.eigvalsh(_hermitian(a), UPLO="U"),
        T.linalg.eigh(a, UPLO="U")[0]], [(2, 3, 3)]),
    "eigh_vectors": (lambda T, a: [
        (T.linalg.eigh(_hermitian(a)).eigenvectors.abs() ** 2),
        (lambda L, V: (V * L.unsqueeze(-2).cos()) @ V.mH)(*T.linalg.eigh(a, "U"))], [(2, 3, 3)]),
    "svd": (lambda T, a, b: [
        T.linalg.svdvals(a), T.linalg.svdvals(b),
        *(lambda U, S, Vh: (U.abs() ** 2, S, U @ Vh))(*T.linalg.svd(a, full_matrices=False)),
        *(lambda U, S, Vh: (U.abs() ** 2, Vh.abs() ** 3, S.exp()))(*T.linalg.svd(b)),
        (lambda U, S, V: (U * S.unsqueeze(-2)) @ V.mH)(*T.svd(a)),
        (lambda U, S, V: [U, S, V])(*T.svd(b, compute_uv=False))[1],
        (lambda U, S, V: U.abs() ** 2 + S.unsqueeze(-2))(*b.svd(some=False))],
        [(2, 3, 2), (2, 2, 3)]),
    "qr": (quiet(lambda T, a, b: [
        *T.linalg.qr(a), *T.linalg.qr(b), *T.linalg.qr(b, mode="complete"),
        T.linalg.qr(a, mode="r").R.detach(), *T.qr(a), *b.qr()])
        , [(2, 3, 2), (2, 2, 3)]),
    "pinv": (lambda T, a, b: [
        T.linalg.pinv(a), T.linalg.pinv(b.mT @ b, hermitian=True), T.pinverse(a.mT),
        b.pinverse(1e-3), T.linalg.pinv(a, atol=0.1), T.linalg.pinv(a, 1e-2)],
        [(2, 3, 2), (3, 2)]),
    "matrix_exp": (lambda T, a: [T.linalg.matrix_exp(a / 4), T.matrix_exp(a.mT / 4),
                                 (a / 3).matrix_exp()], [(2, 3, 3)]),
    "matrix_power": (lambda T, a: [T.linalg.matrix_power(a, n) for n in (-3, -1, 0, 1, 2, 3, 6)]
                     + [T.matrix_power(a, 4), a.matrix_power(-2)], [(2, 3, 3)]),
    "eig": (lambda T, a: [
        T.linalg.eigvals(a), T.linalg.eig(a).eigenvalues,
        T.linalg.eig(a).eigenvectors.abs() ** 2,
        (lambda L, V: (V * L.unsqueeze(-2).sin()) @ T.linalg.inv(V))(*T.linalg.eig(a))],
        [(2, 3, 3)]),
}


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("name", list(DECOMPOSITIONS))
def test_decompositions_match_torch(name, dtype):
    f, shapes = DECOMPOSITIONS[name]
    ok(differential(f, shapes, dtype), rtol=tol(dtype))


def _eigh_invariants(a):
    L, V = jaxgrad.linalg.eigh(a + a.mH)
    return L, V.abs() ** 2


def _svd_invariants(a):
    U, S, Vh = jaxgrad.linalg.svd(a, full_matrices=False)
    return S, U @ Vh, U.abs() ** 2


def _eig_invariants(a):
    L, V = jaxgrad.linalg.eig(a)
    return L, V.abs() ** 2


DECOMPOSITION_GRADCHECKS = {  # (function, input shape)
    "eigh": (_eigh_invariants, (2, 3, 3)),
    "svd_tall": (_svd_invariants, (3, 2)),
    "svd_wide": (_svd_invariants, (2, 3)),
    "qr_tall": (lambda a: tuple(jaxgrad.linalg.qr(a)), (3, 2)),
    "qr_wide": (lambda a: tuple(jaxgrad.linalg.qr(a)), (2, 3)),
    "pinv": (lambda a: jaxgrad.linalg.pinv(a), (3, 2)),
    "matrix_exp": (lambda a: jaxgrad.linalg.matrix_exp(a / 3), (2, 2, 2)),
    "eig": (_eig_invariants, (2, 2, 2)),
}


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("name", list(DECOMPOSITION_GRADCHECKS))
def test_decomposition_finite_differences(name, dtype):
    """First derivatives in float64 and complex128, second ones in float64 (the differential
    tests compare both orders with torch's, complex included)."""
    f, shape = DECOMPOSITION_GRADCHECKS[name]
    a = tensor(jaxgrad, shape, dtype, seed=3)
    assert jaxgrad.autograd.gradcheck(f, (a,))
    if dtype == "float64":
        assert jaxgrad.autograd.gradgradcheck(f, (a,))
