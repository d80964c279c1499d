"""Autocast (torch.autocast on CPU), differential against torch: which ops run in which dtype,
the casts in the graph, gradients, the cast cache, nesting, no_grad, threads, the switches and
their errors/warnings, custom_fwd/custom_bwd, checkpoint's recomputation, and traces."""

from __future__ import annotations

import threading
import warnings

import jax
import pytest

import jaxgrad
from differential import attempt, bug, captured_warnings, cases, next_functions, ok, raises
from jaxgrad._engine import autocast as _autocast
from jaxgrad._engine.dispatch import apply


def _exact(T, shape, requires_grad=True, dtype=None):
    """Values exact in bfloat16 (small multiples of 1/4): results compare exactly."""
    n = 1
    for s in shape:
        n *= s
    values = T.arange(n, dtype=T.float32).reshape(shape).remainder(7).sub(3).div(4)
    values = values if dtype is None else values.to(dtype)
    return values.requires_grad_(requires_grad)


def _in_autocast(T, fn, **kwargs):
    with T.autocast("cpu", **kwargs):
        return fn()


# --- which dtype each op runs in ---------------------------------------------------------------

def _ops(T):
    F = T.nn.functional
    a, b = _exact(T, (3, 4)), _exact(T, (4, 2))
    return {
        "mm": lambda: T.mm(a, b),
        "matmul_2d": lambda: T.matmul(a, b),
        "bmm": lambda: T.bmm(_exact(T, (2, 3, 4)), _exact(T, (2, 4, 2))),
        "addmm": lambda: T.addmm(_exact(T, (2,)), a, b),
        "baddbmm": lambda: T.baddbmm(_exact(T, (2, 3, 2)), _exact(T, (2, 3, 4)),
                                     _exact(T, (2, 4, 2))),
        "addbmm": lambda: T.addbmm(_exact(T, (3, 2)), _exact(T, (2, 3, 4)),
                                   _exact(T, (2, 4, 2))),
        "linear": lambda: F.linear(a, _exact(T, (5, 4)), _exact(T, (5,))),
        "linear_no_bias": lambda: F.linear(a, _exact(T, (5, 4))),
        "conv2d": lambda: F.conv2d(_exact(T, (1, 2, 4, 4)), _exact(T, (3, 2, 2, 2))),
        "conv1d": lambda: F.conv1d(_exact(T, (1, 2, 5)), _exact(T, (3, 2, 2)), _exact(T, (3,))),
        "prelu": lambda: F.prelu(a, _exact(T, (4,))),
        "prod_of_bf16": lambda: T.prod(_exact(T, (3,), dtype=T.bfloat16)),
        "trace_of_bf16": lambda: T.trace(_exact(T, (3, 3), dtype=T.bfloat16)),
        "mse_of_bf16": lambda: F.mse_loss(_exact(T, (3,), dtype=T.bfloat16), _exact(T, (3,))),
        "nll_of_bf16": lambda: F.nll_loss(_exact(T, (2, 3), dtype=T.bfloat16),
                                          T.tensor([0, 2])),
        "huber_of_bf16": lambda: F.huber_loss(_exact(T, (3,), dtype=T.bfloat16), _exact(T, (3,))),
        "cat_mixed": lambda: T.cat([_exact(T, (2,), dtype=T.bfloat16), _exact(T, (2,))]),
        "cat_bf16": lambda: T.cat([_exact(T, (2,), dtype=T.bfloat16)] * 2),
        "stack_mixed": lambda: T.stack([_exact(T, (2,)), _exact(T, (2,), dtype=T.bfloat16)]),
        "exp_unlisted": lambda: T.exp(a),
        "sum_unlisted_bf16": lambda: _exact(T, (3,), dtype=T.bfloat16).sum(),
        "mm_float64": lambda: T.mm(a.double(), b.double()),
        "mm_float16": lambda: T.mm(a.half(), b.half()),
        "mm_int": lambda: T.mm(T.ones(2, 2, dtype=T.int64), T.ones(2, 2, dtype=T.int64)),
        "einsum_through_bmm": lambda: T.einsum("ij,jk->ik", a, b),
    }


OPS = list(_ops(jaxgrad))


@pytest.mark.parametrize("name", OPS)
def test_op_dtype_value_and_graph_under_autocast(name):
    def program(T):
        out = _in_autocast(T, _ops(T)[name])
        return out, next_functions(out.grad_fn)
    ok(program)


@pytest.mark.parametrize("name", ["mm", "addmm", "linear", "conv2d", "cat_mixed", "mse_of_bf16"])
def test_gradients_of_float32_leaves_come_back_float32(name):
    def program(T):
        with T.autocast("cpu"):
            out = _ops(T)[name]()
        leaves = []

        def walk(fn):
            for child, _ in fn.next_functions if fn is not None else ():
                if type(child).__name__ == "AccumulateGrad":
                    leaves.append(child.variable)
                else:
                    walk(child)
        walk(out.grad_fn)
        out.float().sum().backward()
        return [leaf.grad.clone() for leaf in leaves]
    ok(program)


@pytest.mark.parametrize("name", OPS)
def test_op_dtype_under_autocast(name):
    ok(lambda T: str(_in_autocast(T, _ops(T)[name]).dtype))


def test_float16_autocast_dtype():
    ok(lambda T: _in_autocast(T, lambda: T.mm(_exact(T, (2, 3)), _exact(T, (3, 2))),
                              dtype=T.float16))


def test_autocast_as_decorator():
    def program(T):
        @T.autocast("cpu")
        def f(a, b):
            return T.mm(a, b), T.is_autocast_enabled("cpu")
        return f(_exact(T, (2, 2)), _exact(T, (2, 2))), T.is_autocast_enabled("cpu")
    ok(program)


def test_amp_autocast_is_the_same_class():
    assert jaxgrad.amp.autocast is jaxgrad.autocast


# --- nesting, disabling, no_grad, the cache ----------------------------------------------------

def test_nested_regions_and_disabling_inside():
    def program(T):
        a = _exact(T, (2, 2))
        seen = []
        with T.autocast("cpu"):
            seen.append(T.mm(a, a).dtype)
            with T.autocast("cpu", enabled=False):
                seen.append(T.mm(a, a).dtype)
                with T.autocast("cpu", dtype=T.float16):
                    seen.append(T.mm(a, a).dtype)
                seen.append(T.is_autocast_enabled("cpu"))
            seen.append(T.mm(a, a).dtype)
            seen.append(T.get_autocast_dtype("cpu"))
        seen.append(T.mm(a, a).dtype)
        return [str(s) for s in seen]
    ok(program)


def test_weight_cast_is_cached_within_a_region():
    def program(T):
        w, x = _exact(T, (2, 2)), _exact(T, (2, 2), requires_grad=False)
        with T.autocast("cpu"):
            y1, y2 = T.mm(x, w), T.mm(x, w)
        with T.autocast("cpu"):
            y3 = T.mm(x, w)
        cast = [y.grad_fn.next_functions[1][0] for y in (y1, y2, y3)]
        (y1 + y2 + y3).float().sum().backward()
        return cast[0] is cast[1], cast[0] is cast[2], w.grad
    ok(program)


@pytest.mark.parametrize("setting", ["argument", "switch"])
def test_cache_disabled(setting):
    def program(T):
        w = _exact(T, (2, 2))
        if setting == "switch":
            T.set_autocast_cache_enabled(False)
        try:
            with T.autocast("cpu", cache_enabled=False if setting == "argument" else None):
                y1, y2 = T.mm(w, w), T.mm(w, w)
        finally:
            T.set_autocast_cache_enabled(True)
        return y1.grad_fn.next_functions[0][0] is y2.grad_fn.next_functions[0][0]
    ok(program)


def test_only_float32_leaves_that_require_grad_are_cached():
    def program(T):
        plain, view = _exact(T, (2, 2), requires_grad=False), _exact(T, (4,)).view(2, 2)
        with T.autocast("cpu"):
            y1, y2 = T.mm(view, plain), T.mm(view, plain)
        return y1.grad_fn.next_functions[0][0] is y2.grad_fn.next_functions[0][0]
    ok(program)


def test_cast_cached_under_no_grad_is_reused_with_grad_enabled():
    # torch's known trap: the cached cast made under no_grad has no history
    def program(T):
        w = _exact(T, (2, 2))
        with T.autocast("cpu"):
            with T.no_grad():
                first = T.mm(w, w)
            second = T.mm(w, w)
        return first, second
    ok(program)


def test_no_grad_inside_autocast_still_casts():
    def program(T):
        w = _exact(T, (2, 2))
        with T.autocast("cpu", cache_enabled=False), T.no_grad():
            return T.mm(w, w)
    ok(program)


def test_autocast_state_is_per_thread():
    def program(T):
        seen = []

        def worker():
            a = _exact(T, (2, 2))
            seen.append((T.is_autocast_enabled("cpu"), str(T.mm(a, a).dtype)))
        with T.autocast("cpu"):
            thread = threading.Thread(target=worker)
            thread.start()
            thread.join()
            seen.append(T.is_autocast_enabled("cpu"))
        return seen
    ok(program)


# --- the switches ------------------------------------------------------------------------------

def test_switches_read_and_write_the_state():
    def program(T):
        seen = [T.is_autocast_enabled(), T.is_autocast_enabled("cpu"),
                T.is_autocast_enabled(device_type="cpu"), str(T.get_autocast_dtype("cpu")),
                str(T.get_autocast_dtype("cuda")), str(T.get_autocast_dtype("xla")),
                T.is_autocast_cache_enabled()]
        T.set_autocast_enabled("cpu", True)
        T.set_autocast_dtype("cpu", T.float16)
        a = _exact(T, (2, 2))
        seen += [T.is_autocast_enabled("cpu"), str(T.mm(a, a).dtype)]
        T.set_autocast_enabled("cpu", False)
        T.set_autocast_dtype("cpu", T.bfloat16)
        T.set_autocast_enabled(True)
        seen.append(T.is_autocast_enabled())
        T.set_autocast_enabled(False)
        seen += [T.autocast_increment_nesting(), T.autocast_decrement_nesting()]
        T.clear_autocast_cache()
        return seen
    ok(program)


SWITCH_ERRORS = {
    "unknown device": lambda T: T.get_autocast_dtype("foo"),
    "unknown device enabled": lambda T: T.is_autocast_enabled("foo"),
    "no autocast device": lambda T: T.set_autocast_enabled("meta", True),
    "enabled not bool": lambda T: T.set_autocast_enabled("cpu", 1),
    "one arg not bool": lambda T: T.set_autocast_enabled("cpu"),
    "device not str": lambda T: T.get_autocast_dtype(3),
    "device keyword not str": lambda T: T.is_autocast_enabled(device_type=3),
    "too many args": lambda T: T.is_autocast_enabled("cpu", 1),
    "dtype not dtype": lambda T: T.set_autocast_dtype("cpu", 3),
    "cache not bool": lambda T: T.set_autocast_cache_enabled(1),
    "available unknown": lambda T: T.amp.is_autocast_available("foo"),
    "autocast unknown": lambda T: T.autocast("foo"),
    "autocast meta": lambda T: T.autocast("meta"),
    "autocast meta with dtype": lambda T: T.autocast("meta", dtype=T.bfloat16),
    "autocast not str": lambda T: T.autocast(3),
    "decorating a non-callable": lambda T: T.autocast("cpu")(3),
    "custom_fwd device not str": lambda T: T.amp.custom_fwd(lambda ctx: 0, device_type=3),
}


@pytest.mark.parametrize("name", list(SWITCH_ERRORS))
def test_switch_errors(name):
    raises(SWITCH_ERRORS[name])


def test_availability():
    ok(lambda T: [T.amp.is_autocast_available(d) for d in ("cpu", "cuda", "xla", "meta", "hip")])


WARNING_CASES = {
    "float32 target": lambda T: T.autocast("cpu", dtype=T.float32)._enabled,
    "float64 target": lambda T: T.autocast("cpu", dtype=T.float64)._enabled,
    "legacy cpu enabled": lambda T: T.is_autocast_cpu_enabled(),
    "legacy cpu dtype": lambda T: str(T.get_autocast_cpu_dtype()),
    "legacy set cpu dtype": lambda T: T.set_autocast_cpu_dtype(T.bfloat16),
    "legacy set cpu enabled": lambda T: T.set_autocast_cpu_enabled(False),
    "legacy gpu dtype": lambda T: str(T.get_autocast_gpu_dtype()),
    "cpu.amp.autocast": lambda T: T.cpu.amp.autocast().device,
}


@pytest.mark.parametrize("name", list(WARNING_CASES))
def test_warnings_and_results(name):
    import torch
    program = WARNING_CASES[name]
    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


@pytest.mark.skipif(jaxgrad.cuda.is_available(), reason="the warning is for a runtime without GPU")
def test_cuda_autocast_without_a_gpu_warns_and_is_off():
    import torch

    def program(T):
        with T.autocast("cuda") as region:
            return region._enabled, T.is_autocast_enabled("cuda")
    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_cpu_amp_autocast_is_a_cpu_region():
    def program(T):
        with warnings.catch_warnings(action="ignore"), T.cpu.amp.autocast():
            return T.mm(_exact(T, (2, 2)), _exact(T, (2, 2)))
    ok(program)


# --- custom autograd Functions -----------------------------------------------------------------

def _scaled_function(T, cast_inputs):
    class Scaled(T.autograd.Function):
        @staticmethod
        @T.amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return T.mm(x, w)

        @staticmethod
        @T.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            return (T.mm(grad, w.t()), T.mm(x.t(), grad),
                    T.is_autocast_enabled("cpu"))[:2]
    return Scaled


@pytest.mark.parametrize("case", cases(["none-inside", "none-outside", "float32-inside",
                                         "float32-outside"], xfail={}))
def test_custom_fwd_and_custom_bwd(case):
    cast, where = case.split("-")
    inside = where == "inside"

    def program(T):
        Scaled = _scaled_function(T, None if cast == "none" else T.float32)
        x, w = _exact(T, (2, 3)), _exact(T, (3, 2))
        with T.autocast("cpu", enabled=inside):
            out = Scaled.apply(x, w)
        out.float().sum().backward()
        return out, x.grad, w.grad
    ok(program)


def test_custom_bwd_runs_backward_in_forwards_autocast_state():
    def program(T):
        seen = []

        class Probe(T.autograd.Function):
            @staticmethod
            @T.amp.custom_fwd(device_type="cpu")
            def forward(ctx, x):
                seen.append(T.is_autocast_enabled("cpu"))
                return x * 2

            @staticmethod
            @T.amp.custom_bwd(device_type="cpu")
            def backward(ctx, grad):
                seen.append((T.is_autocast_enabled("cpu"), str(T.get_autocast_dtype("cpu"))))
                return grad * 2
        with T.autocast("cpu", dtype=T.float16):
            out = Probe.apply(_exact(T, (2,)))
        out.sum().backward()
        return seen
    ok(program)


# --- checkpoint recomputes under the forward's autocast state ----------------------------------

@pytest.mark.parametrize("reentrant", [False, True])
@pytest.mark.parametrize("enabled", [True, False])
def test_checkpoint_recomputes_with_the_autocast_state(reentrant, enabled):
    def program(T):
        from importlib import import_module
        checkpoint = import_module(f"{T.__name__}.utils.checkpoint").checkpoint
        dtypes = []

        def block(x, y):
            out = T.mm(x, y).exp()
            dtypes.append(str(out.dtype))
            return out

        x, y = _exact(T, (3, 3)), _exact(T, (3, 3))
        with T.autocast("cpu", enabled=enabled):
            out = checkpoint(block, x, y, use_reentrant=reentrant)
        out.float().sum().backward()
        return dtypes, out, x.grad, y.grad
    ok(program)


# --- traces: jaxgrad.compile and jax.jit see the casts -------------------------------------

def test_compiled_step_under_autocast_equals_eager():
    def step(w, x):
        with jaxgrad.autocast("cpu"):
            loss = jaxgrad.mm(x, w).float().sum()
        loss.backward()
        return loss

    results = []
    for fn in (step, jaxgrad.compile(step)):
        w, x = _exact(jaxgrad, (3, 2)), _exact(jaxgrad, (4, 3), requires_grad=False)
        loss = fn(w, x)
        results.append((loss.item(), w.grad.tolist(), str(w.grad.dtype)))
    assert results[0] == results[1]


def test_compiled_step_retraces_when_autocast_changes():
    """A step traced outside an autocast region is traced again inside one (its ops' dtypes
    differ). Values agree to bfloat16's precision only: XLA may keep a bfloat16 intermediate in
    float32 (its ``xla_allow_excess_precision``), as ``jax.jit`` does."""
    def step(w, x):
        return jaxgrad.mm(x, w).sum()

    compiled = jaxgrad.compile(step)
    w, x = jaxgrad.full((2, 2), 1 / 3, requires_grad=True), jaxgrad.full((2, 2), 1 / 3)
    assert compiled(w, x).dtype is jaxgrad.float32
    with jaxgrad.autocast("cpu"):
        inside, eager = compiled(w, x), step(w, x)
    assert inside.dtype is eager.dtype is jaxgrad.bfloat16
    assert abs(inside.item() - eager.item()) < 1e-2
    assert compiled(w, x).dtype is jaxgrad.float32


def test_jax_jit_of_a_function_using_autocast():
    def f(a):
        x = jaxgrad.from_jax(a)
        with jaxgrad.autocast("cpu"):
            return jaxgrad.mm(x, x).jax()

    a = _exact(jaxgrad, (2, 2), requires_grad=False).jax()
    jitted = jax.jit(f)(a)
    assert jitted.dtype == f(a).dtype
    assert jitted.tolist() == f(a).tolist()


def test_trace_inside_region_does_not_leave_tracers_in_the_cache():
    w = _exact(jaxgrad, (2, 2))

    def f(a):
        return jaxgrad.mm(jaxgrad.from_jax(a), w.detach().requires_grad_()).jax()

    with jaxgrad.autocast("cpu"):
        jax.jit(f)(w.detach().jax())
        eager = jaxgrad.mm(w, w)  # a cached traced cast would fail here
    assert eager.dtype is jaxgrad.bfloat16


# --- casts public ops make before their own checks (see functorch_notes/autocast.md) -----------


@pytest.mark.parametrize("name", [
    "mm_mixed",
    "matmul_1d",
    "index_copy_mixed",
    pytest.param("sdpa", marks=bug("sdpa on bfloat16 inputs builds another graph than torch's "
                                   "(whose CPU math path upcasts and casts back), autocast or "
                                   "not")),
])
def test_public_op_level_casts(name):
    def program(T):
        a = _exact(T, (3, 3))
        programs = {
            "mm_mixed": lambda: T.mm(a.bfloat16(), a),
            "matmul_1d": lambda: T.matmul(_exact(T, (3,)), _exact(T, (3,))),
            "index_copy_mixed": lambda: T.index_copy(_exact(T, (3,)), 0, T.tensor([0]),
                                                     _exact(T, (1,), dtype=T.bfloat16)),
            "sdpa": lambda: T.nn.functional.scaled_dot_product_attention(
                _exact(T, (1, 2, 4)), _exact(T, (1, 2, 4)), _exact(T, (1, 2, 4))),
        }
        out = _in_autocast(T, programs[name])
        return out, next_functions(out.grad_fn)
    ok(program, rtol=1e-2)


def _as_public_op(T, name, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` called as the public op ``name``: for jaxgrad through the hook its
    function and method forms are to call (``_autocast.autocast_call``)."""
    if T is jaxgrad:
        return _autocast.autocast_call(name, fn, args, kwargs, apply)
    return fn(*args, **kwargs)


OP_LEVEL_PROGRAMS = {
    "mm_mixed": lambda T: _as_public_op(T, "mm", T.mm, _exact(T, (3, 3), dtype=T.bfloat16),
                                        _exact(T, (3, 3))),
    "matmul_1d": lambda T: _as_public_op(T, "matmul", T.matmul, _exact(T, (3,)),
                                         _exact(T, (3,))),
    "linear": lambda T: _as_public_op(T, "linear", T.nn.functional.linear, _exact(T, (2, 3)),
                                      _exact(T, (4, 3)), bias=_exact(T, (4,))),
    "linear_3d": lambda T: _as_public_op(T, "linear", T.nn.functional.linear,
                                         _exact(T, (2, 2, 3)), _exact(T, (4, 3))),
    "index_copy_mixed": lambda T: _as_public_op(
        T, "index_copy", T.index_copy, _exact(T, (3,)), 0, T.tensor([0]),
        _exact(T, (1,), dtype=T.bfloat16)),
    "cat_list": lambda T: _as_public_op(T, "cat", T.cat, [_exact(T, (2,), dtype=T.bfloat16),
                                                          _exact(T, (2,))]),
    "cross_entropy_upcasts_first": lambda T: _as_public_op(
        T, "cross_entropy", T.nn.functional.cross_entropy,
        T.tensor([[0.1, 0.7, -0.3], [1.3, -0.9, 0.2]], requires_grad=True).bfloat16(),
        T.tensor([0, 2])),
    "unlisted_op_untouched": lambda T: _as_public_op(T, "exp", T.exp, _exact(T, (2,))),
}


@pytest.mark.parametrize("name", list(OP_LEVEL_PROGRAMS))
def test_op_level_hook_casts_as_torchs_autocast_kernel(name):
    def program(T):
        with T.autocast("cpu"):
            out = OP_LEVEL_PROGRAMS[name](T)
        return out, next_functions(out.grad_fn)
    ok(program)


def test_op_level_hook_excludes_the_ops_inside():
    seen = []

    def impl(a):
        seen.append(_autocast.cast_inputs("mm", (a,), apply)[0] is a)
        return jaxgrad.mm(a, a)

    with jaxgrad.autocast("cpu"):
        out = _autocast.autocast_call("linear", impl, (_exact(jaxgrad, (2, 2)),), {}, apply)
        after = _autocast.cast_inputs("mm", (out.float(),), apply)[0].dtype
    assert seen == [True] and out.dtype is jaxgrad.bfloat16 and after is jaxgrad.bfloat16


def test_nothing_left_enabled():
    assert not jaxgrad.is_autocast_enabled("cpu")
    assert attempt(lambda: jaxgrad.get_autocast_dtype("cpu")) is jaxgrad.bfloat16
