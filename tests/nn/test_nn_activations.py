"""Activations against torch.nn: the functional forms, their in-place variants and modules
(LeakyReLU, ELU, Softplus, Hardtanh, ReLU6, SELU, CELU, Mish, Hardswish, ...), gumbel_softmax,
and the normalisation (group, instance, RMS) and distance layers tested with the same inputs:
values, grad_fn graphs, gradients, reprs, errors and warnings. Weights are copied from fixed
random values into both libraries' modules; nothing is compared with hand-typed numbers."""

from __future__ import annotations

import numpy as np
import pytest

import jaxgrad
from differential import (
    Raised,
    captured_warnings,
    float_leaves,
    grad_of,
    next_functions,
    ok,
    param_grads,
    raises,
    same,
    set_weights,
    torch,
    val,
    weighted,
    weighted_backward,
)

# --- leaky_relu, elu, softplus, hardtanh, relu6 ---------------------------------------------------

ACTIVATIONS = {
    "leaky_relu": {},
    "leaky_relu_slope": {"negative_slope": 0.3},
    "elu": {},
    "elu_alpha": {"alpha": 0.5},
    "softplus": {},
    "softplus_beta": {"beta": 2.0, "threshold": 1.0},
    "hardtanh": {},
    "hardtanh_bounds": {"min_val": -0.5, "max_val": 0.7},
    "relu6": {},
}
INPLACE = [k for k in ACTIVATIONS if not k.startswith("softplus")]
X = np.random.RandomState(10).randn(3, 4) * 3


def _activation(key):
    return key.split("_slope")[0].split("_alpha")[0].split("_beta")[0].split("_bounds")[0]


@pytest.mark.parametrize("key", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_values_graph_grads(key, dtype):
    def program(T):
        x = T.tensor(X, dtype=getattr(T, dtype), requires_grad=True)
        out = getattr(T.nn.functional, _activation(key))(x * 1.0, **ACTIVATIONS[key])
        graph = next_functions(out.grad_fn)
        weighted_backward(T, out)
        return out, graph, grad_of(x)

    ok(program)


@pytest.mark.parametrize("key", INPLACE)
def test_activation_inplace(key):
    def program(T):
        x = T.tensor(X, requires_grad=True)
        y = x * 1.0
        out = getattr(T.nn.functional, _activation(key))(y, inplace=True, **ACTIVATIONS[key])
        graph = next_functions(out.grad_fn)
        weighted_backward(T, out)
        return out is y, y._version, graph, grad_of(x)

    ok(program)


@pytest.mark.parametrize("name", ["leaky_relu_", "elu_", "hardtanh_"])
def test_functional_inplace_variants(name):
    def program(T):
        x = T.tensor(X, requires_grad=True)
        y = x * 1.0
        out = getattr(T.nn.functional, name)(y)
        weighted_backward(T, out)
        return out is y, out, grad_of(x)

    ok(program)


@pytest.mark.parametrize("key", INPLACE)
def test_inplace_activation_then_modified_input(key):
    """leaky_relu_/elu_ save their result (a later in-place op breaks backward); hardtanh_
    saves a copy of its input (it does not)."""

    def program(T):
        x = T.tensor(X, requires_grad=True)
        y = x * 1.0
        out = getattr(T.nn.functional, _activation(key))(y, inplace=True, **ACTIVATIONS[key])
        y.mul_(2)
        out.sum().backward()
        return grad_of(x)

    same(program)


@pytest.mark.parametrize("call", [
    lambda T, y: T.nn.functional.leaky_relu(y, -0.1, inplace=True),
    lambda T, y: T.nn.functional.elu(y, -0.1, inplace=True),
])
def test_inplace_negative_slope_refused_in_backward(call):
    def program(T):
        x = T.tensor(X, requires_grad=True)
        out = call(T, x * 1.0)
        forward = out.clone()
        try:
            out.sum().backward()
        except RuntimeError as exc:
            return forward, Raised(exc)
        return forward

    ta, _ = same(program)
    assert isinstance(ta, tuple)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.leaky_relu(T.tensor([1, 2])),
    lambda T: T.nn.functional.elu(T.tensor([1, 2])),
    lambda T: T.nn.functional.softplus(T.tensor([1, 2])),
    lambda T: T.nn.functional.hardtanh(T.tensor([1.0]), 2.0, 1.0),
    lambda T: T.nn.Hardtanh(1.0, 1.0),
    lambda T: T.nn.functional.leaky_relu([1.0]),
])
def test_activation_errors(call):
    raises(call)


MODULES = {
    "leaky": lambda T: T.nn.LeakyReLU(),
    "leaky_inplace": lambda T: T.nn.LeakyReLU(0.2, inplace=True),
    "elu": lambda T: T.nn.ELU(alpha=0.5),
    "elu_inplace": lambda T: T.nn.ELU(inplace=True),
    "softplus": lambda T: T.nn.Softplus(beta=2, threshold=3),
    "hardtanh": lambda T: T.nn.Hardtanh(-2, 2),
    "hardtanh_inplace": lambda T: T.nn.Hardtanh(inplace=True),
    "relu6": lambda T: T.nn.ReLU6(),
    "relu6_inplace": lambda T: T.nn.ReLU6(inplace=True),
}


@pytest.mark.parametrize("key", list(MODULES))
def test_activation_modules(key):
    def program(T):
        m = MODULES[key](T)
        x = T.tensor(X, requires_grad=True)
        y = x * 1.0
        out = m(y)
        weighted_backward(T, out)
        return repr(m), out, out is y, grad_of(x)

    ok(program)


def test_hardtanh_deprecated_keywords_warn():
    def program(T):
        m = T.nn.Hardtanh(min_value=-3.0, max_value=2.0)
        return repr(m)

    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)
    assert len(captured_warnings(program, torch)) == 2


# --- more activations, normalisation and distances ------------------------------------------------

RS = np.random.RandomState(20)


X3 = RS.randn(2, 4, 3) * 2
W4 = RS.randn(4)
B4 = RS.randn(4)


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
        leaves = float_leaves(T, dtype, *arrays)
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
        (x,) = float_leaves(T, "float64", X3)
        y = x * 1.0
        out = INPLACE_FUNCTIONAL[key](T.nn.functional, y)
        graph = next_functions(out.grad_fn)
        weighted(T, out).backward()
        return out, out is y, y._version, graph, grad_of(x)

    ok(program)


def test_inplace_celu_negative_alpha_refused_in_backward():
    def program(T):
        (x,) = float_leaves(T, "float64", X3)
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
        m = set_weights(T, m, scale=0.5)
        (x,) = float_leaves(T, "float64", X3)
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
        m = set_weights(T, NORM_MODULES[key](T), scale=0.5)
        (x,) = float_leaves(T, "float64", X3[0])
        out = m(x)
        weighted(T, out).backward()
        return out, grad_of(x)

    ok(program)


Y3 = RS.randn(2, 4, 3)


def test_distance_modules():
    def program(T):
        a, b = float_leaves(T, "float64", X3, Y3)
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


# --- gumbel softmax -------------------------------------------------------------------------------

@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_graph_and_grads(hard):
    """Random draws differ between the libraries: compare everything but the values, and the
    gradient through the straight-through estimator (the soft sample's)."""

    def program(T):
        T.manual_seed(0)
        (x,) = float_leaves(T, "float64", X3)
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


@pytest.mark.parametrize("inplace", [False, True])
def test_hardswish_gradient_at_its_kinks(inplace):
    """torch's hardswish_backward: 0 at -3 and below, ``x / 3 + 0.5`` strictly inside, 1 from 3
    on; first and second order."""
    def program(T):
        x = T.tensor([-4.0, -3.0, -2.999, 0.0, 2.999, 3.0, 4.0], dtype=T.float64,
                     requires_grad=True)
        y = T.nn.functional.hardswish(x.clone(), inplace=inplace)
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x, allow_unused=True)
        return val(y), g.detach().clone(), None if gg is None else gg.detach().clone()
    ok(program)


@pytest.mark.parametrize("name", ["Softmax", "LogSoftmax", "Softmin"])
@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 4), (2, 3, 4, 5)])
def test_softmax_modules_without_dim_take_torchs_implicit_dim(name, shape):
    def program(T):
        x = T.linspace(-2, 2, int(np.prod(shape)), dtype=T.float64).reshape(shape)
        x.requires_grad_(True)
        module = getattr(T.nn, name)()
        out = module(x)
        (out * T.linspace(0, 1, out.numel(), dtype=T.float64).reshape(shape)).sum().backward()
        return out, x.grad, repr(module)
    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)
    assert captured_warnings(program, torch)


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 4), (2, 3, 4, 5)])
def test_softmax2d(shape):
    def program(T):
        x = T.linspace(-2, 2, int(np.prod(shape))).reshape(shape).requires_grad_(True)
        out = T.nn.Softmax2d()(x)
        out.pow(2).sum().backward()
        return out, x.grad, repr(T.nn.Softmax2d())
    same(program)  # (1-d and 2-d inputs: torch's ValueError)
