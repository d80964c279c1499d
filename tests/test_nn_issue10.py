"""The nn surface added for nanoGPT and the PyTorch tutorials, against torch: activations
(LeakyReLU, ELU, Softplus, Hardtanh, ReLU6 and their in-place forms), channel dropout,
ParameterList/ParameterDict, transposed convolutions, one_hot, smooth L1 / Huber / KL losses,
scaled_dot_product_attention, MultiheadAttention, nn.utils (gradient clipping, parameter
vectors) and a small GPT in nanoGPT's style trained for a few steps. Weights are copied from
one library's module into the other's; nothing is compared with hand-typed numbers."""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest

from differential import Raised, attempt, captured_warnings, next_functions, ok, raises, same

torch = pytest.importorskip("torch")
import jaxgrad  # noqa: E402

RS = np.random.RandomState(10)


def weighted_backward(T, out):
    """Backpropagate a fixed, non-uniform weighting of ``out``."""
    weights = T.tensor(np.linspace(-1.0, 1.5, out.numel()).reshape(tuple(out.shape)),
                       dtype=out.dtype)
    (out * weights).sum().backward()


def grad_of(t):
    return None if t.grad is None else t.grad.clone()


def set_weights(T, module, seed=0, dtype="float64"):
    """``module`` cast to ``dtype`` with every parameter overwritten by fixed random values."""
    module = module.to(getattr(T, dtype))
    rs = np.random.RandomState(seed)
    with T.no_grad():
        for _, p in module.named_parameters():
            p.copy_(T.tensor(rs.randn(*p.shape)))
    return module


def param_grads(module):
    return OrderedDict((name, grad_of(p)) for name, p in module.named_parameters())


# --- activations ------------------------------------------------------------------------------

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
X = RS.randn(3, 4) * 3


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


# --- dropout ----------------------------------------------------------------------------------

DROPOUTS = {"dropout1d": (3, 4, 5), "dropout2d": (2, 3, 4, 4), "dropout3d": (2, 3, 2, 2, 2)}
UNBATCHED = {"dropout1d": (4, 5), "dropout3d": (3, 2, 2, 2)}


@pytest.mark.parametrize("name,batched", [(n, True) for n in DROPOUTS] + [
    (n, False) for n in UNBATCHED])
@pytest.mark.parametrize("p", [0.0, 1.0])
def test_channel_dropout_deterministic_cases(name, p, batched):
    """p=0 and p=1 draw nothing random: values, graph and grads match torch exactly."""
    shape = DROPOUTS[name] if batched else UNBATCHED[name]

    def program(T):
        x = T.tensor(np.ones(shape), requires_grad=True)
        out = getattr(T.nn.functional, name)(x * 2.0, p=p)
        graph = next_functions(out.grad_fn)
        out.sum().backward()
        return out, graph, grad_of(x)

    ok(program)


@pytest.mark.parametrize("name", list(DROPOUTS))
def test_channel_dropout_zeroes_whole_channels(name):
    jaxgrad.manual_seed(0)
    x = jaxgrad.ones(*DROPOUTS[name], requires_grad=True)
    out = getattr(jaxgrad.nn.functional, name)(x, p=0.5)
    values = np.asarray(out.detach()._value).reshape(out.shape[0], out.shape[1], -1)
    per_channel = {tuple(sorted(set(row.tolist()))) for row in values.reshape(-1, values.shape[2])}
    assert per_channel <= {(0.0,), (2.0,)} and len(per_channel) == 2
    out.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad._value), np.asarray(out.detach()._value))
    assert type(out.grad_fn).__name__ == "MulBackward0"


@pytest.mark.parametrize("name", list(DROPOUTS))
def test_channel_dropout_eval_and_inplace(name):
    def program(T):
        x = T.ones(*DROPOUTS[name])
        module = {"dropout1d": T.nn.Dropout1d, "dropout2d": T.nn.Dropout2d,
                  "dropout3d": T.nn.Dropout3d}[name](p=0.4, inplace=True)
        y = x * 1.0
        out = module(y)
        evaluated = module.eval()(x)
        return repr(module), out is y, y._version, evaluated is x

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.dropout1d(T.ones(2, 3, 4, 5)),
    lambda T: T.nn.functional.dropout1d(T.ones(2, 3), p=1.5),
    lambda T: T.nn.functional.dropout2d(T.ones(3)),
    lambda T: T.nn.functional.dropout3d(T.ones(3), p=-0.1),
    lambda T: T.nn.Dropout2d(p=2.0),
])
def test_channel_dropout_errors(call):
    raises(call)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.dropout2d(T.ones(2, 3, 4), p=0.0),
    lambda T: T.nn.functional.dropout2d(T.ones(2, 3), p=0.0),
    lambda T: T.nn.functional.dropout3d(T.ones(2, 3, 4), p=0.0),
])
def test_channel_dropout_warnings(call):
    assert captured_warnings(call, jaxgrad) == captured_warnings(call, torch)
    assert captured_warnings(call, torch)


# --- parameter containers ---------------------------------------------------------------------


def test_parameter_list():
    def program(T):
        params = T.nn.ParameterList([T.nn.Parameter(T.zeros(2)), T.ones(1, 3)])
        params.append(T.ones(2, 2, dtype=T.float64))
        params.extend([T.zeros(4), "not a tensor"])
        params[0] = T.full((3,), 2.0)
        model = T.nn.Module()
        model.params = params
        return (repr(params), len(params), [n for n, _ in model.named_parameters()],
                list(model.state_dict()), [type(p).__name__ for p in params], params[-2],
                repr(params[1:3]), params[4], isinstance(params[1], T.nn.Parameter))

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.ParameterList([T.ones(1)])[3],
    lambda T: T.nn.ParameterList().extend(T.ones(2)),
    lambda T: T.nn.ParameterList([T.ones(1)])(T.ones(1)),
])
def test_parameter_list_errors(call):
    raises(call)


def test_parameter_dict():
    def program(T):
        params = T.nn.ParameterDict({"b": T.zeros(2), "a": T.nn.Parameter(T.ones(3))})
        params.update(OrderedDict([("z", T.ones(1)), ("c", T.zeros(1, 2))]))
        params.update([("y", T.ones(2, dtype=T.float64))])
        params["x"] = "object"
        popped = params.pop("c")
        model = T.nn.Module()
        model.pd = params
        merged = params | T.nn.ParameterDict({"w": T.ones(1)})
        return (repr(params), list(params), list(params.keys()), len(params), "a" in params,
                [n for n, _ in model.named_parameters()], list(model.state_dict()), popped,
                params.get("missing"), list(merged), params.setdefault("v", T.ones(2)),
                list(reversed(params)), params.popitem()[0], type(params["a"]).__name__)

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.ParameterDict({"a": T.ones(1)})[0],
    lambda T: T.nn.ParameterDict(3),
    lambda T: T.nn.ParameterDict([("a", T.ones(1), 3)]),
    lambda T: T.nn.ParameterDict([3]),
    lambda T: T.nn.ParameterDict()["missing"],
])
def test_parameter_dict_errors(call):
    raises(call)


# --- transposed convolution -------------------------------------------------------------------

CONV_T = {
    "1d": (1, (2, 4, 5), (4, 3, 3), {}),
    "1d_stride": (1, (2, 4, 5), (4, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    "1d_groups_dilation": (1, (1, 4, 6), (4, 1, 2), {"groups": 2, "dilation": 2, "stride": 3,
                                                     "output_padding": 2}),
    "1d_unbatched": (1, (4, 5), (4, 2, 2), {"stride": 2}),
    "2d": (2, (2, 3, 4, 4), (3, 2, 3, 3), {}),
    "2d_full": (2, (1, 4, 3, 5), (4, 3, 2, 3), {"stride": (2, 1), "padding": (1, 0),
                                                "output_padding": (1, 0), "groups": 2,
                                                "dilation": (1, 2)}),
    "2d_unbatched": (2, (3, 4, 4), (3, 2, 2, 2), {"stride": 2}),
}


@pytest.mark.parametrize("key", list(CONV_T))
@pytest.mark.parametrize("bias", [True, False])
def test_conv_transpose_functional(key, bias):
    n, x_shape, w_shape, kwargs = CONV_T[key]
    rs = np.random.RandomState(1)
    arrays = [rs.randn(*x_shape), rs.randn(*w_shape), rs.randn(w_shape[1] * kwargs.get(
        "groups", 1))]

    def program(T):
        x, w, b = (T.tensor(a, requires_grad=True) for a in arrays)
        out = getattr(T.nn.functional, f"conv_transpose{n}d")(x, w, b if bias else None,
                                                               **kwargs)
        graph = next_functions(out.grad_fn)
        weighted_backward(T, out)
        return out, graph, grad_of(x), grad_of(w), grad_of(b)

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 2, 3, 3), T.ones(4, 3, 2, 2)),
    lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 4, 3, 3), T.ones(4, 3, 2, 2),
                                               output_padding=1),
    lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 4, 3, 3), T.ones(4, 3, 2, 2),
                                               stride=2, output_padding=(1, 2)),
    lambda T: T.nn.functional.conv_transpose1d(T.ones(1, 4, 3), T.ones(4, 3, 2),
                                               output_padding=1),
    lambda T: T.nn.functional.conv_transpose1d(T.ones(2, 4, 3, 3), T.ones(4, 3, 2)),
    lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 4, 3, 3), T.ones(4, 3, 2, 2),
                                               padding="same"),
    lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 4, 3, 3), T.ones(4, 3, 2, 2),
                                               padding=3),
    lambda T: T.nn.functional.conv_transpose1d(T.ones(1, 4, 3), T.ones(4, 3, 2), padding=3),
    lambda T: T.nn.functional.conv_transpose1d(T.ones(1, 4, 3), T.ones(4, 3, 2),
                                               stride=(1, 2)),
    lambda T: T.nn.functional.conv_transpose1d(T.ones(1, 4, 3), T.ones(4, 3, 2), stride=0),
    lambda T: T.nn.functional.conv_transpose1d(T.ones(1, 4, 3), T.ones(4, 3, 2), groups=3),
    lambda T: T.nn.ConvTranspose2d(2, 3, 2, padding_mode="reflect"),
])
def test_conv_transpose_errors(call):
    raises(call)


CONV_T_MODULES = {
    "1d": lambda T: T.nn.ConvTranspose1d(2, 3, 2),
    "1d_full": lambda T: T.nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1,
                                              groups=2, bias=False, dilation=2),
    "2d": lambda T: T.nn.ConvTranspose2d(3, 2, (2, 3), stride=(2, 1), padding=(0, 1)),
    "2d_full": lambda T: T.nn.ConvTranspose2d(4, 6, (2, 3), stride=2, padding=1,
                                              output_padding=1, groups=2, bias=False,
                                              dilation=2),
}
CONV_T_INPUTS = {"1d": (2, 2, 5), "1d_full": (1, 4, 4), "2d": (2, 3, 3, 4),
                 "2d_full": (1, 4, 3, 3)}


@pytest.mark.parametrize("key", list(CONV_T_MODULES))
def test_conv_transpose_modules(key):
    x = RS.randn(*CONV_T_INPUTS[key])

    def program(T):
        m = set_weights(T, CONV_T_MODULES[key](T))
        inp = T.tensor(x, requires_grad=True)
        out = m(inp)
        weighted_backward(T, out)
        return (repr(m), [(n, tuple(p.shape)) for n, p in m.named_parameters()], out,
                grad_of(inp), param_grads(m))

    ok(program)


@pytest.mark.parametrize("size", [[16, 16], [1, 3, 14, 15], [17, 16], [16], [1, 2, 3, 4, 5]])
def test_conv_transpose_output_size(size):
    def program(T):
        m = set_weights(T, T.nn.ConvTranspose2d(2, 3, 2, stride=3))
        return m(T.ones(1, 2, 5, 5, dtype=T.float64), output_size=size)

    same(program)


def test_conv_transpose_init_bounds():
    """Weight (in, out/groups, k...) drawn with kaiming_uniform(a=sqrt(5)): fan_in is
    out/groups * k, as torch computes it from dim 1."""
    m = jaxgrad.nn.ConvTranspose2d(4, 6, 3, groups=2)
    bound = 1 / math.sqrt(3 * 9)
    w = np.asarray(m.weight.detach()._value)
    assert w.shape == (4, 3, 3, 3)
    assert np.abs(w).max() <= bound and np.abs(w).max() > bound / 2
    assert np.abs(np.asarray(m.bias.detach()._value)).max() <= bound


# --- one_hot ----------------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.one_hot(T.tensor([0, 3, 1])),
    lambda T: T.nn.functional.one_hot(T.tensor([[0, 1], [2, 0]]), 5),
    lambda T: T.nn.functional.one_hot(T.tensor(2)),
    lambda T: T.nn.functional.one_hot(T.tensor([], dtype=T.int64), 3),
    lambda T: T.nn.functional.one_hot(T.tensor([1.0])),
    lambda T: T.nn.functional.one_hot(T.tensor([1, 2], dtype=T.int32)),
    lambda T: T.nn.functional.one_hot(T.tensor([1, -1])),
    lambda T: T.nn.functional.one_hot(T.tensor([1, 3]), 3),
    lambda T: T.nn.functional.one_hot(T.tensor([], dtype=T.int64)),
    lambda T: T.nn.functional.one_hot(T.tensor([1, 2]), -2),
])
def test_one_hot(call):
    same(call)


# --- losses -----------------------------------------------------------------------------------

LOSSES = {
    "smooth_l1": lambda F, a, b: F.smooth_l1_loss(a, b),
    "smooth_l1_beta_sum": lambda F, a, b: F.smooth_l1_loss(a, b, beta=0.3, reduction="sum"),
    "smooth_l1_beta0": lambda F, a, b: F.smooth_l1_loss(a, b, beta=0.0),
    "smooth_l1_none": lambda F, a, b: F.smooth_l1_loss(a, b, reduction="none", beta=2.0),
    "huber": lambda F, a, b: F.huber_loss(a, b),
    "huber_delta_none": lambda F, a, b: F.huber_loss(a, b, reduction="none", delta=0.5),
    "huber_weight": lambda F, a, b: F.huber_loss(a, b, delta=2.0, weight=b.detach().abs()),
    "huber_weight_sum": lambda F, a, b: F.huber_loss(a, b, reduction="sum",
                                                     weight=b.detach().abs()),
    "kl_batchmean": lambda F, a, b: F.kl_div(a.log_softmax(-1), b.softmax(-1),
                                             reduction="batchmean"),
    "kl_sum": lambda F, a, b: F.kl_div(a.log_softmax(-1), b.softmax(-1), reduction="sum"),
    "kl_none": lambda F, a, b: F.kl_div(a, b.abs(), reduction="none"),
    "kl_zero_target": lambda F, a, b: F.kl_div(a, b.relu(), reduction="sum"),
    "kl_log_target": lambda F, a, b: F.kl_div(a, b, reduction="batchmean", log_target=True),
    "kl_log_target_none": lambda F, a, b: F.kl_div(a, b, reduction="none", log_target=True),
}


@pytest.mark.parametrize("key", list(LOSSES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_losses(key, dtype):
    arrays = [RS.randn(3, 4) * 2, RS.randn(3, 4)]

    def program(T):
        a, b = (T.tensor(x, dtype=getattr(T, dtype), requires_grad=True) for x in arrays)
        out = LOSSES[key](T.nn.functional, a, b)
        graph = next_functions(out.grad_fn)
        weighted_backward(T, out)
        return out, graph, grad_of(a), grad_of(b)

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.smooth_l1_loss(T.ones(3), T.ones(3), beta=-1.0),
    lambda T: T.nn.functional.huber_loss(T.ones(3), T.ones(3), delta=0.0),
    lambda T: T.nn.functional.huber_loss(T.ones(3), T.ones(3), weight=T.ones(2)),
    lambda T: T.nn.functional.huber_loss(T.ones(3), T.ones(3), reduction="avg"),
    lambda T: T.nn.functional.huber_loss(T.ones(3), T.ones(3), reduction="avg",
                                         weight=T.ones(3)),
    lambda T: T.nn.functional.smooth_l1_loss(T.ones(3), T.ones(3), reduction="avg"),
    lambda T: T.nn.functional.kl_div(T.ones(3), T.ones(4), reduction="sum"),
    lambda T: T.nn.functional.kl_div(T.ones(3), T.ones(3), reduction="avg"),
])
def test_loss_errors(call):
    raises(call)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.kl_div(T.zeros(2, 3), T.ones(2, 3)),
    lambda T: T.nn.functional.kl_div(T.zeros(2, 3), T.ones(2, 3), reduction="batchmean"),
    lambda T: T.nn.functional.smooth_l1_loss(T.zeros(2, 3), T.ones(3)),
    lambda T: T.nn.functional.huber_loss(T.zeros(2, 3), T.ones(1, 3)),
])
def test_loss_warnings(call):
    ok(call)
    assert captured_warnings(call, jaxgrad) == captured_warnings(call, torch)


LOSS_MODULES = {
    "smooth": lambda T: T.nn.SmoothL1Loss(beta=0.5),
    "smooth_sum": lambda T: T.nn.SmoothL1Loss(reduction="sum"),
    "huber": lambda T: T.nn.HuberLoss(delta=0.7),
    "huber_none": lambda T: T.nn.HuberLoss(reduction="none"),
    "kl": lambda T: T.nn.KLDivLoss(reduction="batchmean"),
    "kl_log": lambda T: T.nn.KLDivLoss(reduction="sum", log_target=True),
}


@pytest.mark.parametrize("key", list(LOSS_MODULES))
def test_loss_modules(key):
    arrays = [RS.randn(2, 5), RS.randn(2, 5)]

    def program(T):
        loss = LOSS_MODULES[key](T)
        a = T.tensor(arrays[0], requires_grad=True)
        b = T.tensor(arrays[1]).softmax(-1) if key == "kl" else T.tensor(arrays[1])
        out = loss(a, b)
        weighted_backward(T, out)
        return repr(loss), out, grad_of(a), loss.__dict__.get("beta"), loss.__dict__.get(
            "delta"), loss.__dict__.get("log_target"), loss.reduction

    ok(program)


# --- scaled_dot_product_attention -------------------------------------------------------------

MASK = RS.rand(4, 5) > 0.4
MASK[1] = False  # a row with nothing to attend to
SDPA = {
    "plain": ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8), {}),
    "causal": ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8), {"is_causal": True}),
    "causal_square_scale": ((1, 2, 5, 4), (1, 2, 5, 4), (1, 2, 5, 4),
                            {"is_causal": True, "scale": 0.3}),
    "bool_mask": ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8), {"mask": MASK}),
    "float_mask": ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8), {"mask": RS.randn(3, 4, 5)}),
    "gqa": ((2, 6, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8), {"enable_gqa": True}),
    "math_3d": ((3, 4, 8), (3, 5, 8), (3, 5, 8), {}),
    "math_3d_bool_mask": ((3, 4, 8), (3, 5, 8), (3, 5, 8), {"mask": MASK}),
    "math_3d_causal": ((3, 4, 8), (3, 5, 8), (3, 5, 8), {"is_causal": True}),
    "math_2d": ((4, 8), (5, 8), (5, 8), {"scale": -0.5}),
    "math_value_dim": ((1, 3, 4, 8), (1, 3, 5, 8), (1, 3, 5, 6), {"mask": RS.randn(4, 5)}),
    "math_gqa": ((1, 6, 4, 8), (1, 3, 5, 8), (1, 3, 5, 6), {"enable_gqa": True}),
    "math_mask_grad": ((1, 2, 4, 8), (1, 2, 5, 8), (1, 2, 5, 8),
                       {"mask": RS.randn(4, 5), "mask_grad": True}),
    "causal_and_mask_3d": ((3, 4, 8), (3, 5, 8), (3, 5, 8), {"is_causal": True,
                                                             "mask": MASK}),
}


@pytest.mark.parametrize("key", list(SDPA))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scaled_dot_product_attention(key, dtype):
    q_shape, k_shape, v_shape, kwargs = SDPA[key]
    kwargs = dict(kwargs)
    mask = kwargs.pop("mask", None)
    mask_grad = kwargs.pop("mask_grad", False)
    rs = np.random.RandomState(2)
    arrays = [rs.randn(*s) for s in (q_shape, k_shape, v_shape)]

    def program(T):
        q, k, v = (T.tensor(a, dtype=getattr(T, dtype), requires_grad=True) for a in arrays)
        m = None
        if mask is not None:
            m = (T.tensor(mask) if mask.dtype == bool else
                 T.tensor(mask, dtype=getattr(T, dtype), requires_grad=mask_grad))
        out = T.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, **kwargs)
        weighted_backward(T, out)
        return out, grad_of(q), grad_of(k), grad_of(v), None if m is None else grad_of(m)

    same(program, rtol=1e-5 if dtype == "float32" else None)


def test_scaled_dot_product_attention_no_grad_and_dropout():
    def program(T):
        q = k = v = T.ones(1, 2, 3, 4)
        out = T.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=1.0 - 1e-12)
        x = T.ones(1, 2, 3, 4, requires_grad=True)
        dropped = T.nn.functional.scaled_dot_product_attention(x, x, x, dropout_p=0.5)
        return out, type(dropped.grad_fn).__name__

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.scaled_dot_product_attention(
        T.ones(2, 3, 4, 8), T.ones(2, 3, 5, 8, dtype=T.float64), T.ones(2, 3, 5, 8)),
    lambda T: T.nn.functional.scaled_dot_product_attention(T.ones(4), T.ones(4), T.ones(4)),
    lambda T: T.nn.functional.scaled_dot_product_attention(
        T.ones(2, 3, 4, 8), T.ones(2, 3, 5, 8), T.ones(2, 3, 5, 8),
        attn_mask=T.ones(4, 5, dtype=T.int64)),
    lambda T: T.nn.functional.scaled_dot_product_attention(
        T.ones(3, 4, 8), T.ones(3, 5, 8), T.ones(3, 5, 8), is_causal=True,
        attn_mask=T.ones(4, 5, dtype=T.bool)),
    lambda T: T.nn.functional.scaled_dot_product_attention("q", T.ones(3, 5, 8),
                                                           T.ones(3, 5, 8)),
])
def test_scaled_dot_product_attention_errors(call):
    raises(call)


# --- MultiheadAttention -----------------------------------------------------------------------

MHA = {
    "default": ({}, {}),
    "batch_first": ({"batch_first": True}, {}),
    "no_weights": ({}, {"need_weights": False}),
    "no_weights_batch_first": ({"batch_first": True}, {"need_weights": False}),
    "per_head_weights": ({}, {"average_attn_weights": False}),
    "kdim_vdim": ({"kdim": 3, "vdim": 5}, {}),
    "kdim_vdim_no_weights": ({"kdim": 3, "vdim": 5}, {"need_weights": False}),
    "no_bias": ({"bias": False}, {}),
    "bias_kv_zero_attn": ({"add_bias_kv": True, "add_zero_attn": True}, {}),
    "key_padding_mask": ({}, {"key_padding_mask": "bool"}),
    "key_padding_mask_no_weights": ({}, {"key_padding_mask": "bool", "need_weights": False}),
    "attn_mask_bool": ({}, {"attn_mask": "bool2d"}),
    "attn_mask_float": ({}, {"attn_mask": "float2d"}),
    "attn_mask_3d": ({}, {"attn_mask": "float3d"}),
    "attn_mask_3d_no_weights": ({}, {"attn_mask": "float3d", "need_weights": False}),
    "causal": ({}, {"attn_mask": "causal", "is_causal": True, "need_weights": False}),
    "causal_with_weights": ({}, {"attn_mask": "causal", "is_causal": True}),
    "unbatched": ({}, {"unbatched": True}),
    "self_attention": ({}, {"self": True}),
    "self_attention_batch_first": ({"batch_first": True}, {"self": True,
                                                           "need_weights": False}),
    "shared_kv": ({}, {"shared_kv": True}),
}
E, HEADS, L, S, N = 4, 2, 3, 5, 2


def _mha_masks(T, kind):
    rs = np.random.RandomState(3)
    if kind == "bool":
        m = rs.rand(N, S) > 0.6
        m[:, 0] = False
        return T.tensor(m)
    if kind == "bool2d":
        m = rs.rand(L, S) > 0.6
        m[:, 0] = False
        return T.tensor(m)
    if kind == "float2d":
        return T.tensor(rs.randn(L, S), dtype=T.float64)
    if kind == "float3d":
        return T.tensor(rs.randn(N * HEADS, L, S), dtype=T.float64)
    if kind == "causal":
        return T.tensor(np.triu(np.ones((L, S), bool), 1))
    raise AssertionError(kind)


@pytest.mark.parametrize("key", list(MHA))
def test_multihead_attention(key):
    build, call = MHA[key]
    call = dict(call)
    unbatched, self_attn, shared_kv = (call.pop(k, False) for k in ("unbatched", "self",
                                                                     "shared_kv"))
    kdim, vdim = build.get("kdim", E), build.get("vdim", E)
    rs = np.random.RandomState(4)
    src = S if not (self_attn or call.get("attn_mask") == "causal") else L
    first = build.get("batch_first", False)

    def shape(length, dim):
        if unbatched:
            return (length, dim)
        return (N, length, dim) if first else (length, N, dim)

    arrays = [rs.randn(*shape(L, E)), rs.randn(*shape(src, kdim)), rs.randn(*shape(src, vdim))]

    def program(T):
        m = set_weights(T, T.nn.MultiheadAttention(E, HEADS, **build))
        q, k, v = (T.tensor(a, requires_grad=True) for a in arrays)
        if self_attn:
            k = v = q
        elif shared_kv:
            v = k
        kwargs = {name: _mha_masks(T, value) if isinstance(value, str) else value
                  for name, value in call.items()}
        if "key_padding_mask" in kwargs and unbatched:
            kwargs["key_padding_mask"] = kwargs["key_padding_mask"][0]
        out, weights = m(q, k, v, **kwargs)
        weighted_backward(T, out if weights is None else out + weights.sum() * 0.5)
        return (out, weights, grad_of(q), param_grads(m),
                [n for n, _ in m.named_parameters()], list(m.state_dict()))

    same(program)


def test_multihead_attention_unbatched_and_dropout_eval():
    rs = np.random.RandomState(5)
    x = rs.randn(L, E)

    def program(T):
        m = set_weights(T, T.nn.MultiheadAttention(E, HEADS, dropout=0.5)).eval()
        inp = T.tensor(x, requires_grad=True)
        out, weights = m(inp, inp, inp)
        weighted_backward(T, out)
        return out, weights, grad_of(inp)

    same(program)


def test_multihead_attention_init():
    def program(T):
        m = T.nn.MultiheadAttention(6, 3, add_bias_kv=True)
        return (repr(m), m.in_proj_bias, m.out_proj.bias, m.head_dim, m.q_proj_weight,
                m._qkv_same_embed_dim, type(m.out_proj).__name__)

    ok(program)
    m = jaxgrad.nn.MultiheadAttention(6, 3, kdim=2, vdim=4)
    bound = math.sqrt(6 / (6 + 2))  # xavier_uniform_ of the (6, 2) k projection
    k_proj = np.asarray(m.k_proj_weight.detach()._value)
    assert np.abs(k_proj).max() <= bound and np.abs(k_proj).max() > bound / 2
    assert m.in_proj_weight is None


@pytest.mark.parametrize("call", [
    lambda T: T.nn.MultiheadAttention(0, 2),
    lambda T: T.nn.MultiheadAttention(5, 2),
    lambda T: T.nn.MultiheadAttention(4, 2)(T.ones(3, 2, 4), T.ones(3, 4), T.ones(3, 2, 4)),
    lambda T: T.nn.MultiheadAttention(4, 2)(T.ones(3, 2, 5), T.ones(3, 2, 5), T.ones(3, 2, 5)),
    lambda T: T.nn.MultiheadAttention(4, 2)(T.ones(3, 2, 4), T.ones(3, 2, 4), T.ones(3, 2, 4),
                                            attn_mask=T.ones(2, 2)),
    lambda T: T.nn.MultiheadAttention(4, 2)(T.ones(3, 2, 4), T.ones(3, 2, 4), T.ones(3, 2, 4),
                                            key_padding_mask=T.ones(2, 4, dtype=T.bool)),
    lambda T: T.nn.MultiheadAttention(4, 2)(T.ones(3, 2, 4), T.ones(3, 2, 4), T.ones(3, 2, 4),
                                            is_causal=True),
    lambda T: T.nn.MultiheadAttention(4, 2)(T.ones(3, 2, 4), T.ones(3, 2, 4), T.ones(3, 2, 4),
                                            attn_mask=T.ones(3, 3, dtype=T.int64)),
    lambda T: T.nn.MultiheadAttention(4, 2)(T.ones(2, 3, 2, 4), T.ones(3, 2, 4),
                                            T.ones(3, 2, 4)),
])
def test_multihead_attention_errors(call):
    raises(call)


# --- nn.utils ---------------------------------------------------------------------------------


def _params_with_grads(T, dtype="float32"):
    rs = np.random.RandomState(6)
    params = [T.nn.Parameter(T.tensor(rs.randn(*s), dtype=getattr(T, dtype)))
              for s in ((3,), (2, 2), (4,))]
    for p in params[:2]:
        p.grad = T.tensor(rs.randn(*p.shape) * 3, dtype=p.dtype)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1, "inf", 0.5, 3])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
@pytest.mark.parametrize("foreach", [None, False, True])
def test_clip_grad_norm(norm_type, max_norm, foreach):
    def program(T):
        params = _params_with_grads(T)
        total = T.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type,
                                           foreach=foreach)
        return total, [p.grad for p in params], params[2].grad

    ok(program)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.utils.clip_grad_norm_([], 1.0),
    lambda T: T.nn.utils.clip_grad_norm_(T.nn.Parameter(T.ones(2)), 1.0),
    lambda T: T.nn.utils.clip_grad_norm_(iter(_params_with_grads(T, "float64")), 1.0),
    lambda T: T.nn.utils.get_total_norm([T.ones(2), T.ones(3, dtype=T.float64)]),
])
def test_clip_grad_norm_edge_cases(call):
    ok(call)


def test_clip_grad_norm_nonfinite():
    def program(T):
        params = _params_with_grads(T)
        params[0].grad[0] = float("inf")
        quiet = T.nn.utils.clip_grad_norm_(params, 1.0)
        params[0].grad[0] = float("nan")
        try:
            T.nn.utils.clip_grad_norm_(params, 1.0, norm_type=2, error_if_nonfinite=True)
        except RuntimeError as exc:
            return quiet, Raised(exc)
        return quiet

    ta, _ = same(program)
    assert isinstance(ta, tuple)


@pytest.mark.parametrize("foreach", [None, False, True])
def test_clip_grad_value(foreach):
    def program(T):
        params = _params_with_grads(T)
        result = T.nn.utils.clip_grad_value_(params, 1.5, foreach=foreach)
        return result, [p.grad for p in params], params[2].grad

    ok(program)


def test_parameters_vector_round_trip():
    def program(T):
        model = set_weights(T, T.nn.Sequential(T.nn.Linear(3, 2), T.nn.Linear(2, 1)))
        vec = T.nn.utils.parameters_to_vector(model.parameters())
        T.nn.utils.vector_to_parameters(vec.detach() * 2, model.parameters())
        return vec, [p for p in model.parameters()], [p._version for p in model.parameters()]

    ok(program)


def test_vector_to_parameters_wants_a_tensor():
    raises(lambda T: T.nn.utils.vector_to_parameters([1.0], [T.nn.Parameter(T.ones(1))]))


# --- a small GPT in nanoGPT's style -------------------------------------------------------------


def gpt(T, vocab=11, block=6, embd=8, heads=2, layers=2, dropout=0.0):
    """nanoGPT's model.py, condensed: the same modules, calls and weight tying."""
    nn, F = T.nn, T.nn.functional

    class LayerNorm(nn.Module):
        def __init__(self, ndim, bias):
            super().__init__()
            self.weight = nn.Parameter(T.ones(ndim))
            self.bias = nn.Parameter(T.zeros(ndim)) if bias else None

        def forward(self, x):
            return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(embd, 3 * embd)
            self.c_proj = nn.Linear(embd, embd)
            self.attn_dropout = nn.Dropout(dropout)
            self.resid_dropout = nn.Dropout(dropout)

        def forward(self, x):
            b, t, c = x.size()
            q, k, v = self.c_attn(x).split(embd, dim=2)
            k = k.view(b, t, heads, c // heads).transpose(1, 2)
            q = q.view(b, t, heads, c // heads).transpose(1, 2)
            v = v.view(b, t, heads, c // heads).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None,
                                               dropout_p=dropout if self.training else 0,
                                               is_causal=True)
            y = y.transpose(1, 2).contiguous().view(b, t, c)
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(embd, 4 * embd)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * embd, embd)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = LayerNorm(embd, True)
            self.attn = CausalSelfAttention()
            self.ln_2 = LayerNorm(embd, True)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.block_size = block
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab, embd), wpe=nn.Embedding(block, embd),
                drop=nn.Dropout(dropout), h=nn.ModuleList([Block() for _ in range(layers)]),
                ln_f=LayerNorm(embd, True)))
            self.lm_head = nn.Linear(embd, vocab, bias=False)
            self.transformer.wte.weight = self.lm_head.weight

        def forward(self, idx, targets=None):
            _, t = idx.size()
            pos = T.arange(0, t, dtype=T.long)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for blk in self.transformer.h:
                x = blk(x)
            x = self.transformer.ln_f(x)
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
            return logits, loss

        def crop_block_size(self, block_size):
            self.block_size = block_size
            self.transformer.wpe.weight = nn.Parameter(
                self.transformer.wpe.weight[:block_size])

        def configure_optimizers(self, weight_decay, learning_rate, betas):
            param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
            decay = [p for n, p in param_dict.items() if p.dim() >= 2]
            nodecay = [p for n, p in param_dict.items() if p.dim() < 2]
            groups = [{"params": decay, "weight_decay": weight_decay},
                      {"params": nodecay, "weight_decay": 0.0}]
            return T.optim.AdamW(groups, lr=learning_rate, betas=betas)

    return GPT()


def test_nanogpt_style_training():
    rs = np.random.RandomState(7)
    idx = rs.randint(0, 11, (2, 6))
    targets = rs.randint(0, 11, (2, 6))
    targets[0, 0] = -1

    def program(T):
        T.manual_seed(0)
        model = gpt(T)
        rs_w = np.random.RandomState(8)
        with T.no_grad():
            for _, p in model.named_parameters():
                p.copy_(T.tensor(rs_w.randn(*p.shape) * 0.2, dtype=T.float32))
        optimizer = model.configure_optimizers(0.1, 1e-2, (0.9, 0.95))
        losses = []
        for _ in range(3):
            _, loss = model(T.tensor(idx), T.tensor(targets))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            norm = T.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            losses.append((loss.detach(), norm))
        model.crop_block_size(4)
        logits, loss = model(T.tensor(idx[:, :4]), T.tensor(targets[:, :4]))
        probs = F_softmax(T, logits[:, -1, :])
        return (losses, probs, loss, [n for n, _ in model.named_parameters()],
                model.transformer.wte.weight is model.lm_head.weight,
                tuple(model.transformer.wpe.weight.shape))

    same(program, rtol=2e-5)


def F_softmax(T, logits):
    return T.nn.functional.softmax(logits / 0.8, dim=-1)


@pytest.mark.parametrize("dtypes", [("float64", "float32", "float32"),
                                    ("float32", "float32", "float64"),
                                    ("float32", "float64", "float64")])
def test_linear_and_addmm_refuse_mixed_dtypes_as_torch(dtypes):
    def program(T):
        x, w, b = (T.ones(*s, dtype=getattr(T, d)) for s, d in zip(((2, 3), (4, 3), (4,)), dtypes))
        return attempt(lambda: T.nn.functional.linear(x, w, b)), attempt(
            lambda: T.addmm(b, x, w.t()))

    ok(program)


def test_linear_saves_addmm_scalars_as_torch():
    def program(T):
        x, w, b = (T.ones(*s, requires_grad=True) for s in ((2, 3), (4, 3), (4,)))
        fn = T.nn.functional.linear(x, w, b).grad_fn
        return type(fn).__name__, fn._saved_alpha, fn._saved_beta, fn._saved_mat1

    ok(program)
