"""scaled_dot_product_attention and nn.MultiheadAttention against torch: masks (bool, float,
causal, key padding), grouped-query attention, batch_first, kdim/vdim, bias_kv and zero_attn,
dropout in eval, initialisation and errors. Weights are copied from fixed random values."""

from __future__ import annotations

import math

import numpy as np
import pytest

import jaxgrad
from differential import grad_of, ok, param_grads, raises, same, set_weights, weighted_backward

RS = np.random.RandomState(10)


# --- scaled_dot_product_attention -----------------------------------------------------------------

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


# --- MultiheadAttention ---------------------------------------------------------------------------

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


# --- MultiheadAttention's fast path (self-attention in eval mode without grad) --------------------

FAST_KPM = np.array([[True, True, True], [False, False, True]])  # sequence 0: every key padded
FAST_ROW = np.zeros((L, L), bool)
FAST_ROW[1] = True  # query 1 sees no key
FAST_FLOAT = RS.randn(L, L)
MHA_FAST = {
    "kpm_no_weights": ({"key_padding_mask": "kpm", "need_weights": False}, {}),
    "kpm_weights": ({"key_padding_mask": "kpm"}, {}),
    "per_head_weights": ({"attn_mask": "row", "average_attn_weights": False}, {}),
    "attn_mask_no_weights": ({"attn_mask": "row", "need_weights": False}, {}),
    "both_masks": ({"attn_mask": "row", "key_padding_mask": "kpm", "need_weights": False}, {}),
    "causal_hint_ignored": ({"attn_mask": "row", "is_causal": True, "need_weights": False},
                            {}),
    "causal_hint_without_mask": ({"is_causal": True}, {}),
    "no_masks": ({"need_weights": False}, {}),
    # the ordinary path: a float mask, cross-attention, training, (L, N, E), no bias, bias_kv,
    # grad recorded, the switch off
    "float_mask": ({"attn_mask": "float", "need_weights": False}, {}),
    "not_self_attention": ({"attn_mask": "row", "need_weights": False}, {"cross": True}),
    "training": ({"attn_mask": "row", "need_weights": False}, {"train": True}),
    "not_batch_first": ({"attn_mask": "row", "need_weights": False}, {"batch_first": False}),
    "no_bias": ({"attn_mask": "row", "need_weights": False}, {"bias": False}),
    "bias_kv": ({"attn_mask": "row", "need_weights": False}, {"add_bias_kv": True}),
    "grad_enabled": ({"attn_mask": "row", "need_weights": False}, {"grad": True}),
    "fastpath_disabled": ({"attn_mask": "row", "need_weights": False}, {"disabled": True}),
}


@pytest.mark.parametrize("key", list(MHA_FAST))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multihead_attention_fast_path(key, dtype):
    """torch's fused self-attention reads the masks as booleans, ignores the causal hint and
    gives NaN for a query whose keys are all masked (the ordinary path gives zeros there)."""
    call, build = MHA_FAST[key]
    build = dict(build)
    cross, train, grad, disabled = (build.pop(k, False) for k in ("cross", "train", "grad",
                                                                   "disabled"))
    rs = np.random.RandomState(6)
    x = rs.randn(N, L, E)
    masks = {"kpm": FAST_KPM, "row": FAST_ROW, "float": FAST_FLOAT}

    def program(T):
        m = T.nn.MultiheadAttention(E, HEADS, **{"batch_first": True, **build})
        m = set_weights(T, m, dtype=dtype).train(train)
        inp = T.tensor(x if build.get("batch_first", True) else x.transpose(1, 0, 2),
                       dtype=getattr(T, dtype))
        kv = inp.clone() if cross else inp
        kwargs = {k: (T.tensor(masks[v]) if masks[v].dtype == bool else
                      T.tensor(masks[v], dtype=getattr(T, dtype))) if isinstance(v, str) else v
                  for k, v in call.items()}
        T.backends.mha.set_fastpath_enabled(not disabled)
        try:
            with T.set_grad_enabled(grad):
                return m(inp, kv, kv, **kwargs)
        finally:
            T.backends.mha.set_fastpath_enabled(True)

    ok(program, rtol=2e-5 if dtype == "float32" else None)


def test_merge_masks():
    def program(T):
        m = T.nn.MultiheadAttention(E, HEADS, batch_first=True)
        q = T.ones(N, L, E)
        attn, kpm, attn_3d = T.randn(L, L), T.zeros(N, L), T.randn(N * HEADS, L, L)
        merged, kind = m.merge_masks(None, kpm, q)
        found = [m.merge_masks(None, None, q), (merged is kpm, kind)]
        merged, kind = m.merge_masks(attn, kpm, q)
        found.append((merged.shape, kind, bool(T.equal(merged[1, 0], attn + kpm[1]))))
        merged, kind = m.merge_masks(attn_3d, None, q)
        found.append((merged.shape, kind,
                      bool(T.equal(merged.reshape(N * HEADS, L, L), attn_3d))))
        return found

    ok(program)
