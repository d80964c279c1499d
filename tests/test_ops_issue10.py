"""The ops real programs need (issue 10): gather/scatter/index_select/take_along_dim, sort/topk/
argsort, addmm/baddbmm/addbmm, einsum, the norms and ``jaxgrad.linalg``, numpy's keyword names
(``axis=``, ``keepdims=``) and indexing with Python sequences. Every case runs on torch and on
jaxgrad (``differential.same``): values, grads, grad_fn graphs, versions, errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from differential import attempt, distinct_leaf, next_functions, normalise, ok, raises, same, val

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import jaxgrad  # noqa: E402

FAST = settings(max_examples=6, deadline=None, database=None)


def _backward(T, out, *leaves):
    """Backward with a non-uniform gradient; the leaves' grads without their versions (torch's
    index/gather/sort backwards fill zeros in place, so torch's ``.grad`` starts at version 1:
    jaxgrad's rows cannot say that, see the README's list of differences)."""
    weight = T.arange(float(out.numel())).reshape(out.shape).to(out.dtype) + 1
    (out * weight).sum().backward()
    return [val(leaf.grad) for leaf in leaves]


def _run(T, f):
    x = distinct_leaf(T)
    out = f(T, x)
    outs = list(out) if isinstance(out, tuple) else [out]
    grads = _backward(T, outs[0], x) if outs[0].requires_grad else None
    return outs, next_functions(outs[0].grad_fn), grads


# --- gather / scatter / index_select / take_along_dim -----------------------------------------

IDX = [[0, 3], [2, 2], [1, 0]]

GATHER_SCATTER = {
    "gather": lambda T, x: T.gather(x, 1, T.tensor(IDX)),
    "gather_method_dim0": lambda T, x: x.gather(0, T.tensor([[2, 0, 1, 1]])),
    "gather_smaller_index": lambda T, x: T.gather(x, 1, T.tensor([[1], [3]])),
    "gather_int32": lambda T, x: T.gather(x, -1, T.tensor(IDX, dtype=T.int32)),
    "gather_empty": lambda T, x: T.gather(x, 1, T.zeros(0, 2, dtype=T.int64)),
    "gather_0d": lambda T, x: T.gather(x.sum(), 0, T.tensor([0, 0])),
    "scatter_src": lambda T, x: T.scatter(x, 1, T.tensor([[0, 3], [2, 1], [1, 0]]), x[:, 2:] * 3),
    "scatter_value": lambda T, x: T.scatter(x, 1, T.tensor(IDX), 2.5),
    "scatter_value_kw": lambda T, x: x.scatter(1, T.tensor(IDX), value=-1.0),
    "scatter_add": lambda T, x: T.scatter_add(x, 1, T.tensor(IDX), x[:, :2] * 3),
    "scatter_add_method": lambda T, x: (x * 2).scatter_add(0, T.tensor([[0, 0, 2, 2]]), x[:1]),
    "scatter_inplace": lambda T, x: (x * 1).scatter_(1, T.tensor(IDX), x[:, 1:3] ** 2),
    "scatter_inplace_value": lambda T, x: (x * 1).scatter_(0, T.tensor([[1, 2]]), 0.0),
    "scatter_add_inplace": lambda T, x: (x * 1).scatter_add_(1, T.tensor(IDX), x[:, :2]),
    "scatter_reduce_add": lambda T, x: T.scatter(x, 1, T.tensor(IDX), 2.0, reduce="add")
    .detach(),
    "scatter_reduce_multiply": lambda T, x: (x * 1).scatter_(1, T.tensor(IDX), x[:, :2],
                                                              reduce="multiply").detach(),
    "index_select": lambda T, x: T.index_select(x, 1, T.tensor([3, 0, 0])),
    "index_select_method_dim0": lambda T, x: x.index_select(0, T.tensor([2, 1])),
    "index_select_0d_index": lambda T, x: x.index_select(-1, T.tensor(2)),
    "index_select_empty": lambda T, x: x.index_select(1, T.tensor([], dtype=T.int64)),
    "take_along_dim": lambda T, x: T.take_along_dim(x, T.tensor([[0], [2], [1]]), 1),
    "take_along_dim_broadcast": lambda T, x: T.take_along_dim(x, T.tensor([[0, 3]]), dim=1),
    "take_along_dim_argmax": lambda T, x: x.take_along_dim(x.argmax(0, keepdim=True), 0),
    "take_along_dim_flat": lambda T, x: T.take_along_dim(x, T.tensor([1, 11, 5])),
}


@pytest.mark.parametrize("case", list(GATHER_SCATTER))
def test_gather_scatter_family(case):
    ok(lambda T: _run(T, GATHER_SCATTER[case]))


GATHER_SCATTER_ERRORS = {
    "gather_dim": lambda T, x: T.gather(x, 2, T.tensor(IDX)),
    "gather_index_dtype": lambda T, x: T.gather(x, 1, T.tensor(IDX, dtype=T.int16)),
    "gather_float_index": lambda T, x: T.gather(x, 1, T.tensor(IDX, dtype=T.float32)),
    "gather_ndim": lambda T, x: T.gather(x, 1, T.tensor([0, 1])),
    "gather_size": lambda T, x: T.gather(x, 1, T.zeros(4, 1, dtype=T.int64)),
    "gather_out_of_range": lambda T, x: T.gather(x, 1, T.tensor(IDX) + 2),
    "gather_negative": lambda T, x: T.gather(x, 1, -T.ones(3, 1, dtype=T.int64)),
    "gather_not_a_tensor": lambda T, x: T.gather(x, 1, IDX),
    "scatter_dtype": lambda T, x: T.scatter(x, 1, T.tensor(IDX), T.ones(3, 2, dtype=T.float64)),
    "scatter_index_dtype": lambda T, x: T.scatter(x, 1, T.tensor(IDX, dtype=T.float32), 1.0),
    "scatter_ndim": lambda T, x: T.scatter(x, 1, T.tensor([0, 1]), 1.0),
    "scatter_src_ndim": lambda T, x: T.scatter(x, 1, T.tensor(IDX), T.ones(3)),
    "scatter_src_small": lambda T, x: T.scatter(x, 1, T.tensor(IDX), T.ones(3, 1)),
    "scatter_self_small": lambda T, x: T.scatter(x, 1, T.zeros(4, 1, dtype=T.int64), 1.0),
    "scatter_out_of_range": lambda T, x: T.scatter(x, 1, T.tensor(IDX) + 2, 1.0),
    "scatter_bad_reduce": lambda T, x: T.scatter(x, 1, T.tensor(IDX), 1.0, reduce="mean"),
    "scatter_reduce_backward": lambda T, x: T.scatter(
        x, 1, T.tensor(IDX), 2.0, reduce="multiply").sum().backward(),
    "scatter_reduce_inplace_backward": lambda T, x: (x * 1).scatter_(
        1, T.tensor(IDX), x[:, :2], reduce="add").sum().backward(),
    "scatter_src_larger_backward": lambda T, x: T.scatter(
        x * 2, 0, T.tensor([[2, 0, 1]]), x[1:] ** 2).sum().backward(),
    "scatter_add_src_larger_backward": lambda T, x: T.scatter_add(
        x, 1, T.tensor([[2], [0]]), x * 2).sum().backward(),
    "scatter_0d_tensor_value": lambda T, x: T.scatter(x, 1, T.tensor(IDX), T.tensor(5.0)),
    "scatter_inplace_leaf": lambda T, x: x.scatter_(1, T.tensor(IDX), 1.0),
    "scatter_add_dim": lambda T, x: T.scatter_add(x, 3, T.tensor(IDX), x),
    "scatter_add_out_of_range": lambda T, x: T.scatter_add(x, 0, T.tensor([[3]]), x),
    "index_select_2d_index": lambda T, x: T.index_select(x, 1, T.tensor([[0, 1]])),
    "index_select_dtype": lambda T, x: T.index_select(x, 1, T.tensor([0.0])),
    "index_select_out_of_range_dim0": lambda T, x: T.index_select(x, 0, T.tensor([0, 3])),
    "index_select_out_of_range_dim1": lambda T, x: T.index_select(x, 1, T.tensor([0, 4])),
    "index_select_scalar_many": lambda T, x: T.index_select(x.sum(), 0, T.tensor([0, 0])),
    "take_along_dim_ndim": lambda T, x: T.take_along_dim(x, T.tensor([0]), 1),
    "take_along_dim_dtype": lambda T, x: T.take_along_dim(x, T.tensor([[0]], dtype=T.int32), 1),
    "take_along_dim_broadcast": lambda T, x: T.take_along_dim(x, T.tensor([[0], [1]]), 1),
    "take_along_dim_noncontiguous": lambda T, x: T.take_along_dim(x.t(), T.tensor([1])),
}


@pytest.mark.parametrize("case", list(GATHER_SCATTER_ERRORS))
def test_gather_scatter_errors(case):
    def program(T):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return GATHER_SCATTER_ERRORS[case](T, distinct_leaf(T))

    raises(program)


def test_scatter_saves_what_torch_saves():
    """An in-place change of the saved index makes backward fail as in torch; ``src`` is not
    saved by scatter (its gradient only needs the index)."""

    def program(T):
        x, src = distinct_leaf(T), distinct_leaf(T, (3, 2))
        index = T.tensor([[0, 1], [2, 3], [1, 0]])
        out = T.scatter(x * 1, 1, index, src * 2)
        src.data.mul_(0)
        names = [n for n in ("_saved_dim", "_saved_index", "_saved_src", "_saved_self")
                 if hasattr(out.grad_fn, n)]
        index.add_(0)
        return names, attempt(lambda: out.sum().backward())

    same(program)


_REDUCE_WARNING_SCRIPT = """
import json, warnings
import {lib} as T
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(2):
        T.scatter(T.zeros(3, 4), 1, T.tensor([[0], [2], [1]]), T.ones(3, 1), reduce="add")
        T.zeros(3, 4).scatter_(1, T.tensor([[0], [2], [1]]), 2.0, reduce="multiply")
print(json.dumps([(w.category.__name__, w.filename, str(w.message)) for w in caught]))
"""


def test_scatter_with_tensor_src_and_reduce_warns_once_as_torch():
    """torch's TORCH_WARN_ONCE about ``reduce=`` with a tensor ``src``: once per process (so in
    fresh processes), pointing at the caller; a number ``value`` does not warn."""
    import json
    import subprocess
    import sys

    def warnings_of(lib):
        done = subprocess.run([sys.executable, "-c", _REDUCE_WARNING_SCRIPT.format(lib=lib)],
                              capture_output=True, text=True, check=True)
        caught = json.loads(done.stdout.strip().splitlines()[-1])
        return [(cls, where, normalise(message)) for cls, where, message in caught]

    torch_warned = warnings_of("torch")
    assert len(torch_warned) == 1
    assert warnings_of("jaxgrad") == torch_warned


def test_gather_scatter_out_variants():
    def program(T):
        x, out = distinct_leaf(T).detach(), T.empty(3, 2)
        T.gather(x, 1, T.tensor(IDX), out=out)
        out2 = T.zeros(3, 4)
        T.scatter_add(x, 1, T.tensor(IDX), x, out=out2)
        out3 = T.zeros(3, 2)
        T.index_select(x, 1, T.tensor([0, 0]), out=out3)
        return out, out2, out3, attempt(lambda: T.gather(distinct_leaf(T), 1, T.tensor(IDX), out=out))

    ok(program)


@FAST
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=st.integers(0, 2**31 - 1),
       data=st.data())
def test_gather_and_scatter_add_random_shapes(shape, seed, data):
    rs = np.random.RandomState(seed)
    dim = data.draw(st.integers(0, len(shape) - 1))
    index_shape = [rs.randint(1, s + 1) if d != dim else rs.randint(1, 5)
                   for d, s in enumerate(shape)]
    index = rs.randint(0, shape[dim], size=index_shape)
    values = rs.randn(*shape)
    src = rs.randn(*index_shape)

    def program(T):
        x = T.tensor(values, requires_grad=True)
        s = T.tensor(src, requires_grad=True)
        g = T.gather(x, dim, T.tensor(index))
        a = T.scatter_add(x, dim, T.tensor(index), s)
        ((g * g).sum() + (a * a).sum()).backward()
        return g, a, val(x.grad), val(s.grad)

    ok(program)


# --- sort / topk / argsort ---------------------------------------------------------------------

SORTING = {
    "sort": lambda T, x: T.sort(x),
    "sort_descending_dim0": lambda T, x: x.sort(0, descending=True),
    "sort_stable": lambda T, x: T.sort(x, stable=True, dim=0),
    "sort_stable_false": lambda T, x: x.sort(stable=False, descending=True),
    "sort_0d": lambda T, x: T.sort(x.sum()),
    "topk": lambda T, x: T.topk(x, 2),
    "topk_smallest_dim0": lambda T, x: x.topk(2, 0, largest=False),
    "topk_keywords": lambda T, x: T.topk(x, k=3, dim=-1, largest=True, sorted=True),
    "topk_zero": lambda T, x: T.topk(x, 0),
    "topk_0d": lambda T, x: T.topk(x.sum(), 1),
    "argsort": lambda T, x: T.argsort(x),
    "argsort_descending": lambda T, x: x.argsort(0, descending=True),
    "argsort_stable": lambda T, x: T.argsort(x, stable=True, dim=0),
}


@pytest.mark.parametrize("case", list(SORTING))
def test_sorting(case):
    ok(lambda T: _run(T, SORTING[case]))


def test_sort_ties_nan_and_ints_as_torch():
    def program(T):
        y = T.tensor([1.0, float("nan"), 3.0, 1.0, 2.0, -0.0, 0.0])
        z = T.tensor([1, 2, 1, 2, 1])
        return (list(T.sort(y)), list(T.sort(y, descending=True)), list(T.sort(z)),
                list(T.sort(z, descending=True)), list(T.sort(T.tensor([True, False, True]))),
                list(T.topk(y, 2)), list(T.topk(y[:5], 2, largest=False)), T.argsort(z))

    ok(program)


def test_sort_and_topk_return_types():
    def program(T):
        x = distinct_leaf(T)
        s, t = T.sort(x), T.topk(x, 1)
        return (type(s).__name__, type(t).__name__, repr(s).split("(")[0],
                repr(t).split("(")[0], s.values, s.indices, t.values, t.indices)

    ok(program)


SORTING_ERRORS = {
    "topk_k_too_large": lambda T, x: T.topk(x, 5),
    "topk_k_negative": lambda T, x: T.topk(x, -1),
    "topk_dim": lambda T, x: T.topk(x, 1, 2),
    "topk_bool": lambda T, x: T.topk(x > 0, 1),
    "topk_0d_k": lambda T, x: T.topk(x.sum(), 2),
    "sort_dim": lambda T, x: T.sort(x, 2),
    "argsort_dim": lambda T, x: T.argsort(x, -3),
}


@pytest.mark.parametrize("case", list(SORTING_ERRORS))
def test_sorting_errors(case):
    raises(lambda T: SORTING_ERRORS[case](T, distinct_leaf(T)))


@FAST
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), seed=st.integers(0, 2**31 - 1),
       data=st.data())
def test_sort_and_topk_random_shapes(shape, seed, data):
    values = np.random.RandomState(seed).permutation(int(np.prod(shape))).reshape(shape) * 0.5
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(0, shape[dim]))
    descending = data.draw(st.booleans())

    def program(T):
        x = T.tensor(values, requires_grad=True)
        s = T.sort(x, dim, descending)
        t = T.topk(x, k, dim, largest=not descending)
        ((s.values ** 2).sum() + (t.values ** 3).sum()).backward()
        return list(s), list(t), T.argsort(x, dim, descending), val(x.grad)

    ok(program)


# --- addmm / baddbmm / addbmm ---------------------------------------------------------------------

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
        return out, next_functions(out.grad_fn), _backward(T, out, *leaves)

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


# --- norms: Tensor.norm / jaxgrad.norm and jaxgrad.linalg ------------------------------------------

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
    ok(lambda T: _run(T, NORMS[case]))


def test_norms_on_batches():
    def program(T):
        b = distinct_leaf(T, (2, 3, 4))
        out = T.linalg.matrix_norm(b, 1, dim=(0, 2)) + T.linalg.matrix_norm(b, INF, dim=(2, 0))
        return out, next_functions(out.grad_fn), _backward(T, out, b)

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


# --- numpy's keyword names: axis=, keepdims=, x= ----------------------------------------------------

ALIASES = {
    "sum_axis": lambda T, x: x.sum(axis=1),
    "sum_axis_keepdims": lambda T, x: T.sum(x, axis=(0, 1), keepdims=True),
    "sum_x": lambda T, x: T.sum(x=x),
    "mean_keepdims": lambda T, x: x.mean(dim=0, keepdims=True),
    "max_axis": lambda T, x: T.max(x, axis=1, keepdims=True),
    "min_axis": lambda T, x: x.min(axis=0),
    "amax_axis": lambda T, x: T.amax(x, axis=1),
    "amin_keepdims": lambda T, x: x.amin(1, keepdims=True),
    "std_axis": lambda T, x: x.std(axis=1, keepdims=True),
    "var_axis": lambda T, x: T.var(x, axis=0),
    "prod_axis": lambda T, x: x.prod(axis=1, keepdims=True),
    "argmax_axis": lambda T, x: T.argmax(x, axis=1, keepdims=True),
    "argmin_axis": lambda T, x: x.argmin(axis=0),
    "all_axis": lambda T, x: T.all(x > 0, axis=1),
    "any_axis": lambda T, x: (x > 0).any(axis=0, keepdims=True),
    "cumsum_axis": lambda T, x: T.cumsum(x, axis=1),
    "softmax_axis": lambda T, x: T.softmax(x, axis=1),
    "log_softmax_axis": lambda T, x: x.log_softmax(axis=0),
    "squeeze_axis": lambda T, x: x[None].squeeze(axis=0),
    "unsqueeze_axis": lambda T, x: T.unsqueeze(x, axis=0),
    "cat_axis": lambda T, x: T.cat([x, x], axis=1),
    "stack_axis": lambda T, x: T.stack([x, x], axis=-1),
    "unbind_axis": lambda T, x: T.unbind(x, axis=1)[2],
    "chunk_axis": lambda T, x: x.chunk(2, axis=1)[1],
    "select_axis": lambda T, x: x.select(axis=1, index=2),
    "gather_axis": lambda T, x: x.gather(axis=1, index=T.tensor(IDX)),
    "index_select_axis": lambda T, x: T.index_select(x, axis=0, index=T.tensor([2])),
    "topk_axis": lambda T, x: x.topk(2, axis=0),
    "sort_axis": lambda T, x: T.sort(x, axis=0),
    "argsort_axis": lambda T, x: x.argsort(axis=0),
    "add_x2": lambda T, x: T.add(x, x2=x),
    "mul_x1": lambda T, x: T.mul(x1=x, other=x),
    "axis_and_dim": lambda T, x: x.sum(dim=1, axis=1),
    "keepdim_and_keepdims": lambda T, x: x.sum(1, keepdim=True, keepdims=True),
}


@pytest.mark.parametrize("case", list(ALIASES))
def test_numpy_keyword_names_where_torch_takes_them(case):
    same(lambda T: _run(T, ALIASES[case]))


NO_ALIASES = {
    "norm_axis": lambda T, x: x.norm(axis=1),
    "split_axis": lambda T, x: x.split(2, axis=1),
    "softmax_keepdims": lambda T, x: x.softmax(dim=1, keepdims=True),
    "cumsum_keepdims": lambda T, x: T.cumsum(x, 1, keepdims=True),
    "transpose_axis": lambda T, x: x.transpose(axis=0),
    "flatten_axis": lambda T, x: x.flatten(axis=0),
}


@pytest.mark.parametrize("case", list(NO_ALIASES))
def test_no_numpy_keyword_names_where_torch_takes_none(case):
    """torch's Python-level functions (norm, split) and parameters not named dim/keepdim take
    no numpy names: a TypeError either way (torch's message lists its overloads)."""
    for T in (torch, jaxgrad):
        with pytest.raises(TypeError):
            NO_ALIASES[case](T, distinct_leaf(T))


# --- indexing with Python sequences ---------------------------------------------------------------

INDEXING = {
    "range": lambda T, t: t[range(2)],
    "range_step_pair": lambda T, t: t[range(0, 3, 2), range(2)],
    "list": lambda T, t: t[[0, 2]],
    "neg_list": lambda T, t: t[[-1, 0]],
    "two_lists": lambda T, t: t[[0, 1], [1, 2]],
    "tuple_of_ints": lambda T, t: t[(0, 1)],
    "tuple_of_lists": lambda T, t: t[([0, 1], [1, 2])],
    "nested_list_is_a_tuple": lambda T, t: t[[[0, 1], [2, 0]]],
    "list_of_tuples": lambda T, t: t[[(0, 1), (1, 2)]],
    "list_with_slice": lambda T, t: t[[0, slice(None)]],
    "list_with_none": lambda T, t: t[[None, 1]],
    "list_with_ellipsis": lambda T, t: t[[Ellipsis, 1]],
    "list_with_tensor": lambda T, t: t[[T.tensor(1), 2]],
    "list_in_tuple_with_tensor": lambda T, t: t[[T.tensor(1), 2], 0],
    "bool_list": lambda T, t: t[[True, False, True]],
    "bool_list_dim1": lambda T, t: t[:, [True, False, True, False]],
    "bools_and_ints": lambda T, t: t[[True, 0]],
    "float_list": lambda T, t: t[[0.0, 1.0]],
    "empty_list": lambda T, t: t[[]],
    "numpy_array": lambda T, t: t[np.array([0, 2])],
    "numpy_2d_array": lambda T, t: t[np.array([[0, 1], [2, 0]])],
    "slice_then_list": lambda T, t: t[1:, [0, 3]],
    "none_then_list": lambda T, t: t[None, [0, 2]],
    "ellipsis_then_list": lambda T, t: t[..., [0, 2]],
    "list_none_list": lambda T, t: t[[0, 1], None, [1, 2]],
    "list_then_int": lambda T, t: t[[0, 2], 1],
    "int_then_list": lambda T, t: t[1, [0, 2]],
    "broadcast_lists": lambda T, t: t[[[0], [2]], [[1, 3]]],
    "long_list": lambda T, t: t[[i % 3 for i in range(40)]],
    "out_of_range": lambda T, t: t[[0, 5]],
    "bool_mask_shape": lambda T, t: t[[True, False]],
}


@pytest.mark.parametrize("case", list(INDEXING))
def test_indexing_with_sequences(case):
    def program(T):
        t = T.arange(12.0).reshape(3, 4).requires_grad_()
        out = INDEXING[case](T, t)
        return out, next_functions(out.grad_fn), _backward(T, out, t)

    same(program)


SETITEM = {
    "list": lambda T, t: t.__setitem__([0, 2], T.tensor(1.5)),
    "range": lambda T, t: t.__setitem__(range(2), -1.0),
    "two_lists": lambda T, t: t.__setitem__(([0, 1], [1, 2]), T.tensor([7.0, 8.0])),
    "nested_list": lambda T, t: t.__setitem__([[0, 1], [2, 0]], 3.0),
    "list_with_slice": lambda T, t: t.__setitem__([1, slice(1, 3)], T.tensor([5.0, 6.0])),
    "bool_list": lambda T, t: t.__setitem__([True, False, True], T.ones(4)),
    "slice_and_list": lambda T, t: t.__setitem__((slice(None), [0, 3]), T.zeros(3, 2)),
}


@pytest.mark.parametrize("case", list(SETITEM))
def test_setitem_with_sequences(case):
    def program(T):
        leaf = T.arange(12.0).reshape(3, 4).requires_grad_()
        t = leaf * 1
        SETITEM[case](T, t)
        return t, next_functions(t.grad_fn), _backward(T, t, leaf)

    ok(program)


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
        return out, next_functions(out.grad_fn), _backward(T, out, *leaves)

    ok(program)


def test_einsum_operands_as_a_list():
    def program(T):
        a, b = distinct_leaf(T, (2, 3)), distinct_leaf(T, (3, 4))
        out = T.einsum("ij,jk", [a, b])
        return out, next_functions(out.grad_fn), _backward(T, out, a, b)

    ok(program)


def test_einsum_three_operands_values_and_grads():
    """Three or more operands: torch contracts them in opt_einsum's order when it is installed,
    jaxgrad from left to right, so only values and gradients are compared."""

    def program(T):
        a, b, c = distinct_leaf(T, (2, 3), T.float64), distinct_leaf(T, (3, 4), T.float64), distinct_leaf(T, (4, 2), T.float64)
        out = T.einsum("ij,jk,kl->il", a, b, c) + T.einsum("i,i,i->", a[0], a[1], b[:, 0])
        return out.detach(), _backward(T, out, a, b, c)

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


# --- diagonal (einsum's repeated labels) ------------------------------------------------------------

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
        return out, next_functions(out.grad_fn), _backward(T, out, x), base, view._base is base

    ok(program)


def test_diagonal_errors():
    raises(lambda T: distinct_leaf(T).diagonal(0, 1, 1))
    raises(lambda T: distinct_leaf(T).diagonal(0, 0, 2))


@pytest.mark.parametrize("index", [0, -1, 2, slice(None), slice(0, 1), (0,), None, Ellipsis])
def test_indexing_a_zero_dim_tensor(index):
    """torch's fast paths: a bare int or slice on a 0-dim tensor has its own errors."""

    def program(T):
        def assign():
            t = T.tensor(1.0)
            t[index] = 2.0
            return t

        return attempt(lambda: T.tensor(1.0)[index]), attempt(assign)

    ok(program)
