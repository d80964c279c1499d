"""jaxgrad.nn layer and loss modules against torch.nn: reprs, parameter/buffer names and
state dicts, constructor and input errors, forward values, gradients and grad_fn names with
weights copied from torch, running statistics, and (jaxgrad only) the distributions the
parameters are initialised from."""

from __future__ import annotations

import math
import re
from collections import OrderedDict

import numpy as np
import pytest

from differential import (
    Raised,
    attempt,
    captured_warnings,
    grad_of,
    next_functions,
    ok,
    raises,
    same,
)

torch = pytest.importorskip("torch")
import jaxgrad  # noqa: E402

RS = np.random.RandomState(4)


def arrays_for(module, seed=0):
    """Fixed random values for each parameter of ``module`` (a torch or jaxgrad module)."""
    rs = np.random.RandomState(seed)
    return {name: rs.randn(*p.shape) for name, p in module.named_parameters()}


def with_weights(T, module, seed=0, dtype="float64"):
    """``module`` cast to ``dtype`` with its parameters overwritten by fixed values."""
    module = module.to(getattr(T, dtype))
    with T.no_grad():
        for name, values in arrays_for(module, seed).items():
            module.get_parameter(name).copy_(T.tensor(values))
    return module


def detached(grad):
    """A gradient's values and flags (the version counters of gradients are compared in
    test_grad_versions.py, not here)."""
    return None if grad is None else grad.clone()


def grads(module):
    return OrderedDict((name, detached(p.grad)) for name, p in module.named_parameters())


def forward_backward(T, module, *arrays, dtype="float64", integer_inputs=()):
    """Run ``module`` on inputs made from ``arrays``; backpropagate a fixed weighting of the
    output and return output, input gradients, parameter gradients and the output graph."""
    inputs = [T.tensor(a) if i in integer_inputs else
              T.tensor(a, dtype=getattr(T, dtype), requires_grad=True)
              for i, a in enumerate(arrays)]
    out = module(*inputs)
    weights = T.tensor(np.linspace(-1.0, 1.5, out.numel()).reshape(tuple(out.shape)),
                       dtype=out.dtype)
    (out * weights).sum().backward()
    return (out, [detached(x.grad) for x in inputs if x.requires_grad], grads(module),
            next_functions(out.grad_fn))


# -- repr, parameters, buffers, state dicts -------------------------------------------------

BUILDS = {
    "conv1d": lambda T: T.nn.Conv1d(2, 4, 3),
    "conv1d_full": lambda T: T.nn.Conv1d(4, 6, (5,), stride=2, padding=1, dilation=2, groups=2,
                                         bias=False),
    "conv1d_same": lambda T: T.nn.Conv1d(2, 4, 4, padding="same", dilation=3),
    "conv2d": lambda T: T.nn.Conv2d(3, 8, 3, padding=1),
    "conv2d_tuples": lambda T: T.nn.Conv2d(4, 4, (3, 2), stride=(2, 1), padding=(0, 1),
                                           dilation=(1, 2), groups=4),
    "conv2d_valid": lambda T: T.nn.Conv2d(1, 2, 2, padding="valid"),
    "conv2d_list_args": lambda T: T.nn.Conv2d(2, 2, [2, 3], stride=[1, 2]),
    "maxpool": lambda T: T.nn.MaxPool2d(2),
    "maxpool_full": lambda T: T.nn.MaxPool2d((3, 2), stride=1, padding=1, dilation=(1, 2),
                                             return_indices=True, ceil_mode=True),
    "avgpool": lambda T: T.nn.AvgPool2d(3, stride=2, padding=1),
    "avgpool_flags": lambda T: T.nn.AvgPool2d((2, 3), ceil_mode=True, count_include_pad=False,
                                              divisor_override=4),
    "adaptive": lambda T: T.nn.AdaptiveAvgPool2d(3),
    "adaptive_none": lambda T: T.nn.AdaptiveAvgPool2d((None, 2)),
    "bn1d": lambda T: T.nn.BatchNorm1d(5),
    "bn1d_options": lambda T: T.nn.BatchNorm1d(3, eps=1e-3, momentum=None, affine=False),
    "bn2d": lambda T: T.nn.BatchNorm2d(8),
    "bn2d_untracked": lambda T: T.nn.BatchNorm2d(2, track_running_stats=False),
    "bn2d_no_bias": lambda T: T.nn.BatchNorm2d(2, bias=False),
    "layernorm": lambda T: T.nn.LayerNorm(4),
    "layernorm_shape": lambda T: T.nn.LayerNorm([2, 3], eps=1e-3, bias=False),
    "layernorm_plain": lambda T: T.nn.LayerNorm((3,), elementwise_affine=False),
    "dropout": lambda T: T.nn.Dropout(),
    "dropout_inplace": lambda T: T.nn.Dropout(0.25, inplace=True),
    "embedding": lambda T: T.nn.Embedding(10, 3),
    "embedding_options": lambda T: T.nn.Embedding(5, 2, padding_idx=-2, max_norm=1.5,
                                                  norm_type=1.0),
    "gelu": lambda T: T.nn.GELU(),
    "gelu_tanh": lambda T: T.nn.GELU("tanh"),
    "silu": lambda T: T.nn.SiLU(),
    "silu_inplace": lambda T: T.nn.SiLU(inplace=True),
    "bilinear": lambda T: T.nn.Bilinear(3, 4, 5),
    "bilinear_no_bias": lambda T: T.nn.Bilinear(2, 2, 1, bias=False),
    "mse": lambda T: T.nn.MSELoss(),
    "l1_sum": lambda T: T.nn.L1Loss(reduction="sum"),
    "ce": lambda T: T.nn.CrossEntropyLoss(),
    "ce_options": lambda T: T.nn.CrossEntropyLoss(weight=T.tensor([1.0, 2.0]), ignore_index=1,
                                                  reduction="none", label_smoothing=0.1),
    "nll": lambda T: T.nn.NLLLoss(weight=T.ones(3)),
    "bce": lambda T: T.nn.BCELoss(weight=T.ones(2)),
    "bce_logits": lambda T: T.nn.BCEWithLogitsLoss(weight=T.ones(2),
                                                   pos_weight=T.tensor([1.0, 3.0])),
    "conv1d_reflect": lambda T: T.nn.Conv1d(2, 4, 3, padding=1, padding_mode="reflect"),
    "conv2d_circular_same": lambda T: T.nn.Conv2d(2, 2, (2, 3), padding="same",
                                                  padding_mode="circular"),
    "conv2d_replicate": lambda T: T.nn.Conv2d(2, 2, 3, padding=(1, 2), padding_mode="replicate"),
    "constant_pad1d": lambda T: T.nn.ConstantPad1d(2, 3.5),
    "constant_pad2d": lambda T: T.nn.ConstantPad2d((1, 0, 2, 1), -1),
    "constant_pad3d": lambda T: T.nn.ConstantPad3d([1, 0, 2, 1, 0, 1], 0.5),
    "zero_pad1d": lambda T: T.nn.ZeroPad1d((1, 2)),
    "zero_pad2d": lambda T: T.nn.ZeroPad2d(1),
    "zero_pad3d": lambda T: T.nn.ZeroPad3d((1, 1, 0, 0, 2, 2)),
    "reflection_pad1d": lambda T: T.nn.ReflectionPad1d(2),
    "reflection_pad2d": lambda T: T.nn.ReflectionPad2d((1, 2, 0, 1)),
    "reflection_pad3d": lambda T: T.nn.ReflectionPad3d(1),
    "replication_pad1d": lambda T: T.nn.ReplicationPad1d([3, 0]),
    "replication_pad2d": lambda T: T.nn.ReplicationPad2d(2),
    "replication_pad3d": lambda T: T.nn.ReplicationPad3d((0, 1, 2, 0, 1, 1)),
    "circular_pad1d": lambda T: T.nn.CircularPad1d(1),
    "circular_pad2d": lambda T: T.nn.CircularPad2d((1, 0, 2, 1)),
    "circular_pad3d": lambda T: T.nn.CircularPad3d(1),
    "net": lambda T: T.nn.Sequential(T.nn.Conv2d(1, 4, 3), T.nn.BatchNorm2d(4), T.nn.ReLU(),
                                     T.nn.MaxPool2d(2), T.nn.Flatten(), T.nn.Dropout(0.1),
                                     T.nn.Linear(16, 2)),
}


def deterministic(tensor, lib):
    """A random-initialised parameter is described by shape/dtype/flags only."""
    return (tuple(tensor.shape), str(tensor.dtype), tensor.requires_grad, tensor.is_leaf,
            type(tensor).__name__)


RANDOM_INIT = ("Conv", "Linear", "Bilinear", "Embedding")


def structure(T, module):
    """Everything about a freshly built module that does not depend on random draws."""
    random_params = {f"{prefix}.{n}".lstrip(".")
                     for prefix, sub in module.named_modules()
                     if type(sub).__name__.startswith(RANDOM_INIT)
                     for n, _ in sub.named_parameters(recurse=False)}
    state = module.state_dict()
    return (repr(module), [n for n, _ in module.named_parameters()],
            [n for n, _ in module.named_buffers()], list(state), dict(state._metadata),
            [deterministic(p, T) if n in random_params else p
             for n, p in module.named_parameters()],
            list(module.buffers()),
            {k: getattr(module, k) for k in ("kernel_size", "stride", "padding", "dilation",
                                              "groups", "padding_mode", "normalized_shape",
                                              "padding_idx", "reduction", "ignore_index",
                                              "momentum", "eps", "p", "output_size", "value",
                                              "_reversed_padding_repeated_twice")
             if k in vars(module)})


@pytest.mark.parametrize("name", list(BUILDS))
def test_structure(name):
    ok(lambda T: structure(T, BUILDS[name](T)))


@pytest.mark.parametrize("name", ["conv2d", "bn2d", "layernorm", "embedding", "bilinear",
                                  "ce_options", "bce_logits", "net"])
def test_state_dict_round_trip(name):
    def program(T):
        source = with_weights(T, BUILDS[name](T), seed=1)
        target = with_weights(T, BUILDS[name](T), seed=2)
        result = target.load_state_dict(source.state_dict())
        return repr(result), list(target.state_dict().values()), list(target.parameters())

    ok(program)


# -- constructor and input errors -----------------------------------------------------------

ERRORS = {
    "conv_groups": lambda T: T.nn.Conv2d(2, 2, 3, groups=0),
    "conv_in_groups": lambda T: T.nn.Conv2d(3, 4, 3, groups=2),
    "conv_out_groups": lambda T: T.nn.Conv1d(4, 3, 3, groups=2),
    "conv_same_strided": lambda T: T.nn.Conv2d(1, 1, 3, stride=2, padding="same"),
    "conv_input_dims": lambda T: T.nn.Conv2d(1, 1, 3)(T.ones(3, 3)),
    "conv_input_channels": lambda T: T.nn.Conv2d(2, 1, 1)(T.ones(1, 3, 2, 2)),
    "conv_kernel_too_big": lambda T: T.nn.Conv1d(1, 1, 5)(T.ones(1, 1, 3)),
    "conv_stride_list": lambda T: T.nn.Conv2d(1, 1, 1, stride=(1, 1, 1))(T.ones(1, 1, 2, 2)),
    "maxpool_input": lambda T: T.nn.MaxPool2d(2)(T.ones(4)),
    "maxpool_padding": lambda T: T.nn.MaxPool2d(2, padding=2)(T.ones(1, 4, 4)),
    "avgpool_divisor": lambda T: T.nn.AvgPool2d(2, divisor_override=0)(T.ones(1, 4, 4)),
    "adaptive_input": lambda T: T.nn.AdaptiveAvgPool2d(2)(T.ones(2, 2, 2, 2, 2)),
    "bn1d_4d": lambda T: T.nn.BatchNorm1d(3)(T.ones(2, 3, 2, 2)),
    "bn1d_1d": lambda T: T.nn.BatchNorm1d(3)(T.ones(3)),
    "bn2d_3d": lambda T: T.nn.BatchNorm2d(3)(T.ones(3, 2, 2)),
    "bn_single_value": lambda T: T.nn.BatchNorm1d(3)(T.ones(1, 3)),
    "bn_untracked_eval": lambda T: T.nn.BatchNorm1d(3, track_running_stats=False).eval()(
        T.ones(1, 3)),
    "layernorm_shape": lambda T: T.nn.LayerNorm(3)(T.ones(2, 4)),
    "dropout_p": lambda T: T.nn.Dropout(1.5),
    "dropout_negative": lambda T: T.nn.Dropout(-0.1),
    "embedding_padding_high": lambda T: T.nn.Embedding(3, 2, padding_idx=3),
    "embedding_padding_low": lambda T: T.nn.Embedding(3, 2, padding_idx=-4),
    "embedding_index": lambda T: T.nn.Embedding(3, 2)(T.tensor([3])),
    "embedding_float_index": lambda T: T.nn.Embedding(3, 2)(T.tensor([1.0])),
    "embedding_weight_shape": lambda T: T.nn.Embedding(3, 2, _weight=T.ones(2, 3)),
    "embedding_pretrained_1d": lambda T: T.nn.Embedding.from_pretrained(T.ones(3)),
    "gelu_approximate": lambda T: T.nn.GELU("fast")(T.ones(1)),
    "bilinear_zero": lambda T: T.nn.Bilinear(0, 2, 2),
    "bilinear_sizes": lambda T: T.nn.Bilinear(2, 3, 1)(T.ones(1, 3), T.ones(1, 3)),
    "loss_reduction": lambda T: T.nn.MSELoss(reduction="avg")(T.ones(1), T.ones(1)),
    "ce_smoothing": lambda T: T.nn.CrossEntropyLoss(label_smoothing=2.0)(T.ones(1, 2),
                                                                         T.tensor([0])),
    "bce_shape": lambda T: T.nn.BCELoss()(T.ones(2) / 2, T.ones(3)),
    "bce_logits_shape": lambda T: T.nn.BCEWithLogitsLoss()(T.ones(2), T.ones(1, 2)),
    "circular_pad1d_dims": lambda T: T.nn.CircularPad1d(1)(T.ones(3)),
    "circular_pad2d_dims": lambda T: T.nn.CircularPad2d(1)(T.ones(1, 1, 1, 3, 3)),
    "reflection_pad1d_too_big": lambda T: T.nn.ReflectionPad1d(3)(T.ones(1, 3)),
    "reflection_pad2d_tuple_length": lambda T: T.nn.ReflectionPad2d((1, 1, 1))(T.ones(1, 3, 3)),
    "zero_pad2d_dims": lambda T: T.nn.ZeroPad2d(1)(T.ones(3)),
    "conv_reflect_too_big": lambda T: T.nn.Conv1d(1, 1, 3, padding=3,
                                                  padding_mode="reflect")(T.ones(1, 1, 3)),
    "conv_circular_unbatched_wrap": lambda T: T.nn.Conv2d(1, 1, 1, padding=(0, 4),
                                                          padding_mode="circular")(
        T.ones(1, 3, 3)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    raises(ERRORS[name])


@pytest.mark.parametrize("build", [
    lambda T: T.nn.Conv2d(1, 1, 3, padding="full"),
    lambda T: T.nn.Conv1d(1, 1, 3, padding_mode="mirror"),
])
def test_errors_listing_a_set(build):
    """These messages print a set, whose order differs between processes (in torch too):
    compare them with the set's items sorted."""

    def sorted_sets(message):
        return re.sub(r"\{([^}]*)\}", lambda m: str(sorted(m.group(1).split(", "))), message)

    ta, jb = attempt(lambda: build(torch)), attempt(lambda: build(jaxgrad))
    assert isinstance(ta, Raised) and isinstance(jb, Raised), (ta, jb)
    assert (jb.cls, sorted_sets(jb.message)) == (ta.cls, sorted_sets(ta.message))


# -- forward and backward with weights copied from torch ------------------------------------

x1d, x2d = RS.randn(2, 4, 9), RS.randn(2, 4, 7, 6)
LAYERS = {
    "conv1d": (lambda T: T.nn.Conv1d(4, 6, 3), [x1d]),
    "conv1d_options": (lambda T: T.nn.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2,
                                             groups=2, bias=False), [x1d]),
    "conv1d_same_even": (lambda T: T.nn.Conv1d(4, 2, 4, padding="same"), [x1d]),
    "conv1d_unbatched": (lambda T: T.nn.Conv1d(4, 3, 2), [x1d[0]]),
    "conv2d": (lambda T: T.nn.Conv2d(4, 3, 3, padding=1), [x2d]),
    "conv2d_options": (lambda T: T.nn.Conv2d(4, 4, (3, 2), stride=(2, 1), padding=(1, 0),
                                             dilation=(1, 2), groups=4), [x2d]),
    "conv2d_same": (lambda T: T.nn.Conv2d(4, 2, (2, 3), padding="same", dilation=2), [x2d]),
    "conv2d_valid_unbatched": (lambda T: T.nn.Conv2d(4, 2, 2, padding="valid"), [x2d[1]]),
    "maxpool": (lambda T: T.nn.MaxPool2d(2), [x2d]),
    "maxpool_options": (lambda T: T.nn.MaxPool2d(3, stride=2, padding=1, dilation=1,
                                                 ceil_mode=True), [x2d[0]]),
    "avgpool": (lambda T: T.nn.AvgPool2d(2, stride=1), [x2d]),
    "avgpool_options": (lambda T: T.nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                                 count_include_pad=False), [x2d]),
    "avgpool_divisor": (lambda T: T.nn.AvgPool2d((2, 3), divisor_override=5), [x2d]),
    "adaptive": (lambda T: T.nn.AdaptiveAvgPool2d((3, 4)), [x2d]),
    "adaptive_global": (lambda T: T.nn.AdaptiveAvgPool2d(1), [x2d]),
    "adaptive_none": (lambda T: T.nn.AdaptiveAvgPool2d((None, 4)), [x2d[0]]),
    "adaptive_global_5d": (lambda T: T.nn.AdaptiveAvgPool2d(1), [x2d[:, :, None]]),
    "conv1d_reflect": (lambda T: T.nn.Conv1d(4, 3, 3, padding=2, padding_mode="reflect"),
                       [x1d]),
    "conv1d_circular_same_even": (lambda T: T.nn.Conv1d(4, 2, 4, padding="same",
                                                        padding_mode="circular"), [x1d]),
    "conv1d_replicate_unbatched": (lambda T: T.nn.Conv1d(4, 2, 2, stride=2, padding=3,
                                                         padding_mode="replicate"), [x1d[0]]),
    "conv2d_reflect": (lambda T: T.nn.Conv2d(4, 2, 3, padding=(1, 2), dilation=(2, 1),
                                             padding_mode="reflect"), [x2d]),
    "conv2d_replicate_groups": (lambda T: T.nn.Conv2d(4, 4, 2, padding=1, groups=2,
                                                      padding_mode="replicate"), [x2d]),
    "conv2d_circular": (lambda T: T.nn.Conv2d(4, 3, (3, 2), stride=2, padding=(2, 1),
                                              padding_mode="circular"), [x2d]),
    "conv2d_circular_same_unbatched": (lambda T: T.nn.Conv2d(4, 1, (2, 3), padding="same",
                                                             padding_mode="circular"), [x2d[0]]),
    "constant_pad1d": (lambda T: T.nn.ConstantPad1d((2, -1), 0.5), [x1d]),
    "constant_pad2d": (lambda T: T.nn.ConstantPad2d(1, -2.0), [x2d]),
    "constant_pad3d": (lambda T: T.nn.ConstantPad3d((1, 0, 0, 2, 1, 1), 1.0), [x2d]),
    "zero_pad1d": (lambda T: T.nn.ZeroPad1d(2), [x1d[0]]),
    "zero_pad2d": (lambda T: T.nn.ZeroPad2d((1, 0, -1, 2)), [x2d]),
    "zero_pad3d": (lambda T: T.nn.ZeroPad3d(1), [x2d[0]]),
    "reflection_pad1d": (lambda T: T.nn.ReflectionPad1d((3, 8)), [x1d]),
    "reflection_pad2d": (lambda T: T.nn.ReflectionPad2d((1, 5, 6, 0)), [x2d]),
    "reflection_pad2d_unbatched": (lambda T: T.nn.ReflectionPad2d(2), [x2d[1]]),
    "reflection_pad3d": (lambda T: T.nn.ReflectionPad3d((1, 2, 0, 3, 2, 1)), [x2d]),
    "replication_pad1d": (lambda T: T.nn.ReplicationPad1d((0, 12)), [x1d[1]]),
    "replication_pad2d": (lambda T: T.nn.ReplicationPad2d((3, 1, 2, 9)), [x2d]),
    "replication_pad3d": (lambda T: T.nn.ReplicationPad3d(1), [x2d[:1, None]]),
    "circular_pad1d": (lambda T: T.nn.CircularPad1d((9, 0)), [x1d]),
    "circular_pad2d": (lambda T: T.nn.CircularPad2d((1, 6, 2, -3)), [x2d]),
    "circular_pad3d": (lambda T: T.nn.CircularPad3d((1, 0, 2, 1, 1, 1)), [x2d]),
    "bn1d_2d": (lambda T: T.nn.BatchNorm1d(4), [RS.randn(5, 4)]),
    "bn1d_3d": (lambda T: T.nn.BatchNorm1d(4), [x1d]),
    "bn2d": (lambda T: T.nn.BatchNorm2d(4), [x2d]),
    "bn2d_plain": (lambda T: T.nn.BatchNorm2d(4, affine=False), [x2d]),
    "bn2d_untracked": (lambda T: T.nn.BatchNorm2d(4, track_running_stats=False), [x2d]),
    "bn2d_no_bias": (lambda T: T.nn.BatchNorm2d(4, bias=False, eps=1e-2), [x2d]),
    "layernorm": (lambda T: T.nn.LayerNorm(6), [x2d]),
    "layernorm_2d": (lambda T: T.nn.LayerNorm((7, 6), eps=1e-3), [x2d]),
    "layernorm_no_bias": (lambda T: T.nn.LayerNorm(9, bias=False), [x1d]),
    "layernorm_plain": (lambda T: T.nn.LayerNorm(9, elementwise_affine=False), [x1d]),
    "gelu": (lambda T: T.nn.GELU(), [x1d]),
    "gelu_tanh": (lambda T: T.nn.GELU(approximate="tanh"), [x1d]),
    "silu": (lambda T: T.nn.SiLU(), [x1d]),
    "bilinear": (lambda T: T.nn.Bilinear(3, 4, 5), [RS.randn(2, 3), RS.randn(2, 4)]),
    "bilinear_3d_no_bias": (lambda T: T.nn.Bilinear(3, 2, 2, bias=False),
                            [RS.randn(2, 5, 3), RS.randn(2, 5, 2)]),
    "dropout_zero": (lambda T: T.nn.Dropout(0.0), [x1d]),
    "embedding": (lambda T: T.nn.Embedding(6, 3), [np.array([[0, 5, 2], [2, 2, 1]])]),
    "embedding_padding": (lambda T: T.nn.Embedding(6, 3, padding_idx=2),
                          [np.array([[0, 5, 2], [2, 2, 1]])]),
}


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("name", list(LAYERS))
def test_forward_backward(name, train):
    build, arrays = LAYERS[name]
    integer = (0,) if name.startswith("embedding") else ()

    def program(T):
        module = with_weights(T, build(T)).train(train)
        return forward_backward(T, module, *arrays, integer_inputs=integer)

    ok(program)


@pytest.mark.parametrize("name", ["conv2d_options", "bn2d", "layernorm_2d", "bilinear",
                                  "embedding_padding"])
def test_forward_backward_float32(name):
    build, arrays = LAYERS[name]
    integer = (0,) if name.startswith("embedding") else ()

    def program(T):
        module = with_weights(T, build(T), dtype="float32")
        return forward_backward(T, module, *arrays, dtype="float32", integer_inputs=integer)

    ok(program, rtol=2e-5)


def test_silu_inplace():
    def program(T):
        x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
        h = x * 1
        y = T.nn.SiLU(inplace=True)(h)
        y.sum().backward()
        return y is h, y, x.grad, h._version

    ok(program)


def test_conv_module_graph_and_forward_helper():
    image = RS.randn(1, 2, 3, 3)

    def program(T):
        conv = with_weights(T, T.nn.Conv2d(2, 3, 2))
        x = T.tensor(image, requires_grad=True)
        weight = T.tensor(np.ones((3, 2, 2, 2)))
        return conv(x), conv._conv_forward(x, weight, None), conv.transposed, conv.output_padding

    ok(program)


def test_maxpool_return_indices():
    def program(T):
        pool = T.nn.MaxPool2d(2, return_indices=True)
        x = T.tensor(x2d, requires_grad=True)
        out, indices = pool(x)
        out.sum().backward()
        return out, indices, detached(x.grad)

    ok(program)


# -- batch norm running statistics ------------------------------------------------------------

BATCHES = [RS.randn(4, 3, 2, 2) * (i + 1) + i for i in range(3)]


@pytest.mark.parametrize("options", [
    {}, {"momentum": 0.3}, {"momentum": None}, {"affine": False}, {"eps": 0.1},
    {"track_running_stats": False},
], ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_batchnorm_running_stats(options, dtype):
    def program(T):
        bn = with_weights(T, T.nn.BatchNorm2d(3, **options), dtype=dtype)
        history = []
        for batch in BATCHES:
            x = T.tensor(batch, dtype=getattr(T, dtype), requires_grad=True)
            out = bn(x)
            out.pow(2).sum().backward()
            history.append((out, detached(x.grad), list(bn.buffers()),
                            None if bn.num_batches_tracked is None
                            else bn.num_batches_tracked.item()))
        bn.eval()
        x = T.tensor(BATCHES[0], dtype=getattr(T, dtype), requires_grad=True)
        out = bn(x)
        out.sum().backward()
        return (history, out, detached(x.grad), grads(bn), list(bn.buffers()),
                dict(bn.state_dict()))

    ok(program, rtol=None if dtype == "float64" else 2e-5)


def test_batchnorm1d_running_stats_3d():
    def program(T):
        bn = T.nn.BatchNorm1d(4, momentum=None).double()
        for batch in (x1d, x1d * 2 + 1):
            bn(T.tensor(batch))
        return list(bn.buffers()), bn.eval()(T.tensor(x1d))

    ok(program)


def test_batchnorm_reset_and_counts():
    def program(T):
        bn = T.nn.BatchNorm1d(2)
        with T.no_grad():
            bn.weight.fill_(3.0)
        bn(T.tensor([[1.0, 2.0], [3.0, 5.0]]))
        bn(T.tensor([[1.0, 2.0], [3.0, 5.0]]))
        counted = (bn.num_batches_tracked.clone(), bn.num_batches_tracked._version)
        bn.reset_running_stats()
        after_stats = list(bn.buffers()) + list(bn.parameters())
        bn.reset_parameters()
        return counted, after_stats, list(bn.buffers()) + list(bn.parameters())

    ok(program)


def test_batchnorm_eval_without_running_stats_uses_batch():
    batch = RS.randn(4, 3)

    def program(T):
        bn = T.nn.BatchNorm1d(3, track_running_stats=False).double().eval()
        x = T.tensor(batch, requires_grad=True)
        out = bn(x)
        out.pow(3).sum().backward()
        return out, detached(x.grad), grads(bn)

    ok(program)


@pytest.mark.parametrize("drop_count", [True, False])
@pytest.mark.parametrize("keep_metadata", [True, False])
def test_batchnorm_load_old_checkpoint(drop_count, keep_metadata):
    """A state dict without version-2 metadata may omit num_batches_tracked."""

    def program(T):
        source = T.nn.Sequential(T.nn.BatchNorm1d(2))
        source(T.tensor([[1.0, 2.0], [3.0, 5.0]]))
        state = source.state_dict()
        if drop_count:
            del state["0.num_batches_tracked"]
        if not keep_metadata:
            state = dict(state)
        target = T.nn.Sequential(T.nn.BatchNorm1d(2))
        target[0].num_batches_tracked.fill_(7)
        result = target.load_state_dict(state)
        return repr(result), list(target.buffers())

    same(program)


# -- dropout ------------------------------------------------------------------------------


@pytest.mark.parametrize("program", [
    lambda T: (lambda x: (T.nn.Dropout(0.3).eval()(x) is x))(T.ones(3, requires_grad=True)),
    lambda T: (lambda x: (T.nn.Dropout(0.0)(x) is x))(T.ones(3, requires_grad=True)),
    lambda T: T.nn.Dropout(1.0)(T.ones(2, 3, requires_grad=True)),
    lambda T: (lambda x: (T.nn.Dropout(1.0, inplace=True)(x) is x, x._version))(T.ones(4)),
    lambda T: T.nn.Dropout(0.5)(T.ones(0, 3)),
])
def test_dropout_deterministic_cases(program):
    ok(program)


@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_dropout_training_statistics(p):
    jaxgrad.manual_seed(3)
    drop = jaxgrad.nn.Dropout(p)
    x = jaxgrad.ones(200_000, requires_grad=True)
    out = drop(x)
    out.sum().backward()
    values = np.asarray(out.detach()._value)
    kept = values != 0
    assert type(out.grad_fn).__name__ == "MulBackward0"
    np.testing.assert_allclose(values[kept], 1 / (1 - p), rtol=1e-6)
    assert abs(kept.mean() - (1 - p)) < 5 * math.sqrt(p * (1 - p) / values.size)
    np.testing.assert_array_equal(np.asarray(x.grad._value), values)


def test_dropout_inplace_training():
    jaxgrad.manual_seed(0)
    x = jaxgrad.ones(1000)
    out = jaxgrad.nn.Dropout(0.5, inplace=True)(x)
    assert out is x and x._version == 1
    assert set(np.unique(np.asarray(x._value)).tolist()) == {0.0, 2.0}


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


# -- embedding ----------------------------------------------------------------------------


def test_embedding_padding_row_is_zero_and_gets_no_gradient():
    def program(T):
        emb = T.nn.Embedding(5, 3, padding_idx=-1)
        row = emb.weight[4].detach().clone()
        out = emb(T.tensor([[4, 1], [4, 4]]))
        out.sum().backward()
        return row, out[0, 0], emb.weight.grad, emb.weight._version

    ok(program)


def test_embedding_max_norm_renormalises_weight():
    def program(T):
        emb = with_weights(T, T.nn.Embedding(4, 3, max_norm=1.0))
        out = emb(T.tensor([0, 2, 2]))
        out.sum().backward()
        return out, emb.weight, emb.weight.grad, emb.weight._version

    ok(program)


def test_embedding_from_pretrained():
    rows = RS.randn(4, 2)

    def program(T):
        table = T.tensor(rows)
        frozen = T.nn.Embedding.from_pretrained(table)
        trained = T.nn.Embedding.from_pretrained(table, freeze=False, padding_idx=1)
        out = trained(T.tensor([1, 3]))
        out.sum().backward()
        table.mul_(2)  # the weight shares the table's storage
        return (repr(frozen), frozen.weight, frozen(T.tensor([2])), trained.weight.grad,
                trained.weight)

    ok(program)


# -- losses ---------------------------------------------------------------------------------

logits, labels = RS.randn(4, 3), np.array([2, 0, 1, 2])
probabilities = 1 / (1 + np.exp(-RS.randn(3, 2)))
LOSSES = {
    "mse": (lambda T: T.nn.MSELoss(), [RS.randn(3, 2), RS.randn(3, 2)]),
    "mse_sum": (lambda T: T.nn.MSELoss(reduction="sum"), [RS.randn(3, 2), RS.randn(3, 2)]),
    "mse_none": (lambda T: T.nn.MSELoss(reduction="none"), [RS.randn(3, 2), RS.randn(3, 2)]),
    "l1": (lambda T: T.nn.L1Loss(), [RS.randn(3, 2), RS.randn(3, 2)]),
    "l1_none": (lambda T: T.nn.L1Loss(reduction="none"), [RS.randn(3, 2), RS.randn(3, 2)]),
    "ce": (lambda T: T.nn.CrossEntropyLoss(), [logits, labels]),
    "ce_sum": (lambda T: T.nn.CrossEntropyLoss(reduction="sum"), [logits, labels]),
    "ce_weight_ignore": (lambda T: T.nn.CrossEntropyLoss(
        weight=T.tensor([0.2, 1.0, 3.0], dtype=T.float64), ignore_index=0), [logits, labels]),
    "ce_smoothing": (lambda T: T.nn.CrossEntropyLoss(label_smoothing=0.2), [logits, labels]),
    "ce_smoothing_weight_none": (lambda T: T.nn.CrossEntropyLoss(
        weight=T.tensor([0.2, 1.0, 3.0], dtype=T.float64), label_smoothing=0.1,
        reduction="none"), [logits, labels]),
    "ce_probabilities": (lambda T: T.nn.CrossEntropyLoss(label_smoothing=0.1),
                         [logits, np.full((4, 3), 1 / 3)]),
    "ce_spatial": (lambda T: T.nn.CrossEntropyLoss(), [RS.randn(2, 3, 2, 2),
                                                      RS.randint(0, 3, (2, 2, 2))]),
    "nll": (lambda T: T.nn.NLLLoss(), [logits, labels]),
    "nll_weight_none": (lambda T: T.nn.NLLLoss(weight=T.tensor([1.0, 0.5, 2.0],
                                                               dtype=T.float64),
                                               reduction="none"), [logits, labels]),
    "nll_ignore": (lambda T: T.nn.NLLLoss(ignore_index=2), [logits, labels]),
    "bce": (lambda T: T.nn.BCELoss(), [probabilities, RS.rand(3, 2)]),
    "bce_weight_sum": (lambda T: T.nn.BCELoss(weight=T.tensor([1.0, 2.0], dtype=T.float64),
                                              reduction="sum"), [probabilities, RS.rand(3, 2)]),
    "bce_logits": (lambda T: T.nn.BCEWithLogitsLoss(), [RS.randn(3, 2), RS.rand(3, 2)]),
    "bce_logits_weights": (lambda T: T.nn.BCEWithLogitsLoss(
        weight=T.tensor([1.0, 2.0], dtype=T.float64),
        pos_weight=T.tensor([3.0, 0.5], dtype=T.float64), reduction="none"),
        [RS.randn(3, 2), RS.rand(3, 2)]),
}
INTEGER_TARGETS = {"ce", "ce_sum", "ce_weight_ignore", "ce_smoothing", "ce_smoothing_weight_none",
                   "ce_spatial", "nll", "nll_weight_none", "nll_ignore"}


@pytest.mark.parametrize("name", list(LOSSES))
def test_losses(name):
    build, (input, target) = LOSSES[name]

    def program(T):
        loss = build(T)
        x = T.tensor(input, requires_grad=True)
        t = T.tensor(target) if name in INTEGER_TARGETS else T.tensor(target, requires_grad=True)
        out = loss(x, t)
        out.sum().backward()
        return (out, detached(x.grad), detached(t.grad), next_functions(out.grad_fn),
                list(loss.state_dict()))

    ok(program)


@pytest.mark.parametrize("flags", [
    {"size_average": False}, {"reduce": False}, {"size_average": True, "reduce": True},
    {"size_average": False, "reduce": True},
], ids=str)
@pytest.mark.parametrize("loss", ["MSELoss", "L1Loss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
                                  "BCEWithLogitsLoss"])
def test_legacy_reduction_flags(loss, flags):
    def program(T):
        module = getattr(T.nn, loss)(**flags)
        return module.reduction, repr(module)

    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_loss_weight_buffers_follow_module_casts():
    def program(T):
        loss = T.nn.CrossEntropyLoss(weight=T.tensor([1.0, 2.0])).double()
        out = loss(T.tensor([[0.5, -0.5]], dtype=T.float64), T.tensor([1]))
        return loss.weight, out, [n for n, _ in loss.named_buffers()]

    ok(program)


# -- a small network end to end ---------------------------------------------------------------


def test_small_convnet_training_step():
    images = RS.randn(3, 1, 6, 6)

    def program(T):
        net = with_weights(T, BUILDS["net"](T), seed=5)
        net[5].p = 0.0  # deterministic dropout
        loss_fn = T.nn.CrossEntropyLoss()
        x = T.tensor(images)
        target = T.tensor([0, 1, 1])
        results = []
        for _ in range(2):
            net.zero_grad()
            loss = loss_fn(net(x), target)
            loss.backward()
            with T.no_grad():
                for p in net.parameters():
                    p.sub_(0.1 * p.grad)
            results.append((loss, list(net.buffers())))
        net.eval()
        return results, net(x), list(net.parameters())

    ok(program)


# -- initialisation distributions (jaxgrad only; values are random) -------------------------


def values(t):
    return np.asarray(t.detach()._value, dtype=np.float64)


def assert_uniform(samples, bound):
    """Samples from U(-bound, bound): inside the bounds, filling them, with the right
    mean and standard deviation."""
    n = samples.size
    assert np.all(np.abs(samples) <= bound)
    assert np.abs(samples).max() > bound * (1 - 20 / n)
    std = bound / math.sqrt(3)
    assert abs(samples.mean()) < 5 * std / math.sqrt(n)
    assert abs(samples.std() - std) < 0.05 * std


@pytest.mark.parametrize("build, fan_in", [
    (lambda: jaxgrad.nn.Conv2d(64, 128, 5), 64 * 25),
    (lambda: jaxgrad.nn.Conv2d(64, 256, (3, 2), groups=4), 16 * 6),
    (lambda: jaxgrad.nn.Conv1d(32, 512, 7), 32 * 7),
])
def test_conv_initialisation(build, fan_in):
    jaxgrad.manual_seed(0)
    conv = build()
    # kaiming_uniform_(a=sqrt(5)): bound = sqrt(6 / ((1 + 5) * fan_in)) = 1 / sqrt(fan_in)
    assert_uniform(values(conv.weight), 1 / math.sqrt(fan_in))
    bias = values(conv.bias)
    assert np.all(np.abs(bias) <= 1 / math.sqrt(fan_in)) and len(np.unique(bias)) == bias.size
    assert conv.weight.dtype == jaxgrad.float32 and conv.weight.is_leaf


def test_conv_bias_distribution():
    jaxgrad.manual_seed(1)
    conv = jaxgrad.nn.Conv1d(4, 40_000, 1)
    assert_uniform(values(conv.bias), 1 / 2)


def test_bilinear_initialisation():
    jaxgrad.manual_seed(2)
    bil = jaxgrad.nn.Bilinear(25, 40, 50_000 // 40)
    assert_uniform(values(bil.weight), 1 / 5)
    assert_uniform(values(jaxgrad.nn.Bilinear(25, 2, 40_000).bias), 1 / 5)


def test_embedding_initialisation():
    jaxgrad.manual_seed(3)
    weight = values(jaxgrad.nn.Embedding(1000, 64, padding_idx=7).weight)
    others = np.delete(weight, 7, axis=0)
    assert np.all(weight[7] == 0)
    assert abs(others.mean()) < 5 / math.sqrt(others.size)
    assert abs(others.std() - 1) < 0.02
    assert abs(np.mean(np.abs(others) < 1) - 0.6827) < 0.01  # normal, not uniform


@pytest.mark.parametrize("build", [
    lambda: jaxgrad.nn.BatchNorm2d(6), lambda: jaxgrad.nn.LayerNorm((2, 3)),
])
def test_norm_initialisation(build):
    norm = build()
    assert np.all(values(norm.weight) == 1) and np.all(values(norm.bias) == 0)


def test_init_draws_differ_between_layers_and_follow_the_seed():
    jaxgrad.manual_seed(9)
    first = values(jaxgrad.nn.Conv2d(2, 3, 3).weight)
    second = values(jaxgrad.nn.Conv2d(2, 3, 3).weight)
    jaxgrad.manual_seed(9)
    again = values(jaxgrad.nn.Conv2d(2, 3, 3).weight)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(first, again)


# -- hooks and copies ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["conv2d", "bn2d", "layernorm", "bilinear"])
def test_full_backward_hooks_see_torch_gradients(name):
    build, arrays = LAYERS[name]

    def program(T):
        module = with_weights(T, build(T))
        seen = []
        module.register_full_backward_hook(
            lambda m, grad_input, grad_output: seen.append(
                ([detached(g) for g in grad_input], [detached(g) for g in grad_output])))
        forward_backward(T, module, *arrays)
        return seen

    ok(program)


def test_deepcopy_keeps_buffers_and_counts():
    def program(T):
        import copy

        bn = T.nn.BatchNorm1d(2)
        bn(T.tensor([[1.0, 2.0], [3.0, 5.0]]))
        twin = copy.deepcopy(bn)
        twin(T.tensor([[0.0, 1.0], [1.0, 0.0]]))
        return list(bn.buffers()), list(twin.buffers()), repr(twin)

    ok(program)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("conv", ["Conv1d", "Conv2d"])
def test_conv_padding_modes_pad_first(conv, mode):
    """A non-zeros padding_mode pads with F.pad, then convolves with padding 0: the graph has
    the padding node under ConvolutionBackward0, and the input gradient flows through it."""
    shape = (2, 3, 6) if conv == "Conv1d" else (2, 3, 5, 6)
    image = RS.randn(*shape)

    def program(T):
        layer = with_weights(T, getattr(T.nn, conv)(3, 2, 3, padding=2, padding_mode=mode))
        x = T.tensor(image, requires_grad=True)
        out = layer(x)
        out.pow(2).sum().backward()
        return (repr(layer), layer._reversed_padding_repeated_twice, out, detached(x.grad),
                grads(layer), next_functions(out.grad_fn))

    ok(program)


def test_linear_zero_in_features_warns_like_torch():
    """Linear.reset_parameters is kaiming_uniform_(a=sqrt(5)): a zero-element weight warns."""

    def program(T):
        layer = T.nn.Linear(0, 3)
        return layer.weight, layer.bias, layer.weight._version, layer.bias._version

    ok(program)
    assert (captured_warnings(lambda T: T.nn.Linear(0, 3), torch)
            == captured_warnings(lambda T: T.nn.Linear(0, 3), jaxgrad))
