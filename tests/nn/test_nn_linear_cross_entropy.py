"""``nn.functional.linear_cross_entropy``, ``nn.LinearCrossEntropyLoss`` and
``nn.LinearCrossEntropyOptions`` against torch 2.13: the reference path (linear, then
cross_entropy) and the chunked path (``options``): values, gradients, grad_fn graphs, the
``_version`` the chunked accumulation leaves, backward twice, errors and warnings."""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pytest

import jaxgrad
from differential import (
    captured_warnings,
    next_functions,
    ok,
    raises,
    torch,
    val,
)

RS = np.random.RandomState(7)  # drawn here once: both libraries see the same arrays
INPUT, WEIGHT, BIAS = RS.randn(6, 4), RS.randn(10, 4), RS.randn(10)
CLASS_WEIGHT = RS.rand(10) + 0.5
K_WEIGHT, K_BIAS = RS.randn(5, 2, 3, 4), RS.randn(5, 2, 3)
K_PROBABILITIES, K_TARGET = RS.rand(3, 5, 2, 3), RS.randint(0, 5, (3, 2, 3))
PROBABILITIES = RS.rand(6, 10)
TARGET = [1, 2, 3, -100, 5, 6]


def leaves(T, dtype="float32", bias=True):
    dt = getattr(T, dtype)
    x = T.tensor(INPUT, dtype=dt, requires_grad=True)
    w = T.tensor(WEIGHT, dtype=dt, requires_grad=True)
    b = T.tensor(BIAS, dtype=dt, requires_grad=True) if bias else None
    return x, w, b


def grads(*tensors):
    return [None if t is None else val(t.grad) for t in tensors]


def weighted_sum(T, out):
    return (out * T.arange(1.0, out.numel() + 1, dtype=out.dtype).reshape(out.shape)).sum()


def run_loss(
    T,
    reduction="mean",
    options=None,
    dtype="float32",
    bias=True,
    class_weight=False,
    ignore_index=None,
    unbatched=False,
    target=TARGET,
):
    """The loss, its version and graph, and the leaves' grads after a weighted backward."""
    x, w, b = leaves(T, dtype, bias)
    cw = T.tensor(CLASS_WEIGHT, dtype=getattr(T, dtype)) if class_weight else None
    t = T.tensor(target)
    xi, ti = (x[1], t[1]) if unbatched else (x, t)
    opts = None if options is None else T.nn.LinearCrossEntropyOptions(**options)
    out = T.nn.functional.linear_cross_entropy(
        xi,
        w,
        ti,
        linear_bias=b,
        weight=cw,
        reduction=reduction,
        ignore_index=ignore_index,
        options=opts,
    )
    version, graph = out._version, next_functions(out.grad_fn)
    weighted_sum(T, out).backward()
    return out, version, graph, grads(x, w, b)


OPTIONS = {
    "reference": None,
    "auto": {},
    "chunk4": {"batch_chunk_size": 4},
    "retain": {"allow_retain_graph": True, "chunking_method": "aspect_ratio"},
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("options", list(OPTIONS))
def test_values_grads_graph_and_version(reduction, options):
    ok(lambda T: run_loss(T, reduction, OPTIONS[options]))


SETTINGS = {
    "class_weight_ignore_index": {
        "class_weight": True,
        "ignore_index": 3,
        "target": [1, 3, 3, 0, 9, 6],
    },
    "no_bias_float64": {"dtype": "float64", "bias": False},
    "float64_weight": {"dtype": "float64", "class_weight": True},
    "unbatched": {"unbatched": True},
    "ignore_in_range": {"ignore_index": 0, "target": [0, 2, 0, 4, 5, 0]},
    "all_ignored": {"target": [-100] * 6},
}
SETTING_CASES = [
    ("class_weight_ignore_index", "reference", "mean"),
    ("class_weight_ignore_index", "chunk4", "mean"),
    ("class_weight_ignore_index", "auto", "none"),
    ("no_bias_float64", "reference", "sum"),
    ("no_bias_float64", "chunk4", "mean"),
    ("no_bias_float64", "auto", "none"),
    ("float64_weight", "chunk4", "sum"),
    ("float64_weight", "auto", "none"),
    ("unbatched", "reference", "none"),
    ("unbatched", "auto", "mean"),
    ("unbatched", "chunk4", "none"),
    ("unbatched", "auto", "sum"),
    ("ignore_in_range", "chunk4", "mean"),
    ("all_ignored", "auto", "mean"),
    ("all_ignored", "chunk4", "none"),
]


@pytest.mark.parametrize(("setting", "options", "reduction"), SETTING_CASES, ids=str)
def test_weights_ignore_index_dtypes_and_unbatched_input(setting, options, reduction):
    ok(lambda T: run_loss(T, reduction, OPTIONS[options], **SETTINGS[setting]))


HALF_CASES = [
    ("float16", "mean", {}),
    ("bfloat16", "none", {}),
    ("float16", "none", {"acc_policy": "compact", "batch_chunk_size": 2}),
    ("bfloat16", "mean", {"acc_policy": "compact", "batch_chunk_size": 2}),
]


@pytest.mark.parametrize(("dtype", "reduction", "options"), HALF_CASES, ids=str)
def test_half_precision_accumulates_in_float32(dtype, reduction, options):
    ok(lambda T: run_loss(T, reduction, options, dtype=dtype), rtol=2e-2)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_empty_batch(reduction):
    def program(T):
        x, w, b = leaves(T)
        out = T.nn.functional.linear_cross_entropy(
            x[:0],
            w,
            T.tensor([], dtype=T.int64),
            linear_bias=b,
            reduction=reduction,
            options=T.nn.LinearCrossEntropyOptions(),
        )
        return out, out._version

    ok(program)


def test_no_grad_and_leaves_that_need_no_grad():
    def program(T):
        x, w, b = leaves(T)
        opts = T.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
        with T.no_grad():
            quiet = T.nn.functional.linear_cross_entropy(x, w, T.tensor(TARGET), options=opts)
        out = T.nn.functional.linear_cross_entropy(
            x.detach(), w, T.tensor(TARGET), linear_bias=b.detach(), options=opts
        )
        graph = next_functions(out.grad_fn)
        out.backward()
        return quiet, quiet._version, out, graph, grads(x, w, b)

    ok(program)


# --- backward twice, create_graph, double backward ---------------------------------------------


@pytest.mark.parametrize("retain", [True, False])
@pytest.mark.parametrize("allow", [True, False])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_a_second_backward(reduction, allow, retain):
    def program(T):
        x, w, b = leaves(T)
        opts = T.nn.LinearCrossEntropyOptions(allow_retain_graph=allow)
        out = T.nn.functional.linear_cross_entropy(
            x, w, T.tensor(TARGET), linear_bias=b, reduction=reduction, options=opts
        )
        loss = out.sum()
        loss.backward(retain_graph=retain)
        first = grads(x, w, b)
        try:
            loss.backward()
        except RuntimeError as exc:
            return first, type(exc).__name__, str(exc)
        return first, grads(x, w, b)

    ok(program)


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_create_graph_gives_gradients_without_history(reduction):
    def program(T):
        x, w, b = leaves(T, "float64")
        out = T.nn.functional.linear_cross_entropy(
            x,
            w,
            T.tensor(TARGET),
            linear_bias=b,
            reduction=reduction,
            options=T.nn.LinearCrossEntropyOptions(),
        )
        gx, gw = T.autograd.grad(out.sum(), (x, w), create_graph=True)
        return val(gx), val(gw)

    ok(program)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_double_backward_on_the_reference_path(reduction):
    def program(T):
        x, w, b = leaves(T, "float64")
        out = T.nn.functional.linear_cross_entropy(
            x, w, T.tensor(TARGET), linear_bias=b, reduction=reduction
        )
        gx, gw = T.autograd.grad(weighted_sum(T, out), (x, w), create_graph=True)
        ((gx * gx).sum() + (gw * gw.sin()).sum()).backward()
        return val(gx), val(gw), grads(x, w, b)

    ok(program)


# --- K-dimensional loss, class probabilities ------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("probabilities", [False, True])
def test_k_dimensional_loss(probabilities, reduction):
    def program(T):
        x = T.tensor(INPUT[:3], dtype=T.float64, requires_grad=True)
        w = T.tensor(K_WEIGHT, dtype=T.float64, requires_grad=True)
        b = T.tensor(K_BIAS, dtype=T.float64, requires_grad=True)
        t = (
            T.tensor(K_PROBABILITIES, dtype=T.float64).softmax(1)
            if probabilities
            else T.tensor(K_TARGET)
        )
        out = T.nn.functional.linear_cross_entropy(
            x, w, t, linear_bias=b, reduction=reduction, label_smoothing=0.1
        )
        graph = next_functions(out.grad_fn)
        weighted_sum(T, out).backward()
        return out, graph, grads(x, w, b)

    ok(program)


@pytest.mark.parametrize("unbatched", [False, True])
def test_class_probabilities_and_label_smoothing(unbatched):
    def program(T):
        x, w, b = leaves(T, "float64")
        t = T.tensor(PROBABILITIES, dtype=T.float64).softmax(1)
        xi, ti = (x[0], t[0]) if unbatched else (x, t)
        out = T.nn.functional.linear_cross_entropy(xi, w, ti, linear_bias=b, label_smoothing=0.2)
        graph = next_functions(out.grad_fn)
        out.backward()
        return out, graph, grads(x, w, b)

    ok(program)


# --- warnings and errors ---------------------------------------------------------------------------

FALLBACKS = {
    "label_smoothing": lambda T, x, w, t: dict(label_smoothing=0.1),
    "probabilities": lambda T, x, w, t: dict(target=T.ones(6, 10) / 10),
    "int32_target": lambda T, x, w, t: dict(target=t.int()),
    "bad_reduction": lambda T, x, w, t: dict(reduction="max"),
}


@pytest.mark.parametrize("case", list(FALLBACKS))
def test_options_that_the_chunked_path_cannot_take_warn_and_fall_back(case):
    def program(T):
        x, w, b = leaves(T)
        t = T.tensor(TARGET)
        kw = {"target": t, **FALLBACKS[case](T, x, w, t)}
        return T.nn.functional.linear_cross_entropy(
            x, w, linear_bias=b, options=T.nn.LinearCrossEntropyOptions(), **kw
        )

    same_outcome = raises if case in ("int32_target", "bad_reduction") else ok
    same_outcome(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_k_dimensional_options_warn():
    def program(T):
        x = T.tensor(INPUT, dtype=T.float32, requires_grad=True)
        w = T.tensor(K_WEIGHT[:, :, 0], dtype=T.float32, requires_grad=True)
        t = T.tensor(K_TARGET[:2].reshape(6, 2) % 5)
        return T.nn.functional.linear_cross_entropy(
            x, w, t, linear_bias=T.zeros(5, 2), options=T.nn.LinearCrossEntropyOptions()
        )

    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


ERRORS = {
    "input_3d": lambda T: ((2, 6, 4), (10, 4), [0] * 6, {}),
    "weight_1d": lambda T: ((6, 4), (4,), [0] * 6, {}),
    "in_features": lambda T: ((6, 3), (10, 4), [0] * 6, {}),
    "bias_shape": lambda T: ((6, 4), (10, 4), [0] * 6, {"linear_bias": T.zeros(3)}),
    "k_dim_unbatched": lambda T: ((4,), (10, 2, 4), 0, {}),
    "probabilities_ignore_index": lambda T: ((6, 4), (10, 4), None, {"ignore_index": 1}),
    "acc_dtype": lambda T: (
        (6, 4),
        (10, 4),
        [0] * 6,
        {"options": T.nn.LinearCrossEntropyOptions(acc_dtype=T.float64)},
    ),
    "chunk_size_conflict": lambda T: (
        (6, 4),
        (10, 4),
        [0] * 6,
        {
            "options": T.nn.LinearCrossEntropyOptions(
                batch_chunk_size=3, chunking_method="aspect_ratio"
            )
        },
    ),
    "weight_dtype": lambda T: ((6, 4), (10, 4), [0] * 6, {"float64_weight": True}),
    "weight_dtype_chunked": lambda T: (
        (6, 4),
        (10, 4),
        [0] * 6,
        {"float64_weight": True, "options": T.nn.LinearCrossEntropyOptions()},
    ),
    "weight_dtype_none": lambda T: (
        (6, 4),
        (10, 4),
        [0] * 6,
        {"float64_weight": True, "reduction": "none", "options": T.nn.LinearCrossEntropyOptions()},
    ),
    "target_size": lambda T: ((6, 4), (10, 4), [0] * 5, {}),
    "target_size_chunked": lambda T: (
        (6, 4),
        (10, 4),
        [0] * 5,
        {"options": T.nn.LinearCrossEntropyOptions()},
    ),
    "target_out_of_range": lambda T: (
        (6, 4),
        (10, 4),
        [0, 1, 2, 3, 4, 10],
        {"options": T.nn.LinearCrossEntropyOptions()},
    ),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors(case):
    def program(T):
        x_shape, w_shape, target, kw = ERRORS[case](T)
        t = T.ones(6, 10) / 10 if target is None else T.tensor(target)
        w = T.ones(w_shape, dtype=T.float64 if kw.pop("float64_weight", False) else T.float32)
        return T.nn.functional.linear_cross_entropy(T.ones(x_shape), w, t, **kw)

    raises(program)


def test_class_weight_of_another_dtype_on_the_reference_path():
    def program(T):
        return T.nn.functional.linear_cross_entropy(
            T.ones(6, 4), T.ones(10, 4), T.tensor([0] * 6), weight=T.ones(10, dtype=T.float64)
        )

    raises(program)


# --- LinearCrossEntropyOptions -------------------------------------------------------------------

BAD_OPTIONS = {
    "acc_policy": {"acc_policy": "fast"},
    "chunking_method": {"chunking_method": "square"},
    "chunking_factor": {"chunking_method": "aspect_ratio:0"},
    "chunking_factor_text": {"chunking_method": "aspect_ratio:x"},
    "chunk_size_zero": {"batch_chunk_size": 0},
    "chunk_size_float": {"batch_chunk_size": 2.0},
    "acc_dtype": {"acc_dtype": "int32"},
}


@pytest.mark.parametrize("case", list(BAD_OPTIONS))
def test_options_validation(case):
    def program(T):
        kw = dict(BAD_OPTIONS[case])
        if kw.get("acc_dtype") == "int32":
            kw["acc_dtype"] = T.int32
        return T.nn.LinearCrossEntropyOptions(**kw)

    raises(program)


def test_options_are_a_frozen_slotted_dataclass():
    def program(T):
        o = T.nn.LinearCrossEntropyOptions(batch_chunk_size=4, acc_dtype=T.float32)
        try:
            o.batch_chunk_size = 3
        except dataclasses.FrozenInstanceError as exc:
            frozen = str(exc)
        fields = [(f.name, repr(f.default)) for f in dataclasses.fields(o)]
        return (
            repr(o),
            repr(T.nn.LinearCrossEntropyOptions()),
            frozen,
            fields,
            type(o).__slots__,
            type(o).__module__,
            o == T.nn.LinearCrossEntropyOptions(batch_chunk_size=4, acc_dtype=T.float32),
            hash(o) == hash(dataclasses.replace(o)),
        )

    ok(program)


ADJUST = [
    (6, 4, 10, "float32", True),
    (6, 4, 10, "float64", True),
    (100, 8, 1000, "float32", True),
    (100, 8, 1000, "float16", True),
    (100, 8, 1000, "bfloat16", False),
    (7, 16, 3, "float32", False),
    (1, 4, 10, "float16", True),
]


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"batch_chunk_size": 5},
        {"chunking_method": "aspect_ratio:4"},
        {"acc_policy": "balanced"},
        {"chunking_method": None},
    ],
    ids=str,
)
@pytest.mark.parametrize("shape", ADJUST, ids=str)
def test_options_resolution(shape, kw):
    n, f, c, dtype, on_device = shape

    def program(T):
        device = T.device("cpu") if on_device else None
        try:
            return repr(
                T.nn.LinearCrossEntropyOptions(**kw)._adjust(n, f, c, getattr(T, dtype), device)
            )
        except ValueError as exc:
            return str(exc)

    ok(program)


# --- LinearCrossEntropyLoss ----------------------------------------------------------------------


def fixed(T, module, dtype="float64"):
    module = module.to(getattr(T, dtype))
    rs = np.random.RandomState(3)
    with T.no_grad():
        for p in module.parameters():
            p.copy_(T.tensor(rs.randn(*p.shape)))
    return module


MODULES = {
    "plain": ({}, (6,)),
    "bias_chunked": ({"bias": True, "options": "chunk"}, (6,)),
    "none_chunked_weight": ({"reduction": "none", "weight": True, "options": "chunk"}, (6,)),
    "k_dim_bias": (
        {"out_features": (2, 3), "bias": True, "ignore_index": 1, "label_smoothing": 0.1},
        (6, 2, 3),
    ),
    "unbatched_chunked": ({"bias": True, "options": "chunk", "unbatched": True}, ()),
}


@pytest.mark.parametrize("case", list(MODULES))
def test_module(case):
    settings, target_shape = MODULES[case]

    def program(T):
        kw = dict(settings)
        unbatched = kw.pop("unbatched", False)
        if kw.get("options") == "chunk":
            kw["options"] = T.nn.LinearCrossEntropyOptions(batch_chunk_size=4)
        if kw.get("weight"):
            kw["weight"] = T.tensor(CLASS_WEIGHT[:5])
        loss = fixed(T, T.nn.LinearCrossEntropyLoss(4, 5, **kw))
        x = T.tensor(INPUT, dtype=T.float64, requires_grad=True)
        t = T.tensor(np.random.RandomState(5).randint(0, 5, target_shape or (1,)))
        out = loss(x[0], t[0]) if unbatched else loss(x, t)
        graph = next_functions(out.grad_fn)
        weighted_sum(T, out).backward()
        return (
            repr(loss),
            out,
            graph,
            val(x.grad),
            [(n, val(p.grad)) for n, p in loss.named_parameters()],
            list(loss.state_dict()),
            [n for n, _ in loss.named_buffers()],
            loss.num_classes,
            loss.out_features,
            loss.ignore_index,
            loss.label_smoothing,
        )

    ok(program)


MODULE_ERRORS = {
    "weight_shape": {"weight": "ones3"},
    "smoothing_high": {"label_smoothing": 1.5},
    "smoothing_low": {"label_smoothing": -0.1},
}


@pytest.mark.parametrize("case", list(MODULE_ERRORS))
def test_module_errors(case):
    def program(T):
        kw = dict(MODULE_ERRORS[case])
        if kw.get("weight") == "ones3":
            kw["weight"] = T.ones(3)
        return T.nn.LinearCrossEntropyLoss(4, 5, **kw)

    raises(program)


def test_module_and_options_load_from_torch_checkpoints():
    buf = io.BytesIO()
    torch.save(
        torch.nn.LinearCrossEntropyLoss(
            3, 4, bias=True, options=torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
        ),
        buf,
    )

    def program(T):
        loss = T.load(io.BytesIO(buf.getvalue()), weights_only=False)
        x = T.tensor(INPUT[:, :3], dtype=T.float32)
        return repr(loss), loss(x, T.tensor([0, 1, 2, 3, 0, 1])), type(loss.options).__module__

    ok(program)
