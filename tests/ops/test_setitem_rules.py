"""setitem / index_put argument rules against torch 2.13: the value's dtype (advanced indices
need the destination's, except a one-element value at a lone mask, which torch hands to
masked_fill_; basic indices copy with casting), the value's shape ("shape mismatch"), None in
``index_put``'s indices (torch's parser refuses it), 0-d bool and uint8 indices, index shapes
that do not broadcast, and an audit of getitem/setitem with 0-d int tensors, out-of-range
negative indices, bool lists, None/Ellipsis around advanced indices (the transposed result of
non-adjacent ones) and empty index tensors. Every case runs on torch and on jaxgrad
(``differential.same``): values, grads, grad_fn graphs, versions, errors and warnings."""

from __future__ import annotations

import math

import pytest

import jaxgrad
from differential import (
    captured_warnings,
    cases,
    next_functions,
    ok,
    raises,
    same,
    torch,
    weighted_grads,
)


def grid(T):
    return T.arange(12.0).reshape(3, 4)


# --- the value's dtype --------------------------------------------------------------------------

INDICES = {
    "int tensor": lambda T: T.tensor([0, 2]),
    "list": lambda T: [0, 2],
    "mask": lambda T: T.tensor([True, False, True]),
    "mask 2-d": lambda T: T.arange(12).reshape(3, 4) % 5 == 0,
    "bool list": lambda T: [True, False, True],
    "ellipsis mask": lambda T: (Ellipsis, T.tensor([True, False, True, False])),
    "None mask": lambda T: (None, T.tensor([True, False, True])),
    "mask and int": lambda T: (T.tensor([True, False, True]), 1),
    "slice and tensor": lambda T: (slice(None), T.tensor([0, 3])),
    "0-d bool": lambda T: T.tensor(True),
    "0-d False": lambda T: T.tensor(False),
    "(True,)": lambda T: (True,),
    "True": lambda T: True,
    "0-d int": lambda T: T.tensor(1),
    "slices": lambda T: (slice(0, 2), 1),
    "full slice": lambda T: slice(None),
    "int": lambda T: 1,
}

VALUES = {
    "float64 [2]": lambda T: T.tensor([1.0, 2.0], dtype=T.float64),
    "float64 [4]": lambda T: T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64),
    "float64 [1]": lambda T: T.tensor([5.0], dtype=T.float64),
    "float64 0-d": lambda T: T.tensor(5.0, dtype=T.float64),
    "int64 0-d": lambda T: T.tensor(7),
    "int64 [4]": lambda T: T.tensor([1, 2, 3, 4]),
    "float": lambda T: 3.5,
    "int": lambda T: 3,
    "float32 [4]": lambda T: T.tensor([1.0, 2.0, 3.0, 4.0]),
}


@pytest.mark.parametrize("value", cases(VALUES))
@pytest.mark.parametrize("index", cases(INDICES))
def test_setitem_value_dtype(index, value):
    def prog(T):
        x = grid(T)
        x[INDICES[index](T)] = VALUES[value](T)
        return x

    same(prog)


PUT_INDICES = {
    "int": lambda T: (T.tensor([0, 2]),),
    "two ints": lambda T: (T.tensor([0, 2]), T.tensor([1, 3])),
    "mask": lambda T: (T.tensor([True, False, True]),),
    "mask 2-d": lambda T: (T.arange(12).reshape(3, 4) % 5 == 0,),
    "mask and int": lambda T: (T.tensor([True, False, True]), T.tensor([1, 3])),
    "list of one int": lambda T: [T.tensor([1])],
}

PUT_VALUES = {
    "float64 [1]": lambda T: T.tensor([5.0], dtype=T.float64),
    "float64 0-d": lambda T: T.tensor(5.0, dtype=T.float64),
    "int64 0-d": lambda T: T.tensor(7),
    "float64 [4]": lambda T: T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64),
    "float32 [4]": lambda T: T.tensor([1.0, 2.0, 3.0, 4.0]),
    "float32 [3]": lambda T: T.tensor([1.0, 2.0, 3.0]),
    "float64 [3]": lambda T: T.tensor([1.0, 2.0, 3.0], dtype=T.float64),
}


@pytest.mark.parametrize("form", ["index_put_", "index_put"])
@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("value", cases(PUT_VALUES))
@pytest.mark.parametrize("index", cases(PUT_INDICES))
def test_index_put_value_dtype_and_shape(index, value, accumulate, form):
    def prog(T):
        x = grid(T)
        if form == "index_put_":
            out = x.index_put_(PUT_INDICES[index](T), PUT_VALUES[value](T), accumulate)
        else:
            out = T.index_put(x, PUT_INDICES[index](T), PUT_VALUES[value](T), accumulate)
        return x, out

    same(prog)


def test_masked_fill_form_casts_and_differentiates():
    """A one-element float64 value at a lone mask of a float32 tensor: masked_fill_'s cast;
    the value's gradient comes back as float64 (first and second derivatives)."""

    def prog(T):
        x = T.arange(12.0, requires_grad=True).reshape(3, 4)
        v = T.tensor([2.0], dtype=T.float64, requires_grad=True)
        y = x * 1
        y[T.tensor([True, False, True])] = v * v
        out = (y * T.arange(12.0).reshape(3, 4)).sum()
        gx, gv = T.autograd.grad(out, (x, v), create_graph=True)
        (ggv,) = T.autograd.grad(gv.sum(), (v,))
        return y, next_functions(y.grad_fn), gx, gv, ggv

    ok(prog)


# --- None in index_put's indices: torch's parser refuses it -----------------------------------

NONE_INDICES = {
    "(None, mask)": lambda T: (None, T.tensor([True, False, True, False])),
    "(None, int)": lambda T: (None, T.tensor([0, 1])),
    "(int, None)": lambda T: (T.tensor([0, 1]), None),
    "[None, int]": lambda T: [None, T.tensor([0, 1])],
    "(None,)": lambda T: (None,),
    "(int, 1)": lambda T: (T.tensor([0, 1]), 1),
}


@pytest.mark.parametrize("form", ["method", "function", "method in place", "keywords"])
@pytest.mark.parametrize("index", cases(NONE_INDICES))
def test_index_put_refuses_none_indices(index, form):
    def prog(T):
        x, indices, v = grid(T), NONE_INDICES[index](T), T.tensor(1.0)
        if form == "method":
            return x.index_put(indices, v)
        if form == "function":
            return T.index_put_(x, indices, v)
        if form == "keywords":
            return x.index_put_(indices=indices, values=v)
        return x.index_put_(indices, v)

    raises(prog)


# --- 0-d bool and uint8 indices -----------------------------------------------------------------

ZERO_DIM_PUTS = {
    "True, 0-d value": lambda T: ((T.tensor(True),), T.tensor(5.0)),
    "False, 0-d value": lambda T: ((T.tensor(False),), T.tensor(5.0)),
    "True, [1] value": lambda T: ((T.tensor(True),), T.tensor([5.0])),
    "True, [[[1]]] value": lambda T: ((T.tensor(True),), T.tensor([[[5.0]]])),
    "True, float64 value": lambda T: ((T.tensor(True),), T.tensor(5.0, dtype=T.float64)),
    "True, int value": lambda T: ((T.tensor(True),), T.tensor(7)),
    "True, [1, 3, 4] value": lambda T: ((T.tensor(True),), T.ones(1, 3, 4)),
    "True, float64 [4] value": lambda T: ((T.tensor(True),), T.ones(4, dtype=T.float64)),
    "True, [1, 1, 1, 1] float64 value": lambda T: (
        (T.tensor(True),),
        T.tensor([[[[5.0]]]], dtype=T.float64),
    ),
    "mask, [1, 1, 1, 1] value": lambda T: ((T.tensor([True, False, True]),), T.ones(1, 1, 1, 1)),
    "uint8 1, 0-d value": lambda T: ((T.tensor(1, dtype=T.uint8),), T.tensor(5.0)),
    "True then int": lambda T: ((T.tensor(True), T.tensor([0, 1])), T.tensor(5.0)),
    "int then False": lambda T: ((T.tensor([0, 1]), T.tensor(False)), T.tensor(5.0)),
}


@pytest.mark.parametrize("form", ["index_put_", "index_put"])
@pytest.mark.parametrize("name", cases(ZERO_DIM_PUTS))
def test_index_put_zero_dim_bool_index(name, form):
    def prog(T):
        x = grid(T)
        indices, v = ZERO_DIM_PUTS[name](T)
        out = x.index_put_(indices, v) if form == "index_put_" else T.index_put(x, indices, v)
        return x, out

    same(prog)


@pytest.mark.parametrize("index", ["True", "False", "uint8 1", "uint8 0", "uint8 2", "(True, 1)"])
def test_zero_dim_bool_setitem_and_getitem(index):
    def prog(T):
        item = {
            "True": T.tensor(True),
            "False": T.tensor(False),
            "uint8 1": T.tensor(1, dtype=T.uint8),
            "uint8 0": T.tensor(0, dtype=T.uint8),
            "uint8 2": T.tensor(2, dtype=T.uint8),
            "(True, 1)": (T.tensor(True), 1),
        }[index]
        x = T.arange(12.0, dtype=T.float64, requires_grad=True).reshape(3, 4)
        v = T.tensor(2.0, dtype=T.float64, requires_grad=True)
        read = x[item]
        y = x * 1
        y[item] = v * v
        out = (y * grid(T).double()).sum() + (read * read).sum()
        gx, gv = T.autograd.grad(out, (x, v), create_graph=True)
        (ggv,) = T.autograd.grad(gv, (v,))
        return read, y, next_functions(y.grad_fn), gx, gv, ggv

    ok(prog)


def test_zero_dim_uint8_getitem_does_not_warn():
    def prog(T):
        x = grid(T)
        x[T.tensor(1, dtype=T.uint8)] = 5.0
        return x[T.tensor(1, dtype=T.uint8)]

    assert captured_warnings(prog, jaxgrad) == captured_warnings(prog, torch)


# --- audit: getitem / setitem of the index kinds, with grads --------------------------------

AUDIT = {
    "0-d int": lambda T: T.tensor(1),
    "0-d int negative": lambda T: T.tensor(-1),
    "0-d int out of range": lambda T: T.tensor(2),
    "0-d int negative out of range": lambda T: T.tensor(-3),
    "0-d int32 and int64": lambda T: (T.tensor(1, dtype=T.int32), T.tensor(-2)),
    "0-d uint8": lambda T: T.tensor(1, dtype=T.uint8),
    "int negative out of range": lambda T: -3,
    "int out of range at dim 1": lambda T: (0, 3),
    "int negative out of range at dim 2": lambda T: (0, 0, -5),
    "list negative out of range": lambda T: [0, -3],
    "tensor negative out of range": lambda T: (slice(None), T.tensor([-4])),
    "int32 negative": lambda T: T.tensor([-1, 0], dtype=T.int32),
    "bool list": lambda T: [True, False],
    "bool list at dim 1": lambda T: (slice(None), [True, False, True]),
    "bool list of the wrong length": lambda T: [True, False, True],
    "bool and int lists": lambda T: ([True, False], [0, 2]),
    "None, tensor": lambda T: (None, T.tensor([0, 1])),
    "tensor, None, tensor": lambda T: (T.tensor([0, 1]), None, T.tensor([1, 2])),
    "tensor, slice, tensor": lambda T: (T.tensor([0, 1]), slice(None), T.tensor([1, 2])),
    "slice, tensor, tensor": lambda T: (slice(None), T.tensor([0, 1]), T.tensor([1, 2])),
    "tensor, int": lambda T: (T.tensor([0, 1]), 1),
    "tensor, slice, int": lambda T: (T.tensor([0, 1]), slice(None), 2),
    "int, slice, tensor": lambda T: (1, slice(None), T.tensor([0, 3])),
    "tensor, ..., tensor": lambda T: (T.tensor([1]), Ellipsis, T.tensor([0, 3])),
    "..., 2-d tensor": lambda T: (Ellipsis, T.tensor([[0, 3]])),
    "..., None, tensor": lambda T: (Ellipsis, None, T.tensor([0, 3])),
    "tensor, None, ...": lambda T: (T.tensor([0, 1]), None, Ellipsis),
    "mask, None, tensor": lambda T: (T.tensor([True, False]), None, T.tensor([0, 2])),
    "2-d mask, tensor": lambda T: (
        T.tensor([[True, False, True], [False, True, False]]),
        T.tensor([0, 2, 3]),
    ),
    "mask, slice, tensor": lambda T: (T.tensor([True, True]), slice(None), T.tensor([0, 2])),
    "0-d bool, tensor": lambda T: (T.tensor(True), T.tensor([0, 1])),
    "tensor, 0-d False": lambda T: (T.tensor([0, 1]), T.tensor(False)),
    "shapes that do not broadcast": lambda T: (T.tensor([0, 1]), T.tensor([0, 1, 2])),
    "empty int64": lambda T: T.tensor([], dtype=T.int64),
    "empty int64 at dim 1": lambda T: (slice(None), T.tensor([], dtype=T.int64)),
    "empty int64 (0, 2)": lambda T: T.zeros(0, 2, dtype=T.int64),
    "empty list": lambda T: [],
    "empty float": lambda T: T.tensor([]),
    "empty and a tensor": lambda T: (T.tensor([], dtype=T.int64), T.tensor([0])),
    "all-False mask": lambda T: T.zeros(2, dtype=T.bool),
}


def leaf(T):
    return (T.arange(24.0, dtype=T.float64) / 3 - 2).reshape(2, 3, 4).requires_grad_()


@pytest.mark.parametrize("index", cases(AUDIT))
def test_getitem_audit(index):
    def prog(T):
        x = leaf(T)
        y = x[AUDIT[index](T)]
        return y, next_functions(y.grad_fn), weighted_grads(T, y, x) if y.numel() else None

    same(prog)


@pytest.mark.parametrize("value", ["full", "scalar"])
@pytest.mark.parametrize("index", cases(AUDIT))
def test_setitem_audit(index, value):
    def prog(T):
        x = leaf(T)
        y = x * 1
        idx = AUDIT[index](T)
        shape = tuple(y[idx].shape)
        if value == "full":
            v = T.arange(float(math.prod(shape)), dtype=T.float64).reshape(shape) + 1
        else:
            v = T.tensor(7.0, dtype=T.float64)
        v.requires_grad_()
        y[idx] = v * 1
        return y, next_functions(y.grad_fn), weighted_grads(T, y, x, v)

    same(prog)
