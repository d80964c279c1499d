"""nn.Transformer, TransformerEncoder/Decoder and their layers against torch: construction
(parameter names, deep-copied layers, Xavier initialisation, activations, the nested-tensor
warning), forward values and gradients under every kind of mask, causal hints and their
detection, unbatched inputs, norm_first, the eval/no_grad fast paths (zeros at padded positions
of the nested-tensor route, masks read as booleans, NaN rows where everything is masked),
errors and warnings. Weights are fixed random values copied into both libraries' modules."""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import numpy as np
import pytest

import jaxgrad
from differential import (
    captured_warnings,
    compiled_on_jaxgrad,
    grad_of,
    next_functions,
    ok,
    param_grads,
    raises,
    set_weights,
    torch,
    weighted,
    weighted_backward,
)

D, H, FF = 8, 2, 16  # d_model, heads, feed-forward width
S, L, N = 4, 3, 2  # source length, target length, batch
DTYPES = ["float32", "float64"]
TOL = {"float32": 2e-5, "float64": None}


def with_dtypes(keys, float32):
    """(key, dtype) params: every key in float64, the keys in ``float32`` in float32 too (each
    new kernel signature costs compile time; float32 adds a second set)."""
    assert set(float32) <= set(keys), set(float32) - set(keys)
    keys = list(keys)
    return [pytest.param(k, d, id=f"{k}-{d}") for k in keys for d in DTYPES
            if d == "float64" or k in float32]


RS = np.random.RandomState(20)
SRC = RS.randn(S, N, D)
TGT = RS.randn(L, N, D)
MASKS = {
    "src_bool": np.triu(RS.rand(S, S) > 0.5, 1) | np.tril(RS.rand(S, S) > 0.7, -1),
    "src_float": RS.randn(S, S),
    "src_3d": RS.randn(N * H, S, S),
    "tgt_bool": np.triu(np.ones((L, L), bool), 1),
    "tgt_float": RS.randn(L, L),
    "memory_float": RS.randn(L, S),
    "memory_bool": np.array([[False, True, False, True], [False, False, True, True],
                             [True, False, False, False]]),
    "src_kpm_bool": np.array([[False, False, True, True], [False, False, False, True]]),
    "src_kpm_float": RS.randn(N, S),
    "tgt_kpm_bool": np.array([[False, True, False], [False, False, True]]),
    "tgt_kpm_float": RS.randn(N, L),
}
# key padding masks of the fast-path tests: left-aligned, not, one sequence all padding
LEFT_KPM = np.array([[False, False, True, True], [False, False, False, True]])
RAGGED_KPM = np.array([[True, False, True, False], [False, False, False, True]])
EMPTY_KPM = np.array([[True, True, True, True], [False, False, False, True]])


def _mask(T, name, dtype):
    """A fixed mask; "causal_S"/"causal_L" are ``generate_square_subsequent_mask``'s."""
    if name.startswith("causal_"):
        size = S if name == "causal_S" else L
        return T.nn.Transformer.generate_square_subsequent_mask(size, dtype=getattr(T, dtype))
    values = MASKS[name]
    return T.tensor(values) if values.dtype == bool else T.tensor(values,
                                                                 dtype=getattr(T, dtype))


def _masks(T, call, dtype, unbatched=False):
    kwargs = {}
    for key, value in call.items():
        if isinstance(value, str) and (value in MASKS or value.startswith("causal_")):
            value = _mask(T, value, dtype)
            if unbatched and key.endswith("key_padding_mask"):
                value = value[0]
        kwargs[key] = value
    return kwargs


def _seq(T, array, dtype, batch_first, unbatched, requires_grad=True):
    if unbatched:
        array = array[:, 0]
    elif batch_first:
        array = array.transpose(1, 0, 2)
    return T.tensor(np.ascontiguousarray(array), dtype=getattr(T, dtype),
                    requires_grad=requires_grad)


def _activation(T, name):
    if name == "tanh_lambda":
        return lambda x: T.tanh(x)
    if name == "GELU_module":
        return T.nn.GELU()
    return name


def _build_kwargs(T, build):
    build = dict(build)
    if "activation" in build:
        build["activation"] = _activation(T, build["activation"])
    return build


# --- construction ---------------------------------------------------------------------------------

BUILDERS = {
    "encoder_layer": lambda T: T.nn.TransformerEncoderLayer(D, H, FF),
    "encoder_layer_options": lambda T: T.nn.TransformerEncoderLayer(
        D, H, FF, dropout=0.2, activation="gelu", layer_norm_eps=1e-3, batch_first=True,
        norm_first=True, bias=False),
    "encoder_layer_gelu_module": lambda T: T.nn.TransformerEncoderLayer(
        D, H, FF, activation=T.nn.GELU()),
    "encoder_layer_relu_module": lambda T: T.nn.TransformerEncoderLayer(
        D, H, FF, activation=T.nn.ReLU()),
    "encoder_layer_callable": lambda T: T.nn.TransformerEncoderLayer(
        D, H, FF, activation=T.tanh),
    "decoder_layer": lambda T: T.nn.TransformerDecoderLayer(D, H, FF),
    "decoder_layer_options": lambda T: T.nn.TransformerDecoderLayer(
        D, H, FF, 0.0, "gelu", 1e-4, True, True, False),
    "encoder": lambda T: T.nn.TransformerEncoder(
        T.nn.TransformerEncoderLayer(D, H, FF, batch_first=True), 2, T.nn.LayerNorm(D),
        mask_check=False),
    "encoder_no_nested": lambda T: T.nn.TransformerEncoder(
        T.nn.TransformerEncoderLayer(D, H, FF), 3, enable_nested_tensor=False),
    "decoder": lambda T: T.nn.TransformerDecoder(T.nn.TransformerDecoderLayer(D, H, FF), 2,
                                                 T.nn.LayerNorm(D)),
    "transformer": lambda T: T.nn.Transformer(D, H, 2, 1, FF),
    "transformer_options": lambda T: T.nn.Transformer(
        D, H, 1, 2, FF, 0.3, "gelu", layer_norm_eps=1e-6, batch_first=True, norm_first=True,
        bias=False),
    "transformer_float64": lambda T: T.nn.Transformer(D, H, 1, 1, FF, dtype=T.float64,
                                                      device="cpu"),
    "transformer_custom": lambda T: T.nn.Transformer(
        D, H, custom_encoder=T.nn.Linear(D, D),
        custom_decoder=T.nn.TransformerDecoder(T.nn.TransformerDecoderLayer(D, H, FF), 1)),
}

ATTRIBUTES = ["d_model", "nhead", "batch_first", "num_layers", "norm_first",
              "activation_relu_or_gelu", "enable_nested_tensor", "use_nested_tensor",
              "mask_check"]


@pytest.mark.parametrize("key", list(BUILDERS))
def test_construction(key):
    def program(T):
        m = BUILDERS[key](T)
        attrs = {name: getattr(m, name) for name in ATTRIBUTES if hasattr(m, name)}
        layers = [mod for name, mod in m.named_modules() if name.endswith(("layers.0", "layers.1"))
                  ] or [m]
        activations = [
            (getattr(layer, "activation", None) is T.nn.functional.relu,
             getattr(layer, "activation", None) is T.nn.functional.gelu,
             getattr(layer, "activation", None) is T.tanh) for layer in layers]
        return ([(name, tuple(p.shape), str(p.dtype), p.requires_grad)
                 for name, p in m.named_parameters()], list(m.state_dict()), repr(m), attrs,
                [name for name, _ in m.named_modules()], activations)

    ok(program)


@pytest.mark.parametrize("key", ["encoder", "decoder", "transformer"])
def test_layers_are_independent_deep_copies(key):
    """_get_clones deep-copies the template: layers share no parameter; a plain stack keeps the
    template's values in every layer, Transformer re-draws every matrix afterwards."""
    def program(T):
        m = BUILDERS[key](T)
        stacks = [s for s in (m, getattr(m, "encoder", None), getattr(m, "decoder", None))
                  if s is not None and hasattr(s, "layers") and len(s.layers) > 1]
        found = []
        for stack in stacks:
            first, second = (dict(layer.named_parameters()) for layer in stack.layers[:2])
            found.append([(name, first[name] is second[name],
                           bool(T.equal(first[name], second[name]))) for name in first])
            with T.no_grad():
                stack.layers[0].linear1.weight.add_(1.0)
            found.append(bool(T.equal(stack.layers[0].linear1.weight,
                                      stack.layers[1].linear1.weight)))
        return found

    ok(program)


def test_transformer_reset_parameters_is_xavier_uniform_on_matrices():
    def program(T):
        m = T.nn.Transformer(D, H, 1, 1, FF)
        found = []
        for name, p in m.named_parameters():
            if p.dim() > 1:
                fan_out, fan_in = p.shape
                bound = math.sqrt(6.0 / (fan_in + fan_out))
                found.append((name, bool(p.abs().max() <= bound),
                              bool(p.abs().max() > bound / 2)))
            elif "norm" in name or "in_proj_bias" in name or "out_proj.bias" in name:
                found.append((name, p.detach().clone()))  # ones and zeros, untouched
        m._reset_parameters()
        return found

    ok(program)


def test_bad_activation_string():
    raises(lambda T: T.nn.TransformerEncoderLayer(D, H, FF, activation="tanh"))
    raises(lambda T: T.nn.TransformerDecoderLayer(D, H, FF, activation="Relu"))
    raises(lambda T: T.nn.Transformer(D, H, 1, 1, FF, activation="swish"))


@pytest.mark.parametrize("cls", ["TransformerEncoderLayer", "TransformerDecoderLayer"])
def test_setstate_restores_relu_activation(cls):
    def program(T):
        layer = getattr(T.nn, cls)(D, H, FF, activation="gelu")
        state = dict(layer.__dict__)
        del state["activation"]
        fresh = getattr(T.nn, cls).__new__(getattr(T.nn, cls))
        fresh.__setstate__(state)
        copied = copy.deepcopy(layer)
        pickled = pickle.loads(pickle.dumps(layer))
        return (fresh.activation is T.nn.functional.relu, copied.activation is T.nn.functional.gelu,
                pickled.activation is T.nn.functional.gelu,
                [n for n, _ in pickled.named_parameters()])

    ok(program)


def test_generate_square_subsequent_mask():
    def program(T):
        gen = T.nn.Transformer.generate_square_subsequent_mask
        return (gen(0), gen(1), gen(4), gen(3, dtype=T.float64), gen(2, device="cpu"),
                T.nn.Transformer(D, H, 1, 1, FF).generate_square_subsequent_mask(3))

    ok(program)


DETECT = {
    "none": (None, None, None),
    "causal": ("causal_S", None, None),
    "causal_size": ("causal_S", None, S),
    "causal_wrong_size": ("causal_S", None, S + 1),
    "float_not_causal": ("src_float", None, None),
    "hint_true": ("src_float", True, None),
    "hint_false": ("causal_S", False, None),
    "hint_true_no_mask": (None, True, None),
    "bool_mask": ("src_bool", None, None),
    "bool_causal": ("bool_causal", None, None),
    "batched_causal": ("batched_causal", None, None),
}


@pytest.mark.parametrize("key", list(DETECT))
def test_detect_is_causal_mask(key):
    mask_name, hint, size = DETECT[key]

    def program(T):
        detect = T.nn.modules.transformer._detect_is_causal_mask
        if mask_name == "bool_causal":
            mask = T.ones(S, S, dtype=T.bool).triu(1)
        elif mask_name == "batched_causal":
            mask = _mask(T, "causal_S", "float32").expand(2, S, S)
        else:
            mask = None if mask_name is None else _mask(T, mask_name, "float32")
        return detect(mask, hint, size)

    ok(program)


# --- warnings at construction ---------------------------------------------------------------------

def _odd_heads(T):
    return T.nn.TransformerEncoderLayer(D, 1, FF, batch_first=True)


def _eps_differ(T):
    layer = T.nn.TransformerEncoderLayer(D, H, FF, batch_first=True)
    layer.norm2.eps = 1e-3
    return layer


def _kv_dims_differ(T):
    layer = T.nn.TransformerEncoderLayer(D, H, FF, batch_first=True)
    layer.self_attn._qkv_same_embed_dim = False
    return layer


NESTED_WARNINGS = {
    "fast": (lambda T: T.nn.TransformerEncoderLayer(D, H, FF, batch_first=True), {}),
    "not_a_layer": (lambda T: T.nn.Linear(D, D), {}),
    "norm_first": (lambda T: T.nn.TransformerEncoderLayer(D, H, FF, batch_first=True,
                                                          norm_first=True), {}),
    "not_batch_first": (lambda T: T.nn.TransformerEncoderLayer(D, H, FF), {}),
    "not_batch_first_disabled": (lambda T: T.nn.TransformerEncoderLayer(D, H, FF),
                                 {"enable_nested_tensor": False}),
    "kv_dims_differ": (_kv_dims_differ, {}),
    "no_bias": (lambda T: T.nn.TransformerEncoderLayer(D, H, FF, batch_first=True,
                                                       bias=False), {}),
    "callable_activation": (lambda T: T.nn.TransformerEncoderLayer(
        D, H, FF, batch_first=True, activation=T.tanh), {}),
    "gelu_module": (lambda T: T.nn.TransformerEncoderLayer(
        D, H, FF, batch_first=True, activation=T.nn.GELU()), {}),
    "eps_differ": (_eps_differ, {}),
    "odd_heads": (_odd_heads, {}),
}


@pytest.mark.parametrize("key", list(NESTED_WARNINGS))
def test_encoder_nested_tensor_warning(key):
    make_layer, kwargs = NESTED_WARNINGS[key]

    def program(T):
        enc = T.nn.TransformerEncoder(make_layer(T), 2, **kwargs)
        return enc.enable_nested_tensor, enc.use_nested_tensor, enc.mask_check

    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_transformer_warns_about_nested_tensors_unless_batch_first():
    def program(T):
        return [T.nn.Transformer(D, H, 1, 1, FF, batch_first=first).encoder.use_nested_tensor
                for first in (False, True)]

    ok(program)
    found = captured_warnings(program, jaxgrad)
    assert found == captured_warnings(program, torch) and len(found) == 1


# --- forward and backward -------------------------------------------------------------------------

ENCODER_LAYER = {
    "default": ({}, {}),
    "batch_first": ({"batch_first": True}, {}),
    "norm_first": ({"norm_first": True}, {}),
    "gelu": ({"activation": "gelu"}, {}),
    "gelu_module": ({"activation": "GELU_module"}, {}),
    "callable": ({"activation": "tanh_lambda"}, {}),
    "no_bias": ({"bias": False}, {}),
    "eps": ({"layer_norm_eps": 1e-2}, {}),
    "src_mask_float": ({}, {"src_mask": "src_float"}),
    "src_mask_bool": ({}, {"src_mask": "src_bool"}),
    "causal_hint": ({}, {"src_mask": "causal_S", "is_causal": True}),
    "kpm_bool": ({}, {"src_key_padding_mask": "src_kpm_bool"}),
    "kpm_float": ({"batch_first": True}, {"src_key_padding_mask": "src_kpm_float"}),
    "both_masks": ({"batch_first": True}, {"src_mask": "src_bool",
                                           "src_key_padding_mask": "src_kpm_bool"}),
    "causal_hint_and_kpm": ({}, {"src_mask": "causal_S", "is_causal": True,
                                 "src_key_padding_mask": "src_kpm_bool"}),
    "mask_3d": ({}, {"src_mask": "src_3d"}),
    "norm_first_masks": ({"norm_first": True, "batch_first": True},
                         {"src_mask": "src_float", "src_key_padding_mask": "src_kpm_float"}),
    "unbatched_masks": ({"batch_first": True}, {"src_mask": "src_bool",
                                                "src_key_padding_mask": "src_kpm_bool"}, True),
}


@pytest.mark.parametrize(("key", "dtype"), with_dtypes(
    ENCODER_LAYER, ["default", "both_masks", "norm_first_masks"]))
def test_encoder_layer(key, dtype):
    build, call, *rest = ENCODER_LAYER[key]
    unbatched = bool(rest and rest[0])

    def program(T):
        m = set_weights(T, T.nn.TransformerEncoderLayer(D, H, FF, 0.0,
                                                        **_build_kwargs(T, build)),
                        dtype=dtype, scale=0.5)
        src = _seq(T, SRC, dtype, build.get("batch_first", False), unbatched)
        out = m(src, **_masks(T, call, dtype, unbatched))
        weighted_backward(T, out)
        return out, grad_of(src), param_grads(m)

    ok(program, rtol=TOL[dtype])


ENCODER = {
    "one_layer": ({}, {"num_layers": 1}, {}),
    "two_layers_norm": ({}, {"num_layers": 2, "norm": True}, {}),
    "causal_detected": ({}, {"num_layers": 2}, {"mask": "causal_S"}),
    "causal_hint_false": ({}, {"num_layers": 1}, {"mask": "causal_S", "is_causal": False}),
    "causal_hint_true_float": ({}, {"num_layers": 1}, {"mask": "src_float", "is_causal": True}),
    "kpm_training_batch_first": ({"batch_first": True}, {"num_layers": 2, "norm": True},
                                 {"src_key_padding_mask": "src_kpm_bool"}),
    "both_masks": ({}, {"num_layers": 2}, {"mask": "src_bool",
                                           "src_key_padding_mask": "src_kpm_float"}),
    "norm_first": ({"norm_first": True}, {"num_layers": 2, "norm": True},
                   {"mask": "causal_S"}),
    "unbatched": ({"batch_first": True}, {"num_layers": 2},
                  {"src_key_padding_mask": "src_kpm_bool"}, True),
}


@pytest.mark.parametrize(("key", "dtype"), with_dtypes(ENCODER, ["both_masks"]))
def test_encoder(key, dtype):
    build, stack, call, *rest = ENCODER[key]
    unbatched = bool(rest and rest[0])

    def program(T):
        layer = T.nn.TransformerEncoderLayer(D, H, FF, 0.0, **build)
        norm = T.nn.LayerNorm(D) if stack.get("norm") else None
        m = set_weights(T, T.nn.TransformerEncoder(layer, stack["num_layers"], norm,
                                                   enable_nested_tensor=False),
                        dtype=dtype, scale=0.5)
        src = _seq(T, SRC, dtype, build.get("batch_first", False), unbatched)
        out = m(src, **_masks(T, call, dtype, unbatched))
        weighted_backward(T, out)
        return out, grad_of(src), param_grads(m)

    ok(program, rtol=TOL[dtype])


DECODER_LAYER = {
    "default": ({}, {}),
    "batch_first": ({"batch_first": True}, {}),
    "norm_first": ({"norm_first": True}, {}),
    "gelu_no_bias": ({"activation": "gelu", "bias": False}, {}),
    "callable": ({"activation": "tanh_lambda"}, {}),
    "tgt_mask_bool": ({}, {"tgt_mask": "tgt_bool"}),
    "tgt_mask_float": ({}, {"tgt_mask": "tgt_float"}),
    "tgt_causal_hint": ({}, {"tgt_mask": "causal_L", "tgt_is_causal": True}),
    "memory_mask": ({}, {"memory_mask": "memory_float"}),
    "memory_causal_hint": ({}, {"memory_mask": "memory_bool", "memory_is_causal": True}),
    "key_padding": ({"batch_first": True}, {"tgt_key_padding_mask": "tgt_kpm_bool",
                                            "memory_key_padding_mask": "src_kpm_float"}),
    "all_masks": ({"norm_first": True}, {
        "tgt_mask": "tgt_bool", "memory_mask": "memory_bool",
        "tgt_key_padding_mask": "tgt_kpm_bool", "memory_key_padding_mask": "src_kpm_bool"}),
    "unbatched": ({}, {"tgt_mask": "causal_L", "memory_key_padding_mask": "src_kpm_bool"},
                  True),
}


@pytest.mark.parametrize(("key", "dtype"), with_dtypes(DECODER_LAYER, ["all_masks"]))
def test_decoder_layer(key, dtype):
    build, call, *rest = DECODER_LAYER[key]
    unbatched = bool(rest and rest[0])
    first = build.get("batch_first", False)

    def program(T):
        m = set_weights(T, T.nn.TransformerDecoderLayer(D, H, FF, 0.0,
                                                        **_build_kwargs(T, build)),
                        dtype=dtype, scale=0.5)
        tgt = _seq(T, TGT, dtype, first, unbatched)
        memory = _seq(T, SRC, dtype, first, unbatched)
        out = m(tgt, memory, **_masks(T, call, dtype, unbatched))
        weighted_backward(T, out)
        return out, grad_of(tgt), grad_of(memory), param_grads(m)

    ok(program, rtol=TOL[dtype])


DECODER = {
    "two_layers_norm": ({}, {"num_layers": 2, "norm": True}, {}),
    "causal_detected": ({}, {"num_layers": 2}, {"tgt_mask": "causal_L"}),
    "causal_hint_true": ({"batch_first": True}, {"num_layers": 1},
                         {"tgt_mask": "tgt_float", "tgt_is_causal": True}),
    "masks": ({"norm_first": True}, {"num_layers": 2, "norm": True},
              {"tgt_mask": "tgt_float", "memory_mask": "memory_bool",
               "memory_key_padding_mask": "src_kpm_bool"}),
    "unbatched": ({}, {"num_layers": 1}, {"tgt_mask": "causal_L"}, True),
}


@pytest.mark.parametrize(("key", "dtype"), with_dtypes(DECODER, ["masks"]))
def test_decoder(key, dtype):
    build, stack, call, *rest = DECODER[key]
    unbatched = bool(rest and rest[0])
    first = build.get("batch_first", False)

    def program(T):
        layer = T.nn.TransformerDecoderLayer(D, H, FF, 0.0, **build)
        norm = T.nn.LayerNorm(D) if stack.get("norm") else None
        m = set_weights(T, T.nn.TransformerDecoder(layer, stack["num_layers"], norm),
                        dtype=dtype, scale=0.5)
        tgt = _seq(T, TGT, dtype, first, unbatched)
        memory = _seq(T, SRC, dtype, first, unbatched)
        out = m(tgt, memory, **_masks(T, call, dtype, unbatched))
        weighted_backward(T, out)
        return out, grad_of(tgt), grad_of(memory), param_grads(m)

    ok(program, rtol=TOL[dtype])


TRANSFORMER = {
    "default": ({}, {}),
    "batch_first_gelu": ({"batch_first": True, "activation": "gelu"}, {}),
    "norm_first_no_bias": ({"norm_first": True, "bias": False}, {}),
    "masks": ({}, {"src_mask": "src_bool", "tgt_mask": "causal_L", "memory_mask": "memory_float",
                   "src_key_padding_mask": "src_kpm_bool", "tgt_key_padding_mask": "tgt_kpm_bool",
                   "memory_key_padding_mask": "src_kpm_bool"}),
    "causal_hints": ({"batch_first": True}, {
        "src_mask": "causal_S", "tgt_mask": "tgt_float", "src_is_causal": False,
        "tgt_is_causal": True, "memory_mask": "memory_bool", "memory_is_causal": True}),
    "unbatched": ({}, {"tgt_mask": "causal_L", "src_key_padding_mask": "src_kpm_bool"}, True),
}


@pytest.mark.parametrize(("key", "dtype"), with_dtypes(TRANSFORMER, ["masks"]))
def test_transformer(key, dtype):
    build, call, *rest = TRANSFORMER[key]
    unbatched = bool(rest and rest[0])
    first = build.get("batch_first", False)

    def program(T):
        m = set_weights(T, T.nn.Transformer(D, H, 1, 1, FF, 0.0, **build), dtype=dtype,
                        scale=0.5)
        src = _seq(T, SRC, dtype, first, unbatched)
        tgt = _seq(T, TGT, dtype, first, unbatched)
        out = m(src, tgt, **_masks(T, call, dtype, unbatched))
        weighted_backward(T, out)
        return out, grad_of(src), grad_of(tgt), param_grads(m)

    ok(program, rtol=TOL[dtype])


def test_transformer_custom_encoder_and_decoder():
    def program(T):
        encoder = T.nn.TransformerEncoder(T.nn.TransformerEncoderLayer(D, H, FF, 0.0), 1,
                                          enable_nested_tensor=False)
        decoder = T.nn.TransformerDecoder(T.nn.TransformerDecoderLayer(D, H, FF, 0.0), 1)
        m = set_weights(T, T.nn.Transformer(D, H, custom_encoder=encoder,
                                            custom_decoder=decoder), scale=0.5)
        src, tgt = _seq(T, SRC, "float64", False, False), _seq(T, TGT, "float64", False, False)
        out = m(src, tgt)
        weighted_backward(T, out)
        return (out, grad_of(src), param_grads(m), m.encoder is encoder, m.decoder is decoder)

    ok(program)


def test_compiled_training_step():
    """A whole training step under jaxgrad.compile (torch runs it eagerly): the causal-mask
    detection and the padding mask stay inside the compiled program."""
    def program(T):
        m = set_weights(T, T.nn.Transformer(D, H, 1, 1, FF, 0.0, batch_first=True), scale=0.5)
        opt = T.optim.SGD(m.parameters(), lr=0.1)

        def step(src, tgt, mask, kpm):
            opt.zero_grad()
            loss = weighted(T, m(src, tgt, tgt_mask=mask, src_key_padding_mask=kpm))
            loss.backward()
            opt.step()
            return loss

        step = compiled_on_jaxgrad(T, step)
        src = _seq(T, SRC, "float64", True, False, requires_grad=False)
        tgt = _seq(T, TGT, "float64", True, False, requires_grad=False)
        args = (src, tgt, _mask(T, "causal_L", "float64"), T.tensor(LEFT_KPM))
        losses = [step(*args).item() for _ in range(3)]
        return losses, [p.detach().clone() for p in m.parameters()]

    ok(program)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program(jaxgrad)
    assert not [w for w in caught if "jaxgrad.compile" in str(w.message)]


# --- dropout, training and eval -------------------------------------------------------------------

@pytest.mark.parametrize("norm_first", [False, True])
def test_dropout_in_training_mode_keeps_the_graph(norm_first):
    """Dropout draws differ between the libraries: shapes, flags and graph structure only."""
    def program(T):
        m = T.nn.TransformerEncoderLayer(D, H, FF, dropout=0.5, norm_first=norm_first)
        out = m(_seq(T, SRC, "float32", False, False))
        dec = T.nn.TransformerDecoderLayer(D, H, FF, dropout=0.5, norm_first=norm_first)
        dec_out = dec(_seq(T, TGT, "float32", False, False), out)
        return (out.shape, out.requires_grad, type(out.grad_fn).__name__,
                next_functions(out.grad_fn)[0], [n[0][0] for n in next_functions(out.grad_fn)[1]],
                dec_out.shape, type(dec_out.grad_fn).__name__)

    ok(program)


def test_eval_mode_is_deterministic_and_training_is_not():
    def program(T):
        m = T.nn.Transformer(D, H, 1, 1, FF, dropout=0.5)
        src, tgt = _seq(T, SRC, "float32", False, False), _seq(T, TGT, "float32", False, False)
        training = bool(T.equal(m(src, tgt), m(src, tgt)))
        m.eval()
        evaluated = bool(T.equal(m(src, tgt), m(src, tgt)))
        return training, evaluated, m.training, m.encoder.layers[0].dropout.training

    ok(program)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dropout_eval_values(dtype):
    def program(T):
        m = set_weights(T, T.nn.Transformer(D, H, 1, 1, FF, dropout=0.5), dtype=dtype,
                        scale=0.5).eval()
        src, tgt = _seq(T, SRC, dtype, False, False), _seq(T, TGT, dtype, False, False)
        out = m(src, tgt, tgt_mask=_mask(T, "causal_L", dtype))
        weighted_backward(T, out)
        return out, grad_of(src), grad_of(tgt)

    ok(program, rtol=TOL[dtype])


# --- the eval/no_grad fast paths ------------------------------------------------------------------

def _fast_encoder(T, dtype, norm=None, layer_kw=None, **kwargs):
    layer = T.nn.TransformerEncoderLayer(D, H, FF, 0.1, **{"batch_first": True,
                                                           **(layer_kw or {})})
    m = T.nn.TransformerEncoder(layer, 2, T.nn.LayerNorm(D) if norm else None, **kwargs)
    return set_weights(T, m, dtype=dtype, scale=0.5).eval()


NESTED = {
    # the nested-tensor route: zeros at padded positions (the final norm's bias with a norm)
    "left_aligned": ({}, LEFT_KPM, {}),
    "left_aligned_norm": ({"norm": True}, LEFT_KPM, {}),
    "all_padding": ({}, EMPTY_KPM, {}),
    "ragged_no_mask_check": ({"mask_check": False}, RAGGED_KPM, {}),
    "float_kpm": ({}, np.where(LEFT_KPM, -1.5, 0.0), {}),
    # no nested tensor: a layer's own fast path (masks read as booleans) or the usual one
    "ragged_mask_check": ({}, RAGGED_KPM, {}),
    "with_src_mask": ({}, LEFT_KPM, {"mask": "src_bool"}),
    "no_nested": ({"enable_nested_tensor": False}, EMPTY_KPM, {}),
    "not_batch_first": ({"layer_kw": {"batch_first": False}}, EMPTY_KPM, {}),
    "norm_first": ({"layer_kw": {"norm_first": True}}, EMPTY_KPM, {}),
    "no_kpm": ({}, None, {}),
    "no_kpm_causal": ({}, None, {"mask": "causal_S"}),
    "training": ({"train": True}, EMPTY_KPM, {}),
    "grad_enabled": ({"grad": True}, EMPTY_KPM, {}),
    "frozen_grad_enabled": ({"grad": True, "frozen": True}, EMPTY_KPM, {}),
    "fastpath_disabled": ({"disabled": True}, EMPTY_KPM, {}),
}


@pytest.mark.parametrize(("key", "dtype"), with_dtypes(
    NESTED, ["left_aligned_norm", "ragged_no_mask_check"]))
def test_encoder_fast_path(key, dtype):
    build, kpm, call = NESTED[key]
    build = dict(build)
    train, grad, frozen, disabled = (build.pop(k, False) for k in ("train", "grad", "frozen",
                                                                    "disabled"))

    def program(T):
        m = _fast_encoder(T, dtype, **build)
        m.train(train)
        if frozen:
            m.requires_grad_(False)
        first = (build.get("layer_kw") or {}).get("batch_first", True)
        src = _seq(T, SRC, dtype, first, False, requires_grad=False)
        kwargs = _masks(T, call, dtype)
        if kpm is not None:
            kwargs["src_key_padding_mask"] = (T.tensor(kpm) if kpm.dtype == bool else
                                              T.tensor(kpm, dtype=getattr(T, dtype)))
        if train:  # dropout draws differ: only the shape, and no zero rows
            out = m(src, **kwargs)
            return out.shape, bool((out == 0).all(-1).any())
        T.backends.mha.set_fastpath_enabled(not disabled)
        try:
            with T.set_grad_enabled(grad):
                return m(src, **kwargs)
        finally:
            T.backends.mha.set_fastpath_enabled(True)

    ok(program, rtol=TOL[dtype])


LAYER_FAST = {
    "masked_row": ({"src_mask": "masked_row"}, {}),
    "all_keys_padded": ({"src_key_padding_mask": "all_padded"}, {}),
    "float_mask_as_bool": ({"src_mask": "src_float"}, {}),
    "float_kpm_as_bool": ({"src_key_padding_mask": "src_kpm_float"}, {}),
    "both_masks": ({"src_mask": "src_bool", "src_key_padding_mask": "all_padded"}, {}),
    "mask_3d": ({"src_mask": "src_3d"}, {}),
    "causal_hint_ignored": ({"src_mask": "src_float", "is_causal": True}, {}),
    "causal_hint_without_mask": ({"is_causal": True}, {}),
    "norm_first": ({"src_key_padding_mask": "all_padded"}, {"norm_first": True}),
    "gelu": ({"src_mask": "masked_row"}, {"activation": "gelu"}),
    "eps_differ_slow": ({"src_mask": "masked_row"}, {"eps_differ": True}),
    "callable_slow_mha_fast": ({"is_causal": True}, {"activation": "tanh_lambda"}),
    "callable_slow": ({"src_mask": "masked_row"}, {"activation": "tanh_lambda"}),
    "hooked_slow": ({"src_mask": "masked_row"}, {"hook": True}),
    "odd_heads_slow": ({"src_mask": "masked_row"}, {"nhead": 1}),
    "not_batch_first": ({"src_mask": "masked_row"}, {"batch_first": False}),
    "unbatched": ({"src_mask": "masked_row"}, {"unbatched": True}),
}


def _fast_masks(T, call, dtype):
    kwargs = {}
    for key, value in call.items():
        if value == "masked_row":
            value = T.zeros(S, S, dtype=T.bool)
            value[1] = True
        elif value == "all_padded":
            value = T.tensor(EMPTY_KPM)
        elif isinstance(value, str):
            value = _mask(T, value, dtype)
        kwargs[key] = value
    return kwargs


@pytest.mark.parametrize(("key", "dtype"), with_dtypes(LAYER_FAST, ["masked_row", "both_masks"]))
def test_encoder_layer_fast_path(key, dtype):
    """In eval mode without grad, torch's fused layer reads a mask as boolean (nonzero masks the
    position out), ignores the causal hint, and gives NaN rows where every key is masked."""
    call, build = LAYER_FAST[key]
    build = dict(build)
    eps_differ, hook, unbatched = (build.pop(k, False) for k in ("eps_differ", "hook",
                                                                  "unbatched"))
    heads = build.pop("nhead", H)

    def program(T):
        layer = T.nn.TransformerEncoderLayer(D, heads, FF, 0.1, **{
            "batch_first": True, **_build_kwargs(T, build)})
        m = set_weights(T, layer, dtype=dtype, scale=0.5).eval()
        if eps_differ:
            m.norm2.eps = 1e-3
        if hook:
            m.linear1.register_forward_hook(lambda *args: None)
        src = _seq(T, SRC, dtype, build.get("batch_first", True), unbatched,
                   requires_grad=False)
        kwargs = _fast_masks(T, call, dtype)
        if unbatched:
            kwargs = {k: v[0] if k.endswith("padding_mask") else v for k, v in kwargs.items()}
        with T.no_grad():
            return m(src, **kwargs)

    ok(program, rtol=TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_decoder_layer_fast_self_attention(dtype):
    def program(T):
        m = set_weights(T, T.nn.TransformerDecoderLayer(D, H, FF, 0.1, batch_first=True),
                        dtype=dtype, scale=0.5).eval()
        tgt = _seq(T, SRC, dtype, True, False, requires_grad=False)
        memory = _seq(T, TGT, dtype, True, False, requires_grad=False)
        kpm = T.tensor(EMPTY_KPM)
        with T.no_grad():
            fast = m(tgt, memory, tgt_key_padding_mask=kpm)
            causal = m(tgt, memory, tgt_is_causal=True)
        slow = m(tgt, memory, tgt_key_padding_mask=kpm)
        return fast, causal, slow

    ok(program, rtol=TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_transformer_fast_path_memory(dtype):
    """Transformer(batch_first=True) in eval mode without grad: the encoder's nested route gives
    the final norm's bias at padded positions of the memory."""
    def program(T):
        m = set_weights(T, T.nn.Transformer(D, H, 2, 1, FF, 0.1, batch_first=True),
                        dtype=dtype, scale=0.5).eval()
        src = _seq(T, SRC, dtype, True, False, requires_grad=False)
        tgt = _seq(T, TGT, dtype, True, False, requires_grad=False)
        kpm = T.tensor(LEFT_KPM)
        with T.no_grad():
            memory = m.encoder(src, src_key_padding_mask=kpm)
            out = m(src, tgt, src_key_padding_mask=kpm, memory_key_padding_mask=kpm)
        return memory, out

    ok(program, rtol=TOL[dtype])


def test_nested_tensor_prototype_warning():
    """torch warns (once per process) when the encoder converts to a nested tensor."""
    def program(T):
        m = _fast_encoder(T, "float32")
        with T.no_grad():
            src = _seq(T, SRC, "float32", True, False, False)
            m(src, src_key_padding_mask=T.tensor(LEFT_KPM))  # nested: warns
            m(src, src_key_padding_mask=T.tensor(RAGGED_KPM))  # not left-aligned: no warning

    for lib in (torch, jaxgrad):
        lib.set_warn_always(True)
    try:
        found = captured_warnings(program, jaxgrad)  # torch repeats it for every nested op
        assert set(found) == set(captured_warnings(program, torch)) and len(found) == 1
    finally:
        for lib in (torch, jaxgrad):
            lib.set_warn_always(False)


# --- errors and warnings --------------------------------------------------------------------------

def _t(T, *shape, dtype=None):
    return T.ones(*shape, dtype=dtype or T.float32)


ERRORS = {
    "batch_mismatch": lambda T: T.nn.Transformer(D, H, 1, 1, FF)(_t(T, S, N, D),
                                                                 _t(T, L, N + 1, D)),
    "batch_mismatch_batch_first": lambda T: T.nn.Transformer(D, H, 1, 1, FF, batch_first=True)(
        _t(T, N, S, D), _t(T, N + 1, L, D)),
    "d_model_src": lambda T: T.nn.Transformer(D, H, 1, 1, FF)(_t(T, S, N, D + 2),
                                                              _t(T, L, N, D)),
    "d_model_tgt": lambda T: T.nn.Transformer(D, H, 1, 1, FF)(_t(T, S, N, D),
                                                              _t(T, L, N, 2)),
    "src_1d": lambda T: T.nn.Transformer(D, H, 1, 1, FF)(_t(T, D), _t(T, D)),
    "unbatched_src_batched_tgt": lambda T: T.nn.Transformer(D, H, 1, 1, FF)(
        _t(T, S, D), _t(T, L, N, D)),
    "int_kpm_encoder": lambda T: T.nn.TransformerEncoder(
        T.nn.TransformerEncoderLayer(D, H, FF), 1, enable_nested_tensor=False)(
        _t(T, S, N, D), src_key_padding_mask=T.zeros(N, S, dtype=T.int64)),
    "int_mask_encoder_layer": lambda T: T.nn.TransformerEncoderLayer(D, H, FF)(
        _t(T, S, N, D), src_mask=T.zeros(S, S, dtype=T.int64)),
    "int_mask_decoder_layer": lambda T: T.nn.TransformerDecoderLayer(D, H, FF)(
        _t(T, L, N, D), _t(T, S, N, D), tgt_mask=T.zeros(L, L, dtype=T.int64)),
    "src_mask_shape": lambda T: T.nn.TransformerEncoderLayer(D, H, FF)(
        _t(T, S, N, D), src_mask=T.zeros(S, S + 1)),
    "kpm_shape": lambda T: T.nn.TransformerEncoderLayer(D, H, FF)(
        _t(T, S, N, D), src_key_padding_mask=T.zeros(N, S + 1, dtype=T.bool)),
    "causal_hint_without_mask": lambda T: T.nn.TransformerEncoderLayer(D, H, FF)(
        _t(T, S, N, D), is_causal=True),
    "decoder_causal_hint_without_mask": lambda T: T.nn.TransformerDecoder(
        T.nn.TransformerDecoderLayer(D, H, FF), 1)(_t(T, L, N, D), _t(T, S, N, D),
                                                   tgt_is_causal=True),
    "custom_layer_without_self_attn": lambda T: T.nn.TransformerEncoder(
        T.nn.Linear(D, D), 1, enable_nested_tensor=False)(_t(T, S, N, D)),
    "odd_embedding": lambda T: T.nn.TransformerEncoderLayer(D, 3, FF),
}


@pytest.mark.parametrize("key", list(ERRORS))
def test_errors(key):
    raises(ERRORS[key])


def _z(T, *shape):
    return T.zeros(*shape, dtype=T.float64)


def _nobool(T, *shape):
    return T.zeros(*shape, dtype=T.bool)


WARNINGS = {  # float64 throughout (the forward tests' kernels), but where a dtype differs
    # Support for mismatched masks: the encoder's names, the layer's, MultiheadAttention's
    "encoder_mismatched": lambda T: T.nn.TransformerEncoder(
        T.nn.TransformerEncoderLayer(D, H, FF, dtype=T.float64), 1, enable_nested_tensor=False)(
        _z(T, S, N, D), mask=_nobool(T, S, S), src_key_padding_mask=_z(T, N, S)),
    "encoder_layer_mismatched": lambda T: T.nn.TransformerEncoderLayer(
        D, H, FF, dtype=T.float64)(_z(T, S, N, D), src_mask=_z(T, S, S),
                                   src_key_padding_mask=_nobool(T, N, S)),
    "decoder_layer_mismatched": lambda T: T.nn.TransformerDecoderLayer(
        D, H, FF, dtype=T.float64)(
        _z(T, L, N, D), _z(T, S, N, D), tgt_mask=_z(T, L, L),
        tgt_key_padding_mask=_nobool(T, N, L), memory_mask=_nobool(T, L, S),
        memory_key_padding_mask=_z(T, N, S)),
    "transformer_mismatched": lambda T: T.nn.Transformer(D, H, 1, 1, FF, dtype=T.float64)(
        _z(T, S, N, D), _z(T, L, N, D), src_mask=_nobool(T, S, S),
        src_key_padding_mask=_z(T, N, S), tgt_mask=_z(T, L, L),
        tgt_key_padding_mask=_nobool(T, N, L)),
    "matching_masks": lambda T: T.nn.TransformerEncoderLayer(D, H, FF, dtype=T.float64)(
        _z(T, S, N, D), src_mask=_z(T, S, S), src_key_padding_mask=_z(T, N, S)),
    "float32_mask": lambda T: T.nn.TransformerEncoderLayer(D, H, FF, dtype=T.float64)(
        _z(T, S, N, D), src_mask=T.zeros(S, S), src_key_padding_mask=_z(T, N, S)),
}


@pytest.mark.parametrize("key", list(WARNINGS))
def test_warnings(key):
    def program(T):
        out = WARNINGS[key](T)
        return out.shape

    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)
