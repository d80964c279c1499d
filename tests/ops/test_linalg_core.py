"""Dense linear algebra against torch: ``linalg.inv``/``inv_ex``/``inverse``, ``linalg.det``/
``det``, ``linalg.slogdet``/``slogdet``/``logdet``, ``linalg.solve``/``solve_ex`` and
``linalg.cholesky``/``cholesky_ex``/``cholesky``: values, gradients and second derivatives,
grad_fn graphs, errors and ``info`` outputs (``differential.same``), on real and complex, single
and batched matrices; float64 finite differences for first and second derivatives.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxgrad
from differential import captured_warnings, next_functions, ok, raises, same, torch, val

DTYPES = ["float32", "float64", "complex64", "complex128"]
SHAPES = [(3, 3), (2, 3, 3), (2, 1, 2, 2)]


def _matrix(T, shape, dtype, seed=0, spd=False, requires_grad=True):
    """A well-conditioned matrix (batch) of ``shape``: ``3 I + R`` (or an SPD ``R R^H + I``)."""
    rs = np.random.RandomState(seed)
    m = rs.randn(*shape) / 2
    if "complex" in dtype:
        m = m + 1j * rs.randn(*shape) / 2
    m = m + 3 * np.eye(shape[-1])
    if spd:
        m = m @ np.conj(np.swapaxes(m, -1, -2)) + np.eye(shape[-1])
    return T.tensor(m, dtype=getattr(T, dtype), requires_grad=requires_grad)


def _loss(T, outs):
    """A real, non-uniform weighting of every output (real and imaginary parts)."""
    total = 0
    for o in outs:
        w = (T.arange(o.numel(), dtype=T.float64).reshape(o.shape) + 1).to(o.dtype)
        total = total + ((o * w).real.sum() + (o * w).imag.sum() / 3 if o.is_complex()
                         else (o * w).sum())
    return total


def _program(f, shape, dtype, spd=False, extra=None):
    def program(T):
        a = _matrix(T, shape, dtype, spd=spd)
        args = (a,) if extra is None else (a, extra(T, dtype))
        out = f(T, *args)
        outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o.requires_grad]
        g = T.autograd.grad(_loss(T, outs), args, create_graph=True)
        gg = T.autograd.grad(_loss(T, g), args)
        names = [type(o.grad_fn).__name__ for o in outs]
        # (the create_graph gradients' own grad_fn is jaxgrad's formula node, not torch's
        # composite of aten ops: their values are compared)
        return (out, names, next_functions(outs[0].grad_fn), [x.detach() for x in g],
                [val(x) for x in gg])
    return program


def _rhs(shape):
    def make(T, dtype):
        rs = np.random.RandomState(5)
        b = rs.randn(*shape) + (1j * rs.randn(*shape) if "complex" in dtype else 0)
        return T.tensor(b, dtype=getattr(T, dtype), requires_grad=True)
    return make


OPS = {
    "linalg.inv": lambda T, a: T.linalg.inv(a),
    "inverse": lambda T, a: T.inverse(a),
    "Tensor.inverse": lambda T, a: a.inverse(),
    "linalg.inv_ex": lambda T, a: tuple(T.linalg.inv_ex(a)),
    "linalg.det": lambda T, a: T.linalg.det(a),
    "det": lambda T, a: T.det(a),
    "Tensor.det": lambda T, a: a.det(),
    "linalg.slogdet": lambda T, a: tuple(T.linalg.slogdet(a)),
    "slogdet": lambda T, a: tuple(T.slogdet(a)),
    "Tensor.slogdet": lambda T, a: tuple(a.slogdet()),
    "logdet": lambda T, a: T.logdet(a),
    "Tensor.logdet": lambda T, a: a.logdet(),
}
SPD_OPS = {
    "linalg.cholesky": lambda T, a: T.linalg.cholesky(a),
    "linalg.cholesky_upper": lambda T, a: T.linalg.cholesky(a, upper=True),
    "linalg.cholesky_ex": lambda T, a: tuple(T.linalg.cholesky_ex(a)),
    "linalg.cholesky_ex_upper": lambda T, a: tuple(T.linalg.cholesky_ex(a, upper=True)),
    "cholesky": lambda T, a: T.cholesky(a),
    "Tensor.cholesky_upper": lambda T, a: a.cholesky(True),
}
SOLVES = {  # name: (A's shape, B's shape, left)
    "matrix": ((3, 3), (3, 2), True),
    "vector": ((3, 3), (3,), True),
    "batched_vector": ((2, 3, 3), (2, 3), True),
    "broadcast_A": ((3, 3), (2, 3, 4), True),
    "broadcast_B": ((2, 1, 3, 3), (4, 3, 1), True),
    "vector_broadcast": ((2, 3, 3), (3,), True),
    "right": ((3, 3), (2, 3), False),
    "right_batched": ((2, 3, 3), (4, 3), False),
}


def _tol(dtype):
    return 1e-10 if dtype in ("float64", "complex128") else 2e-5


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(OPS))
def test_matches_torch(name, dtype, shape):
    ok(_program(OPS[name], shape, dtype), rtol=_tol(dtype))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(SPD_OPS))
def test_cholesky_matches_torch(name, dtype, shape):
    ok(_program(SPD_OPS[name], shape, dtype, spd=True), rtol=_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(SOLVES))
def test_solve_matches_torch(case, dtype):
    a_shape, b_shape, left = SOLVES[case]
    ok(_program(lambda T, a, b: T.linalg.solve(a, b, left=left), a_shape, dtype,
                extra=_rhs(b_shape)), rtol=_tol(dtype))
    ok(_program(lambda T, a, b: tuple(T.linalg.solve_ex(a, b, left=left)), a_shape, dtype,
                extra=_rhs(b_shape)), rtol=_tol(dtype))


def test_slogdet_and_logdet_of_negative_and_complex_determinants():
    def program(T):
        a = T.tensor([[0.0, 2.0], [1.0, 0.5]], dtype=T.float64, requires_grad=True)
        c = T.tensor([[1j, 2.0], [0.5, 1.0 - 1j]], dtype=T.complex128, requires_grad=True)
        outs = [*T.linalg.slogdet(a), T.logdet(a), *T.slogdet(c), T.logdet(c)]
        g = T.autograd.grad(_loss(T, [outs[1], *outs[3:]]), (a, c))
        return outs, [val(x) for x in g]

    ok(program)


# --- finite differences (float64, complex128) ----------------------------------------------------

GRADCHECKS = {
    "inv": (lambda a: jaxgrad.linalg.inv(a), False),
    "inv_ex": (lambda a: jaxgrad.linalg.inv_ex(a).inverse, False),
    "det": (lambda a: jaxgrad.linalg.det(a), False),
    "slogdet": (lambda a: jaxgrad.linalg.slogdet(a), False),
    "logdet": (lambda a: jaxgrad.logdet(a @ a.mH if a.is_complex() else a), False),
    "solve": (lambda a: jaxgrad.linalg.solve(a, a[..., :2].sin()), False),
    "solve_vector": (lambda a: jaxgrad.linalg.solve(a, a[..., 0].cos()), False),
    "solve_right": (lambda a: jaxgrad.linalg.solve(a, a[..., :2, :].exp(), left=False), False),
    "cholesky": (lambda a: jaxgrad.linalg.cholesky(a), True),
    "cholesky_upper": (lambda a: jaxgrad.linalg.cholesky_ex(a, upper=True).L, True),
}


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)], ids=str)
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("name", list(GRADCHECKS))
def test_finite_differences(name, dtype, shape):
    f, spd = GRADCHECKS[name]
    a = _matrix(jaxgrad, shape, dtype, seed=1, spd=spd)
    if spd:  # differentiate through a Hermitian input (cholesky reads one triangle)
        x = a.detach().requires_grad_()
        def fn(x, f=f):
            return f((x + x.mH) / 2)
        a = x
    else:
        fn = f
    assert jaxgrad.autograd.gradcheck(fn, (a,))
    assert jaxgrad.autograd.gradgradcheck(fn, (a,))


def test_deprecated_cholesky_finite_differences_and_warning():
    a = _matrix(jaxgrad, (2, 3, 3), "complex128", seed=2, spd=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert jaxgrad.autograd.gradgradcheck(lambda x: jaxgrad.cholesky((x + x.mH) / 2), (a,))
    torch.set_warn_always(True)
    jaxgrad.set_warn_always(True)
    try:
        def program(T):
            return T.cholesky(T.eye(2))
        assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)
        assert captured_warnings(program, torch)
    finally:
        torch.set_warn_always(False)
        jaxgrad.set_warn_always(False)


# --- errors and info -----------------------------------------------------------------------------

ERRORS = {
    "inv_singular": lambda T: T.linalg.inv(T.zeros(3, 3)),
    "inv_singular_pivot_2": lambda T: T.linalg.inv(
        T.tensor([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]])),
    "inv_batch_singular": lambda T: T.linalg.inv(
        T.stack([T.eye(2), T.tensor([[1.0, 2.0], [2.0, 4.0]])])),
    "inverse_singular": lambda T: T.zeros(2, 2, dtype=T.complex128).inverse(),
    "inv_ex_check": lambda T: T.linalg.inv_ex(T.zeros(2, 3, 3), check_errors=True),
    "inv_not_square": lambda T: T.linalg.inv(T.ones(2, 3)),
    "inverse_not_square": lambda T: T.ones(2, 3).inverse(),
    "inv_1d": lambda T: T.linalg.inv(T.ones(3)),
    "inv_int": lambda T: T.linalg.inv(T.ones(3, 3, dtype=T.int64)),
    "inv_half": lambda T: T.linalg.inv(T.eye(2, dtype=T.float16)),
    "inv_bfloat16": lambda T: T.linalg.inv(T.eye(2, dtype=T.bfloat16)),
    "det_not_square": lambda T: T.linalg.det(T.ones(2, 3)),
    "det_int": lambda T: T.det(T.ones(3, 3, dtype=T.int32)),
    "slogdet_not_square": lambda T: T.linalg.slogdet(T.ones(2, 3)),
    "logdet_not_square": lambda T: T.logdet(T.ones(2, 3)),
    "logdet_int": lambda T: T.logdet(T.eye(2, dtype=T.int64)),
    "solve_not_square": lambda T: T.linalg.solve(T.ones(2, 3), T.ones(2)),
    "solve_vector_size": lambda T: T.linalg.solve(T.eye(3), T.ones(2)),
    "solve_rows": lambda T: T.linalg.solve(T.eye(3), T.ones(4, 3)),
    "solve_rows_batch": lambda T: T.linalg.solve(T.eye(3), T.ones(2, 3)),
    "solve_right_vector": lambda T: T.linalg.solve(T.eye(3), T.ones(3), left=False),
    "solve_dtypes": lambda T: T.linalg.solve(T.eye(3), T.ones(3, 2, dtype=T.float64)),
    "solve_int": lambda T: T.linalg.solve(T.eye(3, dtype=T.int64), T.ones(3)),
    "solve_singular": lambda T: T.linalg.solve(T.zeros(3, 3), T.ones(3)),
    "solve_batch_singular": lambda T: T.linalg.solve(T.zeros(2, 3, 3), T.ones(3)),
    "cholesky_not_pd": lambda T: T.linalg.cholesky(T.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "cholesky_batch_not_pd": lambda T: T.linalg.cholesky(
        T.tensor([[[1.0, 0.0], [0.0, 1.0]], [[-1.0, 0.0], [0.0, 1.0]]])),
    "cholesky_upper_not_pd": lambda T: T.linalg.cholesky(
        T.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 3.0], [5.0, 0.0, 1.0]], dtype=T.float64),
        upper=True),
    "cholesky_not_square": lambda T: T.linalg.cholesky(T.ones(2, 3)),
    "cholesky_int": lambda T: T.linalg.cholesky(T.eye(2, dtype=T.int64)),
    "cholesky_ex_check": lambda T: T.linalg.cholesky_ex(T.tensor([[1.0, 2.0], [2.0, 1.0]]),
                                                        check_errors=True),
    "deprecated_cholesky_not_pd": lambda T: T.cholesky(T.tensor([[1.0, 2.0], [2.0, 1.0]])),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors(case):
    raises(ERRORS[case])


def test_linalg_error_is_a_runtime_error():
    with pytest.raises(jaxgrad.linalg.LinAlgError):
        jaxgrad.linalg.inv(jaxgrad.zeros(2, 2))
    assert issubclass(jaxgrad.linalg.LinAlgError, RuntimeError)


INFOS = {
    "inv_ex": lambda T: T.linalg.inv_ex(T.stack(
        [T.eye(3), T.zeros(3, 3), T.tensor([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0, 0, 1.0]])])),
    "solve_ex": lambda T: T.linalg.solve_ex(T.stack([T.zeros(3, 3), T.eye(3)]), T.ones(3)),
    "solve_ex_broadcast_B": lambda T: T.linalg.solve_ex(T.eye(3), T.ones(2, 1, 3, 2)),
    "cholesky_ex": lambda T: T.linalg.cholesky_ex(T.stack([
        T.eye(3), -T.eye(3), T.tensor([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0, 0, 1.0]]),
        T.tensor([[4.0, 2.0, 0.0], [2.0, 2.0, 0.0], [0, 0, -1.0]])])),
    "cholesky_ex_upper": lambda T: T.linalg.cholesky_ex(
        T.tensor([[1.0, 0.0, 3.0], [9.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), upper=True),
}


@pytest.mark.parametrize("case", list(INFOS))
def test_info_of_failed_factorisations(case):
    """``info`` matches torch's (the partial factors LAPACK leaves behind are not compared)."""
    same(lambda T: (INFOS[case](T).info, type(INFOS[case](T)).__name__))


def test_named_tuples_and_reprs():
    def program(T):
        a = T.tensor([[2.0, 1.0], [1.0, 3.0]])
        return [(type(r).__name__, repr(r), r[0], r[1]) for r in (
            T.linalg.inv_ex(a), T.linalg.slogdet(a), T.slogdet(a), a.slogdet(),
            T.linalg.solve_ex(a, a), T.linalg.cholesky_ex(a))]

    ok(program)
    r = jaxgrad.linalg.slogdet(jaxgrad.eye(2))
    assert (r.sign.item(), r.logabsdet.item()) == (1.0, 0.0)


def test_empty_matrices():
    ok(lambda T: [T.linalg.inv(T.zeros(2, 0, 0)), T.linalg.det(T.zeros(2, 0, 0)),
                  *T.linalg.slogdet(T.zeros(0, 0)), T.linalg.cholesky(T.zeros(3, 0, 0)),
                  T.linalg.solve(T.zeros(0, 0), T.zeros(0, 2))])


def test_singular_determinant_gradient_is_torchs_first_order_one():
    """torch's first-order det gradient at an exactly singular matrix is 0 (``det.conj()``
    scales its perturbed LU solve)."""
    def program(T):
        a = T.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=T.float64, requires_grad=True)
        T.linalg.det(a).backward()
        return val(a.grad)

    ok(program)


def test_out_variants():
    def program(T):
        a = T.tensor([[2.0, 1.0], [1.0, 3.0]])
        outs = [T.empty(0) for _ in range(5)]
        T.linalg.inv(a, out=outs[0])
        T.inverse(a, out=outs[1])
        T.linalg.det(a, out=outs[2])
        T.linalg.solve(a, T.ones(2), out=outs[3])
        T.linalg.cholesky(a, out=outs[4])
        return outs

    ok(program)
