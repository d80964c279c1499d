"""The LU family against torch: ``linalg.lu_factor``/``lu_factor_ex``, ``linalg.lu``,
``lu_unpack``, ``linalg.lu_solve`` and the deprecated ``lu`` (``Tensor.lu``) and ``lu_solve``:
values, pivots and info, grad_fn edges, first and second derivatives (float64, complex128;
first ones in float32), float64/complex128 finite differences, errors, warnings.
"""

from __future__ import annotations

import warnings

import pytest

import jaxgrad
from differential import ok, raises, val
from linalg_cases import differential, quiet, tensor, tol, warns_as_torch

# --- the LU family -------------------------------------------------------------------------------

def _lu_solves(T, a, b):
    LU, pivots = T.linalg.lu_factor(a)
    return [T.linalg.lu_solve(LU, pivots, b), T.linalg.lu_solve(LU, pivots, b, adjoint=True),
            T.linalg.lu_solve(LU, pivots, b.mT, left=False),
            T.linalg.lu_solve(LU, pivots, b.mT, left=False, adjoint=True),
            T.lu_solve(b, LU, pivots), b.lu_solve(LU.detach(), pivots)]


LU_PROGRAMS = {
    "lu_factor": (quiet(lambda T, a, t, w: [
        *T.linalg.lu_factor(a), *T.linalg.lu_factor_ex(t), *T.linalg.lu_factor(w),
        *a.lu(), *T.lu(t, get_infos=True)]), [(2, 3, 3), (3, 2), (2, 2, 3)]),
    "lu": (lambda T, a, t, w: [*T.linalg.lu(a), *T.linalg.lu(t), *T.linalg.lu(w)],
           [(2, 3, 3), (3, 2), (2, 2, 3)]),
    "lu_unpack": (lambda T, a, t, w: [
        out for x in (a, t, w) for out in T.lu_unpack(x, T.linalg.lu_factor(x.detach()).pivots)]
        + [T.lu_unpack(a, T.linalg.lu_factor(a.detach()).pivots, unpack_pivots=False).U],
        [(2, 3, 3), (3, 2), (2, 2, 3)]),
    "lu_solve": (quiet(_lu_solves), [(2, 3, 3), (2, 3, 2)]),
    "lu_solve_broadcast": (lambda T, a, b: T.linalg.lu_solve(*T.linalg.lu_factor(a), b),
                           [(3, 3), (2, 1, 3, 4)]),
}



@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("name", list(LU_PROGRAMS))
def test_lu_family_matches_torch(name, dtype):
    f, shapes = LU_PROGRAMS[name]
    ok(differential(f, shapes, dtype), rtol=tol(dtype))


def test_single_precision():
    """float32 values and first derivatives of the family at once."""
    def f(T, a, w, b):
        LU, pivots = T.linalg.lu_factor(a)
        return [LU, *T.linalg.lu(w)[1:], T.linalg.lu_solve(LU, pivots, b, adjoint=True),
                *T.lu_unpack(w, T.linalg.lu_factor(w.detach()).pivots)[1:]]

    ok(differential(f, [(2, 3, 3), (2, 3), (3, 2)], "float32", order=1), rtol=tol("float32"))


def _lu_unpacked(a):
    pivots = jaxgrad.linalg.lu_factor(a.detach()).pivots
    return tuple(jaxgrad.lu_unpack(a, pivots))[1:]


LU_GRADCHECKS = {  # (function, input shapes)
    "lu_factor": (lambda a: jaxgrad.linalg.lu_factor(a).LU, [(2, 3, 3)]),
    "lu_tall": (lambda a: tuple(jaxgrad.linalg.lu(a))[1:], [(3, 2)]),
    "lu_wide": (lambda a: tuple(jaxgrad.linalg.lu(a))[1:], [(2, 3)]),
    "lu_unpack": (_lu_unpacked, [(3, 2)]),
    "lu_solve": (lambda a, b: jaxgrad.linalg.lu_solve(*jaxgrad.linalg.lu_factor(a), b),
                 [(2, 2, 2), (2, 1)]),
}


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("name", list(LU_GRADCHECKS))
def test_lu_family_finite_differences(name, dtype):
    f, shapes = LU_GRADCHECKS[name]
    args = [tensor(jaxgrad, s, dtype, seed=i + 4) for i, s in enumerate(shapes)]
    assert jaxgrad.autograd.gradcheck(f, args)
    if dtype == "float64":
        assert jaxgrad.autograd.gradgradcheck(f, args)


LU_ERRORS = {
    "lu_factor_singular": lambda T: T.linalg.lu_factor(T.zeros(3, 3)),
    "lu_factor_batch_singular": lambda T: T.linalg.lu_factor(
        T.stack([T.eye(2), T.tensor([[1.0, 2.0], [2.0, 4.0]])])),
    "lu_factor_ex_check": lambda T: T.linalg.lu_factor_ex(T.zeros(2, 3, 3), check_errors=True),
    "lu_factor_no_pivot": lambda T: T.linalg.lu_factor(T.eye(3), pivot=False),
    "lu_no_pivot": lambda T: T.linalg.lu(T.eye(3), pivot=False),
    "lu_factor_int": lambda T: T.linalg.lu_factor(T.eye(3, dtype=T.int64)),
    "lu_int": lambda T: T.linalg.lu(T.eye(3, dtype=T.int64)),
    "lu_factor_1d": lambda T: T.linalg.lu_factor(T.ones(3)),
    "lu_1d": lambda T: T.linalg.lu(T.ones(3)),
    "lu_unpack_pivots_dtype": lambda T: T.lu_unpack(T.eye(3), T.ones(3, dtype=T.int64)),
    "lu_solve_vector": lambda T: T.linalg.lu_solve(*T.linalg.lu_factor(T.eye(3)), T.ones(3)),
    "lu_solve_rows": lambda T: T.linalg.lu_solve(*T.linalg.lu_factor(T.eye(3)), T.ones(2, 2)),
    "lu_solve_right": lambda T: T.linalg.lu_solve(*T.linalg.lu_factor(T.eye(3)), T.ones(3, 2),
                                                  left=False),
    "lu_solve_dtypes": lambda T: T.linalg.lu_solve(*T.linalg.lu_factor(T.eye(3)),
                                                   T.ones(3, 2, dtype=T.float64)),
    "lu_solve_pivots_dtype": lambda T: T.linalg.lu_solve(T.eye(3), T.ones(3, dtype=T.int64),
                                                         T.ones(3, 2)),
    "lu_solve_pivots_shape": lambda T: T.linalg.lu_solve(
        T.eye(3).expand(2, 3, 3), T.ones(3, dtype=T.int32), T.ones(3, 2)),
    "lu_solve_not_square": lambda T: T.linalg.lu_solve(T.ones(3, 2), T.ones(2, dtype=T.int32),
                                                       T.ones(3, 2)),
}


@pytest.mark.parametrize("case", list(LU_ERRORS))
def test_lu_family_errors(case):
    raises(LU_ERRORS[case])


def test_lu_family_info_named_tuples_and_singular_factors():
    """Singular matrices factorise (``lu``, ``lu_factor_ex``, ``Tensor.lu``) with getrf's info."""
    def program(T):
        s = T.stack([T.eye(3), T.zeros(3, 3), T.tensor([[1.0, 2.0, 0], [2.0, 4.0, 0], [0, 0, 1]])])
        r = T.linalg.lu_factor_ex(s)
        p = T.linalg.lu(T.zeros(3, 3))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            legacy = T.zeros(3, 3).lu(get_infos=True)
        return ([(type(x).__name__, repr(x)) for x in (r, p, T.linalg.lu_factor(T.eye(2)),
                                                       T.lu_unpack(*T.linalg.lu_factor(T.eye(2))))],
                r.info, r.pivots, list(p), type(legacy).__name__, list(legacy))

    ok(program)


@pytest.mark.parametrize("name", ["lu", "lu_solve"])
def test_deprecated_lu_functions_warn_as_torch(name):
    if name == "lu":
        warns_as_torch(lambda T: T.lu(T.eye(2)))
    else:
        warns_as_torch(lambda T: T.lu_solve(T.ones(2, 1), *T.linalg.lu_factor(T.eye(2))))


def test_out_variants_and_their_refusal_with_grad():
    def program(T):
        a = T.tensor([[2.0, 1.0], [1.0, 3.0]])
        LU, pivots = T.linalg.lu_factor(a)
        outs = [T.empty(0), T.empty(0)]
        T.linalg.lu_solve(LU, pivots, T.ones(2, 1), out=outs[0])
        quiet(lambda: T.lu_solve(T.ones(2, 1), LU, pivots, out=outs[1]))()
        return outs

    ok(program)
    raises(quiet(lambda T: T.lu_solve(T.ones(2, 1, requires_grad=True),
                                       *T.linalg.lu_factor(T.eye(2)), out=T.empty(0))))


def test_forward_mode_matches_torch():
    """``func.jvp`` (JAX's forward mode over the rows' formulas) against torch's forward AD."""
    fs = [lambda T, a: T.linalg.lu_factor(a).LU, lambda T, a: tuple(T.linalg.lu(a[:, :2]))[1:],
          lambda T, a: T.linalg.lu_solve(*T.linalg.lu_factor(a), a[:, :2], adjoint=True),
          lambda T, a: tuple(T.lu_unpack(a, T.linalg.lu_factor(a.detach()).pivots))[1:]]

    def program(T):
        a = tensor(T, (3, 3), "float64", requires_grad=False)
        t = tensor(T, (3, 3), "float64", seed=1, shift=0, requires_grad=False)
        tangents = [T.func.jvp(lambda x, f=f: f(T, x), (a,), (t,))[1] for f in fs]
        return [[val(x.detach()) for x in v] if isinstance(v, tuple) else val(v.detach())
                for v in tangents]  # (values: how torch.func records its outputs differs)

    ok(program, rtol=1e-9)
