"""Indexing writes, differential against torch 2.13: index bounds (``index_put_`` and advanced
indexing name the index's position among the defined indices, walking the broadcast elements in
order), complex fill values, versions of ``t[False] = v``, uint8 masks, ``put``/``put_``."""

from __future__ import annotations

import contextlib
import warnings

import pytest

import jaxgrad
from differential import captured_warnings, ok, raises, same, torch, val

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
