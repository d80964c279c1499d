"""A number written into a tensor of a dtype that cannot hold it (torch's ``checked_convert``):
``fill_``, ``full``, ``full_like``, ``masked_fill_`` and ``index_fill_`` raise torch's
"value cannot be converted to type ... without overflow" exactly where torch does (unsigned
types wrap negatives, NaN and infinity only into floats, no imaginary part into a real type,
one-element half tensors through a double), and write the same values where it does not."""

from __future__ import annotations

import pytest

from differential import attempt, same

DTYPES = ["int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "bool"]
VALUES = [300, -1, -256, 70000, 2**40, 2.5, float("nan"), float("inf"), -float("inf"), 1e5, 1e39,
          1 + 2j, 1 + 0j, True, -129, 65520.0]


def _writes(T, d, value, n):
    return {
        "fill_": lambda: T.zeros(n, dtype=d).fill_(value),
        "full": lambda: T.full((n,), value, dtype=d),
        "full_like": lambda: T.full_like(T.zeros(n, dtype=d), value),
        "masked_fill_": lambda: T.zeros(n, dtype=d).masked_fill_(T.ones(n, dtype=T.bool), value),
        "index_fill_": lambda: T.zeros(n, dtype=d).index_fill_(0, T.tensor([0]), value),
    }


@pytest.mark.parametrize("dtype", DTYPES)
def test_numbers_written_into_a_dtype_as_torch(dtype):
    def program(T):
        d = getattr(T, dtype)
        return [[attempt(write) for write in _writes(T, d, value, n).values()]
                for value in VALUES for n in (1, 2)]

    same(program)


def _more_writes(T, d, value):
    cond = T.tensor([True, False])

    def setitem(index):
        x = T.zeros(2, dtype=d)
        x[index] = value
        return x

    return [attempt(lambda: setitem(0)), attempt(lambda: setitem(slice(None))),
            attempt(lambda: setitem(T.tensor([0]))), attempt(lambda: setitem(cond)),
            attempt(lambda: T.where(cond, T.zeros(2, dtype=d), value)),
            attempt(lambda: T.where(cond, value, T.zeros(2, dtype=d))),
            attempt(lambda: T.zeros(2, dtype=d).clamp(max=value)),
            attempt(lambda: T.zeros(2, dtype=d).clamp_(min=value)),
            attempt(lambda: T.tensor(value, dtype=d)),
            attempt(lambda: T.tensor([[1, value]], dtype=d)),
            attempt(lambda: T.zeros(2, dtype=d).scatter_(0, T.tensor([0]), value))]


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32"])
def test_activation_bounds_as_torch(dtype):
    def bounded(T, value):
        F, d = T.nn.functional, getattr(T, dtype)
        return [attempt(lambda: F.threshold(T.zeros(2, dtype=d), 1, value)),
                attempt(lambda: F.threshold(T.zeros(2, dtype=d), value, 1)),
                *([] if dtype == "int8" else [
                    attempt(lambda: F.hardtanh(T.zeros(2, dtype=d), -1e5, value))])]

    def program(T):
        return [bounded(T, value) for value in [300, 2.5, 1e5, float("inf")]]

    same(program)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float16", "float32", "bool"])
def test_numbers_in_setitem_where_clamp_and_tensor_as_torch(dtype):
    """(``where`` and ``clamp`` check against the promoted dtype: a float into an integer
    tensor promotes instead; ``tensor()`` checks integer dtypes only, naming the dtype.)"""
    def program(T):
        d = getattr(T, dtype)
        return [_more_writes(T, d, value) for value in [300, -1, -256, 2.5, float("nan"),
                                                        float("inf"), 1e5, 1e39, -129, 2**40]]

    same(program)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float16", "bfloat16", "float32"])
def test_alpha_as_torch(dtype):
    """add/sub's ``alpha`` converted into the operands' dtype (after torch's alpha_check)."""
    def scaled(T, alpha):
        d = getattr(T, dtype)
        return [attempt(lambda: T.ones(2, dtype=d).add(T.ones(2, dtype=d), alpha=alpha)),
                attempt(lambda: T.ones(2, dtype=d).sub_(T.ones(2, dtype=d), alpha=alpha)),
                attempt(lambda: T.add(T.ones(2, dtype=d), 3, alpha=alpha))]

    def program(T):
        return [scaled(T, alpha) for alpha in [300, -300, 70000, 2**40, -1, 2.5, 1e5, 1e39]]

    same(program)


def test_unsigned_types_wrap_negative_integers_not_floats():
    def written(T, d, v):
        return [attempt(lambda: T.zeros(2, dtype=d).fill_(v)),
                attempt(lambda: T.tensor([v], dtype=d))]

    def program(T):
        return [written(T, d, v) for d in (T.uint8, T.int8) for v in (-1, -255, -256, -1.0, -0.5)]

    same(program)
