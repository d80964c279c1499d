"""The rest of torch's linalg surface against torch: ``vdot``, ``addmv``, ``addr``,
``linalg.vecdot``/``multi_dot``/``matmul``/``diagonal``, ``chain_matmul``, ``linalg.vander``/
``vander``, ``linalg.matrix_rank``/``cond``/``tensorinv``/``tensorsolve``, ``renorm``,
``nuclear_norm``, ``frobenius_norm``, ``fill_diagonal_``: values, grad_fn edges, first and second
derivatives (float64, complex128), errors and warnings.
"""

from __future__ import annotations

import math

import pytest

from differential import attempt, ok, raises, same, val
from linalg_cases import differential, loss, quiet, tensor, tol, warns_as_torch

# name: (program, input shapes, dtypes). Second derivatives where the program has a new row
# (vdot, addmv, addr, renorm) in float64; the composites' are those of the ops they call, tested
# with those ops, so their programs (and complex inputs) go to first order only.
PROGRAMS = {
    "products": (lambda T, a, b, v, w: [
        T.vdot(v, w), v.vdot(w), T.linalg.vecdot(v, w), T.linalg.vecdot(a, w),
        T.linalg.vecdot(a, b, dim=0), T.linalg.matmul(a, w),
        T.linalg.diagonal(a.unsqueeze(0), offset=1, dim1=1, dim2=2),
        T.addmv(v[:3], a, w), T.addmv(v[:1], a, w, beta=0.5, alpha=-2),
        v[:3].clone().addmv_(a, w, alpha=3), T.addr(a, v[:3], w),
        T.addr(a[0], v[:3], w, beta=-1, alpha=0.5), a.clone().addr_(v[:3], w, beta=2, alpha=2)],
        [(3, 4), (3, 4), (4,), (4,)], ("float64", "complex128")),
    "multi_dot": (lambda T, a, b, c, d, v: [
        T.linalg.multi_dot([a, b]), T.linalg.multi_dot([a, b, c]),
        T.linalg.multi_dot([c.mT, b.mT, a.mT]), T.linalg.multi_dot([v, a, b, c, d]),
        quiet(T.chain_matmul)(a, b, c), quiet(T.chain_matmul)(a)],
        [(3, 4), (4, 2), (2, 5), (5, 1), (3,)], ()),
    "norms": (lambda T, a: [
        T.renorm(a, 2, 0, 3.0), a.renorm(1, 1, 2.5), T.renorm(a, math.inf, 1, 2.8),
        a.clone().renorm_(3, 1, 3.2),
        *quiet(lambda: [T.nuclear_norm(a, keepdim=True), T.frobenius_norm(a, 1, True)])()],
        [(3, 4)], ("float64", "complex128")),
    "solvers": (lambda T, a, b, r: [
        T.linalg.vander(b), T.linalg.vander(b[0], N=3),
        T.linalg.cond(a.reshape(6, 6)), T.linalg.cond(r, -2),
        T.linalg.cond(a.reshape(6, 6), "nuc"), T.linalg.tensorinv(a.reshape(2, 3, 6), ind=2),
        T.linalg.tensorsolve(a.reshape(6, 2, 3), b, dims=(0,))],
        [(6, 6), (2, 3), (3, 2)], ()),
}


CASES = [(n, d, 2 if d == "float64" else 1) for n, (_, _, ds) in PROGRAMS.items() for d in ds]


@pytest.mark.parametrize("name,dtype,order", CASES + [
    (n, "float64", 1) for n, (_, _, ds) in PROGRAMS.items() if not ds])
def test_programs_match_torch(name, dtype, order):
    f, shapes, _ = PROGRAMS[name]
    ok(differential(f, shapes, dtype, order=order), rtol=tol(dtype))


def test_graphs_without_second_derivatives_match_torch():
    """Outputs and first derivatives (float64) of the composites the programs above leave out."""
    ok(differential(lambda T, a, v: [
        T.linalg.matmul(a, a.mT), T.linalg.diagonal(a), T.linalg.multi_dot([v, a.mT]),
        T.linalg.multi_dot([a, a.mT, a, v]), T.linalg.vander(v, N=4),
        *quiet(lambda: [T.nuclear_norm(a), T.nuclear_norm(a.unsqueeze(0), (0, 2)),
                        T.frobenius_norm(a, (0, 1))])(),
        T.linalg.cond(a[:, :3], 2)],
        [(3, 4), (4,)], "float64", order=1))


def test_float32_values_and_integer_forms_match_torch():
    def program(T):
        a = T.arange(12, dtype=T.float32).reshape(3, 4) / 7
        i = T.arange(1, 4)
        b = T.tensor([True, False, True])
        nan = T.full((3, 4), math.nan)
        return [T.addr(a, i.float(), T.ones(4)), T.addr(i.view(3, 1), i, i, beta=2, alpha=3),
                T.addr(b.view(3, 1), b, b, alpha=False), T.addr(nan, i.float(), T.ones(4), beta=0),
                T.addmv(nan[:, 0], a, T.ones(4), beta=0), T.addr(a, i.double(), T.ones(4)),
                T.vander(i.to(T.int8)), T.linalg.vander(i.to(T.int8)), T.vander(b, 3),
                T.vander(i, N=0), T.vander(i, N=1),
                T.linalg.matrix_rank(a), T.linalg.matrix_rank(a, atol=0.5),
                T.linalg.matrix_rank(a, atol=T.tensor([0.1, 10.0]).unsqueeze(-1).unsqueeze(-1)),
                T.linalg.matrix_rank(a.mT @ a, hermitian=True), T.linalg.matrix_rank(a, 1.0),
                T.linalg.matrix_rank(a, rtol=0.2), T.linalg.matrix_rank(T.ones(2, 0, 3)),
                T.linalg.cond(T.ones(3, 3), 1), T.linalg.cond(T.ones(3, 3), "fro"),
                T.linalg.cond(T.ones(3, 3), "nuc"),
                T.linalg.cond(T.ones(2, 0, 0)), T.linalg.cond(T.ones(0, 0), "nuc"),
                T.linalg.cond(a[:, :3].to(T.complex64)), T.renorm(a, 2, 0, 1.0),
                T.zeros(7, 3).fill_diagonal_(2, wrap=True), T.zeros(7, 3).fill_diagonal_(2),
                T.zeros(2, 2, 2).fill_diagonal_(5), T.zeros(3, 5).fill_diagonal_(1, True),
                T.zeros(4, 3).t().fill_diagonal_(4),
                a.clone().requires_grad_().clone().fill_diagonal_(1.5)]
    same(program)


def test_graphs_torch_cannot_differentiate():
    """torch.vander's cumprod saves a slice it then overwrites, and cond's 1/inf/fro norms
    masked_fill_ the saved inverse: their backward raises torch's in-place error."""
    def program(T):
        a = T.tensor([[2.0, 1.0, 0.5], [0.0, 3.0, 1.0], [1.0, 0.0, 4.0]], dtype=T.float64,
                     requires_grad=True)
        v = a[0]
        outs = [T.vander(v), T.vander(v, 2, True), T.vander(v, N=4, increasing=True),
                *(T.linalg.cond(a, p) for p in (1, -1, math.inf, -math.inf, "fro"))]
        errors = [attempt(lambda o=o: T.autograd.grad(o.sum(), a)) for o in outs]
        return outs, [o.grad_fn.next_functions for o in outs], errors
    same(program)


ERRORS = {
    "vdot_2d": lambda T: T.vdot(T.ones(2, 3), T.ones(3)),
    "vdot_dtype": lambda T: T.vdot(T.ones(3), T.ones(3, dtype=T.float64)),
    "vdot_size": lambda T: T.vdot(T.ones(3), T.ones(4)),
    "vecdot_dtype": lambda T: T.linalg.vecdot(T.ones(3), T.ones(3, dtype=T.float64)),
    "vecdot_int": lambda T: T.linalg.vecdot(T.ones(3, dtype=T.int64), T.ones(3, dtype=T.int64)),
    "vecdot_broadcast": lambda T: T.linalg.vecdot(T.ones(2, 3), T.ones(2, 4)),
    "multi_dot_one": lambda T: T.linalg.multi_dot([T.ones(2, 2)]),
    "multi_dot_dtype": lambda T: T.linalg.multi_dot([T.ones(2, 3), T.ones(3, 4).double()]),
    "multi_dot_first": lambda T: T.linalg.multi_dot([T.ones(1, 2, 3), T.ones(3, 4)]),
    "multi_dot_last": lambda T: T.linalg.multi_dot([T.ones(2, 3), T.ones(1, 3, 4)]),
    "multi_dot_middle": lambda T: T.linalg.multi_dot([T.ones(2, 3), T.ones(3), T.ones(3, 4)]),
    "multi_dot_shapes": lambda T: T.linalg.multi_dot([T.ones(2, 3), T.ones(2, 3)]),
    "chain_matmul_none": quiet(lambda T: T.chain_matmul()),
    "chain_matmul_1d": quiet(lambda T: T.chain_matmul(T.ones(2, 3), T.ones(3))),
    "addmv_size": lambda T: T.addmv(T.ones(2), T.ones(2, 3), T.ones(4)),
    "addmv_input": lambda T: T.addmv(T.ones(3), T.ones(2, 3), T.ones(3)),
    "addmv_dtype": lambda T: T.addmv(T.ones(2), T.ones(2, 3), T.ones(3, dtype=T.float64)),
    "addmv_dims": lambda T: T.addmv(T.ones(2), T.ones(3), T.ones(3)),
    "addmv_inplace": lambda T: T.ones(1).addmv_(T.ones(2, 3), T.ones(3)),
    "addr_expand": lambda T: T.addr(T.ones(2, 3), T.ones(3), T.ones(3)),
    "addr_2d": lambda T: T.addr(T.ones(2, 3), T.ones(2, 3), T.ones(3)),
    "addr_inplace": lambda T: T.ones(1, 3).addr_(T.ones(2), T.ones(3)),
    "addr_float_beta": lambda T: T.addr(T.ones(2, 3, dtype=T.int64), T.ones(2, dtype=T.int64),
                                        T.ones(3, dtype=T.int64), beta=1.5),
    "addr_bool_beta": lambda T: T.addr(T.ones(2, 3), T.ones(2), T.ones(3), beta=True),
    "renorm_p": lambda T: T.renorm(T.ones(2, 3), 0, 0, 1),
    "renorm_maxnorm": lambda T: T.renorm(T.ones(2, 3), 2, 0, -1),
    "renorm_dim": lambda T: T.renorm(T.ones(2, 3), 2, 2, 1),
    "renorm_int": lambda T: T.renorm(T.ones(2, 3, dtype=T.int64), 2, 0, 1),
    "renorm_1d": lambda T: T.renorm(T.ones(3), 2, 0, 1),
    "fill_diagonal_1d": lambda T: T.ones(3).fill_diagonal_(1),
    "fill_diagonal_unequal": lambda T: T.ones(2, 3, 4).fill_diagonal_(1),
    "vander_half": lambda T: T.linalg.vander(T.ones(3, dtype=T.float16)),
    "vander_bool": lambda T: T.linalg.vander(T.ones(3, dtype=T.bool)),
    "vander_n": lambda T: T.linalg.vander(T.ones(3), N=1),
    "vander_2d": lambda T: T.vander(T.ones(2, 3)),
    "vander_negative": lambda T: T.vander(T.ones(3), N=-1),
    "matrix_rank_int": lambda T: T.linalg.matrix_rank(T.ones(3, 3, dtype=T.int64)),
    "matrix_rank_1d": lambda T: T.linalg.matrix_rank(T.ones(3)),
    "matrix_rank_hermitian": lambda T: T.linalg.matrix_rank(T.ones(2, 3), hermitian=True),
    "cond_1d": lambda T: T.linalg.cond(T.ones(3)),
    "cond_ord": lambda T: T.linalg.cond(T.eye(3), 3),
    "cond_str": lambda T: T.linalg.cond(T.eye(3), "foo"),
    "cond_square_1": lambda T: T.linalg.cond(T.ones(2, 3), 1),
    "cond_square_inf": lambda T: T.linalg.cond(T.ones(2, 3), math.inf),
    "cond_square_fro": lambda T: T.linalg.cond(T.ones(2, 3), "fro"),
    "cond_int": lambda T: T.linalg.cond(T.ones(3, 3, dtype=T.int64), 1),
    "tensorinv_ind": lambda T: T.linalg.tensorinv(T.eye(3), ind=0),
    "tensorinv_shape": lambda T: T.linalg.tensorinv(T.ones(2, 3), ind=1),
    "tensorinv_singular": lambda T: T.linalg.tensorinv(T.zeros(2, 2, 4), ind=2),
    "tensorsolve_shape": lambda T: T.linalg.tensorsolve(T.ones(2, 3, 5), T.ones(2, 3)),
    "tensorsolve_singular": lambda T: T.linalg.tensorsolve(T.zeros(2, 3, 6), T.ones(2, 3)),
    "nuclear_norm_dim": quiet(lambda T: T.nuclear_norm(T.ones(2, 3, 4), (1,))),
    "frobenius_norm_dims": quiet(lambda T: T.frobenius_norm(T.ones(2, 3, 4), (1, 2, 0))),
    "frobenius_norm_int": quiet(lambda T: T.frobenius_norm(T.ones(2, 3, dtype=T.int64), (0,))),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors(case):
    raises(ERRORS[case])


@pytest.mark.parametrize("name", ["chain_matmul", "nuclear_norm", "frobenius_norm"])
def test_deprecation_warnings(name):
    def program(T):
        {"chain_matmul": lambda: T.chain_matmul(T.ones(2, 2), T.ones(2, 2)),
         "nuclear_norm": lambda: T.nuclear_norm(T.ones(2, 2)),
         "frobenius_norm": lambda: T.frobenius_norm(T.ones(2, 2), (0,))}[name]()
    warns_as_torch(program)


def test_lstsq_matches_torch():
    """Each CPU driver's outputs (tall, wide, batched, vector right-hand sides), and first and
    second derivatives (float64; torch's go through ``pinv`` whatever the driver)."""
    def program(T):
        a, b = tensor(T, (2, 4, 3), "float64"), tensor(T, (2, 4, 2), "float64", seed=1)
        v = tensor(T, (4,), "float64", seed=2)
        outs = [*T.linalg.lstsq(a, b), *T.linalg.lstsq(a, b, driver="gels"),
                *T.linalg.lstsq(a, b, 1e-3, driver="gelsd"),
                *T.linalg.lstsq(a, b, driver="gelss"), *T.linalg.lstsq(a[0], v),
                *T.linalg.lstsq(a.mT, b[:, :3], driver="gelsd"),
                T.linalg.lstsq(a, b[..., 0]).solution]
        diff = [o for o in outs if o.requires_grad]
        g = T.autograd.grad(loss(T, diff), [a, b, v], create_graph=True)
        gg = T.autograd.grad(loss(T, g), [a, b, v])
        return outs, [x.detach() for x in g], [val(x) for x in gg]
    same(program, rtol=1e-9)


def test_lstsq_complex_matches_torch():
    ok(differential(lambda T, a, b: [*T.linalg.lstsq(a, b, driver="gels")[:2],
                                     T.linalg.lstsq(a.mT, b[:3]).solution],
                    [(4, 3), (4, 2)], "complex128", order=1), rtol=1e-9)


def test_lstsq_residuals_only_gradients():
    """A loss of the residuals alone: where they are empty (default driver), torch's
    linalg_lstsq_backward returns undefined gradients (no ``.grad``, None from ``autograd.grad``,
    its error without ``allow_unused``, hooks called with None); where a tall ``gelsd`` fills
    them, their gradients."""
    def program(T):
        a, b = tensor(T, (4, 3), "float64"), tensor(T, (4, 2), "float64", seed=1)
        seen = []
        a.register_hook(lambda g: seen.append(g))
        empty = T.linalg.lstsq(a, b).residuals
        unused = attempt(lambda: T.autograd.grad(empty.sum(), [a, b], retain_graph=True))
        grads = T.autograd.grad(empty.sum(), [a, b], allow_unused=True, retain_graph=True)
        empty.sum().backward()
        filled = T.linalg.lstsq(a, b, driver="gelsd").residuals
        return (unused, grads, a.grad, b.grad, seen,
                T.autograd.grad(filled.sum(), [a, b]), empty.grad_fn.name())
    same(program, rtol=1e-9)


LSTSQ_ERRORS = {
    "driver": lambda T: T.linalg.lstsq(T.ones(3, 2), T.ones(3), driver="foo"),
    "int": lambda T: T.linalg.lstsq(T.ones(3, 2, dtype=T.int64), T.ones(3, dtype=T.int64)),
    "dtype": lambda T: T.linalg.lstsq(T.ones(3, 2), T.ones(3, dtype=T.float64)),
    "1d": lambda T: T.linalg.lstsq(T.ones(3), T.ones(3)),
    "rows": lambda T: T.linalg.lstsq(T.ones(3, 2), T.ones(2, 2)),
}


@pytest.mark.parametrize("case", list(LSTSQ_ERRORS))
def test_lstsq_errors(case):
    raises(LSTSQ_ERRORS[case])


def test_householder_product_matches_torch():
    """The product of reflectors (tall, square, batched, fewer reflectors than columns), first
    and second derivatives in float64, first in complex128. (The gradients' values only: torch's
    formula writes into them in place, k + 1 and k times, which jaxgrad's row does not mimic.)"""
    def program(dtype, order):
        def run(T):
            a, tau, b = (tensor(T, s, dtype, seed=i) for i, s in enumerate(
                [(2, 4, 3), (2, 3), (2, 4, 4)]))
            outs = [T.linalg.householder_product(a, tau), T.orgqr(b, tau[:, :2]),
                    b.orgqr(tau[:, :2]), T.linalg.householder_product(b[..., :3], tau)]
            g = T.autograd.grad(loss(T, outs), [a, tau, b], create_graph=order > 1)
            gg = T.autograd.grad(loss(T, g), [a, tau, b]) if order > 1 else []
            return ([*outs, *(o.grad_fn.next_functions for o in outs)],
                    [x.detach().clone() for x in (*g, *gg)])
        return run
    same(program("float64", 2), rtol=1e-9)
    same(program("complex128", 1), rtol=1e-9)


HOUSEHOLDER_ERRORS = {
    "1d": lambda T: T.linalg.householder_product(T.ones(3), T.ones(2)),
    "wide": lambda T: T.linalg.householder_product(T.ones(2, 3), T.ones(2)),
    "tau_long": lambda T: T.linalg.householder_product(T.ones(4, 3), T.ones(4)),
    "tau_ndim": lambda T: T.linalg.householder_product(T.ones(4, 3), T.ones(2, 2)),
    "tau_batch": lambda T: T.linalg.householder_product(T.ones(2, 4, 3), T.ones(3, 2)),
    "tau_dtype": lambda T: T.orgqr(T.ones(4, 3), T.ones(2, dtype=T.float64)),
    "int": lambda T: T.orgqr(T.ones(4, 3, dtype=T.int64), T.ones(2, dtype=T.int64)),
}


@pytest.mark.parametrize("case", list(HOUSEHOLDER_ERRORS))
def test_householder_product_errors(case):
    raises(HOUSEHOLDER_ERRORS[case])
