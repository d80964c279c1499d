"""Indexing against torch 2.13: index bounds (``index_put_`` and advanced indexing name the
index's position among the defined indices, walking the broadcast elements in order), complex
fill values, versions of ``t[False] = v``, uint8 masks, ``put``/``put_``; gather, scatter,
index_select and take_along_dim; reading and writing with Python sequences (lists, ranges,
tuples, numpy arrays) and indexing a 0-dim tensor. Every case runs on torch and on jaxgrad
(``differential.same``): values, grads, grad_fn graphs, versions, errors and warnings."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import jaxgrad
from differential import (
    attempt,
    captured_warnings,
    distinct_leaf,
    next_functions,
    normalise,
    ok,
    raises,
    run_on_distinct_leaf,
    same,
    torch,
    val,
    weighted_grads,
)

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# --- index bounds ---------------------------------------------------------------------------------

BOUNDS = {
    "put 5": lambda T: T.ones(3).index_put_((T.tensor([5]),), T.ones(1)),
    "put -4": lambda T: T.ones(3).index_put_((T.tensor([-4]),), T.ones(1)),
    "put accumulate": lambda T: T.ones(3).index_put_((T.tensor([5]),), T.ones(1),
                                                     accumulate=True),
    "put out of place": lambda T: T.index_put(T.ones(3), (T.tensor([5]),), T.ones(1)),
    "put 0-d index": lambda T: T.ones(3).index_put_((T.tensor(5),), T.tensor(1.)),
    "put int32": lambda T: T.ones(3).index_put_((T.tensor([5], dtype=T.int32),), T.tensor(1.)),
    "put first bad element": lambda T: T.ones(3).index_put_((T.tensor([-9, 5]),),
                                                            T.tensor([1., 2.])),
    "put second index": lambda T: T.ones(2, 3, 4).index_put_((T.tensor([1]), T.tensor([5])),
                                                             T.tensor(1.)),
    "put after mask": lambda T: T.ones(2, 3, 4).index_put_(
        (T.tensor([True, False]), T.tensor([5])), T.tensor(1.)),
    "put 0-dim": lambda T: T.ones(()).index_put_((T.tensor([0]),), T.tensor(2.)),
    "set 5": lambda T: T.ones(3).__setitem__(T.tensor([5]), 1.),
    "set -4": lambda T: T.ones(3).__setitem__(T.tensor([-4]), 1.),
    "set after slice": lambda T: T.ones(2, 3, 4).__setitem__((slice(None), T.tensor([5])), 1.),
    "set after a skipped dim": lambda T: T.ones(2, 3, 4).__setitem__(
        (T.tensor([0]), slice(None), T.tensor([5])), 1.),
    "set element order": lambda T: T.ones(2, 3).__setitem__(
        (T.tensor([0, 0]), T.tensor([9, 1])), 1.),
    "get after slices": lambda T: T.ones(2, 3, 4)[:, :, T.tensor([5])],
    "get after None": lambda T: T.ones(3)[None, T.tensor([5])],
    "get after True": lambda T: T.ones(3)[True, T.tensor([5])],
    "get broadcast": lambda T: T.ones(2, 3)[T.tensor([[0], [1]]), T.tensor([5, 1])],
    "get 0-dim": lambda T: T.ones(())[T.tensor([0])],
    "get too many": lambda T: T.ones(3)[T.tensor([0]), T.tensor([0])],
}


@pytest.mark.parametrize("name", BOUNDS)
def test_index_out_of_bounds(name):
    raises(BOUNDS[name])


# --- index_fill_ with a complex value -------------------------------------------------------------

def _filled_version(T):
    t = T.ones(3)
    with contextlib.suppress(RuntimeError):
        t.index_fill_(0, T.tensor([0]), 1j)
    return t


COMPLEX_FILL = {
    "python complex": lambda T: T.ones(3).index_fill_(0, T.tensor([0]), 1j),
    "zero imaginary": lambda T: T.ones(3).index_fill_(0, T.tensor([0]), 0j),
    "complex tensor": lambda T: T.ones(3).index_fill_(0, T.tensor([0]), T.tensor(1j)),
    "out of place": lambda T: T.index_fill(T.ones(3), 0, T.tensor([0]), 1j),
    "int64 input": lambda T: T.ones(3, dtype=T.int64).index_fill_(0, T.tensor([0]), 1j),
    "before the dim check": lambda T: T.ones(3).index_fill_(5, T.tensor([0]), 1j),
    "after the index dtype check": lambda T: T.ones(3).index_fill_(0, T.tensor([0.]), 1j),
}


@pytest.mark.parametrize("name", COMPLEX_FILL)
def test_index_fill_complex_value(name):
    raises(COMPLEX_FILL[name])


def test_index_fill_complex_value_changes_nothing():
    ok(_filled_version)
    ok(lambda T: T.ones(3, dtype=T.complex64).index_fill_(0, T.tensor([0]), 1j))


# --- the version of t[False] = v and other empty assignments --------------------------------------

def _assigned(index, value=5.0, shape=(3,), requires_grad=False):
    def program(T):
        t = T.ones(shape, requires_grad=bool(requires_grad))
        t = t.clone() if requires_grad == "clone" else t
        t[index(T) if callable(index) else index] = value(T) if callable(value) else value
        return t, t._version
    return program


SETITEM_VERSIONS = {
    "False": _assigned(False),
    "False, tensor value": _assigned(False, lambda T: T.tensor(5.)),
    "False, value of any shape": _assigned(False, lambda T: T.ones(7)),
    "False, 2-d": _assigned(False, shape=(2, 3)),
    "False, 0-dim": _assigned(False, shape=()),
    "False into a leaf that requires grad": _assigned(False, requires_grad=True),
    "False into a clone": _assigned(False, lambda T: T.tensor(2., requires_grad=True),
                                    requires_grad="clone"),
    "(False,)": _assigned((False,)),
    "(0, False)": _assigned((0, False)),
    "(..., False)": _assigned((..., False)),
    "tensor(False)": _assigned(lambda T: T.tensor(False)),
    "True": _assigned(True),
    "(True,)": _assigned((True,)),
    "True, 0-dim": _assigned(True, shape=()),
    "None": _assigned(None),
    "(None, None)": _assigned((None, None)),
    "None, tensor value": _assigned(None, lambda T: T.tensor([1., 2., 3.])),
    "None, 0-dim": _assigned(None, shape=()),
    "empty index": _assigned(lambda T: T.tensor([], dtype=T.long)),
    "empty mask": _assigned(lambda T: T.zeros(3, dtype=T.bool)),
}


@pytest.mark.parametrize("name", SETITEM_VERSIONS)
def test_setitem_version(name):
    ok(SETITEM_VERSIONS[name])


def test_setitem_false_still_checks_the_value():
    raises(_assigned(False, "a"))


# --- uint8 masks ----------------------------------------------------------------------------------

def _mask(T):
    return T.tensor([1, 0, 1], dtype=T.uint8)


def _set(index, value, shape=(3,)):
    def program(T):
        t = T.ones(shape)
        t[index(T)] = value(T) if callable(value) else value
        return t, t._version
    return program


UINT8 = {
    "get": lambda T: T.ones(3)[_mask(T)],
    "get 2-d mask": lambda T: T.ones(2, 3)[T.tensor([[1, 0, 1], [0, 0, 1]], dtype=T.uint8)],
    "get after a slice": lambda T: T.ones(2, 3)[:, _mask(T)],
    "get with another index": lambda T: T.arange(6.).view(3, 2)[_mask(T), T.tensor([0])],
    "get mask of the wrong shape": lambda T: T.ones(4)[_mask(T)],
    "get values other than 1": lambda T: T.arange(3.)[T.tensor([2, 0, 1], dtype=T.uint8)],
    "get requires grad": lambda T: T.arange(3., requires_grad=True)[_mask(T)],
    "set number": _set(_mask, 2.),
    "set 0-d tensor": _set(_mask, lambda T: T.tensor(2.)),
    "set one-element tensor": _set(_mask, lambda T: T.tensor([2.])),
    "set two values": _set(_mask, lambda T: T.tensor([2., 3.])),
    "set after a slice": _set(lambda T: (slice(None), _mask(T)), 2., (2, 3)),
    "set with another index": _set(lambda T: (_mask(T), T.tensor([0])), 2., (3, 2)),
    "index_put_ 0-d value": lambda T: T.ones(3).index_put_((_mask(T),), T.tensor(2.)),
    "index_put_ two values": lambda T: T.ones(3).index_put_((_mask(T),), T.tensor([2., 3.])),
    "index_put_ accumulate": lambda T: T.ones(3).index_put_((_mask(T),), T.tensor(2.),
                                                            accumulate=True),
    "index_put": lambda T: T.index_put(T.ones(3), (_mask(T),), T.tensor(2.)),
    "index_put requires grad": lambda T: T.index_put(T.ones(3, requires_grad=True),
                                                     (_mask(T),), T.tensor(2.)),
}


@pytest.mark.parametrize("name", UINT8)
def test_uint8_mask(name):
    same(UINT8[name])
    assert captured_warnings(UINT8[name], torch) == captured_warnings(UINT8[name], jaxgrad)


def test_uint8_mask_gradient():
    def program(T):
        x = T.arange(3., requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x[_mask(T)].pow(2).sum().backward()
        return x.grad
    ok(program)


# --- put, put_ ------------------------------------------------------------------------------------

def _grid(T):
    return T.arange(6.).view(2, 3)


PUT = {
    "function": lambda T: T.put(_grid(T), T.tensor([0, 5]), T.tensor([10., 20.])),
    "method, 2-d index": lambda T: _grid(T).put(T.tensor([[0], [-1]]), T.tensor([10., 20.])),
    "in place, accumulate": lambda T: _grid(T).put_(T.tensor([1, 1]), T.tensor([10., 20.]),
                                                    accumulate=True),
    "accumulate by position": lambda T: _grid(T).put_(T.tensor([1, 1]), T.tensor([10., 20.]),
                                                      True),
    "source of another shape": lambda T: _grid(T).put_(T.tensor([1, 2]),
                                                       T.tensor([[10.], [20.]])),
    "0-dim": lambda T: T.tensor(1.).put_(T.tensor(0), T.tensor(5.)),
    "empty": lambda T: _grid(T).put_(T.tensor([], dtype=T.long), T.tensor([])),
    "int64": lambda T: T.arange(4).put_(T.tensor([3]), T.tensor([9])),
    "out of range": lambda T: _grid(T).put_(T.tensor([6]), T.tensor([10.])),
    "negative out of range": lambda T: _grid(T).put_(T.tensor([-7]), T.tensor([10.])),
    "float index": lambda T: _grid(T).put_(T.tensor([1.]), T.tensor([10.])),
    "int32 index": lambda T: _grid(T).put_(T.tensor([1], dtype=T.int32), T.tensor([10.])),
    "numel": lambda T: _grid(T).put_(T.tensor([1]), T.tensor([10., 2.])),
    "dtype": lambda T: _grid(T).put_(T.tensor([1]), T.tensor([10.], dtype=T.float64)),
    "dtype before numel": lambda T: _grid(T).put_(T.tensor([1]),
                                                  T.tensor([10., 2.], dtype=T.float64)),
    "index dtype before numel": lambda T: _grid(T).put_(T.tensor([1.]), T.tensor([10., 2.])),
    "numel before range": lambda T: _grid(T).put_(T.tensor([9]), T.tensor([10., 2.])),
    "leaf requiring grad": lambda T: T.ones(3, requires_grad=True).put_(T.tensor([0]),
                                                                       T.tensor([1.])),
    "leaf check before the arguments'": lambda T: T.ones(3, requires_grad=True).put_(
        T.tensor([9]), T.tensor([1., 2.])),
    "expanded": lambda T: T.ones(()).expand(3).put_(T.tensor([0]), T.tensor([1.])),
    "no torch.put_": lambda T: hasattr(T, "put_"),
}


@pytest.mark.parametrize("name", PUT)
def test_put(name):
    same(PUT[name])


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
def test_put_autograd(accumulate, inplace):
    def program(T):
        a = T.tensor([1., 2., 3., 4.], requires_grad=True)
        s = T.tensor([5., 6.], requires_grad=True)
        b = a * 1
        put = b.put_ if inplace else b.put
        y = put(T.tensor([1, -3]), s, accumulate=accumulate)
        (y * T.tensor([1., 2., 3., 4.])).sum().backward()
        return (y, b._version, [type(n).__name__ for n, _ in y.grad_fn.next_functions],
                val(a.grad), val(s.grad))
    ok(program)


def test_put_gradcheck():
    def program(T):
        a = T.tensor([[1., 2.], [3., 4.]], dtype=T.float64, requires_grad=True)
        s = T.tensor([5., 6., 7.], dtype=T.float64, requires_grad=True)
        index = T.tensor([0, 3, 0])
        return T.autograd.gradcheck(lambda a, s: T.put(a, index, s, accumulate=True), (a, s))
    ok(program)


# --- gather, scatter, index_select, take_along_dim ------------------------------------------------

FAST = settings(max_examples=6, deadline=None, database=None)


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
    ok(lambda T: run_on_distinct_leaf(T, GATHER_SCATTER[case]))


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
        return out, next_functions(out.grad_fn), weighted_grads(T, out, t)

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
        return t, next_functions(t.grad_fn), weighted_grads(T, t, leaf)

    ok(program)


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
