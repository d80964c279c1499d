"""Sorting and searching against torch: sort/topk/argsort (values, indices, ties and NaN, return
types, gradients, errors, random shapes), searchsorted/bucketize and isin. Every case runs on
torch and on jaxgrad (``differential.same``).
"""

from __future__ import annotations

from differential import ok, raises

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


def test_isin():
    ok(lambda T: (T.isin(T.tensor([[1, 2], [3, 4.0]], requires_grad=True), T.tensor([2, 3])),
                  T.isin(T.tensor([1, 2, 3]), 2), T.isin(3, T.tensor([1, 3])),
                  T.isin(T.tensor([1, 2, 3]), T.tensor([2]), invert=True)))
