"""Matrix products and linear algebra against torch: addmm/baddbmm/addbmm, the norms
(``Tensor.norm``, ``jaxgrad.norm``, ``jaxgrad.linalg``), einsum and diagonal (einsum's repeated
labels). Every case runs on torch and on jaxgrad (``differential.same``): values, grads, grad_fn
graphs, saved values, versions, errors.
"""

from __future__ import annotations

import pytest

import jaxgrad
from differential import (
    captured_warnings,
    distinct_leaf,
    next_functions,
    ok,
    raises,
    run_on_distinct_leaf,
    same,
    torch,
    val,
    weighted_grads,
)

# --- addmm, baddbmm, addbmm -----------------------------------------------------------------------

def _products(T):
    m = distinct_leaf(T, (2, 3))
    a = distinct_leaf(T, (3, 2))
    b1, b2 = distinct_leaf(T, (2, 2, 3)), distinct_leaf(T, (2, 3, 4))
    c = distinct_leaf(T, (4,))
    return m, a, b1, b2, c


PRODUCTS = {
    "addmm": lambda T, m, a, b1, b2, c: T.addmm(c[:2], m, a),
    "addmm_scaled": lambda T, m, a, b1, b2, c: T.addmm(m @ a, m, a, beta=0.5, alpha=-2),
    "addmm_method": lambda T, m, a, b1, b2, c: (m @ a).addmm(m, a, alpha=3),
    "addmm_inplace": lambda T, m, a, b1, b2, c: (m @ a).addmm_(m, a, beta=2),
    "addmm_beta0": lambda T, m, a, b1, b2, c: T.addmm(c[:1] / 0, m, a, beta=0),
    "baddbmm": lambda T, m, a, b1, b2, c: T.baddbmm(c, b1, b2),
    "baddbmm_scaled": lambda T, m, a, b1, b2, c: T.baddbmm(b1 @ b2, b1, b2, beta=-1, alpha=0.5),
    "baddbmm_inplace": lambda T, m, a, b1, b2, c: (b1 @ b2).baddbmm_(b1, b2, alpha=2),
    "addbmm": lambda T, m, a, b1, b2, c: T.addbmm(c, b1, b2),
    "addbmm_scaled": lambda T, m, a, b1, b2, c: b1[0].t().mm(b1[1]).addbmm(
        b1.transpose(1, 2), b1, beta=2, alpha=0.25),
    "addbmm_inplace": lambda T, m, a, b1, b2, c: (b1[0] @ b2[0]).addbmm_(b1, b2),
}


@pytest.mark.parametrize("case", list(PRODUCTS))
def test_products(case):
    def program(T):
        leaves = _products(T)
        out = PRODUCTS[case](T, *leaves)
        return out, next_functions(out.grad_fn), weighted_grads(T, out, *leaves)

    ok(program)


def test_products_save_what_torch_saves():
    def program(T):
        m, a, b1, b2, c = _products(T)
        outs = [T.addmm(c[:2], m, a, beta=2), T.baddbmm(c, b1, b2), T.addbmm(c, b1, b2)]
        return [sorted(k for k in ("_saved_mat1", "_saved_mat2", "_saved_batch1",
                                   "_saved_batch2", "_saved_alpha", "_saved_beta")
                       if hasattr(o.grad_fn, k)) for o in outs]

    ok(program)


PRODUCT_ERRORS = {
    "addmm_input": lambda T: T.addmm(T.ones(4), T.ones(2, 3), T.ones(3, 3)),
    "addmm_shapes": lambda T: T.addmm(T.ones(2, 3), T.ones(2, 3), T.ones(4, 3)),
    "addmm_mat1_1d": lambda T: T.addmm(T.ones(2, 3), T.ones(3), T.ones(3, 3)),
    "addmm_mat2_1d": lambda T: T.addmm(T.ones(2, 3), T.ones(2, 3), T.ones(3)),
    "addmm_dtype": lambda T: T.addmm(T.ones(2, 3), T.ones(2, 3), T.ones(3, 3, dtype=T.float64)),
    "addmm_input_dtype": lambda T: T.addmm(T.ones(2, 3, dtype=T.float64), T.ones(2, 3),
                                           T.ones(3, 3)),
    "addmm_inplace_size": lambda T: T.ones(3).addmm_(T.ones(2, 3), T.ones(3, 3)),
    "baddbmm_input": lambda T: T.baddbmm(T.ones(5), T.ones(2, 3, 4), T.ones(2, 4, 4)),
    "baddbmm_2d": lambda T: T.baddbmm(T.ones(2, 3, 4), T.ones(3, 4), T.ones(2, 4, 4)),
    "baddbmm_batch2_2d": lambda T: T.baddbmm(T.ones(2, 3, 4), T.ones(2, 3, 4), T.ones(4, 4)),
    "baddbmm_contraction": lambda T: T.baddbmm(T.ones(2, 3, 4), T.ones(2, 3, 4),
                                               T.ones(2, 5, 4)),
    "baddbmm_batches": lambda T: T.baddbmm(T.ones(2, 3, 4), T.ones(2, 3, 4), T.ones(3, 4, 4)),
    "baddbmm_dtype": lambda T: T.baddbmm(T.ones(2, 3, 4), T.ones(2, 3, 4),
                                         T.ones(2, 4, 4, dtype=T.float64)),
    "baddbmm_input_dtype": lambda T: T.baddbmm(T.ones(2, 3, 4, dtype=T.float64),
                                               T.ones(2, 3, 4), T.ones(2, 4, 4)),
    "baddbmm_inplace_size": lambda T: T.ones(4).baddbmm_(T.ones(2, 3, 4), T.ones(2, 4, 4)),
    "addbmm_input": lambda T: T.addbmm(T.ones(5), T.ones(2, 3, 4), T.ones(2, 4, 4)),
    "addbmm_contraction": lambda T: T.addbmm(T.ones(3, 4), T.ones(2, 3, 4), T.ones(2, 5, 4)),
    "addbmm_batches": lambda T: T.addbmm(T.ones(3, 4), T.ones(2, 3, 4), T.ones(3, 4, 4)),
    "addmm_out_requires_grad": lambda T: T.addmm(T.ones(2, 2), T.ones(2, 2, requires_grad=True),
                                                 T.ones(2, 2), out=T.empty(2, 2)),
}


@pytest.mark.parametrize("case", list(PRODUCT_ERRORS))
def test_product_errors(case):
    raises(PRODUCT_ERRORS[case])


def test_products_out_and_integer_inputs():
    def program(T):
        out = T.empty(2, 2)
        T.addmm(T.ones(2), T.ones(2, 3), T.ones(3, 2), alpha=2, out=out)
        i = T.ones(2, 2, dtype=T.int64)
        return out, T.addmm(i, i, i, beta=3, alpha=2), T.baddbmm(i[None], i[None], i[None])

    ok(program)


# --- norms: Tensor.norm, jaxgrad.norm and jaxgrad.linalg ------------------------------------------

INF = float("inf")


NORMS = {
    "norm": lambda T, x: x.norm(),
    "norm_p1_dim": lambda T, x: T.norm(x, 1, dim=1),
    "norm_p3_keepdim": lambda T, x: x.norm(p=3, dim=0, keepdim=True),
    "norm_inf": lambda T, x: x.norm(INF),
    "norm_p0": lambda T, x: x.norm(0),
    "norm_none": lambda T, x: x.norm(None, dim=(0, 1)),
    "norm_fro_dim": lambda T, x: x.norm("fro", dim=1),
    "norm_dtype": lambda T, x: x.norm(dtype=T.float64),
    "vector_norm": lambda T, x: T.linalg.vector_norm(x),
    "vector_norm_ord_dims": lambda T, x: T.linalg.vector_norm(x, 0.5, dim=(0, 1), keepdim=True),
    "vector_norm_neg_inf": lambda T, x: T.linalg.vector_norm(x, -INF, dim=-1),
    "vector_norm_neg": lambda T, x: T.linalg.vector_norm(x, -1.5, 0),
    "vector_norm_empty_dims": lambda T, x: T.linalg.vector_norm(x, 2, dim=()),
    "vector_norm_dtype": lambda T, x: T.linalg.vector_norm(x, 3, dtype=T.float64),
    "vector_norm_empty_other_dim": lambda T, x: T.linalg.vector_norm(T.zeros(0, 2), INF, dim=1),
    "matrix_norm": lambda T, x: T.linalg.matrix_norm(x),
    "matrix_norm_1": lambda T, x: T.linalg.matrix_norm(x, 1),
    "matrix_norm_neg1_keepdim": lambda T, x: T.linalg.matrix_norm(x, -1, keepdim=True),
    "matrix_norm_inf": lambda T, x: T.linalg.matrix_norm(x, INF),
    "matrix_norm_neg_inf_dims": lambda T, x: T.linalg.matrix_norm(x, -INF, dim=(1, 0)),
    "matrix_norm_fro_dtype": lambda T, x: T.linalg.matrix_norm(x, "fro", dtype=T.float64),
    "linalg_norm": lambda T, x: T.linalg.norm(x),
    "linalg_norm_ord_2d": lambda T, x: T.linalg.norm(x, 1),
    "linalg_norm_fro": lambda T, x: T.linalg.norm(x, "fro"),
    "linalg_norm_inf_vector": lambda T, x: T.linalg.norm(x[1], INF),
    "linalg_norm_dim": lambda T, x: T.linalg.norm(x, 3, dim=1, keepdim=True),
    "linalg_norm_dims": lambda T, x: T.linalg.norm(x, -INF, dim=(0, 1)),
}


@pytest.mark.parametrize("case", list(NORMS))
def test_norms(case):
    ok(lambda T: run_on_distinct_leaf(T, NORMS[case]))


def test_norms_on_batches():
    def program(T):
        b = distinct_leaf(T, (2, 3, 4))
        out = T.linalg.matrix_norm(b, 1, dim=(0, 2)) + T.linalg.matrix_norm(b, INF, dim=(2, 0))
        return out, next_functions(out.grad_fn), weighted_grads(T, out, b)

    ok(program)


NORM_ERRORS = {
    "vector_norm_int": lambda T, x: T.linalg.vector_norm(T.tensor([3, 4])),
    "norm_int": lambda T, x: T.tensor([3, 4]).norm(),
    "vector_norm_int_dtype": lambda T, x: T.linalg.vector_norm(x, dtype=T.int64),
    "vector_norm_str": lambda T, x: T.linalg.vector_norm(x, "fro"),
    "vector_norm_empty_inf": lambda T, x: T.linalg.vector_norm(T.zeros(0), INF),
    "vector_norm_empty_neg": lambda T, x: T.linalg.vector_norm(T.zeros(2, 0), -1, dim=1),
    "vector_norm_empty_dims": lambda T, x: T.linalg.vector_norm(T.zeros(0, 2), -INF, dim=(1, 0)),
    "vector_norm_repeated_dim": lambda T, x: T.linalg.vector_norm(x, dim=(0, 0)),
    "matrix_norm_order": lambda T, x: T.linalg.matrix_norm(x, 3),
    "matrix_norm_order_str": lambda T, x: T.linalg.matrix_norm(x, "bla"),
    "matrix_norm_1d": lambda T, x: T.linalg.matrix_norm(x[0]),
    "matrix_norm_dim_len": lambda T, x: T.linalg.matrix_norm(x, dim=(0,)),
    "matrix_norm_same_dims": lambda T, x: T.linalg.matrix_norm(x, dim=(0, -2)),
    "matrix_norm_dim_range": lambda T, x: T.linalg.matrix_norm(x, dim=(0, 2)),
    "norm_fro_three_dims": lambda T, x: x[None].norm("fro", dim=(0, 1, 2)),
    "norm_bad_str": lambda T, x: x.norm("bla"),
    "linalg_norm_3d": lambda T, x: T.linalg.norm(x[None], 2),
    "linalg_norm_dims": lambda T, x: T.linalg.norm(x[None], None, dim=(0, 1, 2)),
    "linalg_norm_fro_1d": lambda T, x: T.linalg.norm(x[0], "fro"),
    "linalg_norm_0_matrix": lambda T, x: T.linalg.norm(x, 0),
}


@pytest.mark.parametrize("case", list(NORM_ERRORS))
def test_norm_errors(case):
    raises(lambda T: NORM_ERRORS[case](T, distinct_leaf(T)))


def test_linalg_namespace_and_out():
    def program(T):
        x, out = distinct_leaf(T).detach(), T.empty(4)
        T.linalg.vector_norm(x, 1, dim=0, out=out)
        return (out, T.linalg.vector_norm.__name__, T.linalg.matrix_norm.__name__,
                T.linalg.norm.__name__)

    ok(program)
    assert not hasattr(jaxgrad, "linalg_vector_norm")  # torch has it only in torch.linalg


# --- einsum ---------------------------------------------------------------------------------------

EINSUM = {
    "matmul": ("ij,jk->ik", [(2, 3), (3, 4)]),
    "implicit": ("ij,jk", [(2, 3), (3, 4)]),
    "transpose": ("ij->ji", [(2, 3)]),
    "sum_all": ("ij->", [(2, 3)]),
    "diagonal": ("ii->i", [(3, 3)]),
    "trace": ("ii", [(3, 3)]),
    "dot": ("i,i->", [(3,), (3,)]),
    "outer": ("i,j->ij", [(3,), (4,)]),
    "batched": ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    "ellipsis_broadcast": ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    "ellipsis_implicit": ("...ij,jk", [(2, 2, 3), (3, 4)]),
    "ellipsis_summed": ("...i,...i->i", [(2, 3), (2, 3)]),
    "hadamard": ("ij,ij->ij", [(2, 3), (2, 3)]),
    "row_dots": ("ij,ij->i", [(2, 3), (2, 3)]),
    "transposed_rhs": ("ij,kj->ik", [(2, 3), (4, 3)]),
    "attention": ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    "one_sided_sum": ("ij,jk->i", [(2, 3), (3, 4)]),
    "broadcast_size_one": ("ij,jk->ik", [(2, 1), (3, 4)]),
    "repeated_and_batch": ("bii,bi->b", [(2, 3, 3), (2, 3)]),
    "spaces_upper": ("Ab, bC -> AC", [(2, 3), (3, 2)]),
}


@pytest.mark.parametrize("case", list(EINSUM))
def test_einsum(case):
    equation, shapes = EINSUM[case]

    def program(T):
        leaves = [distinct_leaf(T, s, T.float64) for s in shapes]
        out = T.einsum(equation, *leaves)
        return out, next_functions(out.grad_fn), weighted_grads(T, out, *leaves)

    ok(program)


def test_einsum_operands_as_a_list():
    def program(T):
        a, b = distinct_leaf(T, (2, 3)), distinct_leaf(T, (3, 4))
        out = T.einsum("ij,jk", [a, b])
        return out, next_functions(out.grad_fn), weighted_grads(T, out, a, b)

    ok(program)


def test_einsum_three_operands_values_and_grads():
    """Three or more operands: torch contracts them in opt_einsum's order when it is installed,
    jaxgrad from left to right, so only values and gradients are compared."""

    def program(T):
        a, b, c = distinct_leaf(T, (2, 3), T.float64), distinct_leaf(T, (3, 4), T.float64), distinct_leaf(T, (4, 2), T.float64)
        out = T.einsum("ij,jk,kl->il", a, b, c) + T.einsum("i,i,i->", a[0], a[1], b[:, 0])
        return out.detach(), weighted_grads(T, out, a, b, c)

    ok(program)


EINSUM_ERRORS = {
    "too_few": ("ij,jk->ik", [(2, 3)]),
    "too_many": ("ij->ij", [(2, 3), (2, 3)]),
    "sizes": ("ij,jk->ik", [(2, 3), (2, 3)]),
    "subscript_count": ("ijk,jk->ik", [(2, 3), (3, 4)]),
    "ellipsis_count": ("...ijk->i", [(2, 3)]),
    "unknown_output": ("ij,jk->iz", [(2, 3), (3, 4)]),
    "repeated_output": ("ij,jk->ii", [(2, 3), (3, 4)]),
    "bad_label": ("i1,jk->i", [(2, 3), (3, 4)]),
    "bad_output_label": ("ij->i1", [(2, 3)]),
    "two_ellipses": ("......->", [(2, 3)]),
    "broken_ellipsis": ("..i->i", [(2, 3)]),
    "output_two_ellipses": ("...->......", [(2, 3)]),
    "ellipsis_sizes": ("...i,...i->i", [(2, 3), (4, 3)]),
    "diagonal_sizes": ("ii->i", [(2, 3)]),
    "no_operands": ("ij", []),
}


@pytest.mark.parametrize("case", list(EINSUM_ERRORS))
def test_einsum_errors(case):
    equation, shapes = EINSUM_ERRORS[case]
    raises(lambda T: T.einsum(equation, *[distinct_leaf(T, s) for s in shapes]))


# --- diagonal (einsum's repeated labels) ----------------------------------------------------------

DIAGONAL = {
    "main": lambda T, x: x.diagonal(),
    "offset": lambda T, x: T.diagonal(x, 1),
    "negative_offset_swapped": lambda T, x: T.diagonal(x, offset=-1, dim1=1, dim2=0),
    "past_the_end": lambda T, x: x.diagonal(5),
    "batch": lambda T, x: x.reshape(2, 2, 3).diagonal(0, 0, 2),
}


@pytest.mark.parametrize("case", list(DIAGONAL))
def test_diagonal(case):
    def program(T):
        x = distinct_leaf(T)
        out = DIAGONAL[case](T, x)
        base = x * 1
        view = DIAGONAL[case](T, base)
        view.mul_(2)  # writes through the view into its base
        return out, next_functions(out.grad_fn), weighted_grads(T, out, x), base, view._base is base

    ok(program)


def test_diagonal_errors():
    raises(lambda T: distinct_leaf(T).diagonal(0, 1, 1))
    raises(lambda T: distinct_leaf(T).diagonal(0, 0, 2))


# --- cov and corrcoef: torch's composites (values, grads, weights, errors, warnings) ------------

def _observations(T, shape=(3, 5), dtype=None):
    n = 1
    for s in shape:
        n *= s
    values = (T.arange(n, dtype=T.float64) * 0.71).sin() * 2
    return values.reshape(shape).to(dtype or T.float64).requires_grad_()


def _cov_grads(T, f, x):
    """cov's value and gradient (the gradient's version is the engine's business, checked in
    tests/autograd/test_grad_versions.py)."""
    out = f(x)
    (out * T.linspace(0.5, 1.5, out.numel(), dtype=out.dtype).reshape(out.shape)).sum() \
        .backward()
    return out, val(x.grad)


COV = {
    "plain": lambda T: _cov_grads(T, T.cov, _observations(T)),
    "method": lambda T: _cov_grads(T, lambda x: x.cov(correction=0), _observations(T)),
    "vector": lambda T: _cov_grads(T, T.cov, _observations(T, (6,))),
    "scalar": lambda T: T.cov(T.tensor(2.0)),
    "ints": lambda T: T.cov(T.tensor([[1, 2, 4], [3, 5, 1]])),
    "fweights": lambda T: _cov_grads(T, lambda x: T.cov(x, fweights=T.tensor([1, 2, 0, 3, 1])),
                                     _observations(T)),
    "aweights": lambda T: _cov_grads(T, lambda x: T.cov(x, aweights=T.linspace(
        0.1, 1.0, 5, dtype=T.float64)), _observations(T)),
    "both_weights": lambda T: _cov_grads(T, lambda x: T.cov(
        x, correction=2, fweights=T.tensor([1, 2, 1, 3, 1]),
        aweights=T.linspace(0.1, 1.0, 5, dtype=T.float64)), _observations(T)),
    "one_observation_one_weight": lambda T: (lambda x: (T.cov(x, fweights=T.tensor([2])), x))(
        T.tensor([[1.0], [2.0]])),
    "one_observation_aweights": lambda T: T.cov(T.tensor([[1.0], [2.0]]),
                                                aweights=T.tensor([0.5])),
    "no_freedom": lambda T: T.cov(T.tensor([1.0, 2.0, 3.0]), correction=3),
    "complex": lambda T: T.cov(T.tensor([[1 + 1j, 2 - 1j, 0.5j], [2.0, 1j, -1.0]])),
    "float32": lambda T: T.cov(_observations(T, dtype=T.float32).detach()),
    "corrcoef": lambda T: _cov_grads(T, T.corrcoef, _observations(T)),
    "corrcoef_method_vector": lambda T: _observations(T, (4,)).corrcoef(),
    "corrcoef_complex": lambda T: T.corrcoef(T.tensor([[1 + 1j, 2 - 1j, 0.5j], [2.0, 1j, 3.0]])),
    "three_dims": lambda T: T.cov(T.ones(2, 2, 2)),
    "corrcoef_three_dims": lambda T: T.corrcoef(T.ones(2, 2, 2)),
    "bool": lambda T: T.cov(T.ones(2, 2, dtype=T.bool)),
    "fweights_float": lambda T: T.cov(T.ones(2, 3), fweights=T.ones(3)),
    "fweights_2d": lambda T: T.cov(T.ones(2, 3), fweights=T.ones(1, 3, dtype=T.int64)),
    "fweights_numel": lambda T: T.cov(T.ones(2, 3), fweights=T.ones(2, dtype=T.int64)),
    "fweights_negative": lambda T: T.cov(T.ones(2, 3), fweights=T.tensor([1, -1, 1])),
    "aweights_int": lambda T: T.cov(T.ones(2, 3), aweights=T.ones(3, dtype=T.int64)),
    "aweights_negative": lambda T: T.cov(T.ones(2, 3), aweights=T.tensor([1.0, -1.0, 1.0])),
    "weights_sum_zero": lambda T: T.cov(T.ones(2, 3), fweights=T.zeros(3, dtype=T.int64)),
}


@pytest.mark.parametrize("name", list(COV))
def test_cov_and_corrcoef_match_torch(name):
    same(COV[name])
    assert captured_warnings(COV[name], torch) == captured_warnings(COV[name], jaxgrad)


def test_cov_second_derivatives_match_finite_differences():
    x = _observations(jaxgrad, (2, 4))
    w = jaxgrad.tensor([1, 2, 1, 3])
    assert jaxgrad.autograd.gradgradcheck(lambda t: jaxgrad.cov(t, fweights=w), (x,))
    assert jaxgrad.autograd.gradgradcheck(jaxgrad.corrcoef, (x,))


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
@pytest.mark.parametrize("kw", [{}, {"keepdim": True}, {"dim": (0, 2)},
                                {"dim": (2, 0), "keepdim": True}], ids=str)
def test_matrix_norm_of_singular_values(ord, kw):
    """2, -2 and "nuc" as torch composes them: svdvals of the input with the two dims moved
    last, then amax/amin/sum (and, with keepdim, unsqueezes and the inverse permute)."""

    def program(T):
        A = T.arange(24.0, dtype=T.float64).reshape(2, 3, 4).sin().requires_grad_()
        r = T.linalg.matrix_norm(A, ord, **kw)
        (g,) = T.autograd.grad(r.sum(), A)
        return r, [type(n).__name__ for n, _ in r.grad_fn.next_functions], g

    ok(program)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, float("inf")])
def test_half_precision_vector_norm_rounds_once(dtype, ord):
    """Half precision norms accumulate in float32 and round once (as torch's CPU kernel): a
    bfloat16 sum of squares rounded before its square root lands one ulp off."""

    def program(T):
        values = [[((i * 37 + j * 11) % 23 - 11) * 0.173 for j in range(6)] for i in range(6)]
        x = T.tensor(values, dtype=getattr(T, dtype))
        return (T.linalg.vector_norm(x, ord), T.linalg.vector_norm(x, ord, dim=-1),
                x.norm(), x.norm(dim=0, keepdim=True))

    ok(program, rtol=0)


def test_half_precision_addmm_fuses_beta_times_self():
    """torch's bfloat16 addmm rounds ``alpha * (a @ b)`` to float32 and adds ``beta * self``
    with one rounding: here ``3.4445 * self + product`` sits just above a bfloat16 tie that the
    float32 sum of two rounded terms lands on."""

    def program(T):
        x = T.tensor([[0.77734375, -0.3515625], [0.4921875, 0.58203125]], dtype=T.bfloat16)
        g = T.tensor([[-2.328125, -0.37695312], [-0.37695312, -2.03125]], dtype=T.bfloat16)
        return T.addmm(x, g, x, beta=3.4445), T.addmm(x, g, x, beta=-4.775, alpha=2.0315)

    ok(program, rtol=0)
