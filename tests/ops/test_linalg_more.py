"""Decompositions and matrix functions against torch: ``linalg.eigh``/``eigvalsh``,
``linalg.eig``/``eigvals``, ``linalg.svd``/``svdvals``/``svd``, ``linalg.qr``/``qr``,
``linalg.pinv``/``pinverse``, ``linalg.matrix_exp``/``matrix_exp``,
``linalg.matrix_power``/``matrix_power``: values, grad_fn edges, first and second derivatives
(float64, complex128; first ones in float32, complex64), float64/complex128 finite differences,
errors (argument checks, backward errors, torch's phase-dependence checks), warnings.
"""

from __future__ import annotations

import pytest

import jaxgrad
from differential import attempt, ok, raises, val
from linalg_cases import differential, quiet, tensor, tol, warns_as_torch

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
    "matrix_exp": (lambda a: jaxgrad.linalg.matrix_exp(a / 3), (2, 2)),
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


ERRORS = {
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


PHASE_DEPENDENT = {  # losses that read the phases of complex eigen/singular vectors
    "eigh": lambda T, a: T.linalg.eigh(a + a.mH).eigenvectors,
    "eig": lambda T, a: T.linalg.eig(a).eigenvectors,
    "eig_of_real": lambda T, a: T.linalg.eig(a.real).eigenvectors,
    "svd_U": lambda T, a: T.linalg.svd(a).U,
    "svd_Vh_wide": lambda T, a: T.linalg.svd(a[..., :2, :]).Vh,
}


@pytest.mark.parametrize("case", list(PHASE_DEPENDENT))
def test_phase_dependent_losses_raise_as_torch(case):
    """torch's check that a loss does not depend on the vectors' phases (complex case)."""
    def program(T):
        a = tensor(T, (2, 3, 3), "complex128")
        v = PHASE_DEPENDENT[case](T, a)
        (v * T.arange(v.numel(), dtype=T.float64).reshape(v.shape)).sum().real.backward()
        return a.grad

    raises(program)


def test_deprecated_qr_warns_as_torch():
    warns_as_torch(lambda T: T.qr(T.eye(2)))


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_single_precision(dtype):
    """Values and first derivatives of every decomposition at once."""
    def f(T, a, b):
        h = a + a.mH
        outs = [T.linalg.eigvalsh(h), T.linalg.eigh(h).eigenvectors.abs() ** 2,
                T.linalg.svdvals(b), T.linalg.svd(b, full_matrices=False).U.abs() ** 2,
                *T.linalg.qr(b), T.linalg.pinv(b), T.linalg.matrix_exp(a / 4),
                T.linalg.matrix_power(a, 3), T.linalg.eigvals(a)]
        return outs

    ok(differential(f, [(2, 3, 3), (3, 2)], dtype, order=1), rtol=2e-3)


OUT_WITH_GRAD = {  # torch refuses out= where autograd would record, naming the op it writes with
    "eigvalsh": lambda T, a: T.linalg.eigvalsh(a, out=T.empty(0)),
    "svdvals": lambda T, a: T.linalg.svdvals(a, out=T.empty(0)),
    "pinv": lambda T, a: T.linalg.pinv(a, out=T.empty(0)),
    "linalg.matrix_power": lambda T, a: T.linalg.matrix_power(a, 2, out=T.empty(0)),
    "matrix_power": lambda T, a: T.matrix_power(a, 3, out=T.empty(0)),
}


@pytest.mark.parametrize("case", list(OUT_WITH_GRAD))
def test_out_with_grad_is_refused_as_torch(case):
    raises(lambda T: OUT_WITH_GRAD[case](T, T.eye(2, requires_grad=True)))


def test_out_variants():
    def program(T):
        a = T.tensor([[2.0, 1.0], [1.0, 3.0]])
        outs = [T.empty(0) for _ in range(5)]
        T.linalg.eigvalsh(a, out=outs[0])
        T.linalg.svdvals(a, out=outs[1])
        T.linalg.pinv(a, out=outs[2])
        T.linalg.matrix_power(a, 3, out=outs[3])
        T.matrix_power(a, -2, out=outs[4])
        values = T.empty(0, dtype=T.complex64)
        T.linalg.eigvals(a, out=values)
        return outs + [values]

    ok(program)


SAVED = {  # what each node saves, in torch's order (inputs by name, then outputs by name)
    "svd": lambda T, a: T.linalg.svd(a[:, :2]),
    "eigh": lambda T, a: T.linalg.eigh(a),
    "eig": lambda T, a: T.linalg.eig(a),
    "qr": lambda T, a: T.linalg.qr(a[:, :2]),
    "pinv": lambda T, a: T.linalg.pinv(a[:, :2]),
    "matrix_exp": lambda T, a: T.linalg.matrix_exp(a),
    "lu": lambda T, a: T.linalg.lu(a[:, :2]),
    "lu_solve": lambda T, a: T.linalg.lu_solve(*T.linalg.lu_factor(a), a[:, :2]),
    "triangular_solve": quiet(lambda T, a: T.triangular_solve(a[:, :2], a)),
    "cholesky_solve": lambda T, a: T.cholesky_solve(a[:, :2], a),
}


@pytest.mark.parametrize("name", list(SAVED))
def test_saved_tensors_as_torch(name):
    """The values pack hooks see, in order, and the version error once one is modified."""
    def program(T):
        a = tensor(T, (3, 3), "float64")
        packed = []
        with T.autograd.graph.saved_tensors_hooks(
                lambda x: packed.append((tuple(x.shape), str(x.dtype))) or x, lambda x: x):
            out = SAVED[name](T, a)
        outs = list(out) if isinstance(out, tuple) else [out]
        outs[-1].add_(1)
        return packed, attempt(lambda: sum(o.sum().abs() for o in outs if o.requires_grad)
                               .backward())

    ok(program)


def test_forward_mode_matches_torch():
    """``func.jvp`` (JAX's forward mode over the rows' formulas) against torch's forward AD."""
    fs = [lambda T, a: T.linalg.eigh(a + a.mT), lambda T, a: T.linalg.svd(a[:, :2]),
          lambda T, a: T.linalg.qr(a[:2]), lambda T, a: T.linalg.pinv(a[:, :2]),
          lambda T, a: T.linalg.matrix_exp(a / 3), lambda T, a: T.linalg.eigvals(a),
          lambda T, a: T.linalg.solve_triangular(a, a[:, :2], upper=True)]

    def program(T):
        a, t = tensor(T, (3, 3), "float64", requires_grad=False), tensor(T, (3, 3), "float64",
                                                                         seed=1, shift=0)
        tangents = [T.func.jvp(lambda x, f=f: tuple(f(T, x)) if isinstance(f(T, x), tuple)
                               else f(T, x), (a,), (t,))[1] for f in fs]
        return [[val(x.detach()) for x in v] if isinstance(v, tuple) else val(v.detach())
                for v in tangents]  # (values: how torch.func records its outputs differs)

    ok(program, rtol=1e-9)


LSTSQ_SHAPES = [((3, 3), (3,)), ((3, 3), (3, 2)), ((3, 3), (2, 3, 2)), ((3, 3), (1,)),
                ((3, 3), ()), ((2, 3, 3), (3,)), ((2, 3, 3), (2, 3)), ((2, 3, 3), (3, 2)),
                ((1, 3, 3), (3, 2)), ((1, 3, 3), (2, 3, 2)), ((2, 1, 3, 3), (1, 3, 2)),
                ((2, 1, 3, 3), (2, 3, 2)), ((2, 1, 3, 3), (2, 4, 1)), ((2, 1, 3, 3), (3, 2)),
                ((4, 2), (4,)), ((2, 4, 2), (2, 4)), ((2, 4, 2), (4, 1))]


@pytest.mark.parametrize("driver", ["gelsy", "gelsd"])
@pytest.mark.parametrize("shapes", LSTSQ_SHAPES, ids=str)
def test_lstsq_shapes_broadcasting_and_refusals(shapes, driver):
    """torch's rule: other is input's rank or one less; one less is a vector per matrix when its
    shape is input's but the last, else a matrix whose leading dims broadcast as a vector
    batch's would; rank and singular values keep input's batch."""
    def program(T):
        a = tensor(T, shapes[0], "float64")
        b = tensor(T, shapes[1], "float64", seed=1, shift=0)
        out = T.linalg.lstsq(a, b, driver=driver)
        return list(out), T.autograd.grad(out.solution.sum(), (a, b))

    ok(program) if shapes not in _LSTSQ_REFUSED else raises(program)


_LSTSQ_REFUSED = {((3, 3), (2, 3, 2)), ((3, 3), (1,)), ((3, 3), ()), ((2, 3, 3), (3,)),
                  ((2, 3, 3), (3, 2)), ((2, 1, 3, 3), (2, 3, 2)), ((2, 1, 3, 3), (2, 4, 1)),
                  ((2, 1, 3, 3), (3, 2)), ((2, 4, 2), (4, 1))}
