"""``out=``: the ops torch gives an out variant write their result into the given tensor, with
torch's dtype rule, resize rule (and warning), version bump and refusal under autograd."""

from __future__ import annotations

import pytest

from differential import captured_warnings, ok, raises

PROGRAMS = {
    "unary": lambda T: T.exp(T.tensor([0.0, 1.0]), out=T.empty(2)),
    "binary_number": lambda T: T.add(T.tensor([1.0, 2.0]), 1, alpha=2, out=T.zeros(2)),
    "comparison_into_float": lambda T: T.eq(T.tensor([1.0, 2.0]), 1, out=T.zeros(2)),
    "int_into_long": lambda T: T.add(T.tensor([1, 2], dtype=T.int32), 1,
                                     out=T.zeros(2, dtype=T.int64)),
    "float_into_double": lambda T: T.sigmoid(T.tensor([0.0, 1.0]), out=T.zeros(2, dtype=T.float64)),
    "addcmul": lambda T: T.addcmul(T.ones(2), T.ones(2), T.ones(2), value=3, out=T.zeros(2)),
    "maximum": lambda T: T.maximum(T.ones(2), T.zeros(2), out=T.zeros(2)),
    "reduction": lambda T: T.mean(T.tensor([[1.0, 2.0], [3.0, 4.0]]), 1, out=T.zeros(2)),
    "cat": lambda T: T.cat([T.ones(2), T.zeros(1)], out=T.empty(0)),
    "matmul": lambda T: T.matmul(T.ones(2, 3), T.ones(3), out=T.zeros(2)),
    "where": lambda T: T.where(T.tensor([True, False]), T.ones(2), T.zeros(2), out=T.zeros(2)),
    "clamp": lambda T: T.clamp(T.tensor([-1.0, 2.0]), 0.0, 1.0, out=T.zeros(2)),
    "pow": lambda T: T.pow(T.tensor([1.0, 2.0]), 2, out=T.zeros(2)),
    "into_a_view": lambda T: (lambda b: (T.exp(T.zeros(2), out=b[1:]), b, b._version))(T.zeros(3)),
    "empty_out_resized": lambda T: (lambda o: (T.exp(T.zeros(3), out=o), o, o._version))(T.empty(0)),
    "returns_out_itself": lambda T: (lambda o: T.neg(T.ones(2), out=o) is o)(T.zeros(2)),
    "no_grad_inputs_requiring_grad": lambda T: _no_grad(T),
    "out_none": lambda T: T.exp(T.zeros(2), out=None),
    "full_overlap": lambda T: (lambda x: (T.exp(x, out=x), x._version))(T.zeros(3)),
}


def _inference_zeros(T):
    with T.inference_mode():
        return T.zeros(2)


def _no_grad(T):
    with T.no_grad():
        out = T.zeros(2)
        T.exp(T.ones(2, requires_grad=True), out=out)
        return out, out.requires_grad, out._version


@pytest.mark.parametrize("name", PROGRAMS)
def test_out_like_torch(name):
    ok(PROGRAMS[name])


ERRORS = {
    "input_requires_grad": lambda T: T.exp(T.ones(2, requires_grad=True), out=T.zeros(2)),
    "out_requires_grad": lambda T: T.exp(T.ones(2), out=T.zeros(2, requires_grad=True)),
    "list_input_requires_grad": lambda T: T.cat([T.ones(2, requires_grad=True)], out=T.zeros(2)),
    "cannot_cast": lambda T: T.add(T.ones(2), 1, out=T.zeros(2, dtype=T.int64)),
    "out_not_a_tensor": lambda T: T.exp(T.ones(2), out=3),
    "no_out_variant": lambda T: T.relu(T.ones(2), out=T.zeros(2)),
    "partial_overlap": lambda T: (lambda x: T.exp(x[:2], out=x[1:]))(T.ones(3)),
    "cat_into_its_input": lambda T: (lambda x: T.cat([x[:1], x[1:]], out=x))(T.ones(3)),
    "inference_out": lambda T: (lambda o: T.exp(T.ones(2), out=o))(_inference_zeros(T)),
}


@pytest.mark.parametrize("name", ERRORS)
def test_out_errors_like_torch(name):
    raises(ERRORS[name])


def test_resizing_a_non_empty_out_warns_like_torch():
    import torch

    import jaxgrad

    def program(T):
        out = T.zeros(3)
        T.exp(T.zeros(2), out=out)
        return out

    theirs, ours = captured_warnings(program, torch), captured_warnings(program, jaxgrad)
    assert len(ours) == len(theirs) == 1
    assert theirs[0][0] == ours[0][0]
    assert theirs[0][1].startswith(ours[0][1])  # torch appends where in its C++ it was raised
