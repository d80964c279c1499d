"""Differential tests of ``utils.checkpoint`` (activation checkpointing) against torch.

Programs return what a user observes: values and gradients, how often (and how far) the
checkpointed function ran, the calls of hooks placed inside and around it, and the errors and
warnings of both variants (``use_reentrant=True``: a custom Function rerunning the forward in
backward; ``use_reentrant=False``: saved-tensor hooks recomputing on first unpack). How many
tensors a region saved is observable too: the determinism check's error counts them.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import pathlib
import re
import weakref

import jax
import jax.numpy as jnp
import pytest

import jaxgrad
from differential import attempt, captured_warnings, ok, raises

torch = pytest.importorskip("torch.utils.checkpoint") and pytest.importorskip("torch")

NOTES = pathlib.Path(__file__).resolve().parents[2] / "functorch_notes" / "checkpoint.md"


@pytest.fixture(autouse=True)
def _torch_logging_tensor_logger_restored():
    """torch's checkpoint debug mode leaves the "LoggingTensor" logger at INFO with its traceback
    filters (``capture_logs`` never resets them); later LoggingTensor ops in the same process
    would then log through pytest's handlers, which fail on torch's log arguments."""
    logger = logging.getLogger("LoggingTensor")
    saved = logger.level, logger.propagate, list(logger.filters), list(logger.handlers)
    yield
    logger.setLevel(saved[0])
    logger.propagate = saved[1]
    logger.filters[:] = saved[2]
    logger.handlers[:] = saved[3]


def leaf(T, values):
    return T.tensor(values, requires_grad=True)


def counted(T, fn, log, name="run"):
    """``fn`` logging each call with the grad mode it ran under."""
    def wrapper(*args, **kwargs):
        log.append((name, T.is_grad_enabled()))
        return fn(*args, **kwargs)
    return wrapper


# --- non-reentrant: values, gradients, recomputation per backward call -------------------------

def test_non_reentrant_values_grads_and_forward_runs():
    def program(T):
        cp, log = T.utils.checkpoint, []
        x, y = leaf(T, [0.5, 1.0]), leaf(T, [2.0, 3.0])
        out = cp.checkpoint(counted(T, lambda a, b: (a.sin() * b).exp(), log), x, y,
                            use_reentrant=False)
        out.sum().backward(retain_graph=True)  # first backward: one recomputation
        runs_after_backward = len(log)
        g = T.autograd.grad(out.sum(), x, retain_graph=True)  # a new backward call: again
        runs_after_grad = len(log)
        out.sum().backward()
        second = attempt(lambda: out.sum().backward())  # freed: torch's error
        return out, x.grad, y.grad, g, runs_after_backward, runs_after_grad, log, second
    ok(program)


def test_non_reentrant_grad_and_backward_inputs():
    def program(T):
        cp = T.utils.checkpoint
        x, w = leaf(T, [[0.5, -1.0], [2.0, 0.1]]), leaf(T, [[1.0, 2.0], [3.0, 4.0]])
        out = cp.checkpoint(lambda a: (a @ w).tanh(), x, use_reentrant=False)
        gx, gw = T.autograd.grad(out.sum(), (x, w), retain_graph=True)
        out.sum().backward(inputs=[w])
        return out, gx, gw, x.grad, w.grad
    ok(program)


def test_non_reentrant_kwargs_and_nested_structures():
    def program(T):
        cp = T.utils.checkpoint
        x = leaf(T, [0.5, 1.0, 1.5])

        def fn(inputs, scale, power=1):
            return {"out": (inputs["t"] * scale) ** power, "n": 3}

        res = cp.checkpoint(fn, {"t": x}, 2.0, power=3, use_reentrant=False)
        res["out"].sum().backward()
        return res, x.grad
    ok(program)


def test_non_reentrant_early_stop_runs_only_as_far_as_needed():
    def program(T):
        cp, log = T.utils.checkpoint, []

        def fn(x):
            log.append("start")
            y = x.exp()
            log.append("after exp")  # the last saved tensor is exp's result: stops here
            z = y.detach() * 2
            log.append("end")
            return y, z

        x = leaf(T, [0.3, 0.7])
        y, _ = cp.checkpoint(fn, x, use_reentrant=False)
        y.sum().backward()
        stopped = list(log)
        log.clear()
        with cp.set_checkpoint_early_stop(False):
            y, _ = cp.checkpoint(fn, x, use_reentrant=False)
        y.sum().backward()  # the switch counts when the checkpoint is made, not in backward
        full = list(log)
        log.clear()
        y, _ = cp.checkpoint(fn, x, use_reentrant=False, early_stop=False)
        y.sum().backward()
        return stopped, full, log, x.grad
    ok(program)


def test_nested_checkpoints_recompute_outer_then_inner():
    def program(T):
        cp, log = T.utils.checkpoint, []

        def inner(x):
            log.append("inner")
            return x.sin().cos()

        def outer(x):
            log.append("outer")
            return cp.checkpoint(inner, x.exp(), use_reentrant=False).tanh()

        x = leaf(T, [0.3, 0.7])
        y = cp.checkpoint(outer, x, use_reentrant=False)
        y.sum().backward()
        return y, x.grad, log
    ok(program)


def test_nested_checkpoints_three_deep_with_grad():
    def program(T):
        cp, log = T.utils.checkpoint, []

        def level(n):
            def fn(x):
                log.append(n)
                h = x.sin() * x
                return cp.checkpoint(level(n - 1), h, use_reentrant=False) if n else h.exp()
            return fn

        x = leaf(T, [0.3, 0.7, 1.1])
        y = cp.checkpoint(level(2), x, use_reentrant=False)
        (g,) = T.autograd.grad(y.sum(), x)
        return y, g, log
    ok(program)


def test_backward_inside_the_checkpointed_function():
    # torch's Note [Nestable Checkpoint], Rule 6: a grad() inside the forward
    def program(T):
        cp = T.utils.checkpoint

        def fn(x):
            z = x.sin().cos()
            (gx,) = T.autograd.grad(z.sum(), x)
            return x.cos() * gx

        def fn_retaining(x):
            z = x.sin().cos()
            (gx,) = T.autograd.grad(z.sum(), x, retain_graph=True)
            return gx, z

        x = leaf(T, [0.5, 1.5])
        out = cp.checkpoint(fn, x, use_reentrant=False)
        out.sum().backward()
        first = x.grad.clone()
        x.grad = None
        with cp.set_checkpoint_early_stop(False):
            gx, z = cp.checkpoint(fn_retaining, x, use_reentrant=False)
        z.sum().backward()
        return out, first, gx, z, x.grad
    ok(program)


def test_checkpoint_under_no_grad_just_runs_the_function():
    def program(T):
        cp, log = T.utils.checkpoint, []
        x = leaf(T, [0.5, 1.5])
        with T.no_grad():
            out = cp.checkpoint(counted(T, lambda t: t.exp(), log), x, use_reentrant=False)
            out_r = cp.checkpoint(counted(T, lambda t: t.exp(), log), x, use_reentrant=True)
        return out, out_r, log
    ok(program)


def test_input_modified_in_place_after_the_forward():
    def program(T):
        cp = T.utils.checkpoint
        x = leaf(T, [0.3, 0.7])
        a = x * 1
        y = cp.checkpoint(lambda t: t.sin(), a, use_reentrant=False)
        a.mul_(2)
        b = T.tensor([0.3, 0.7])
        z = cp.checkpoint(lambda t: (t * x).sin(), b, use_reentrant=False)
        b.add_(1)
        return attempt(lambda: y.sum().backward()), attempt(lambda: z.sum().backward())
    ok(program)


def test_an_input_returned_as_is():
    def program(T):
        cp = T.utils.checkpoint
        a = leaf(T, [1.0, 2.0])
        b = a * 1
        same_b = cp.checkpoint(lambda x: x, b, use_reentrant=False)
        aliased = cp.checkpoint(lambda x: x, b, use_reentrant=True)
        same_a = cp.checkpoint(lambda x: x, a, use_reentrant=False)
        result = attempt(lambda: (aliased * same_b).sum().backward())
        return same_b is b, same_b, aliased, same_a is a, same_a, result, a.grad
    ok(program)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_function_modifying_its_input_in_place(use_reentrant):
    def program(T):
        cp = T.utils.checkpoint
        a = leaf(T, [1.0, 2.0])
        b = a * 1

        def f(x):
            x.mul_(2)
            return x.exp()

        out = cp.checkpoint(f, b, use_reentrant=use_reentrant)
        return out, b, attempt(lambda: out.sum().backward()), a.grad
    ok(program)


def test_output_modified_in_place_after_the_region():
    # with hooks, torch checks no version: the recomputation hands back exp's own result
    def program(T):
        cp = T.utils.checkpoint
        a = leaf(T, [1.0, 2.0])
        y = cp.checkpoint(lambda x: x.exp(), a, use_reentrant=False)
        y.mul_(2)
        return y, attempt(lambda: y.sum().backward()), a.grad
    ok(program)


def test_retain_grad_inside_the_region():
    def program(T):
        cp, kept = T.utils.checkpoint, []

        def f(x):
            h = x.exp()
            h.retain_grad()
            kept.append(h)
            return h.sin()

        a = leaf(T, [1.0, 2.0])
        cp.checkpoint(f, a, use_reentrant=False).sum().backward()
        return [h.grad for h in kept], a.grad
    ok(program)


@pytest.mark.parametrize("outer", [False, True])
def test_reentrant_and_non_reentrant_nested_in_each_other(outer):
    def program(T):
        cp, log = T.utils.checkpoint, []

        def inner(x):
            log.append(("inner", T.is_grad_enabled()))
            return x.sin().exp()

        def outer_fn(x):
            log.append(("outer", T.is_grad_enabled()))
            return cp.checkpoint(inner, x * 2, use_reentrant=not outer).cos()

        a = leaf(T, [0.3, 0.9])
        y = cp.checkpoint(outer_fn, a, use_reentrant=outer)
        y.sum().backward()
        grad = attempt(lambda: T.autograd.grad(
            cp.checkpoint(outer_fn, a, use_reentrant=outer).sum(), a))
        return y, a.grad, log, grad
    ok(program)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_double_backward_through_the_region(use_reentrant):
    def program(T):
        cp = T.utils.checkpoint
        a = leaf(T, [0.3, 0.9])
        y = cp.checkpoint(lambda x: (x ** 3).sin(), a, use_reentrant=use_reentrant)
        if use_reentrant:  # the inner backward accumulates: only backward() reaches it
            y.sum().backward(create_graph=True)
            g = a.grad
        else:
            (g,) = T.autograd.grad(y.sum(), a, create_graph=True)
        second = attempt(lambda: T.autograd.grad(g.sum(), a))
        # (grad_fn names of create_graph results are a separate jaxgrad difference)
        return y, g.detach(), g.requires_grad, second
    ok(program)


def test_non_tensor_and_integer_inputs_and_outputs():
    def program(T):
        cp = T.utils.checkpoint
        i, b = T.tensor([1, 2]), leaf(T, [0.5, 1.5])
        y = cp.checkpoint(lambda n, x: x * n, i, b, use_reentrant=False)
        y.sum().backward()
        yr = cp.checkpoint(lambda n, x: x * n, i, b, use_reentrant=True)
        yr.sum().backward()
        return (y, yr, b.grad, cp.checkpoint(lambda x: 3, b, use_reentrant=False),
                attempt(lambda: cp.checkpoint(lambda x: 3, b, use_reentrant=True)))
    ok(program)


def test_grad_fns_of_the_outputs():
    def program(T):
        cp = T.utils.checkpoint
        a = leaf(T, [0.5, 1.5])
        y, z = cp.checkpoint(lambda x: (x.exp(), x.sin()), a, use_reentrant=True)
        yn, zn = cp.checkpoint(lambda x: (x.exp(), x.sin()), a, use_reentrant=False)
        edges = [None if n is None else type(n).__name__ for n, _ in y.grad_fn.next_functions]
        return y.grad_fn.name(), z.grad_fn is y.grad_fn, edges, yn.grad_fn.name(), zn
    ok(program)


# --- hooks -------------------------------------------------------------------------------------

@pytest.mark.parametrize("use_reentrant", [False, True])
def test_tensor_hooks_inside_and_around_the_region(use_reentrant):
    def program(T):
        cp, seen = T.utils.checkpoint, []

        def fn(t):
            h = t.exp()
            if h.requires_grad:  # the reentrant forward runs under no_grad
                h.register_hook(lambda g: seen.append(("h", g.clone())))
            return h.sin()

        x = leaf(T, [0.3, 0.7])
        x.register_hook(lambda g: seen.append(("x", g.clone())))
        y = cp.checkpoint(fn, x, use_reentrant=use_reentrant)
        y.register_hook(lambda g: seen.append(("y", g.clone())))
        y.sum().backward()
        return seen, x.grad
    ok(program)


def test_hook_on_a_parameter_used_inside_and_outside_runs_once():
    def program(T):
        cp, count = T.utils.checkpoint, []
        w = leaf(T, [[0.5, 1.0], [1.5, 2.0]])
        w.register_hook(lambda g: count.append(g.clone()))
        x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
        h = w * x
        out = cp.checkpoint(lambda t: w * t, h, use_reentrant=False)
        out.sum().backward()
        return count, w.grad, x.grad
    ok(program)


def test_node_hooks_and_saved_tensor_hooks_around_the_region():
    def program(T):
        cp, log = T.utils.checkpoint, []

        def pack(t):
            log.append(("pack", tuple(t.shape)))
            return t

        def unpack(t):
            log.append(("unpack", tuple(t.shape)))
            return t

        x = leaf(T, [0.3, 0.7])
        with T.autograd.graph.saved_tensors_hooks(pack, unpack):
            h = x.exp()  # saved by the outer hooks
            y = cp.checkpoint(lambda t: t.sin() * t, h, use_reentrant=False)  # h: Rule 2
            z = y.cos()
        y.grad_fn.register_prehook(lambda g: log.append(("pre", g[0].clone())))
        z.sum().backward()
        return log, x.grad
    ok(program)


def test_save_on_cpu_and_checkpoint():
    def program(T):
        cp = T.utils.checkpoint
        a = leaf(T, [[0.5, 1.5], [1.0, 0.7]])
        with T.autograd.graph.save_on_cpu():
            h = cp.checkpoint(lambda x: x.pow(2).pow(2), a.pow(2), use_reentrant=False)
            c = h.pow(2)
        c.sum().backward()
        first = a.grad.clone()
        a.grad = None

        def f(a):
            h = a.pow(2)
            with T.autograd.graph.save_on_cpu():
                h = h.pow(2).pow(2)
            return h.pow(2)

        cp.checkpoint(f, a, use_reentrant=False).sum().backward()
        return first, a.grad
    ok(program)


# --- custom Functions inside a region ------------------------------------------------------------

def test_saved_tensors_of_a_custom_function_unpacked_twice():
    def program(T):
        cp, errors = T.utils.checkpoint, []

        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                out = x * y
                ctx.save_for_backward(x, y, out)
                return out

            @staticmethod
            def backward(ctx, grad):
                x, y, _ = ctx.saved_tensors
                errors.append(attempt(lambda: ctx.saved_tensors))
                return grad * y, grad * x

        x, y = leaf(T, [1.0, 2.0]), leaf(T, [3.0, 4.0])
        out = cp.checkpoint(lambda a, b: F.apply(a * b, b.exp()), x, y, use_reentrant=False)
        out.sum().backward()
        return errors, x.grad, y.grad
    ok(program)


def test_saved_input_that_needs_no_grad_is_the_same_object():
    def program(T):
        cp, seen = T.utils.checkpoint, []

        class Test(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(y)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                (saved,) = ctx.saved_tensors
                seen.append(saved)
                return g, None

        a, b = leaf(T, 1.0), T.tensor(1.0)
        cp.checkpoint(Test.apply, a, b, use_reentrant=False).backward()
        return seen[0] is b
    ok(program)


def test_early_stop_frees_what_the_recomputation_made():
    # torch's test_custom_autograd_ac_early_stop: no reference cycle keeps a recomputed output
    def program(T):
        cp, refs = T.utils.checkpoint, []

        class Test(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.clone()
                ctx.save_for_backward(y)
                refs.append(weakref.ref(y))
                return y

            @staticmethod
            def backward(ctx, *grads):
                _ = ctx.saved_tensors
                return None

        def scope():
            out = cp.checkpoint(Test.apply, leaf(T, [1.0, 2.0]), use_reentrant=False)
            out.sum().backward()

        enabled = gc.isenabled()
        gc.disable()
        try:
            scope()
            return [ref() is None for ref in refs]
        finally:
            if enabled:
                gc.enable()
    ok(program)


# --- determinism checks ------------------------------------------------------------------------

def alternating(first, later):
    """A function that runs ``first`` on its first call and ``later`` afterwards."""
    calls = []

    def fn(x):
        calls.append(1)
        return first(x) if len(calls) == 1 else later(x)
    return fn


def test_determinism_errors():
    def program(T):
        cp = T.utils.checkpoint
        three = lambda x: x.sin().exp().sin()
        two = lambda x: x.sin().exp()
        two_other_shape = lambda x: x.sin() * T.tensor([1.0, 2.0])
        a = leaf(T, [0.5])

        def run(fn, **kw):
            return attempt(lambda: cp.checkpoint(fn, a, use_reentrant=False, **kw).backward())

        fewer = run(alternating(three, two))
        with cp.set_checkpoint_early_stop(False):
            more = run(alternating(two, three))
        more_with_early_stop = run(alternating(two, three))
        shapes = run(alternating(two, two_other_shape))
        unchecked = run(alternating(two, two_other_shape), determinism_check="none")
        return fewer, more, more_with_early_stop, shapes, unchecked, a.grad
    ok(program)


@pytest.mark.parametrize("region", ["exp", "mul", "matmul_relu", "linear", "softmax"])
def test_number_of_tensors_a_region_saves(region):
    # a recomputation that saves nothing: the error counts what the forward saved
    def program(T):
        cp = T.utils.checkpoint
        w = T.tensor([[0.5, -1.0], [2.0, 0.3]], requires_grad=True)
        bodies = {
            "exp": lambda x: x.exp().exp(),
            "mul": lambda x: (x * x) * w[0],
            "matmul_relu": lambda x: (x @ w).relu() @ w,
            "linear": lambda x: T.nn.functional.linear(x, w, w[0]).tanh(),
            "softmax": lambda x: T.softmax(x * 3, dim=-1).log(),
        }
        x = leaf(T, [[0.5, 1.5], [1.0, -0.7]])
        out = cp.checkpoint(alternating(bodies[region], lambda t: t.detach()), x,
                            use_reentrant=False)
        return attempt(lambda: out.sum().backward())
    raises(program)


def debug_report(T, **kw):
    cp = T.utils.checkpoint
    a = leaf(T, [0.5])
    fn = alternating(lambda x: x.sin().exp(), lambda x: x.sin() * T.tensor([1.0, 2.0]))
    out = cp.checkpoint(fn, a, use_reentrant=False, **kw)
    try:
        out.backward()
    except RuntimeError as e:
        message = str(e)
        return type(e).__name__, [line for line in (
            "You are seeing this error because you passed `debug=True` to checkpoint",
            "Operations executed during the original forward:",
            "Operations executed during recomputation:",
            "Recomputed values for the following tensors have different metadata") if
            line in message], isinstance(e.__cause__, T.utils.checkpoint.CheckpointError)


def test_debug_mode_reports_the_ops_of_both_runs():
    def program(T):
        cp = T.utils.checkpoint
        plain = debug_report(T, debug=True)
        with cp.set_checkpoint_debug_enabled(True):
            forced = debug_report(T, debug=False)
        with cp.set_checkpoint_debug_enabled(False):
            off = debug_report(T, debug=True)
        return plain, forced, off
    ok(program)


def test_debug_report_lists_the_ops():
    report = debug_report  # the lists of ops are jaxgrad's own (op names, shapes)
    assert report(jaxgrad, debug=True)[0] == "CheckpointError"
    fn = alternating(lambda x: x.sin().exp(), lambda x: x.sin() * jaxgrad.tensor([1.0, 2.0]))
    out = jaxgrad.utils.checkpoint.checkpoint(fn, leaf(jaxgrad, [0.5]), use_reentrant=False,
                                              debug=True)
    with pytest.raises(jaxgrad.utils.checkpoint.CheckpointError) as info:
        out.backward()
    forward, recompute = str(info.value).split("Operations executed during recomputation:")
    forward = forward.split("Operations executed during the original forward:")[1]
    assert re.findall(r"aten::(\w+)", forward) == ["sin", "exp"]
    assert re.findall(r"aten::(\w+)", recompute.split("+---")[0]) == ["sin", "mul"]


# --- the reentrant variant ---------------------------------------------------------------------

def test_reentrant_values_grads_and_forward_runs():
    def program(T):
        cp, log = T.utils.checkpoint, []
        x, y = leaf(T, [0.5, 1.0]), leaf(T, [2.0, 3.0])
        out = cp.checkpoint(counted(T, lambda a, b: (a.exp() * b).sin(), log), x, y,
                            use_reentrant=True)
        out.sum().backward(retain_graph=True)
        out.sum().backward()
        return out, x.grad, y.grad, log, attempt(lambda: out.sum().backward())
    ok(program)


def test_reentrant_with_grad_or_backward_inputs_raises_and_recovers():
    def program(T):
        cp = T.utils.checkpoint
        a = leaf(T, [[0.5, 1.5], [1.0, 0.7]])
        grad = attempt(lambda: T.autograd.grad(
            cp.checkpoint(T.exp, a, use_reentrant=True).sum(), (a,)))
        inputs = attempt(lambda: cp.checkpoint(T.exp, a, use_reentrant=True).sum().backward(
            inputs=[a]))
        cp.checkpoint(T.exp, a, use_reentrant=True).sum().backward()  # valid again
        return grad, inputs, a.grad
    ok(program)


def test_reentrant_outputs_that_need_no_grad():
    def program(T):
        cp = T.utils.checkpoint
        a = leaf(T, [0.5, 1.5])

        def detached(x):
            with T.no_grad():
                return x * 2

        out = cp.checkpoint(detached, a, use_reentrant=True)
        no_output = attempt(lambda: (out + a).sum().backward())
        w = leaf(T, [2.0, 3.0])
        plain = cp.checkpoint(lambda t: t * w, T.tensor([1.0, 2.0]), use_reentrant=True)
        no_input = attempt(lambda: plain.sum().backward())  # parameters alone get nothing
        return out, no_output, a.grad, plain, no_input, w.grad
    ok(program)


def test_reentrant_tuple_outputs_and_non_tensor_arguments():
    def program(T):
        cp = T.utils.checkpoint
        x, y = leaf(T, [0.5, 1.5]), leaf(T, [1.0, 2.0])

        def fn(a, scale, b):
            return a * scale, (a * b).exp(), "label"

        p, q, label = cp.checkpoint(fn, x, 3.0, y, use_reentrant=True)
        (p.sum() + q.sum()).backward()
        return p, q, label, x.grad, y.grad
    ok(program)


def test_reentrant_grad_of_an_output_left_unused():
    def program(T):
        cp = T.utils.checkpoint
        x = leaf(T, [0.5, 1.5])
        _, q = cp.checkpoint(lambda a: (a * 2, a.exp()), x, use_reentrant=True)
        q.sum().backward()
        return x.grad
    ok(program)


# --- RNG ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("use_reentrant", [False, True])
def test_recomputation_draws_the_forwards_random_numbers(use_reentrant):
    # jaxgrad's numbers are not torch's: the program compares each library with itself
    def program(T):
        cp = T.utils.checkpoint
        T.manual_seed(0)
        x = leaf(T, [1.0] * 5)

        def fn(t):
            return T.nn.functional.dropout(t, 0.5) * T.rand(5)

        y = cp.checkpoint(fn, x, use_reentrant=use_reentrant)
        after_forward = T.rand(3)
        y.sum().backward()
        after_backward = T.rand(3)
        T.manual_seed(0)
        expected = fn(x)
        return (bool((y == expected).all()), bool((x.grad == expected.detach()).all()),
                bool((after_forward == T.rand(3)).all()),
                bool((after_backward == T.rand(3)).all()))
    ok(program)


def test_preserve_rng_state_false_draws_new_numbers():
    def program(T):
        cp = T.utils.checkpoint
        T.manual_seed(0)
        x = leaf(T, [1.0] * 8)
        y = cp.checkpoint(lambda t: t * T.rand(8), x, use_reentrant=False,
                          preserve_rng_state=False)
        y.sum().backward()
        return bool((x.grad == y.detach()).all())
    ok(program)


# --- errors and warnings of the arguments ------------------------------------------------------

def test_argument_errors():
    def program(T):
        cp = T.utils.checkpoint
        x = leaf(T, [1.0])

        def run(**kw):
            return attempt(lambda: cp.checkpoint(lambda t, **k: t * 2, x, **kw))

        return (run(use_reentrant=True, scale=2, power=3),
                run(use_reentrant=True, context_fn=lambda: cp.noop_context_fn()),
                run(use_reentrant=True, debug=True),
                run(use_reentrant=False, determinism_check="strict"),
                run(use_reentrant=False, debug=True,
                    context_fn=lambda: (contextlib.nullcontext(), contextlib.nullcontext())),
                attempt(lambda: cp.checkpoint_sequential([T.exp], 1, x, use_reentrant=False,
                                                         scale=2)),
                attempt(lambda: cp.detach_variable([x])))
    ok(program)


def test_context_fn_runs_around_forward_and_recomputation():
    def program(T):
        cp, log = T.utils.checkpoint, []

        @contextlib.contextmanager
        def context(name):
            log.append(("enter", name, T.is_grad_enabled()))
            yield
            log.append(("exit", name))

        def context_fn():
            return context("forward"), context("recompute")

        x = leaf(T, [0.5, 1.5])
        out = cp.checkpoint(lambda t: (log.append("fn"), t.exp())[1], x, use_reentrant=False,
                            context_fn=context_fn)
        out.sum().backward()
        return log, x.grad
    ok(program)


def test_a_context_that_suppresses_the_forwards_exception():
    def program(T):
        cp = T.utils.checkpoint

        def context_fn():
            return contextlib.suppress(ValueError), contextlib.nullcontext()

        def fails(t):
            raise ValueError("inside")

        x = leaf(T, [1.0])
        return (attempt(lambda: cp.checkpoint(fails, x, use_reentrant=False,
                                              context_fn=context_fn)),
                attempt(lambda: cp.checkpoint(fails, x, use_reentrant=False)))
    ok(program)


def warnings_of(T, call):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    cp = T.utils.checkpoint
    return {
        "checkpoint": lambda: cp.checkpoint(lambda t: t * 2, x),
        "explicit": lambda: cp.checkpoint(lambda t: t * 2, x, use_reentrant=False),
        "sequential": lambda: cp.checkpoint_sequential([T.exp, T.sin], 2, x),
        "no_input_requires_grad": lambda: cp.checkpoint(T.exp, T.ones(2), use_reentrant=True),
        "no_grad_non_reentrant": lambda: cp.checkpoint(T.exp, T.ones(2), use_reentrant=False),
    }[call]


@pytest.mark.parametrize("call", ["checkpoint", "explicit", "sequential",
                                  "no_input_requires_grad", "no_grad_non_reentrant"])
def test_warnings(call):
    expected = captured_warnings(lambda T: warnings_of(T, call)(), torch)
    assert captured_warnings(lambda T: warnings_of(T, call)(), jaxgrad) == expected


# --- GraphExecGroup ----------------------------------------------------------------------------

def test_graph_exec_group_recomputes_once_for_disjoint_backwards():
    def program(T):
        cp, results = T.utils.checkpoint, []
        for grouped in (True, False):
            log = []
            x = leaf(T, [[0.5, 1.5], [1.0, 0.7]])

            def fn(t):
                y = t.sin().cos()
                return y, y.sin().cos()

            y, z = cp.checkpoint(counted(T, fn, log), x, use_reentrant=False)
            with cp.GraphExecGroup() if grouped else contextlib.nullcontext():
                (gy,) = T.autograd.grad(z, (y,), grad_outputs=(T.ones(2, 2),))
                (gx,) = T.autograd.grad(y, (x,), grad_outputs=(gy,))
            results.append((gy, gx, len(log)))
        return results
    ok(program)


def test_graph_exec_group_overlapping_backwards_and_nesting():
    def program(T):
        cp = T.utils.checkpoint
        x = leaf(T, [0.5, 1.5])
        out = cp.checkpoint(lambda t: t.sin().cos(), x, use_reentrant=False)
        with cp.GraphExecGroup():
            out.sum().backward(retain_graph=True)
            overlap = attempt(lambda: out.sum().backward())
            nested = attempt(lambda: cp.GraphExecGroup().__enter__())
        return overlap, x.grad, str(nested).split(" Already")[0]
    ok(program)


# --- saved tensors read outside backward -------------------------------------------------------

def test_saved_result_read_outside_backward_recomputes_each_time():
    def program(T):
        cp, log = T.utils.checkpoint, []
        a = leaf(T, [0.5, 1.5])
        d = cp.checkpoint(counted(T, lambda t: T.exp(t * t), log), a, use_reentrant=False)
        seen = [len(log), d.grad_fn._saved_result, len(log), d.grad_fn._saved_result, len(log)]
        d.sum().backward()
        return seen, len(log), attempt(lambda: d.grad_fn._saved_result), a.grad
    ok(program)


# --- checkpoint_sequential ---------------------------------------------------------------------

def linear_stack(T, n):
    layers = []
    for i in range(n):
        layer = T.nn.Linear(3, 3)
        with T.no_grad():
            layer.weight.copy_(T.arange(9.0).reshape(3, 3) / (9 + i) - 0.4)
            layer.bias.copy_(T.tensor([0.1, -0.2, 0.3]) * (i + 1))
        layers.append(layer)
    return layers


@pytest.mark.parametrize("use_reentrant", [False, True])
@pytest.mark.parametrize("segments", [1, 2, 3, 4])
def test_checkpoint_sequential(use_reentrant, segments):
    def program(T):
        cp = T.utils.checkpoint
        layers = linear_stack(T, 4)
        mods = [m for layer in layers for m in (layer, T.nn.Tanh())]
        x = leaf(T, [[0.1, 0.2, 0.3], [-0.5, 0.4, 0.9]])
        y = cp.checkpoint_sequential(T.nn.Sequential(*mods), segments, x,
                                     use_reentrant=use_reentrant)
        y.sum().backward()
        return y, x.grad, [(m.weight.grad, m.bias.grad) for m in layers]
    ok(program)


def test_checkpoint_sequential_of_functions():
    def program(T):
        cp, log = T.utils.checkpoint, []
        fns = [counted(T, f, log, name) for name, f in
               [("exp", T.exp), ("sin", T.sin), ("cos", T.cos), ("tanh", T.tanh)]]
        x = leaf(T, [0.2, 0.4])
        y = cp.checkpoint_sequential(fns, 2, x, use_reentrant=False)
        y.sum().backward()
        return y, x.grad, log
    ok(program)


# --- jaxgrad.compile ---------------------------------------------------------------------------

@pytest.mark.parametrize("use_reentrant", [False, True])
def test_compiled_step_with_checkpoint_equals_eager(use_reentrant):
    def make():
        jaxgrad.manual_seed(0)
        model = jaxgrad.nn.Sequential(jaxgrad.nn.Linear(8, 16), jaxgrad.nn.Tanh(),
                                      jaxgrad.nn.Dropout(0.5), jaxgrad.nn.Linear(16, 1))
        opt = jaxgrad.optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = jaxgrad.utils.checkpoint.checkpoint(model, x, use_reentrant=use_reentrant)
            loss = loss.pow(2).mean()
            loss.backward()
            opt.step()
            return loss

        return model, step

    x = jaxgrad.randn(4, 8, requires_grad=True)
    model, step = make()
    eager = [step(x) for _ in range(3)]
    eager_weight = model[0].weight.detach().clone()
    model, step = make()
    compiled = jaxgrad.compile(step, fullgraph=True)
    results = [compiled(x) for _ in range(3)]
    for a, b in zip(eager, results):
        assert abs(a.item() - b.item()) <= 1e-6 * max(1.0, abs(a.item()))
    assert float((model[0].weight.detach() - eager_weight).abs().max()) < 1e-6
    assert len(compiled._cache) == 1  # the first call (creating .grad) ran eagerly


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_inside_a_jax_trace_the_recomputation_stays(use_reentrant):
    # XLA would merge a recomputation with the forward it repeats; the checkpoint puts its
    # inputs behind an optimization barrier (jax.checkpoint's prevent_cse), so the compiled
    # program computes exp twice, as jax.checkpoint's does; the generator's key stays concrete
    def program(checkpointed):
        def f(array):
            x = jaxgrad.from_jax(array).requires_grad_()
            fn = lambda t: t.sin().exp().cos()
            y = (jaxgrad.utils.checkpoint.checkpoint(fn, x, use_reentrant=use_reentrant)
                 if checkpointed else fn(x))
            y.sum().backward()
            return y.sum().jax(), x.grad.jax()
        return f

    array = jnp.linspace(0.0, 1.0, 8)
    generator = jaxgrad._functions.random.default_generator
    key = jax.random.key_data(generator.key())
    hlo = {c: jax.jit(program(c)).lower(array).compile().as_text() for c in (False, True)}
    assert hlo[False].count(" exponential(") == 1
    assert hlo[True].count(" exponential(") == 2
    assert not isinstance(generator.key(), jax.core.Tracer)
    assert bool((jax.random.key_data(generator.key()) == key).all())
    plain, checkpointed = jax.jit(program(False))(array), jax.jit(program(True))(array)
    assert all(bool(jnp.allclose(a, b)) for a, b in zip(plain, checkpointed))


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_inside_a_jax_trace_inputs_keep_their_requires_grad(use_reentrant):
    # the region saves what it saved in the forward only if every input requires grad as it
    # did then (mul saves the other factor of the input that needs grad): the barrier keeps it
    def grads(a, c):
        x, k = jaxgrad.from_jax(a).requires_grad_(), jaxgrad.from_jax(c)
        y = jaxgrad.utils.checkpoint.checkpoint(lambda t, f: (t * f).exp() * f, x, k,
                                                use_reentrant=use_reentrant)
        y.sum().backward()
        return x.grad.jax()

    a, c = jnp.linspace(0.0, 1.0, 4), jnp.full(4, 2.0)
    assert bool(jnp.allclose(jax.jit(grads)(a, c), grads(a, c)))
