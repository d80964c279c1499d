"""Reductions and indexing ops: logsumexp, cumprod/cummax/cummin/logcumsumexp and the in-place
cumsum_/cumprod_, median/nanmedian/kthvalue/mode, nansum/nanmean, var_mean/std_mean, aminmax,
count_nonzero, argwhere, masked_select/masked_scatter, take, index_add/index_copy/index_fill/
index_put, scatter_reduce and index_reduce, full reductions' ties and node names. Every case runs
on torch and on jaxgrad (``differential.same``): values, grads (with their versions), grad_fn
graphs, return types, errors.
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

FAST = settings(max_examples=5, deadline=None, database=None)
NAN = float("nan")


def _grads(T, out, leaves):
    """Backward with a non-uniform gradient; the leaves' grads (values, versions)."""
    weight = T.arange(float(out.numel())).reshape(out.shape).to(out.dtype) + 1
    (out * weight).sum().backward()
    return [leaf.grad for leaf in leaves]


def _ties(T, x):
    """``x`` with values rounded towards zero (many ties), still differentiable in ``x``."""
    return x + (x.detach().to(T.int64).to(x.dtype) - x.detach())


def _run(T, f):
    x = distinct_leaf(T)
    s = distinct_leaf(T, (2, 4)) * 1
    out = f(T, x, s)
    outs = list(out) if isinstance(out, tuple) else [out]
    first = outs[0]
    grads = _grads(T, first, [x]) if first.requires_grad else None
    return type(out).__name__, outs, next_functions(first.grad_fn), grads


MASK = [[True, False, True, False], [False, False, True, True], [True, True, False, False]]
IDX = [[0, 3], [2, 2], [1, 0]]

CASES = {
    "logsumexp": lambda T, x, s: T.logsumexp(x, 1),
    "logsumexp_keepdim_dims": lambda T, x, s: x.logsumexp((0, 1), keepdim=True),
    "logsumexp_int": lambda T, x, s: T.logsumexp(T.arange(6).reshape(2, 3), 0),
    "logsumexp_0d": lambda T, x, s: T.logsumexp(x.sum(), 0),
    "cumprod": lambda T, x, s: T.cumprod(x, 1),
    "cumprod_zeros": lambda T, x, s: (x * T.tensor([1.0, 0.0, 1.0, 0.0])).cumprod(-1),
    "cumprod_int": lambda T, x, s: T.cumprod(T.arange(1, 5), 0),
    "cumprod_dtype": lambda T, x, s: T.cumprod(x, 0, dtype=T.float64),
    "cumprod_inplace": lambda T, x, s: (x * 1).cumprod_(0),
    "logcumsumexp": lambda T, x, s: T.logcumsumexp(x, 0),
    "logcumsumexp_method": lambda T, x, s: x.logcumsumexp(-1),
    "cummax": lambda T, x, s: T.cummax(x, 1),
    "cummax_ties": lambda T, x, s: T.cummax(_ties(T, x).detach(), 0),
    "cummax_nan": lambda T, x, s: T.cummax(T.tensor([1.0, NAN, 3.0, NAN, 0.0]), 0),
    "cummin": lambda T, x, s: x.cummin(0),
    "cummin_int": lambda T, x, s: T.cummin(T.tensor([3, 1, 2, 1, 0]), 0),
    "median": lambda T, x, s: T.median(x),
    "median_even_ties": lambda T, x, s: T.median(_ties(T, x)),
    "median_nan": lambda T, x, s: T.median(T.tensor([1.0, NAN, 2.0])),
    "median_empty": lambda T, x, s: T.median(T.tensor([])),
    "median_dim": lambda T, x, s: T.median(x, 1),
    "median_dim_keepdim": lambda T, x, s: x.median(0, keepdim=True),
    "median_dim_nan": lambda T, x, s: T.median(T.tensor([[3.0, NAN, 2.0, NAN, 7.0]]), 1),
    "nanmedian": lambda T, x, s: T.nanmedian(x),
    "nanmedian_nan": lambda T, x, s: T.nanmedian(T.tensor([1.0, NAN, 2.0, 4.0])),
    "nanmedian_all_nan": lambda T, x, s: T.nanmedian(T.tensor([NAN, NAN])),
    # (the index torch gives for a row of NaNs only is its sort's choice: not compared here)
    "nanmedian_dim": lambda T, x, s: T.nanmedian(
        T.tensor([[3.0, NAN, 2.0, 1.0, NAN, 7.0], [NAN, 1.0, NAN, 0.0, 0.5, NAN]]), 1),
    "kthvalue": lambda T, x, s: T.kthvalue(x, 2, 1),
    "kthvalue_keepdim": lambda T, x, s: x.kthvalue(3, 0, True),
    "kthvalue_nan": lambda T, x, s: T.kthvalue(T.tensor([[3.0, NAN, 2.0, 1.0, NAN, 7.0]]), 5),
    "mode": lambda T, x, s: T.mode(T.tensor([[3.0, 1.0, 2.0, 1.0, 3.0], [5, 5, 4, 4, 4]]), 1),
    "mode_grad": lambda T, x, s: T.mode(_ties(T, x), 0),
    "mode_int": lambda T, x, s: T.tensor([2, 1, 2, 1, 1]).mode(),
    "nansum": lambda T, x, s: T.nansum(T.where(x > 0.5, T.tensor(NAN), x)),
    "nansum_dim": lambda T, x, s: T.where(x > 0.5, T.tensor(NAN), x).nansum(1, keepdim=True),
    "nansum_int": lambda T, x, s: T.nansum(T.arange(5), 0),
    "nanmean": lambda T, x, s: T.nanmean(T.where(x > 0.5, T.tensor(NAN), x)),
    "nanmean_dim": lambda T, x, s: T.where(x > 0.5, T.tensor(NAN), x).nanmean(0),
    "var_mean": lambda T, x, s: T.var_mean(x, 1),
    "var_mean_all": lambda T, x, s: T.var_mean(x, correction=0),
    "var_mean_keepdim": lambda T, x, s: T.var_mean(x, [0], keepdim=True),
    "std_mean": lambda T, x, s: T.std_mean(x),
    "std_mean_dim": lambda T, x, s: T.std_mean(x, 0, unbiased=False),
    "aminmax": lambda T, x, s: T.aminmax(x),
    "aminmax_dim": lambda T, x, s: x.aminmax(dim=1),
    "aminmax_keepdim": lambda T, x, s: T.aminmax(x, dim=0, keepdim=True),
    "aminmax_ties": lambda T, x, s: T.aminmax(_ties(T, x), dim=1),
    "count_nonzero": lambda T, x, s: T.count_nonzero(_ties(T, x).detach()),
    "count_nonzero_dim": lambda T, x, s: _ties(T, x).detach().count_nonzero(1),
    "count_nonzero_dims": lambda T, x, s: T.count_nonzero(_ties(T, x).detach(), (0, 1)),
    "argwhere": lambda T, x, s: T.argwhere(_ties(T, x).detach()),
    "masked_select": lambda T, x, s: T.masked_select(x, T.tensor(MASK)),
    "masked_select_broadcast": lambda T, x, s: x.masked_select(T.tensor([True, False, True, True])),
    "masked_select_none": lambda T, x, s: T.masked_select(x, T.zeros(3, 4, dtype=T.bool)),
    "masked_scatter": lambda T, x, s: T.masked_scatter(x, T.tensor(MASK), s),
    "masked_scatter_method": lambda T, x, s: (x * 2).masked_scatter(T.tensor(MASK), x * 3),
    "masked_scatter_inplace": lambda T, x, s: (x * 1).masked_scatter_(T.tensor(MASK), s),
    "take": lambda T, x, s: T.take(x, T.tensor([[0, 5], [11, -1]])),
    "take_method_repeat": lambda T, x, s: x.take(T.tensor([3, 3, 0])),
    "index_add": lambda T, x, s: T.index_add(x, 0, T.tensor([0, 0]), s),
    "index_add_alpha": lambda T, x, s: x.index_add(1, T.tensor([3, 1]), x[:, :2] * 3, alpha=-2),
    "index_add_inplace": lambda T, x, s: (x * 1).index_add_(0, T.tensor([2, 1]), s),
    "index_copy": lambda T, x, s: T.index_copy(x, 0, T.tensor([2, 0]), s),
    "index_copy_inplace": lambda T, x, s: (x * 1).index_copy_(1, T.tensor([1]), x[:, :1] ** 2),
    "index_fill": lambda T, x, s: T.index_fill(x, 1, T.tensor([0, 2]), -1.0),
    "index_fill_tensor": lambda T, x, s: x.index_fill(0, T.tensor([1, 1]), x[0, 0] * 2),
    "index_fill_inplace": lambda T, x, s: (x * 1).index_fill_(0, T.tensor([2]), 3),
    "index_put": lambda T, x, s: T.index_put(x, (T.tensor([0, 2]),), s),
    "index_put_acc": lambda T, x, s: x.index_put((T.tensor([0, 0]),), s, accumulate=True),
    "index_put_pairs": lambda T, x, s: T.index_put(x, (T.tensor([0, 2]), T.tensor([1, 3])),
                                                   s[0, :2]),
    "index_put_inplace": lambda T, x, s: (x * 1).index_put_((T.tensor([1]),), s[:1]),
    "index_put_mask": lambda T, x, s: T.index_put(x, (T.tensor(MASK),), T.tensor(0.0)),
    "scatter_reduce_sum": lambda T, x, s: T.scatter_reduce(x, 1, T.tensor(IDX), x[:, :2] * 3,
                                                           "sum"),
    "scatter_reduce_prod": lambda T, x, s: T.scatter_reduce(x, 1, T.tensor(IDX), x[:, 1:3] * 3,
                                                            "prod"),
    "scatter_reduce_mean": lambda T, x, s: x.scatter_reduce(1, T.tensor(IDX), x[:, 1:3], "mean"),
    "scatter_reduce_amax": lambda T, x, s: T.scatter_reduce(x, 1, T.tensor(IDX), x[:, 2:] * 2,
                                                            "amax"),
    "scatter_reduce_amin_noself": lambda T, x, s: T.scatter_reduce(
        x, 1, T.tensor(IDX), x[:, 2:] * 2, "amin", include_self=False),
    "scatter_reduce_mean_noself": lambda T, x, s: T.scatter_reduce(
        x, 1, T.tensor(IDX), x[:, 1:3], "mean", include_self=False),
    "scatter_reduce_prod_noself": lambda T, x, s: T.scatter_reduce(
        x, 0, T.tensor([[0, 0, 2, 2]]), x[1:2] + 1, "prod", include_self=False),
    "scatter_reduce_sum_noself": lambda T, x, s: T.scatter_reduce(
        x, 0, T.tensor([[0, 0, 2, 2]]), x[1:2] + 1, "sum", include_self=False),
    "scatter_reduce_inplace": lambda T, x, s: (x * 1).scatter_reduce_(
        1, T.tensor(IDX), x[:, :2], "amax"),
    "scatter_reduce_int_mean": lambda T, x, s: T.scatter_reduce(
        T.arange(4), 0, T.tensor([0, 0, 3]), T.tensor([3, 4, 5]), "mean"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_reductions_and_indexing(case):
    ok(lambda T: _run(T, CASES[case]))


ERRORS = {
    "kthvalue_k": lambda T, x: T.kthvalue(x, 5, 1),
    "median_empty_dim": lambda T, x: T.median(T.zeros(2, 0), 1),
    "aminmax_empty": lambda T, x: T.aminmax(T.zeros(0)),
    "nanmean_int": lambda T, x: T.nanmean(T.arange(3)),
    "masked_select_mask_dtype": lambda T, x: T.masked_select(x, T.ones(3, 4, dtype=T.int64)),
    "masked_scatter_mask_dtype": lambda T, x: x.masked_scatter(T.ones(3, 4, dtype=T.int64), x),
    "masked_scatter_small_source": lambda T, x: x.masked_scatter(T.tensor(MASK), T.ones(2)),
    "take_index_dtype": lambda T, x: T.take(x, T.tensor([0], dtype=T.int32)),
    "take_out_of_range": lambda T, x: T.take(x, T.tensor([12])),
    "index_add_dtype": lambda T, x: T.index_add(x, 0, T.tensor([0]), T.ones(1, 4,
                                                                             dtype=T.float64)),
    "index_add_count": lambda T, x: T.index_add(x, 0, T.tensor([0, 1]), T.ones(1, 4)),
    "index_add_2d_index": lambda T, x: T.index_add(x, 0, T.tensor([[0]]), T.ones(1, 4)),
    "index_add_index_dtype": lambda T, x: T.index_add(x, 0, T.tensor([0.0]), T.ones(1, 4)),
    "index_fill_value_dims": lambda T, x: x.index_fill(0, T.tensor([0]), T.ones(2)),
    "index_put_dtype": lambda T, x: T.index_put(x, (T.tensor([0]),), T.ones(4, dtype=T.float64)),
    "scatter_reduce_bad": lambda T, x: T.scatter_reduce(x, 1, T.tensor(IDX), x, "foo"),
    "index_copy_index_dtype": lambda T, x: T.index_copy(x, 0, T.tensor([0.0]), T.ones(1, 4)),
    "index_copy_2d_index": lambda T, x: T.index_copy(x, 0, T.tensor([[0]]), T.ones(1, 4)),
    "index_copy_count": lambda T, x: T.index_copy(x, 0, T.tensor([0, 1]), T.ones(1, 4)),
    "index_copy_dtype": lambda T, x: T.index_copy(x, 0, T.tensor([0]), T.ones(1, 4,
                                                                               dtype=T.float64)),
    "index_copy_out_of_range": lambda T, x: T.index_copy(x, 0, T.tensor([5]), T.ones(1, 4)),
    "index_add_out_of_range": lambda T, x: T.index_add(x, 0, T.tensor([5]), T.ones(1, 4)),
    "index_fill_index_dtype": lambda T, x: T.index_fill(x, 0, T.tensor([0.0]), 1.0),
    "index_fill_2d_index": lambda T, x: T.index_fill(x, 0, T.tensor([[0]]), 1.0),
    "index_fill_out_of_range": lambda T, x: T.index_fill(x, 0, T.tensor([5]), 1.0),
    "scatter_reduce_leaf_inplace": lambda T, x: x.scatter_reduce_(1, T.tensor(IDX), x, "sum"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors(case):
    raises(lambda T: ERRORS[case](T, distinct_leaf(T)))


OUT = {
    "logsumexp": lambda T, x, out: T.logsumexp(x, 1, out=out),
    "cumprod": lambda T, x, out: T.cumprod(x, 1, out=out),
    "nansum": lambda T, x, out: T.nansum(x, 0, out=out),
    "take": lambda T, x, out: T.take(x, T.tensor([1, 2]), out=out),
    "masked_select": lambda T, x, out: T.masked_select(x, x > 0, out=out),
    "index_add": lambda T, x, out: T.index_add(x, 0, T.tensor([1]), x[:1], out=out),
    "scatter_reduce": lambda T, x, out: T.scatter_reduce(x, 1, T.tensor(IDX), x, "amin",
                                                         out=out),
}


@pytest.mark.parametrize("case", list(OUT))
def test_out_variants(case):
    def program(T):
        x = distinct_leaf(T).detach()
        out = T.zeros(0)
        returned = OUT[case](T, x, out)
        refused = same(lambda T2: OUT[case](T2, distinct_leaf(T2), T2.zeros(0)))[0]
        return returned is out, out, type(refused).__name__

    ok(program)


def test_saved_tensors_as_torch():
    """What each node saves (``_saved_*``), so in-place changes and graph freeing behave."""

    def program(T):
        x = distinct_leaf(T)
        s = distinct_leaf(T, (2, 4)) * 1
        nodes = {
            "logsumexp": T.logsumexp(x, 1).grad_fn,
            "cumprod": T.cumprod(x, 1).grad_fn,
            "masked_select": T.masked_select(x, T.tensor(MASK)).grad_fn,
            "index_add": T.index_add(x, 0, T.tensor([0, 2]), s, alpha=2).grad_fn,
            "take": T.take(x, T.tensor([1])).grad_fn,
            "cummax": T.cummax(x, 0)[0].grad_fn,
            "median": T.median(x).grad_fn,
            "kthvalue": T.kthvalue(x, 1, 1)[0].grad_fn,
        }
        names = ("self", "result", "mask", "index", "source", "indices", "dim", "keepdim", "alpha")
        return {k: {n: getattr(fn, f"_saved_{n}", "absent") for n in names}
                for k, fn in nodes.items()}

    ok(program)


def test_inplace_change_of_a_saved_input_is_caught():
    def program(T):
        x = distinct_leaf(T) * 1
        y = T.cumprod(x, 1)
        x.mul_(2)
        y.sum().backward()

    raises(program)


@FAST
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=st.integers(0, 2**16),
       data=st.data())
def test_random_shapes(shape, seed, data):
    """Random shapes and dims: values, indices, grads and versions as torch."""
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    values = np.random.RandomState(seed).permutation(int(np.prod(shape))).reshape(shape) / 3.0
    ops = {
        "logsumexp": lambda T, x: T.logsumexp(x, dim),
        "cumprod": lambda T, x: T.cumprod(x, dim),
        "logcumsumexp": lambda T, x: T.logcumsumexp(x, dim),
        "cummax": lambda T, x: T.cummax(x, dim),
        "median": lambda T, x: T.median(x, dim),
        "kthvalue": lambda T, x: T.kthvalue(x, 1 + seed % shape[dim], dim),
        "var_mean": lambda T, x: T.var_mean(x, dim),
        "aminmax": lambda T, x: T.aminmax(x, dim=dim),
    }
    name = data.draw(st.sampled_from(sorted(ops)))

    def program(T):
        x = T.tensor(values, dtype=T.float64, requires_grad=True)
        out = ops[name](T, x)
        first = out[0] if isinstance(out, tuple) else out
        first.backward(T.ones_like(first) + T.arange(float(first.numel())).reshape(
            first.shape).to(T.float64))
        return list(out) if isinstance(out, tuple) else [out], x.grad

    ok(program)


def test_jaxgrad_module_has_the_ops():
    names = ["logsumexp", "cumprod", "logcumsumexp", "cummax", "cummin", "median", "nanmedian", "kthvalue", "mode", "nansum", "nanmean", "var_mean", "std_mean", "aminmax", "count_nonzero", "argwhere", "masked_select", "masked_scatter", "take", "index_add", "index_copy", "index_fill", "index_put", "index_put_", "scatter_reduce"]
    assert [n for n in names if not hasattr(jaxgrad, n)] == []
    methods = ["cumprod_", "masked_scatter_", "index_add_", "index_copy_", "index_fill_", "scatter_reduce_", "index_put_"]
    assert [n for n in methods if not hasattr(jaxgrad.Tensor, n)] == []


# --- scatter_reduce and index_reduce --------------------------------------------------------------

@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_modes(reduce, include_self):
    def program(T):
        x = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=T.float64, requires_grad=True)
        src = T.tensor([[2.0, 2.0, 3.0, 1.0], [4.0, 1.0, 6.0, 3.0]], dtype=T.float64,
                       requires_grad=True)
        idx = T.tensor([[0, 1, 0, 2], [1, 1, 2, 0]])
        y = x.scatter_reduce(1, idx, src, reduce, include_self=include_self)
        (y * T.arange(6.0, dtype=T.float64).reshape(2, 3)).sum().backward()
        z = x.detach().clone().scatter_reduce_(1, idx, src.detach(), reduce,
                                               include_self=include_self)
        return y, x.grad, src.grad, z

    ok(program)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_values_and_grads(reduce, include_self):
    def program(T):
        x = T.tensor([[1.0, -2.0], [3.0, 0.5], [2.0, 2.0]], dtype=T.float64,
                     requires_grad=True)
        src = T.tensor([[2.0, 3.0], [4.0, 2.0], [6.0, -7.0], [3.0, 1.0]], dtype=T.float64,
                       requires_grad=True)
        out = x.index_reduce(0, T.tensor([0, 2, 0, 0]), src, reduce, include_self=include_self)
        (out * T.arange(1.0, 7.0, dtype=T.float64).reshape(3, 2)).sum().backward()
        return out, val(x.grad), val(src.grad)
    ok(program)


def test_index_reduce_ties_share_gradient():
    def program(T):
        x = T.ones(2, 2, dtype=T.float64, requires_grad=True)
        src = T.ones(2, 2, dtype=T.float64, requires_grad=True)
        out = T.index_reduce(x, 1, T.tensor([1, 1]), src, "amax")
        out.sum().backward()
        return out, val(x.grad), val(src.grad)
    ok(program)


def test_index_reduce_inplace_and_integral_mean():
    ok(lambda T: (T.tensor([1, 2, 3]).index_reduce(0, T.tensor([0, 0]), T.tensor([4, 5]),
                                                    "mean"),
                  (lambda t: (t.index_reduce_(0, T.tensor([1]), T.tensor([3.0]), "prod"),
                              t._version))(T.ones(2))))


@pytest.mark.parametrize("bad", range(6))
def test_index_reduce_errors(bad):
    def program(T):
        x, s, i = T.ones(3, 2), T.ones(3, 2), T.tensor([0, 2, 0])
        return [lambda: x.index_reduce(0, i, s, "sum"),
                lambda: x.index_reduce(0, i.float(), s, "mean"),
                lambda: x.index_reduce(0, i[:2], s, "mean"),
                lambda: x.index_reduce(0, i, s.double(), "mean"),
                lambda: x.index_reduce(0, i[None], s, "mean"),
                lambda: x.index_reduce(0, T.tensor([0, 5, 0]), s, "mean")][bad]()
    raises(program)


def test_index_reduce_beta_warning():
    import warnings

    def messages(T):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            T.ones(2).index_reduce(0, T.tensor([0]), T.ones(1), "amax")
        return [normalise(str(w.message)) for w in caught]
    # a once-per-process warning: compare the text of the first one either library gave
    torch_seen, jaxgrad_seen = messages(torch), messages(jaxgrad)
    if torch_seen and jaxgrad_seen:
        assert torch_seen == jaxgrad_seen


# the double backward torch refuses: "prod" with repeated zeros

@pytest.mark.parametrize("op", ["scatter_reduce", "index_reduce"])
@pytest.mark.parametrize("src_values", [[0.0, 0.0], [0.0, 2.0], [3.0, 2.0]])
def test_prod_gradient_of_repeated_zeros_is_not_differentiable_again(op, src_values):
    def program(T):
        inp = T.tensor([1.0], dtype=T.float64, requires_grad=True)
        src = T.tensor(src_values, dtype=T.float64, requires_grad=True)
        out = getattr(T, op)(inp, 0, T.tensor([0, 0]), src, "prod")
        _, grad_src = T.autograd.grad(out.sum(), (inp, src), create_graph=True)
        first = T.autograd.grad(getattr(T, op)(inp, 0, T.tensor([0, 0]), src, "prod").sum(),
                                src)
        second = attempt(lambda: [val(g) for g in T.autograd.grad(grad_src.sum(), src)])
        return grad_src.grad_fn.name() == "torch::autograd::Error", first, second
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # index_reduce's beta warning
        ok(program)


# --- full reductions: ties and node names ---------------------------------------------------------

@pytest.mark.parametrize("name", ["min", "max", "median", "nanmedian"])
@pytest.mark.parametrize("values", [[1.0, 0.0, 1.0, 0.0, 1.0, 0.0], [float("nan")] * 3,
                                    [1.0, float("nan"), float("nan")]])
def test_full_reductions_share_gradient_among_ties(name, values):
    def program(T):
        x = T.tensor(values, requires_grad=True)
        out = getattr(T, name)(x)
        out.backward()
        return out, val(x.grad)
    ok(program)


@pytest.mark.parametrize("call", range(8))
def test_sum_mean_overload_node_names(call):
    def program(T):
        x = T.ones(2, 3, requires_grad=True)
        out = [lambda: x.sum(), lambda: x.sum(dim=None), lambda: T.sum(x, None),
               lambda: x.sum(None, True), lambda: x.sum(dim=[]), lambda: x.mean(dim=None),
               lambda: x.mean(), lambda: x.sum(dtype=T.float64)][call]()
        out.sum().backward()
        return out, val(x.grad)
    ok(program)


# --- cumsum_, cumprod_ ----------------------------------------------------------------------------

def _cumulative(op, make, *args, **kw):
    def program(T):
        t = make(T)
        return getattr(t, op)(*args, **kw), t._version
    return program


def _float(T):
    return T.tensor([1., 2., 3.])


CUMULATIVE = {
    "basic": (_float, 0),
    "negative dim": (lambda T: T.tensor([[1., 2.], [3., 4.]]), -1),
    "dim out of range": (_float, 1),
    "0-dim": (lambda T: T.tensor(2.), 0),
    "int32": (lambda T: T.tensor([1, 2, 3], dtype=T.int32), 0),
    "int64": (lambda T: T.tensor([1, 2, 3]), 0),
    "bool": (lambda T: T.tensor([True, True]), 0),
    "dtype other": (_float, 0, {"dtype": "float64"}),
    "dtype same": (_float, 0, {"dtype": "float32"}),
    "int with float dtype": (lambda T: T.tensor([1, 2, 3]), 0, {"dtype": "float32"}),
    "bool with dtype": (lambda T: T.tensor([True]), 0, {"dtype": "int64"}),
    "dim out of range and dtype": (_float, 5, {"dtype": "float64"}),
    "leaf requiring grad": (lambda T: T.tensor([1., 2.], requires_grad=True), 0,
                            {"dtype": "float64"}),
    "dim keyword": (_float, None, {"dim": 0}),
    "dim name": (lambda T: T.ones(2, 3), "a"),
}


@pytest.mark.parametrize("op", ["cumsum_", "cumprod_"])
@pytest.mark.parametrize("name", CUMULATIVE)
def test_cumulative_inplace(op, name):
    make, dim, *kw = CUMULATIVE[name]
    kw = dict(kw[0]) if kw else {}
    args = () if dim is None else (dim,)

    def program(T):
        if "dtype" in kw:
            kw["dtype"] = getattr(T, str(kw["dtype"]).split(".")[-1])
        return _cumulative(op, make, *args, **kw)(T)
    same(program)


@pytest.mark.parametrize("op", ["cumsum_", "cumprod_"])
def test_cumulative_inplace_autograd(op):
    def program(T):
        x = T.tensor([1., 2., 3.], requires_grad=True)
        y = x * 1
        z = getattr(y, op)(0)
        graph = (z is y, y._version, type(z.grad_fn).__name__,
                 [type(n).__name__ for n, _ in z.grad_fn.next_functions])
        (z * T.tensor([1., 2., 3.])).sum().backward()
        return graph, z, val(x.grad)
    ok(program)


@pytest.mark.parametrize("op", ["cumsum_", "cumprod_"])
def test_cumulative_inplace_on_a_view(op):
    def program(T):
        x = T.tensor([1., 2., 3.], requires_grad=True)
        base = x.clone()
        view = base[1:]
        getattr(view, op)(0)
        base.sum().backward()
        return base, view, base._version, val(x.grad)
    ok(program)


@pytest.mark.parametrize("op", ["cumsum_", "cumprod_"])
def test_cumulative_inplace_is_a_method_only(op):
    same(lambda T: hasattr(T, op))


STD_EDGE_INPUTS = {
    "constant": [1.0, 1.0, 1.0],
    "constant_rows": [[1.0, 2.0], [3.0, 3.0]],
    "one_element": [2.0],
    "varied": [1.0, 2.0, 4.0],
}


@pytest.mark.parametrize("name", sorted(STD_EDGE_INPUTS))
@pytest.mark.parametrize("form", ["std", "std_dim", "std_correction0", "std_mean", "var"])
def test_std_and_var_gradients_where_the_std_is_zero(name, form):
    """torch's std_backward fills 0 where the std is 0 (a constant slice), not NaN; a single
    element with correction 1 stays NaN, as in torch."""
    def program(T):
        x = T.tensor(STD_EDGE_INPUTS[name], dtype=T.float64, requires_grad=True)
        dim = x.ndim - 1
        if form == "std":
            out = x.std()
        elif form == "std_dim":
            out = x.std(dim, keepdim=True).sum()
        elif form == "std_correction0":
            out = T.std(x, dim, correction=0).sum()
        elif form == "std_mean":
            s, m = T.std_mean(x, dim)
            out = (s * 2 + m).sum()
        else:
            out = x.var(dim).sum()
        (g,) = T.autograd.grad(out, x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x, allow_unused=True)
        # (the double-backward graph's node names differ: see README's differences)
        return val(out), g.detach().clone(), None if gg is None else gg.detach().clone()
    ok(program)
