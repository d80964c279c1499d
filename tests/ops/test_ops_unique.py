"""unique, unique_consecutive and torch's native forms behind them (``_unique``, ``_unique2``,
``_VF.unique_dim``, ``_VF.unique_consecutive``): values, inverse indices, counts, node names,
which outputs require grad, torch's errors (test_autograd.py's test_integer_outputs). Every case
runs on torch and on jaxgrad (``differential.same``).
"""

from __future__ import annotations

import itertools

import pytest

from differential import attempt, ok, raises

torch = pytest.importorskip("torch")

NAN = float("nan")
FLAGS = list(itertools.product([False, True], repeat=3))


def _flat(T):
    return T.tensor([[3.0, 1.0, 3.0], [2.0, 1.0, 0.0]], requires_grad=True)


def _rows(T):
    return T.tensor([[1.0, 2.0], [0.0, 5.0], [1.0, 2.0], [1.0, 1.0]], requires_grad=True)


@pytest.mark.parametrize("sort,inverse,counts", FLAGS)
def test_unique_flat(sort, inverse, counts):
    ok(lambda T: T.unique(_flat(T), sorted=sort, return_inverse=inverse, return_counts=counts))


@pytest.mark.parametrize("sort,inverse,counts", FLAGS)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unique_dim(sort, inverse, counts, dim):
    ok(lambda T: T.unique(_rows(T), sorted=sort, return_inverse=inverse, return_counts=counts,
                          dim=dim))


@pytest.mark.parametrize("inverse,counts", [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_unique_consecutive(inverse, counts, dim):
    ok(lambda T: T.unique_consecutive(
        T.tensor([[1, 1], [1, 1], [2, 3], [1, 1]]), return_inverse=inverse,
        return_counts=counts, dim=dim))
    ok(lambda T: _rows(T).unique_consecutive(return_inverse=inverse, return_counts=counts,
                                             dim=dim))


@pytest.mark.parametrize("sort,inverse,counts", FLAGS)
def test_native_forms_fill_unrequested_outputs_with_empty_tensors(sort, inverse, counts):
    ok(lambda T: [T._unique(_flat(T), sorted=sort, return_inverse=inverse),
                  T._unique2(_flat(T), sorted=sort, return_inverse=inverse,
                             return_counts=counts),
                  T._VF.unique_dim(_rows(T), 0, sorted=sort, return_inverse=inverse,
                                   return_counts=counts),
                  T._VF.unique_consecutive(_rows(T), return_inverse=inverse,
                                           return_counts=counts)])


def test_method_forms():
    ok(lambda T: [_flat(T).unique(), _flat(T).unique(return_inverse=True),
                  _rows(T).unique(dim=0, return_counts=True), _flat(T).unique_consecutive()])


@pytest.mark.parametrize("values", [
    [NAN, 1.0, NAN, 0.0], [True, False, True], [5, 3, 9, 3, 1, 5, 7, 2, 2, 8, 0, 4], 3.0, []])
def test_unique_of_special_values(values):
    ok(lambda T: T.unique(T.tensor(values), return_inverse=True, return_counts=True))
    ok(lambda T: T.unique_consecutive(T.tensor(values), return_inverse=True,
                                      return_counts=True))


@pytest.mark.parametrize("shape,dim", [((0, 3), 0), ((0, 3), 1), ((2, 0), 0), ((), 0), ((2, 3), 2)])
def test_unique_dim_of_empty_or_scalar(shape, dim):
    def program(T):
        x = T.zeros(shape)
        return [attempt(lambda: T.unique(x, dim=dim, return_inverse=True, return_counts=True)),
                attempt(lambda: T.unique_consecutive(x, dim=dim, return_inverse=True,
                                                     return_counts=True))]
    ok(program)


@pytest.mark.parametrize("call", [
    lambda T, x: T.unique(x), lambda T, x: T.unique(x, dim=0), lambda T, x: x.unique_consecutive(),
    lambda T, x: T._unique(x), lambda T, x: T._unique2(x)])
def test_complex_input_is_refused(call):
    raises(lambda T: call(T, T.zeros(2, dtype=T.complex64)))


@pytest.mark.parametrize("call", [
    lambda T, x: T.unique(x), lambda T, x: T.unique(x, dim=0),
    lambda T, x: T.unique_consecutive(x), lambda T, x: T.unique_consecutive(x, dim=0),
    lambda T, x: T._unique(x)[0]])
def test_backward_is_not_implemented(call):
    raises(lambda T: (lambda r: (r[0] if isinstance(r, tuple) else r).sum().backward())(
        call(T, _flat(T))))


def test_integer_outputs_never_require_grad():
    def program(T):
        inp = T.rand(4, requires_grad=True)
        outs = [T.unique(inp, return_inverse=True, return_counts=True),
                T.unique(inp, return_inverse=True, return_counts=True, dim=0),
                T.unique_consecutive(inp, return_inverse=True, return_counts=True, dim=0)]
        return [[o.requires_grad for o in out] for out in outs]
    ok(program)
