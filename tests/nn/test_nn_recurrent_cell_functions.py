"""The top-level cell functions ``lstm_cell``, ``gru_cell``, ``rnn_tanh_cell`` and
``rnn_relu_cell`` against torch's: values, gradients of the input, states and weights (with and
without biases), graphs and torch's checks."""

from __future__ import annotations

import numpy as np
import pytest

from differential import grad_of, ok, raises, weighted

GATES = {"lstm_cell": 4, "gru_cell": 3, "rnn_tanh_cell": 1, "rnn_relu_cell": 1}


def _leaves(T, name, bias, batch=2, inputs=3, hidden=4, seed=0):
    rs = np.random.RandomState(seed)

    def leaf(*shape):
        return T.tensor(rs.randn(*shape) * 0.6, dtype=T.float64, requires_grad=True)

    gates = GATES[name] * hidden
    x, h, c = leaf(batch, inputs), leaf(batch, hidden), leaf(batch, hidden)
    weights = [leaf(gates, inputs), leaf(gates, hidden)]
    if bias:
        weights += [leaf(gates), leaf(gates)]
    return x, (h, c) if name == "lstm_cell" else h, weights


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("name", list(GATES))
def test_cell_functions(name, bias):
    def program(T):
        x, hx, weights = _leaves(T, name, bias)
        out = getattr(T, name)(x, hx, *weights)
        outs = list(out) if isinstance(out, tuple) else [out]
        sum(weighted(T, o) for o in outs).backward()
        states = list(hx) if isinstance(hx, tuple) else [hx]
        return outs, grad_of(x), [grad_of(s) for s in states], [grad_of(w) for w in weights]

    ok(program)


CELL_ERRORS = {
    "lstm_one_state": lambda T, x, hx, w: T.lstm_cell(x, hx[:1], *w),
    "input_size": lambda T, x, hx, w: T.lstm_cell(x[:, :2], hx, *w),
    "batch": lambda T, x, hx, w: T.lstm_cell(x, (hx[0][:1], hx[1]), *w),
    "cell_hidden_size": lambda T, x, hx, w: T.lstm_cell(x, (hx[0], hx[1][:, :3]), *w),
}


@pytest.mark.parametrize("key", list(CELL_ERRORS))
def test_cell_function_errors(key):
    def program(T):
        x, hx, weights = _leaves(T, "lstm_cell", True)
        return CELL_ERRORS[key](T, x, hx, weights)

    raises(program)


def test_gru_cell_hidden_size_error():
    raises(
        lambda T: T.gru_cell(
            *_leaves(T, "gru_cell", False)[:1], T.zeros(2, 3), *_leaves(T, "gru_cell", False)[2]
        )
    )
