"""Sorting and searching against torch: sort/topk/argsort (values, indices, ties and NaN, return
types, gradients, errors, random shapes), searchsorted/bucketize and isin. Every case runs on
torch and on jaxgrad (``differential.same``).
"""

from __future__ import annotations

import numpy as np
import pytest

from differential import distinct_leaf, ok, raises, run_on_distinct_leaf, val

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FAST = settings(max_examples=6, deadline=None, database=None)

# --- searchsorted, bucketize, isin ----------------------------------------------------------------

def test_searchsorted_and_bucketize():
    def program(T):
        s = T.tensor([[1.0, 3, 5], [2, 4, 6]], requires_grad=True)
        v = T.tensor([[3.0, 6], [1, 7]], requires_grad=True)
        return (T.searchsorted(s, v), T.searchsorted(s[0], v, right=True),
                T.searchsorted(s[0], 3), T.searchsorted(s[0], v, out_int32=True),
                T.searchsorted(s[0], v, side="right"),
                T.searchsorted(T.tensor([5.0, 1, 3]), T.tensor([2.0, 4]),
                               sorter=T.tensor([1, 2, 0])),
                T.bucketize(v, s[0]), T.bucketize(T.tensor([1.0, 3, 7]), s[0], right=True))
    ok(program)


def test_searchsorted_side_errors():
    raises(lambda T: T.searchsorted(T.tensor([1.0]), T.tensor([1.0]), side="middle"))
    raises(lambda T: T.searchsorted(T.tensor([1.0]), T.tensor([1.0]), right=True, side="left"))


# --- sort, topk, argsort --------------------------------------------------------------------------

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
    ok(lambda T: run_on_distinct_leaf(T, SORTING[case]))


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


def test_isin():
    ok(lambda T: (T.isin(T.tensor([[1, 2], [3, 4.0]], requires_grad=True), T.tensor([2, 3])),
                  T.isin(T.tensor([1, 2, 3]), 2), T.isin(3, T.tensor([1, 3])),
                  T.isin(T.tensor([1, 2, 3]), T.tensor([2]), invert=True)))
