"""Recurrent layers and cells against torch.nn (RNN, LSTM with and without projections, GRU;
RNNCell, LSTMCell, GRUCell): batched, unbatched and batch_first inputs, given states, dropout
between layers, parameter names, initialisation, reprs, errors and warnings. Weights are copied
from fixed random values into both libraries' modules."""

from __future__ import annotations

import math

import numpy as np
import pytest

import jaxgrad
from differential import (
    captured_warnings,
    grad_of,
    next_functions,
    ok,
    param_grads,
    raises,
    set_weights,
    torch,
    weighted,
)

RNN_CASES = {
    "rnn": ("RNN", {}),
    "rnn_relu_2layers": ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    "rnn_nobias_bidir": ("RNN", {"bias": False, "bidirectional": True}),
    "lstm": ("LSTM", {}),
    "lstm_2layers_bidir": ("LSTM", {"num_layers": 2, "bidirectional": True}),
    "lstm_proj": ("LSTM", {"proj_size": 2, "num_layers": 2}),
    "lstm_proj_bidir_nobias": ("LSTM", {"proj_size": 3, "bidirectional": True, "bias": False}),
    "gru": ("GRU", {}),
    "gru_3layers_bidir": ("GRU", {"num_layers": 3, "bidirectional": True}),
    "gru_dropout_eval": ("GRU", {"num_layers": 2, "dropout": 0.5}),
}


def _states(T, cls, kw, batch, dtype, rs):
    directions = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1) * directions
    h_size = kw.get("proj_size") or 4
    shape_h = (layers, batch, h_size) if batch else (layers, h_size)
    h = T.tensor(rs.randn(*shape_h), dtype=dtype, requires_grad=True)
    if cls != "LSTM":
        return h, [h]
    shape_c = (layers, batch, 4) if batch else (layers, 4)
    c = T.tensor(rs.randn(*shape_c), dtype=dtype, requires_grad=True)
    return (h, c), [h, c]


def _rnn_program(key, dtype, batched=True, with_state=False, batch_first=False):
    cls, kw = RNN_CASES[key]
    # torch runs a float32 LSTM without projections through oneDNN (MkldnnRnnLayerBackward0)
    fused = cls == "LSTM" and dtype == "float32" and not kw.get("proj_size")

    def program(T):
        rs = np.random.RandomState(3)
        m = set_weights(T, getattr(T.nn, cls)(3, 4, batch_first=batch_first, **kw), dtype=dtype,
                        scale=0.5)
        if key.endswith("_eval"):
            m.eval()
        dt = getattr(T, dtype)
        shape = ((2, 5, 3) if batch_first else (5, 2, 3)) if batched else (5, 3)
        x = T.tensor(rs.randn(*shape), dtype=dt, requires_grad=True)
        hx, leaves = (_states(T, cls, kw, 2 if batched else 0, dt, rs) if with_state
                      else (None, []))
        out, state = m(x) if hx is None else m(x, hx)
        states = list(state) if isinstance(state, tuple) else [state]
        (weighted(T, out) + sum(weighted(T, s) for s in states)).backward()
        if fused:
            out = out.detach()
        return (out, states, grad_of(x), [grad_of(t) for t in leaves], param_grads(m),
                repr(m), list(m.state_dict()))

    return program


@pytest.mark.parametrize("key", list(RNN_CASES))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_recurrent_layers(key, dtype):
    ok(_rnn_program(key, dtype), rtol=None if dtype == "float64" else 2e-5)


@pytest.mark.parametrize("key", ["rnn_relu_2layers", "lstm_proj", "gru_3layers_bidir"])
@pytest.mark.parametrize("batched", [True, False])
def test_recurrent_layers_given_state(key, batched):
    ok(_rnn_program(key, "float64", batched=batched, with_state=True))


@pytest.mark.parametrize("key", ["rnn", "lstm_2layers_bidir"])
def test_recurrent_layers_unbatched(key):
    ok(_rnn_program(key, "float64", batched=False))


def test_recurrent_layers_batch_first_graph():
    """torch transposes a batch_first output in place (TransposeBackward1, _version 1)."""
    ok(_rnn_program("gru", "float64", batch_first=True))


@pytest.mark.parametrize("key", ["rnn", "lstm_proj", "gru_3layers_bidir"])
def test_recurrent_layers_batch_first_values(key):
    def program(T):
        out, states, *rest = _rnn_program(key, "float64", batch_first=True)(T)
        return (out.detach().clone(), states, *rest)

    ok(program)


def test_recurrent_dropout_between_layers():
    """Dropout acts on the outputs of all but the last layer, in training only."""
    m = jaxgrad.nn.GRU(3, 4, num_layers=2, dropout=1.0)
    x = jaxgrad.randn(5, 2, 3)
    with jaxgrad.no_grad():
        m.weight_ih_l1.fill_(1.0)  # the top layer's input projection: all of it dropped
        m.bias_ih_l1.fill_(0.0)
        trained, _ = m(x)
        m.eval()
        evaluated, _ = m(x)
        m.train()
        m.dropout = 0.0
        no_dropout, _ = m(x)
    m2 = jaxgrad.nn.GRU(4, 4)
    with jaxgrad.no_grad():
        for name in ("weight_hh_l0", "bias_hh_l0"):
            getattr(m2, name).copy_(getattr(m, name.replace("l0", "l1")))
        m2.weight_ih_l0.fill_(0.0)
        m2.bias_ih_l0.fill_(0.0)
        zero_input, _ = m2(jaxgrad.zeros(5, 2, 4))
    assert jaxgrad.allclose(trained, zero_input)
    assert jaxgrad.equal(evaluated, no_dropout)
    assert not jaxgrad.allclose(trained, evaluated)


CELL_CASES = {
    "rnn_cell": lambda T: T.nn.RNNCell(3, 4),
    "rnn_cell_relu_nobias": lambda T: T.nn.RNNCell(3, 4, bias=False, nonlinearity="relu"),
    "lstm_cell": lambda T: T.nn.LSTMCell(3, 4),
    "lstm_cell_nobias": lambda T: T.nn.LSTMCell(3, 4, bias=False),
    "gru_cell": lambda T: T.nn.GRUCell(3, 4),
}


@pytest.mark.parametrize("key", list(CELL_CASES))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [True, False])
def test_recurrent_cells(key, dtype, batched, with_state):
    def program(T):
        rs = np.random.RandomState(4)
        m = set_weights(T, CELL_CASES[key](T), dtype=dtype, scale=0.5)
        dt = getattr(T, dtype)
        x = T.tensor(rs.randn(*((2, 3) if batched else (3,))), dtype=dt, requires_grad=True)
        hshape = (2, 4) if batched else (4,)
        leaves = [T.tensor(rs.randn(*hshape), dtype=dt, requires_grad=True)
                  for _ in range(2 if key.startswith("lstm") else 1)]
        hx = None if not with_state else tuple(leaves) if len(leaves) == 2 else leaves[0]
        out = m(x, hx)
        outs = list(out) if isinstance(out, tuple) else [out]
        graphs = [next_functions(o.grad_fn) for o in outs]
        sum(weighted(T, o) for o in outs).backward()
        return (outs, graphs, grad_of(x), [grad_of(t) for t in leaves], param_grads(m),
                repr(m))

    ok(program, rtol=None if dtype == "float64" else 2e-5)


def test_recurrent_init_and_names():
    def program(T):
        m = T.nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2, bias=False)
        return ([n for n, _ in m.named_parameters()], [tuple(p.shape) for p in m.parameters()],
                m._flat_weights_names, [[tuple(w.shape) for w in ws] for ws in m.all_weights],
                repr(T.nn.GRU(3, 5, dropout=0.25, num_layers=2, batch_first=True)),
                repr(T.nn.RNN(2, 3, 1, "relu", False)), repr(T.nn.LSTMCell(2, 3, bias=False)))

    ok(program)
    for m in (jaxgrad.nn.GRU(3, 16, num_layers=2), jaxgrad.nn.LSTMCell(2, 16)):
        values = np.concatenate([np.asarray(p.detach()._value).ravel() for p in m.parameters()])
        assert np.abs(values).max() <= 0.25 and np.abs(values).max() > 0.24
        assert abs(values.mean()) < 0.03 and abs(values.std() - 0.25 / math.sqrt(3)) < 0.02


@pytest.mark.parametrize("call", [
    lambda T: T.nn.RNN(3, 4, nonlinearity="sigmoid"),
    lambda T: T.nn.GRU(3, 4, proj_size=2),
    lambda T: T.nn.LSTM(3, 4, proj_size=4),
    lambda T: T.nn.LSTM(3, 4, proj_size=-1),
    lambda T: T.nn.LSTM(3, 4, dropout=1.5),
    lambda T: T.nn.LSTM(3, 4, bias=1),
    lambda T: T.nn.LSTM(3.0, 4),
    lambda T: T.nn.LSTM(3, 0),
    lambda T: T.nn.LSTM(3, 4, num_layers=0),
    lambda T: T.nn.RNN(3, 4)(T.ones(5, 2, 2)),
    lambda T: T.nn.RNN(3, 4)(T.ones(2, 5, 2, 3)),
    lambda T: T.nn.RNN(3, 4)(T.ones(5, 2, 3, dtype=T.float64)),
    lambda T: T.nn.RNN(3, 4)(T.ones(5, 2, 3), T.ones(1, 3, 4)),
    lambda T: T.nn.RNN(3, 4)(T.ones(5, 2, 3), T.ones(2, 4)),
    lambda T: T.nn.GRU(3, 4)(T.ones(5, 3), T.ones(1, 2, 4)),
    lambda T: T.nn.GRU(3, 4)(T.ones(5)),
    lambda T: T.nn.LSTM(3, 4)(T.ones(5, 2, 3), (T.ones(1, 2, 4), T.ones(1, 2, 3))),
    lambda T: T.nn.LSTM(3, 4)(T.ones(5, 2, 3), (T.ones(1, 2, 4), T.ones(2, 4))),
    lambda T: T.nn.LSTM(3, 4)(T.ones(5, 3), (T.ones(1, 2, 4), T.ones(1, 2, 4))),
    lambda T: T.nn.LSTM(3, 4, proj_size=2)(T.ones(5, 2, 3), (T.ones(1, 2, 4), T.ones(1, 2, 4))),
    lambda T: T.nn.RNNCell(3, 4)(T.ones(2, 2)),
    lambda T: T.nn.RNNCell(3, 4)(T.ones(2, 3), T.ones(3, 4)),
    lambda T: T.nn.GRUCell(3, 4)(T.ones(2, 3), T.ones(2, 5)),
    lambda T: T.nn.GRUCell(3, 4)(T.ones(1, 2, 3)),
    lambda T: T.nn.LSTMCell(3, 4)(T.ones(2, 3), (T.ones(2, 4), T.ones(3, 4))),
    lambda T: T.nn.LSTMCell(3, 4)(T.ones(2, 3), (T.ones(2, 4), T.ones(1, 2, 4))),
    lambda T: T.nn.RNNCell(3, 4, nonlinearity="gelu")(T.ones(2, 3)),
])
def test_recurrent_errors(call):
    raises(call)


def test_recurrent_dropout_warning():
    def program(T):
        return T.nn.GRU(3, 4, dropout=0.5)

    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)
    assert captured_warnings(program, torch)
