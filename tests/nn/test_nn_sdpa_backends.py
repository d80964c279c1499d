"""The kernel switches of scaled dot product attention against torch: ``nn.attention``'s
``SDPBackend``/``sdpa_kernel``, ``backends.cuda``'s ``*_sdp`` flags and deprecated
``sdp_kernel``, which CPU kernel each input gets under each switch (the gradient graph shows
it), the warnings and errors when no allowed kernel takes the inputs, and empty sequences.
"""

from __future__ import annotations

import importlib
import logging

import numpy as np
import pytest

import jaxgrad
from differential import captured_warnings, ok, raises, same, torch, val, weighted_grads

_rng = np.random.default_rng(3)


VALUES: dict = {}


def values(shape):
    if shape not in VALUES:
        VALUES[shape] = _rng.standard_normal(shape).tolist()
    return VALUES[shape]


def attend(T, backends, *args, grads=True, **kwargs):
    """Attention under ``sdpa_kernel(backends)``; the output, its graph's node name and the
    inputs' gradients."""
    inputs = [a for a in args if isinstance(a, T.Tensor) and a.requires_grad]
    with T.nn.attention.sdpa_kernel(backends):
        out = T.nn.functional.scaled_dot_product_attention(*args, **kwargs)
    if not grads:
        return out
    return val(out), out.grad_fn.name(), weighted_grads(T, out, *inputs)


def leaves(T, *shapes, dtype=None):
    return [T.tensor(values(s), dtype=dtype or T.float32).reshape(s).requires_grad_()
            for s in shapes]


CHOICES = {
    "math": lambda T: T.nn.attention.SDPBackend.MATH,
    "flash": lambda T: T.nn.attention.SDPBackend.FLASH_ATTENTION,
    "both": lambda T: [T.nn.attention.SDPBackend.MATH, T.nn.attention.SDPBackend.FLASH_ATTENTION],
    "all": lambda T: list(T.nn.attention.SDPBackend.__members__.values())[1:],
    "efficient": lambda T: T.nn.attention.SDPBackend.EFFICIENT_ATTENTION,
    "cudnn_math": lambda T: [T.nn.attention.SDPBackend.CUDNN_ATTENTION,
                             T.nn.attention.SDPBackend.MATH],
    "none": lambda T: [],
}


@pytest.mark.parametrize("choice", sorted(CHOICES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_each_switch_picks_torchs_kernel(choice, dtype):
    def program(T):
        q, k, v = leaves(T, (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4), dtype=getattr(T, dtype))
        return attend(T, CHOICES[choice](T), q, k, v, is_causal=False)
    (ok if choice not in ("efficient", "none") else raises)(program)


REFUSED = {
    "dropout": dict(shapes=[(1, 2, 3, 4)] * 3, dropout_p=0.5),
    "three_dims": dict(shapes=[(2, 3, 4)] * 3),
    "head_dims": dict(shapes=[(1, 2, 3, 4), (1, 2, 3, 5), (1, 2, 3, 4)]),
    "batch": dict(shapes=[(1, 2, 3, 4), (2, 2, 3, 4), (1, 2, 3, 4)]),
    "heads": dict(shapes=[(1, 2, 3, 4), (1, 1, 3, 4), (1, 1, 3, 4)]),
    "gqa_divide": dict(shapes=[(1, 3, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4)], enable_gqa=True),
    "gqa_kv_heads": dict(shapes=[(1, 4, 3, 4), (1, 2, 3, 4), (1, 1, 3, 4)], enable_gqa=True),
    "mask_3d": dict(shapes=[(1, 2, 3, 4)] * 3, mask=(3, 3, 3)),
    "mask_batch": dict(shapes=[(1, 2, 3, 4)] * 3, mask=(2, 2, 3, 3)),
    "mask_rows": dict(shapes=[(1, 2, 3, 4)] * 3, mask=(2, 3)),
    "mask_grad": dict(shapes=[(1, 2, 3, 4)] * 3, mask=(3, 3), mask_grad=True),
    "ints": dict(shapes=[(1, 2, 3, 4)] * 3, ints=True),
    "stride": dict(shapes=[(1, 2, 4, 3), (1, 2, 3, 4), (1, 2, 3, 4)], transpose_q=True),
}
ACCEPTED = {
    "gqa": dict(shapes=[(1, 4, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4)], enable_gqa=True),
    "mask_2d": dict(shapes=[(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)], mask=(3, 5)),
    "mask_column": dict(shapes=[(1, 2, 3, 4)] * 3, mask=(3, 1)),
    "mask_4d": dict(shapes=[(2, 2, 3, 4)] * 3, mask=(1, 2, 1, 3)),
    "bool_mask": dict(shapes=[(1, 2, 3, 4)] * 3, mask=(3, 3), bool_mask=True),
    "causal": dict(shapes=[(1, 2, 3, 4)] * 3, is_causal=True),
}


def case_program(case, choice):
    def program(T):
        if case.get("ints"):
            q = k = v = T.ones(case["shapes"][0], dtype=T.int64)
        else:
            q, k, v = leaves(T, *case["shapes"], dtype=T.float64)
            if case.get("transpose_q"):
                q = q.transpose(-1, -2)
        kwargs = {key: case[key] for key in ("dropout_p", "enable_gqa", "is_causal") if key in case}
        if "mask" in case:
            mask = T.tensor(values(case["mask"]), dtype=T.float64,
                            requires_grad=case.get("mask_grad", False))
            kwargs["attn_mask"] = mask > 0 if case.get("bool_mask") else mask
        if case.get("dropout_p"):
            return attend(T, CHOICES[choice](T), q, k, v, grads=False, **kwargs).shape
        grads = not case.get("ints")
        return attend(T, CHOICES[choice](T), q, k, v, grads=grads, **kwargs)
    return program


@pytest.mark.parametrize("choice, name", [
    (choice, name) for choice in ("flash", "both") for name in sorted(REFUSED) + sorted(ACCEPTED)])
def test_flash_refusals_warn_and_raise_as_torch(name, choice):
    program = case_program({**REFUSED, **ACCEPTED}[name], choice)
    if choice == "both":  # the math kernel takes what flash refuses (or raises as torch's)
        same(program)
    else:
        (raises if name in REFUSED else ok)(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


@pytest.mark.parametrize("shapes", [[(1, 2, 0, 4), (1, 2, 3, 4), (1, 2, 3, 4)],
                                    [(2, 3, 4), (2, 0, 4), (2, 0, 5)],
                                    [(1, 2, 3, 4), (1, 2, 0, 4), (1, 2, 0, 4)]])
@pytest.mark.parametrize("choice", ["flash", "math", "both"])
def test_empty_sequences_give_torchs_zeros_connected_to_every_input(shapes, choice):
    def program(T):
        q, k, v = leaves(T, *shapes)
        with T.nn.attention.sdpa_kernel(CHOICES[choice](T)):
            out = T.nn.functional.scaled_dot_product_attention(q, k, v)
        (out.sum() + q.sum()).backward()
        return out, out.grad_fn.next_functions[1][0].name(), q.grad, k.grad, v.grad
    ok(program)


def test_sdpa_kernel_restores_flags_and_priority():
    def program(T):
        cuda, attention = T.backends.cuda, T.nn.attention
        SDPBackend = attention.SDPBackend
        seen = []
        flags = lambda: (cuda.flash_sdp_enabled(), cuda.math_sdp_enabled(),
                         cuda.mem_efficient_sdp_enabled(), cuda.cudnn_sdp_enabled())
        with attention.sdpa_kernel([SDPBackend.MATH, SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION],
                                   set_priority=True) as context:
            seen.append((context, flags(), attention._cur_sdpa_kernel_backends(True)))
            with attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                seen.append(flags())
            seen.append(flags())
        seen.append((flags(), attention._cur_sdpa_kernel_backends(),
                     attention._cur_sdpa_kernel_backends(with_priority=True)))
        return str(seen)
    ok(program)


def test_sdpa_kernel_rejects_other_types_when_entered():
    def program(T):
        manager = T.nn.attention.sdpa_kernel("math")  # nothing happens until it is entered
        with manager:
            pass
    raises(program)


@pytest.mark.parametrize("flag", ["flash", "mem_efficient", "math", "cudnn"])
def test_flag_setters_take_only_bools(flag):
    def program(T):
        cuda = T.backends.cuda
        before = getattr(cuda, f"{flag}_sdp_enabled")()
        getattr(cuda, f"enable_{flag}_sdp")(False)
        off = getattr(cuda, f"{flag}_sdp_enabled")()
        getattr(cuda, f"enable_{flag}_sdp")(True)
        try:
            getattr(cuda, f"enable_{flag}_sdp")(1)
        except RuntimeError as error:
            return before, off, str(error)
    ok(program)


def test_math_reduction_flag_and_availability():
    def program(T):
        cuda = T.backends.cuda
        before = cuda.fp16_bf16_reduction_math_sdp_allowed()
        cuda.allow_fp16_bf16_reduction_math_sdp(True)
        on = cuda.fp16_bf16_reduction_math_sdp_allowed()
        cuda.allow_fp16_bf16_reduction_math_sdp(False)
        return before, on, cuda.is_flash_attention_available()
    ok(program)


def test_deprecated_sdp_kernel_warns_when_called_and_switches():
    def program(T):
        cuda = T.backends.cuda
        manager = cuda.sdp_kernel(enable_flash=False)
        q, k, v = leaves(T, (1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4))
        with manager as context:
            inside = (context, cuda.flash_sdp_enabled(), cuda.math_sdp_enabled(),
                      T.nn.functional.scaled_dot_product_attention(q, k, v).grad_fn.name())
        return str(inside), cuda.flash_sdp_enabled()
    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_backend_enum_and_params():
    def program(T):
        SDPBackend = T.nn.attention.SDPBackend
        q = T.ones(1, 2, 3, 4)
        params = T.backends.cuda.SDPAParams(q, q, q, None, 0.5, True, False)
        try:
            params.dropout = 0.0
        except AttributeError as error:
            refused = str(error)
        return (repr(SDPBackend.MATH), str(SDPBackend.EFFICIENT_ATTENTION), int(SDPBackend.ERROR),
                SDPBackend.MATH == 0, SDPBackend(1).name, list(SDPBackend.__members__),
                SDPBackend.__name__, T.backends.cuda.SDPBackend is SDPBackend,
                params.dropout, params.is_causal, params.enable_gqa, params.attn_mask, refused,
                T.backends.cuda.can_use_flash_attention(params),
                T.backends.cuda.can_use_efficient_attention(params, True),
                T.backends.cuda.can_use_cudnn_attention(params),
                T.nn.attention.WARN_FOR_UNFUSED_KERNELS, T.nn.attention._get_flash_version(),
                sorted(T.nn.attention.__all__))
    ok(program)


def test_flash_implementation_registry(caplog):
    def program(T):
        attention = T.nn.attention
        seen = [attention.list_flash_attention_impls(), attention.current_flash_attention_impl()]
        for name in ("FA4", "FA3", "nope"):
            try:
                attention.activate_flash_attention_impl(name)
            except (ValueError, ModuleNotFoundError) as error:
                seen.append((type(error).__name__, str(error)))
        removed = []

        class Handle:
            def remove(self):
                removed.append(True)

        attention.register_flash_attention_impl("Mine", register_fn=Handle)
        attention.activate_flash_attention_impl("Mine")
        seen.append((attention.current_flash_attention_impl(),
                     attention.list_flash_attention_impls()))
        attention.restore_flash_attention_impl()
        seen.append((attention.current_flash_attention_impl(), removed))
        attention._registry._FLASH_ATTENTION_IMPLS.pop("Mine", None) if T is torch else (
            attention._registry._impls.pop("Mine"))
        return str(seen)
    ok(program)
    with caplog.at_level(logging.WARNING):
        jaxgrad.nn.attention.restore_flash_attention_impl()
    assert caplog.records[-1].getMessage() == (
        "Trying to restore default FA2 impl when no custom impl was activated")


def bias_module(T):
    return importlib.import_module(T.__name__ + ".nn.attention.bias")


@pytest.mark.parametrize("variant", ["causal_lower_right", "causal_upper_left"])
@pytest.mark.parametrize("lengths", [(3, 5), (4, 4), (5, 3)])
def test_causal_biases_attend_as_torchs(variant, lengths):
    def program(T):
        bias = getattr(bias_module(T), variant)(*lengths)
        q, k, v = leaves(T, (1, 2, lengths[0], 4), (1, 2, lengths[1], 4), (1, 2, lengths[1], 4),
                         dtype=T.float64)
        out = T.nn.functional.scaled_dot_product_attention(q, k, v, bias)
        return (repr(bias), tuple(bias.shape), str(bias.dtype), bias._materialize(),
                bias.seq_len_q, bias.seq_len_kv, int(bias.variant), val(out),
                out.grad_fn.name(), weighted_grads(T, out, q, k, v))
    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_causal_bias_errors_and_unfused_warnings():
    def program(T):
        module = bias_module(T)
        q = T.ones(1, 1, 2, 4)
        kv = T.ones(1, 1, 3, 4)
        seen = [str(module.CausalVariant.LOWER_RIGHT), repr(module.CausalVariant.UPPER_LEFT),
                sorted(module.__all__)]
        for attempt_ in (lambda: module.causal_lower_right(2, 3, 4),
                         lambda: module.causal_upper_left(2),
                         lambda: module.CausalBias(2, 3, 4),
                         lambda: T.nn.functional.scaled_dot_product_attention(
                             q, kv, kv, module.causal_lower_right(2, 3), is_causal=True),
                         lambda: T.nn.functional.scaled_dot_product_attention(
                             q, kv.double(), kv, module.causal_lower_right(2, 3))):
            try:
                attempt_()
            except (AssertionError, ValueError) as error:
                seen.append((type(error).__name__, str(error)))
        T.nn.attention.WARN_FOR_UNFUSED_KERNELS = True
        try:
            out = T.nn.functional.scaled_dot_product_attention(q, kv, kv,
                                                               module.causal_lower_right(2, 3))
        finally:
            T.nn.attention.WARN_FOR_UNFUSED_KERNELS = False
        return str(seen), out
    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)
