"""Triangular solvers against torch: ``linalg.solve_triangular``, the deprecated
``triangular_solve``, ``cholesky_solve`` and ``cholesky_inverse``: values, grad_fn edges, first
and second derivatives (float64, complex128; first ones in float32, complex64) on single and
broadcast batches, float64/complex128 finite differences, errors, warnings.

Programs bundle several ops so that one differential run compiles once per dtype: the module
stays short on one core.
"""

from __future__ import annotations

import pytest

import jaxgrad
from differential import ok, raises, val
from linalg_cases import differential, quiet, tensor, tol, warns_as_torch

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




@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("name", list(TRIANGULAR))
def test_triangular_matches_torch(name, dtype):
    f, shapes = TRIANGULAR[name]
    ok(differential(f, shapes, dtype), rtol=tol(dtype))


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_single_precision(dtype):
    """Values and first derivatives of every solver at once."""
    def f(T, a, b):
        return [T.linalg.solve_triangular(a, b, upper=True),
                T.linalg.solve_triangular(a, b.mT, upper=False, left=False, unitriangular=True),
                quiet(T.triangular_solve)(b, a, False, True).solution,
                T.cholesky_solve(b, a), T.cholesky_inverse(a, upper=True)]

    ok(differential(f, [("factor", (2, 3, 3)), (3, 2)], dtype, order=1), rtol=tol(dtype))

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
    """First derivatives in float64 and complex128, second ones in float64 (the differential
    tests compare both orders with torch's, complex included)."""
    f, shapes = TRIANGULAR_GRADCHECKS[name]
    args = [tensor(jaxgrad, s, dtype, seed=i + 1) for i, s in enumerate(shapes)]
    assert jaxgrad.autograd.gradcheck(f, args)
    if dtype == "float64":
        assert jaxgrad.autograd.gradgradcheck(f, args)


def test_triangular_solve_warns_as_torch():
    warns_as_torch(lambda T: T.triangular_solve(T.ones(2, 1), T.eye(2)))


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
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors(case):
    raises(ERRORS[case])


def test_out_variants():
    def program(T):
        a = T.tensor([[2.0, 0.0], [1.0, 3.0]])
        outs = [T.empty(0) for _ in range(3)]
        T.linalg.solve_triangular(a, T.ones(2, 1), upper=False, out=outs[0])
        T.cholesky_solve(T.ones(2, 1), a, out=outs[1])
        T.cholesky_inverse(a, out=outs[2])
        return outs

    ok(program)


def test_forward_mode_matches_torch():
    """``func.jvp`` (JAX's forward mode over the rows' formulas) against torch's forward AD.

    Where torch's forward formula is not the derivative, jaxgrad's (the backward formula
    transposed) is, and they are not compared: ``cholesky_inverse``, and ``triangular_solve``
    with ``transpose=True`` or a tangent of ``A`` that is not triangular (torch's
    ``generic_solve_jvp`` neither transposes nor projects it)."""
    fs = [lambda T, a: T.linalg.solve_triangular(a, a[:, :2].sin(), upper=False, left=True),
          lambda T, a: T.cholesky_solve(a[:, :2].cos(), a.tril()),
          quiet(lambda T, a: tuple(T.triangular_solve(a[:, :2].exp(), a.triu())))]

    def program(T):
        a = tensor(T, (3, 3), "float64", requires_grad=False)
        t = tensor(T, (3, 3), "float64", seed=1, shift=0, requires_grad=False)
        tangents = [T.func.jvp(lambda x, f=f: f(T, x), (a,), (t,))[1] for f in fs]
        return [[val(x.detach()) for x in v] if isinstance(v, tuple) else val(v.detach())
                for v in tangents]  # (values: how torch.func records its outputs differs)

    ok(program, rtol=1e-9)
