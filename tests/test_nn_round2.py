"""The second round of the nn surface, against torch: recurrent layers and cells, more
normalisation and activation layers, 1-D/adaptive pooling and resampling, and more losses.
Weights are copied from fixed random values into both libraries' modules; nothing is compared
with hand-typed numbers."""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest

from differential import captured_warnings, next_functions, ok, raises

torch = pytest.importorskip("torch")
import jaxgrad  # noqa: E402

RS = np.random.RandomState(20)


def weighted(T, out):
    """A fixed, non-uniform weighting of ``out``, summed (a scalar to backpropagate)."""
    weights = T.tensor(np.linspace(-1.0, 1.5, out.numel()).reshape(tuple(out.shape)),
                       dtype=out.dtype)
    return (out * weights).sum()


def grad_of(t):
    return None if t.grad is None else t.grad.clone()


def set_weights(T, module, seed=0, dtype="float64", scale=0.5):
    """``module`` cast to ``dtype`` with every parameter overwritten by fixed random values."""
    module = module.to(getattr(T, dtype))
    rs = np.random.RandomState(seed)
    with T.no_grad():
        for _, p in module.named_parameters():
            p.copy_(T.tensor(rs.randn(*p.shape) * scale))
    return module


def param_grads(module):
    return OrderedDict((name, grad_of(p)) for name, p in module.named_parameters())


# --- recurrent layers -------------------------------------------------------------------------

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
        m = set_weights(T, getattr(T.nn, cls)(3, 4, batch_first=batch_first, **kw), dtype=dtype)
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
        m = set_weights(T, CELL_CASES[key](T), dtype=dtype)
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


# --- normalisation, activations, distances ----------------------------------------------------

X3 = RS.randn(2, 4, 3) * 2
W4 = RS.randn(4)
B4 = RS.randn(4)


def _leaves(T, dtype, *arrays):
    return [T.tensor(a, dtype=getattr(T, dtype), requires_grad=True) for a in arrays]


FUNCTIONAL = {
    "group_norm": (lambda F, x, w, b: F.group_norm(x, 2, w, b, eps=1e-3), [X3, W4, B4]),
    "group_norm_plain": (lambda F, x: F.group_norm(x, 4), [X3]),
    "group_norm_4d": (lambda F, x, w: F.group_norm(x, 1, w), [RS.randn(2, 4, 2, 3), W4]),
    "instance_norm": (lambda F, x: F.instance_norm(x), [X3]),
    "instance_norm_affine": (lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b), [X3, W4, B4]),
    "rms_norm": (lambda F, x: F.rms_norm(x, (3,)), [X3]),
    "rms_norm_weight": (lambda F, x, w: F.rms_norm(x, (4, 3), w, eps=1e-2),
                        [X3, RS.randn(4, 3)]),
    "prelu": (lambda F, x, w: F.prelu(x, w), [X3, W4]),
    "prelu_single": (lambda F, x, w: F.prelu(x, w), [X3, RS.randn(1)]),
    "prelu_1d": (lambda F, x, w: F.prelu(x, w), [RS.randn(5), RS.randn(1)]),
    "logsigmoid": (lambda F, x: F.logsigmoid(x), [X3]),
    "selu": (lambda F, x: F.selu(x), [X3]),
    "celu": (lambda F, x: F.celu(x, 0.7), [X3]),
    "mish": (lambda F, x: F.mish(x), [X3]),
    "hardswish": (lambda F, x: F.hardswish(x), [X3]),
    "hardsigmoid": (lambda F, x: F.hardsigmoid(x), [X3]),
    "softsign": (lambda F, x: F.softsign(x), [X3]),
    "softshrink": (lambda F, x: F.softshrink(x, 1.0), [X3]),
    "hardshrink": (lambda F, x: F.hardshrink(x, 1.0), [X3]),
    "tanhshrink": (lambda F, x: F.tanhshrink(x), [X3]),
    "threshold": (lambda F, x: F.threshold(x, 0.5, -3.0), [X3]),
    "glu": (lambda F, x: F.glu(x, 1), [X3]),
    "glu_last": (lambda F, x: F.glu(x), [RS.randn(3, 4)]),
    "softmin": (lambda F, x: F.softmin(x, 1), [X3]),
    "normalize": (lambda F, x: F.normalize(x), [X3]),
    "normalize_p1": (lambda F, x: F.normalize(x, p=1.0, dim=-1), [X3]),
    "cosine_similarity": (lambda F, a, b: F.cosine_similarity(a, b), [X3, RS.randn(2, 4, 3)]),
    "cosine_similarity_bcast": (lambda F, a, b: F.cosine_similarity(a, b, dim=-1),
                                [X3, RS.randn(4, 3)]),
    "pairwise_distance": (lambda F, a, b: F.pairwise_distance(a, b), [X3, RS.randn(2, 4, 3)]),
    "pairwise_distance_p1_keepdim": (lambda F, a, b: F.pairwise_distance(a, b, 1.0,
                                                                         keepdim=True),
                                     [RS.randn(3, 4), RS.randn(3, 4)]),
}


@pytest.mark.parametrize("key", list(FUNCTIONAL))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_functional_values_graph_grads(key, dtype):
    fn, arrays = FUNCTIONAL[key]

    def program(T):
        leaves = _leaves(T, dtype, *arrays)
        out = fn(T.nn.functional, *leaves)
        graph = next_functions(out.grad_fn)
        weighted(T, out).backward()
        return out, graph, [grad_of(t) for t in leaves]

    ok(program, rtol=None if dtype == "float64" else 1e-5)


INPLACE_FUNCTIONAL = {
    "selu": lambda F, y: F.selu(y, inplace=True),
    "celu": lambda F, y: F.celu(y, 0.5, inplace=True),
    "mish": lambda F, y: F.mish(y, inplace=True),
    "hardswish": lambda F, y: F.hardswish(y, inplace=True),
    "hardsigmoid": lambda F, y: F.hardsigmoid(y, inplace=True),
    "threshold": lambda F, y: F.threshold(y, 0.5, -3.0, inplace=True),
    "threshold_": lambda F, y: F.threshold_(y, 0.5, 2.0),
    "relu_": lambda F, y: F.relu_(y),
}


@pytest.mark.parametrize("key", list(INPLACE_FUNCTIONAL))
def test_functional_inplace(key):
    def program(T):
        (x,) = _leaves(T, "float64", X3)
        y = x * 1.0
        out = INPLACE_FUNCTIONAL[key](T.nn.functional, y)
        graph = next_functions(out.grad_fn)
        weighted(T, out).backward()
        return out, out is y, y._version, graph, grad_of(x)

    ok(program)


def test_inplace_celu_negative_alpha_refused_in_backward():
    def program(T):
        (x,) = _leaves(T, "float64", X3)
        out = T.nn.functional.celu(x * 1.0, -0.5, inplace=True)
        out.sum().backward()

    raises(program)


NORM_MODULES = {
    "group_norm": lambda T: T.nn.GroupNorm(2, 4),
    "group_norm_noaffine": lambda T: T.nn.GroupNorm(1, 4, affine=False),
    "group_norm_nobias": lambda T: T.nn.GroupNorm(4, 4, eps=1e-3, bias=False),
    "rms_norm": lambda T: T.nn.RMSNorm(3),
    "rms_norm_2d": lambda T: T.nn.RMSNorm([4, 3], eps=1e-3, elementwise_affine=False),
    "instance_norm1d": lambda T: T.nn.InstanceNorm1d(4),
    "instance_norm1d_affine": lambda T: T.nn.InstanceNorm1d(4, affine=True),
    "instance_norm1d_stats": lambda T: T.nn.InstanceNorm1d(4, track_running_stats=True,
                                                           affine=True),
    "prelu": lambda T: T.nn.PReLU(),
    "prelu_channels": lambda T: T.nn.PReLU(4, init=0.1),
    "logsigmoid": lambda T: T.nn.LogSigmoid(),
    "selu": lambda T: T.nn.SELU(),
    "selu_inplace": lambda T: T.nn.SELU(inplace=True),
    "celu": lambda T: T.nn.CELU(0.5),
    "celu_inplace": lambda T: T.nn.CELU(inplace=True),
    "mish": lambda T: T.nn.Mish(),
    "mish_inplace": lambda T: T.nn.Mish(True),
    "hardswish": lambda T: T.nn.Hardswish(),
    "hardsigmoid_inplace": lambda T: T.nn.Hardsigmoid(True),
    "softsign": lambda T: T.nn.Softsign(),
    "softshrink": lambda T: T.nn.Softshrink(),
    "hardshrink": lambda T: T.nn.Hardshrink(0.3),
    "tanhshrink": lambda T: T.nn.Tanhshrink(),
    "threshold": lambda T: T.nn.Threshold(0.1, 20),
    "threshold_inplace": lambda T: T.nn.Threshold(0.1, 20.0, True),
    "glu": lambda T: T.nn.GLU(1),
    "softmin": lambda T: T.nn.Softmin(dim=2),
}


@pytest.mark.parametrize("key", list(NORM_MODULES))
def test_layer_modules(key):
    def program(T):
        m = NORM_MODULES[key](T).double()
        init = [p.detach().clone() for p in m.parameters()]
        m = set_weights(T, m)
        (x,) = _leaves(T, "float64", X3)
        y = x * 1.0
        outs = [m(y)]
        if m.state_dict().get("running_mean") is not None:
            m.eval()
            outs.append(m(x))
        weighted(T, outs[0]).backward()
        return (repr(m), init, list(m.state_dict()), dict(m.state_dict()), outs,
                outs[0] is y, grad_of(x), param_grads(m))

    ok(program)


@pytest.mark.parametrize("key", ["instance_norm1d", "instance_norm1d_affine"])
def test_instance_norm_unbatched(key):
    def program(T):
        m = set_weights(T, NORM_MODULES[key](T))
        (x,) = _leaves(T, "float64", X3[0])
        out = m(x)
        weighted(T, out).backward()
        return out, grad_of(x)

    ok(program)


Y3 = RS.randn(2, 4, 3)


def test_distance_modules():
    def program(T):
        a, b = _leaves(T, "float64", X3, Y3)
        outs = [T.nn.CosineSimilarity(dim=2, eps=1e-3)(a, b),
                T.nn.PairwiseDistance(p=3.0, keepdim=True)(a, b)]
        weighted(T, outs[0] + outs[1].squeeze(-1).sum(-1, keepdim=True)).backward()
        return (repr(T.nn.CosineSimilarity()), repr(T.nn.PairwiseDistance()), outs, grad_of(a),
                grad_of(b))

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.group_norm(T.ones(2, 4, 3), 3),
    lambda T: T.nn.functional.group_norm(T.ones(2, 4, 3), 2, T.ones(3)),
    lambda T: T.nn.functional.group_norm(T.ones(1, 2, 1), 2),
    lambda T: T.nn.functional.group_norm(T.ones(3), 1),
    lambda T: T.nn.GroupNorm(3, 4),
    lambda T: T.nn.functional.prelu(T.ones(2, 4, 3), T.ones(3)),
    lambda T: T.nn.functional.prelu(T.ones(2, 4, 3), T.ones(1, 4)),
    lambda T: T.nn.functional.prelu(T.ones(2, 4, 3), T.ones(4, dtype=T.float64)),
    lambda T: T.nn.functional.glu(T.ones(3, 3)),
    lambda T: T.nn.functional.glu(T.tensor(1.0)),
    lambda T: T.nn.functional.softshrink(T.ones(3), -1.0),
    lambda T: T.nn.functional.softshrink(T.ones(3, dtype=T.float64), -0.5),
    lambda T: T.nn.functional.instance_norm(T.ones(2, 3, 1)),
    lambda T: T.nn.functional.instance_norm(T.ones(2, 3, 4), use_input_stats=False),
    lambda T: T.nn.functional.rms_norm(T.ones(2, 4, 3), (4,)),
    lambda T: T.nn.functional.rms_norm(T.ones(2, 4, 3), (2, 3)),
    lambda T: T.nn.InstanceNorm1d(3)(T.ones(2, 3, 4, 5)),
    lambda T: T.nn.InstanceNorm1d(3, affine=True)(T.ones(2, 4, 5)),
    lambda T: T.nn.functional.logsigmoid(T.ones(3, dtype=T.int64)),
])
def test_layer_errors(call):
    raises(call)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.InstanceNorm1d(3)(T.ones(2, 4, 5)),
    lambda T: T.nn.functional.softmin(T.ones(2, 3)),
])
def test_layer_warnings(call):
    assert captured_warnings(call, jaxgrad) == captured_warnings(call, torch)
    assert captured_warnings(call, torch)


# --- losses -----------------------------------------------------------------------------------

A6, B6, C6 = RS.randn(3, 4), RS.randn(3, 4), RS.randn(3, 4)
SIGNS = np.sign(RS.randn(3, 4))
ROW_SIGNS = np.array([1.0, -1.0, 1.0])
COUNTS = RS.poisson(2.0, (3, 4)).astype(np.float64)
PROBS = (RS.rand(3, 4) > 0.5).astype(np.float64)
VAR = RS.uniform(0.5, 2.0, (3, 4))

LOSSES = {
    "margin_ranking": (lambda F, T, a, b: F.margin_ranking_loss(
        a[:, 0], b[:, 0], T.tensor(ROW_SIGNS, dtype=a.dtype), margin=0.3), [A6, B6]),
    "margin_ranking_sum": (lambda F, T, a, b: F.margin_ranking_loss(
        a, b, T.tensor(SIGNS, dtype=a.dtype), reduction="sum"), [A6, B6]),
    "hinge_embedding": (lambda F, T, a: F.hinge_embedding_loss(
        a, T.tensor(SIGNS, dtype=a.dtype)), [A6]),
    "hinge_embedding_none": (lambda F, T, a: F.hinge_embedding_loss(
        a, T.tensor(SIGNS, dtype=a.dtype), margin=0.5, reduction="none"), [A6]),
    "soft_margin": (lambda F, T, a: F.soft_margin_loss(a, T.tensor(SIGNS, dtype=a.dtype)), [A6]),
    "soft_margin_none": (lambda F, T, a: F.soft_margin_loss(
        a, T.tensor(SIGNS, dtype=a.dtype), reduction="none"), [A6]),
    "multilabel_soft_margin": (lambda F, T, a: F.multilabel_soft_margin_loss(
        a, T.tensor(PROBS, dtype=a.dtype)), [A6]),
    "multilabel_soft_margin_weight": (lambda F, T, a, w: F.multilabel_soft_margin_loss(
        a, T.tensor(PROBS, dtype=a.dtype), weight=w, reduction="none"), [A6, B6[0]]),
    "cosine_embedding": (lambda F, T, a, b: F.cosine_embedding_loss(
        a, b, T.tensor(ROW_SIGNS, dtype=a.dtype), margin=-0.2), [A6, B6]),
    "cosine_embedding_0d": (lambda F, T, a, b: F.cosine_embedding_loss(
        a[0], b[0], T.tensor(-1.0, dtype=a.dtype), reduction="sum"), [A6, B6]),
    "poisson_nll": (lambda F, T, a: F.poisson_nll_loss(a, T.tensor(COUNTS, dtype=a.dtype)),
                    [A6]),
    "poisson_nll_full": (lambda F, T, a: F.poisson_nll_loss(
        a, T.tensor(COUNTS, dtype=a.dtype), full=True, reduction="sum"), [A6]),
    "poisson_nll_rate": (lambda F, T, a: F.poisson_nll_loss(
        a.abs(), T.tensor(COUNTS, dtype=a.dtype), log_input=False, reduction="none"), [A6]),
    "gaussian_nll": (lambda F, T, a, b, v: F.gaussian_nll_loss(a, b, v), [A6, B6, VAR]),
    "gaussian_nll_full_homo": (lambda F, T, a, b, v: F.gaussian_nll_loss(
        a, b, v[:, 0], full=True, reduction="sum"), [A6, B6, VAR]),
    "gaussian_nll_float_var": (lambda F, T, a, b: F.gaussian_nll_loss(
        a, b, 0.7, reduction="none"), [A6, B6]),
    "triplet_margin": (lambda F, T, a, b, c: F.triplet_margin_loss(a, b, c), [A6, B6, C6]),
    "triplet_margin_swap_p1": (lambda F, T, a, b, c: F.triplet_margin_loss(
        a, b, c, margin=2.0, p=1, swap=True, reduction="none"), [A6, B6, C6]),
}


@pytest.mark.parametrize("key", list(LOSSES))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_losses(key, dtype):
    fn, arrays = LOSSES[key]

    def program(T):
        leaves = _leaves(T, dtype, *arrays)
        out = fn(T.nn.functional, T, *leaves)
        graph = next_functions(out.grad_fn)
        weighted(T, out).backward()
        return out, graph, [grad_of(t) for t in leaves]

    ok(program, rtol=None if dtype == "float64" else 1e-5)


LOSS_MODULES = {
    "margin_ranking": (lambda T: T.nn.MarginRankingLoss(0.2), 3),
    "hinge_embedding": (lambda T: T.nn.HingeEmbeddingLoss(reduction="sum"), 2),
    "cosine_embedding": (lambda T: T.nn.CosineEmbeddingLoss(0.1), 3),
    "soft_margin": (lambda T: T.nn.SoftMarginLoss(size_average=False), 2),
    "multilabel_soft_margin": (lambda T: T.nn.MultiLabelSoftMarginLoss(
        weight=T.tensor(VAR[0])), 2),
    "poisson_nll": (lambda T: T.nn.PoissonNLLLoss(full=True), 2),
    "gaussian_nll": (lambda T: T.nn.GaussianNLLLoss(eps=0.6), 3),
    "triplet_margin": (lambda T: T.nn.TripletMarginLoss(swap=True, p=3.0), 3),
}


@pytest.mark.parametrize("key", list(LOSS_MODULES))
def test_loss_modules(key):
    build, _ = LOSS_MODULES[key]

    def program(T):
        m = build(T)
        a, b = _leaves(T, "float64", A6, B6)
        third = {"margin_ranking": T.tensor(SIGNS), "cosine_embedding": T.tensor(ROW_SIGNS),
                 "gaussian_nll": T.tensor(VAR, requires_grad=True)}.get(key, C6)
        if key in ("hinge_embedding", "soft_margin"):
            args = (a, T.tensor(SIGNS))
        elif key == "multilabel_soft_margin":
            args = (a, T.tensor(PROBS))
        elif key == "poisson_nll":
            args = (a, T.tensor(COUNTS))
        else:
            args = (a, b, T.tensor(third) if isinstance(third, np.ndarray) else third)
        out = m(*args)
        weighted(T, out).backward()
        return repr(m), out, grad_of(a), grad_of(b), list(m.state_dict())

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.margin_ranking_loss(T.ones(3), T.ones(3, 1), T.ones(3)),
    lambda T: T.nn.functional.margin_ranking_loss(T.ones(3), T.ones(3), T.ones(3),
                                                  reduction="avg"),
    lambda T: T.nn.functional.cosine_embedding_loss(T.ones(3, 2), T.ones(3, 2), T.ones(3, 1)),
    lambda T: T.nn.functional.cosine_embedding_loss(T.ones(3), T.ones(3, 2), T.ones(3)),
    lambda T: T.nn.functional.cosine_embedding_loss(T.ones(3, 2), T.ones(3, 2), T.tensor(1.0)),
    lambda T: T.nn.functional.poisson_nll_loss(T.ones(3), T.ones(3), reduction="avg"),
    lambda T: T.nn.functional.gaussian_nll_loss(T.ones(3), T.ones(3), -1.0),
    lambda T: T.nn.functional.gaussian_nll_loss(T.ones(3), T.ones(3), -T.ones(3)),
    lambda T: T.nn.functional.gaussian_nll_loss(T.ones(3, 2), T.ones(3, 2), T.ones(2, 3)),
    lambda T: T.nn.functional.gaussian_nll_loss(T.ones(3), T.ones(3), T.ones(3),
                                                reduction="avg"),
    lambda T: T.nn.functional.multilabel_soft_margin_loss(T.ones(3, 2), T.ones(3, 2),
                                                          reduction="avg"),
    lambda T: T.nn.functional.triplet_margin_loss(T.ones(3, 2), T.ones(3, 2), T.ones(2)),
    lambda T: T.nn.TripletMarginLoss(margin=0.0),
])
def test_loss_errors(call):
    raises(call)


# --- 1-D and adaptive pooling, resampling -----------------------------------------------------

L1 = RS.randn(2, 3, 9)
I4 = RS.randn(2, 3, 5, 7)

POOLING = {
    "max_pool1d": (lambda F, x: F.max_pool1d(x, 2), L1),
    "max_pool1d_args": (lambda F, x: F.max_pool1d(x, 3, 2, 1, 2, ceil_mode=True), L1),
    "max_pool1d_indices": (lambda F, x: F.max_pool1d(x[0], [3], return_indices=True), L1),
    "avg_pool1d": (lambda F, x: F.avg_pool1d(x, 2), L1),
    "avg_pool1d_args": (lambda F, x: F.avg_pool1d(x, 3, 2, 1, True, False), L1),
    "adaptive_avg_pool1d": (lambda F, x: F.adaptive_avg_pool1d(x, 4), L1),
    "adaptive_max_pool1d": (lambda F, x: F.adaptive_max_pool1d(x, 4, return_indices=True), L1),
    "adaptive_max_pool2d": (lambda F, x: F.adaptive_max_pool2d(x, (3, 4), True), I4),
    "adaptive_max_pool2d_none": (lambda F, x: F.adaptive_max_pool2d(x[0], (None, 2)), I4),
    "nearest1d_size": (lambda F, x: F.interpolate(x, size=13), L1),
    "nearest1d_scale": (lambda F, x: F.interpolate(x, scale_factor=1.7), L1),
    "nearest1d_double": (lambda F, x: F.interpolate(x, scale_factor=2), L1),
    "nearest2d_size": (lambda F, x: F.interpolate(x, size=(4, 9)), I4),
    "nearest2d_scale": (lambda F, x: F.interpolate(x, scale_factor=(2.5, 0.5)), I4),
    "nearest2d_recompute": (lambda F, x: F.interpolate(x, scale_factor=1.3,
                                                       recompute_scale_factor=True), I4),
    "linear": (lambda F, x: F.interpolate(x, scale_factor=1.6, mode="linear"), L1),
    "linear_align": (lambda F, x: F.interpolate(x, size=4, mode="linear", align_corners=True),
                     L1),
    "bilinear": (lambda F, x: F.interpolate(x, size=(8, 3), mode="bilinear"), I4),
    "bilinear_scale": (lambda F, x: F.interpolate(x, scale_factor=(2.3, 0.6), mode="bilinear"),
                       I4),
    "bilinear_align": (lambda F, x: F.interpolate(x, size=(4, 9), mode="bilinear",
                                                  align_corners=True), I4),
    "pixel_shuffle": (lambda F, x: F.pixel_shuffle(x, 2), RS.randn(2, 8, 3, 5)),
    "pixel_unshuffle": (lambda F, x: F.pixel_unshuffle(x, 2), RS.randn(2, 3, 4, 6)),
}


@pytest.mark.parametrize("key", list(POOLING))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pooling_and_resampling(key, dtype):
    fn, array = POOLING[key]

    def program(T):
        (x,) = _leaves(T, dtype, array)
        out = fn(T.nn.functional, x)
        outs = list(out) if isinstance(out, tuple) else [out]
        graph = next_functions(outs[0].grad_fn)
        weighted(T, outs[0]).backward()
        return outs, graph, grad_of(x)

    ok(program, rtol=None if dtype == "float64" else 1e-5)


POOL_MODULES = {
    "max_pool1d": (lambda T: T.nn.MaxPool1d(3, 1, 1, return_indices=True), L1),
    "avg_pool1d": (lambda T: T.nn.AvgPool1d(3, 2, 1, True, False), L1),
    "adaptive_avg_pool1d": (lambda T: T.nn.AdaptiveAvgPool1d(3), L1),
    "adaptive_max_pool1d": (lambda T: T.nn.AdaptiveMaxPool1d(3, True), L1),
    "adaptive_max_pool2d": (lambda T: T.nn.AdaptiveMaxPool2d((2, None)), I4),
    "upsample": (lambda T: T.nn.Upsample(scale_factor=2), I4),
    "upsample_bilinear": (lambda T: T.nn.Upsample(size=(3, 4), mode="bilinear",
                                                  align_corners=True), I4),
    "upsample_linear": (lambda T: T.nn.Upsample(scale_factor=1.5, mode="linear"), L1),
    "pixel_shuffle": (lambda T: T.nn.PixelShuffle(2), RS.randn(1, 8, 2, 3)),
    "pixel_unshuffle": (lambda T: T.nn.PixelUnshuffle(3), RS.randn(1, 1, 3, 6)),
}


@pytest.mark.parametrize("key", list(POOL_MODULES))
def test_pooling_modules(key):
    build, array = POOL_MODULES[key]

    def program(T):
        m = build(T)
        (x,) = _leaves(T, "float64", array)
        out = m(x)
        outs = list(out) if isinstance(out, tuple) else [out]
        weighted(T, outs[0]).backward()
        return repr(m), outs, grad_of(x)

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.max_pool1d(T.ones(2, 3, 4, 5), 2),
    lambda T: T.nn.functional.avg_pool1d(T.ones(2, 3, 4, 5), 2),
    lambda T: T.nn.functional.adaptive_max_pool1d(T.ones(2, 3, 4, 5), 2),
    lambda T: T.nn.functional.adaptive_max_pool2d(T.ones(5, 5), 2),
    lambda T: T.nn.functional.pixel_shuffle(T.ones(1, 3, 2, 2), 2),
    lambda T: T.nn.functional.pixel_shuffle(T.ones(4, 2), 2),
    lambda T: T.nn.functional.pixel_unshuffle(T.ones(1, 1, 3, 4), 2),
    lambda T: T.nn.functional.interpolate(T.ones(1, 1, 4), size=3, align_corners=True),
    lambda T: T.nn.functional.interpolate(T.ones(1, 1, 4)),
    lambda T: T.nn.functional.interpolate(T.ones(1, 1, 4), size=3, scale_factor=2),
])
def test_pooling_errors(call):
    raises(call)


# --- volumes ----------------------------------------------------------------------------------

V5 = RS.randn(2, 2, 4, 3, 5)

VOLUME_MODULES = {
    "conv3d": lambda T: T.nn.Conv3d(2, 3, (2, 3, 2), stride=(1, 2, 1), padding=1, dilation=(2, 1, 1)),
    "conv3d_groups_same": lambda T: T.nn.Conv3d(2, 4, 3, padding="same", groups=2, bias=False),
    "conv3d_circular": lambda T: T.nn.Conv3d(2, 2, 3, padding=1, padding_mode="circular"),
    "batch_norm3d": lambda T: T.nn.BatchNorm3d(2),
}


@pytest.mark.parametrize("key", list(VOLUME_MODULES))
def test_volume_modules(key):
    def program(T):
        m = set_weights(T, VOLUME_MODULES[key](T))
        (x,) = _leaves(T, "float64", V5)
        out = m(x)
        weighted(T, out).backward()
        return repr(m), out, grad_of(x), param_grads(m), dict(m.state_dict())

    ok(program)


def test_conv3d_init_bounds():
    def program(T):
        m = T.nn.Conv3d(2, 3, (2, 3, 2))
        return [tuple(p.shape) for p in m.parameters()], repr(m)

    ok(program)
    m = jaxgrad.nn.Conv3d(4, 64, 3)
    bound = 1 / math.sqrt(4 * 27)  # kaiming_uniform_(a=sqrt(5)) on fan_in 4 * 3 * 3 * 3
    weight = np.asarray(m.weight.detach()._value)
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.95 * bound


# --- gumbel softmax ---------------------------------------------------------------------------


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_graph_and_grads(hard):
    """Random draws differ between the libraries: compare everything but the values, and the
    gradient through the straight-through estimator (the soft sample's)."""

    def program(T):
        T.manual_seed(0)
        (x,) = _leaves(T, "float64", X3)
        out = T.nn.functional.gumbel_softmax(x, tau=0.5, hard=hard, dim=1)
        soft_sum = out.sum(1)
        graph = next_functions(out.grad_fn)
        out.sum().backward()
        return (out.shape, out.dtype, graph, T.allclose(soft_sum, T.ones_like(soft_sum)),
                bool((out * (1 - out)).abs().max() == 0) if hard else None,
                x.grad.abs().max() < 1e-9)

    ok(program)


def test_gumbel_softmax_distribution():
    """With tau -> small, hard samples pick class k with probability softmax(logits)[k]."""
    jaxgrad.manual_seed(1)
    logits = jaxgrad.tensor([[0.0, 1.0, 2.0]]).expand(4000, 3)
    samples = jaxgrad.nn.functional.gumbel_softmax(logits, hard=True)
    freq = np.asarray(samples.sum(0)._value) / 4000
    expected = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
    assert np.abs(freq - expected).max() < 0.03


def test_gumbel_softmax_eps_warning():
    def program(T):
        return T.nn.functional.gumbel_softmax(T.zeros(2, 3), eps=1e-3).shape

    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)
    assert captured_warnings(program, torch)
