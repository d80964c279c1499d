"""Scalar arguments and operators against torch: a Scalar joins type promotion where torch's
kernel promotes with it, integer powers keep every bit, integers wrap into narrower dtypes, a
non-number Scalar gets torch's "must be Number" error, and an operator with a numpy array on the
other side behaves as torch's does (numpy computes and wraps the result back, ``==`` compares)."""

from __future__ import annotations

import numpy as np
import pytest

from differential import ok, raises

PROGRAMS = {
    "int_pow_64": lambda T: T.tensor([0, 1, 2]) ** 64,
    "int_pow_70": lambda T: T.tensor([2, 3]) ** 70,
    "int_pow_new_values": lambda T: [T.tensor([3, -2]) ** e for e in (5, 9, 13)],
    "complex_zero_negative_power": lambda T: T.tensor([0j, 2 + 1j]) ** -3,
    "int_inplace_pow": lambda T: T.tensor([1, 2, 3]).pow_(2),
    "uint8_minus_one": lambda T: T.zeros(2, dtype=T.uint8) - 1,
    "uint8_fill_negative": lambda T: T.zeros(2, dtype=T.uint8).fill_(-1),
    "negative_base_uint8_exponent": lambda T: (-3) ** T.tensor([1, 2, 0], dtype=T.uint8),
    "float_clamp_int_bound": lambda T: T.tensor([0.5, 2.0]).clamp_(min=1),
    "zero_d_tensor_alpha": lambda T: T.add(T.ones(2), T.ones(2), alpha=T.tensor(2.0)),
    "numpy_scalar_operand": lambda T: T.ones(2) * np.float32(2) + np.int64(1),
    "plus_ndarray": lambda T: T.ones(2) + np.ones(2),
    "inplace_plus_ndarray": lambda T: (lambda t: (t.__iadd__(np.ones(2)), t))(T.ones(2)),
    "equals_ndarray": lambda T: T.ones(2, requires_grad=True) == np.ones(2),
    "not_equals_ndarray": lambda T: T.tensor([1.0, 2.0]) != np.ones(2),
    "equals_none": lambda T: (T.ones(2) == None, T.ones(2) != None),  # noqa: E711
    "saved_exponent_only": lambda T: (lambda y: (y.grad_fn._saved_exponent,
                                                 hasattr(y.grad_fn, "_saved__fast"),
                                                 hasattr(y.grad_fn, "_saved_fast")))(
        T.ones(2, requires_grad=True) ** 2.5),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_like_torch(name):
    ok(PROGRAMS[name])


ERRORS = {
    "int_pow_inplace_float": lambda T: T.tensor([1, 2, 3]).pow_(2.5),
    "int_pow_inplace_nan": lambda T: T.tensor([1, 2, 3]).pow_(float("nan")),
    "float_pow_inplace_complex": lambda T: T.ones(2).pow_(1 + 1j),
    "int_clamp_inplace_float": lambda T: T.tensor([1, 2]).clamp_(min=0.5),
    "alpha_str": lambda T: T.ones(2).add(T.ones(2), alpha="a"),
    "alpha_tensor": lambda T: T.add(T.ones(2), T.ones(2), alpha=T.ones(2)),
    "alpha_requires_grad": lambda T: T.add(T.ones(2), T.ones(2),
                                          alpha=T.tensor(2.0, requires_grad=True)),
    "value_none": lambda T: T.addcmul(T.ones(2), T.ones(2), T.ones(2), value=None),
    "plus_ndarray_requires_grad": lambda T: T.ones(2, requires_grad=True) + np.ones(2),
    "less_than_ndarray": lambda T: T.ones(2) < np.ones(2),
    "ndarray_less_than": lambda T: np.ones(2) < T.ones(2),
    "fraction": lambda T: T.ones(2) * __import__("fractions").Fraction(1, 2),
    "numpy_of_requires_grad": lambda T: np.asarray(T.ones(2, requires_grad=True)),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_like_torch(name):
    raises(ERRORS[name])

