"""torch's own tests of ``torch.utils.checkpoint`` (test/test_utils.py ``TestCheckpoint``,
test/test_autograd.py ``TestNestedCheckpoint`` and ``TestSelectiveActivationCheckpoint``), ported
to differential programs: each runs on torch and on jaxgrad and what a user observes (values,
gradients, how often the function and the policy ran, errors) must agree. What
tests/autograd/test_checkpoint.py and test_selective_checkpoint.py already cover is left out.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import gc
import importlib
import re
import weakref

import pytest

import jaxgrad
from differential import attempt, bug, cases, ok, op_log_mode

torch = pytest.importorskip("torch")


def leaf(T, values, **kw):
    return T.tensor(values, requires_grad=True, **kw)


def c_sac(T, policy, **kw):
    """A ``context_fn`` running ``policy`` (a function or a list of ops) selectively."""
    return functools.partial(T.utils.checkpoint.create_selective_checkpoint_contexts, policy, **kw)


@contextlib.contextmanager
def gc_disabled():
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def prefer_recompute_but(T, *ops):
    """A policy saving ``ops``' outputs and recomputing the rest."""
    policy = T.utils.checkpoint.CheckpointPolicy

    def policy_fn(ctx, op, *args, **kwargs):
        return policy.MUST_SAVE if op in ops else policy.PREFER_RECOMPUTE

    return policy_fn


# --- TestCheckpoint (test/test_utils.py) -------------------------------------------------------


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_sequential_reruns_all_but_the_last_segment(use_reentrant):
    def program(T):
        class Net(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.counter = 0

            def forward(self, x):
                self.counter += 1
                return x * T.tensor(2.0)  # (the reentrant variant needs a saved tensor)

        modules = [Net() for _ in range(10)]
        x = leaf(T, [[0.5, -1.0], [2.0, 0.25]])
        out = T.utils.checkpoint.checkpoint_sequential(modules, 2, x, use_reentrant=use_reentrant)
        after_forward = [m.counter for m in modules]
        out.sum().backward()
        return out, x.grad, after_forward, [m.counter for m in modules]

    ok(program)


def mlp(T):
    T.manual_seed(0)
    layers = [
        T.nn.Linear(6, 5),
        T.nn.ReLU(),
        T.nn.Linear(5, 4),
        T.nn.ReLU(),
        T.nn.Linear(4, 3),
        T.nn.ReLU(),
    ]
    with T.no_grad():
        for i, layer in enumerate(layers[::2]):
            w = layer.weight
            w.copy_(T.arange(w.numel(), dtype=w.dtype).reshape(w.shape).sin() * (0.5 + i))
            layer.bias.copy_(T.arange(layer.bias.numel(), dtype=w.dtype).cos() * 0.1)
    return layers


def test_reentrant_refuses_grad_non_reentrant_matches_plain_create_graph():
    def program(T):
        cp = T.utils.checkpoint
        modules = mlp(T)
        x = leaf(T, [[0.3, -0.2, 0.9, 1.2, -0.7, 0.4]])
        out = cp.checkpoint_sequential(modules, 2, x, use_reentrant=True)
        refused = attempt(
            lambda: T.autograd.grad(
                outputs=[out], grad_outputs=[T.ones(1, 3)], inputs=[x], create_graph=True
            )
        )
        plain = T.nn.Sequential(*modules)(x)
        expected = T.autograd.grad([plain], [x], grad_outputs=[T.ones(1, 3)], create_graph=True)
        out = cp.checkpoint_sequential(modules, 2, x, use_reentrant=False)
        got = T.autograd.grad([out], [x], grad_outputs=[T.ones(1, 3)], create_graph=True)
        return (
            refused,
            out,
            plain,
            expected,
            got,
            T.autograd.grad(got[0].sum(), x, allow_unused=True),
        )

    ok(program)


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("container", ["list", "module_list", "sequential"])
def test_checkpoint_sequential_of_module_containers(use_reentrant, container):
    def program(T):
        modules = mlp(T)
        held = {
            "list": modules,
            "module_list": T.nn.ModuleList(modules),
            "sequential": T.nn.Sequential(*modules),
        }[container]
        x = leaf(T, [[0.3, -0.2, 0.9, 1.2, -0.7, 0.4], [1.0, 0.5, -0.5, 0.1, 0.2, -0.3]])
        out = T.utils.checkpoint.checkpoint_sequential(
            list(held.children()) if container == "module_list" else held,
            2,
            x,
            use_reentrant=use_reentrant,
        )
        out.sum().backward()
        return out, x.grad, [(m.weight.grad, m.bias.grad) for m in modules[::2]]

    ok(program)


def test_checkpoint_sequential_refuses_several_inputs_and_none():
    def program(T):
        class Two(T.nn.Module):
            def forward(self, a, b):
                return a, b

        class Noop(T.nn.Module):
            def forward(self):
                pass

        cp = T.utils.checkpoint
        a, b = leaf(T, [1.0]), leaf(T, [2.0])
        results = []
        for reentrant in (True, False):
            sequential = functools.partial(cp.checkpoint_sequential, use_reentrant=reentrant)
            results.append(attempt(functools.partial(sequential, T.nn.Sequential(Two()), 1, a, b)))
            results.append(attempt(functools.partial(sequential, T.nn.Sequential(Noop()), 1)))
        return results

    ok(program)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_dropout_before_and_inside_the_region_replays_the_rng(use_reentrant):
    # the numbers are each library's own: the program compares a library with itself
    def program(T):
        inp = T.linspace(-1.0, 1.0, 64).requires_grad_()
        phase1, phase2 = T.nn.Dropout(), T.nn.Dropout()
        state = T.get_rng_state()
        out = T.utils.checkpoint.checkpoint(phase2, phase1(inp), use_reentrant=use_reentrant)
        out.sum().backward()
        with_checkpoint = inp.grad
        T.set_rng_state(state)
        inp.grad = None
        phase2(phase1(inp)).sum().backward()
        return bool(T.equal(with_checkpoint, inp.grad))

    ok(program)


def test_reentrant_non_tensor_inputs_and_outputs():
    def program(T):
        def foo(t1, t2, scale, t3):
            t4 = t1 + t2 * t3
            t5 = t1 * t2 + t3
            t4 *= scale
            t5 *= scale
            return scale, t4, None, True, t5, "bar", t1

        t1, t2 = leaf(T, [0.5, -1.0, 2.0]), leaf(T, [1.5, 0.25, -0.75])
        t3 = T.tensor([0.1, 0.2, 0.3])
        res = T.utils.checkpoint.checkpoint(foo, t1, t2, 3, t3, use_reentrant=True)
        res[1].sum().backward(retain_graph=True)
        res[4].sum().backward(retain_graph=True)
        res[6].sum().backward()
        again = attempt(lambda: res[6].sum().backward())
        grads = t1.grad.clone(), t2.grad.clone()
        t1.grad = t2.grad = None
        plain = foo(t1, t2, 3, t3)
        T.autograd.backward([plain[1].sum(), plain[4].sum(), plain[6].sum()])
        return (
            res,
            res[6] is t1,
            again,
            grads,
            t1.grad,
            t2.grad,
            T.utils.checkpoint.checkpoint(
                lambda a, b: a if b is None else a + b, t1, None, use_reentrant=True
            ),
        )

    ok(program)


def test_reentrant_without_tensors_just_runs():
    def program(T):
        def foo(t1, t2, scale, t3):
            t4 = (t1 + t2 * t3) * scale
            return scale, t4, None, True, (t1 * t2 + t3) * scale, "bar", t1

        return T.utils.checkpoint.checkpoint(foo, 0.25, 0.5, 3, 0.75, use_reentrant=True)

    ok(program)


def test_reentrant_partial_grad():
    def program(T):
        cp = T.utils.checkpoint
        x, y = leaf(T, [[1.0, 2.0, 3.0, 4.0]]), T.tensor([[4.0, 3.0, 2.0, 1.0]])
        out = cp.checkpoint(lambda a, b: (a, b), x, y, use_reentrant=True)
        out[0].sum().backward()
        x2, y2 = T.tensor([[1.0, 2.0]]), leaf(T, [[3.0, 4.0]])
        none = attempt(
            lambda: cp.checkpoint(lambda a, b: a, x2, y2, use_reentrant=True).sum().backward()
        )
        return out, x.grad, none

    ok(program)


# --- TestNestedCheckpoint (test/test_autograd.py) ----------------------------------------------


def nested_helpers(T):
    def grad(fn):
        def wrapper(x):
            with T.enable_grad():
                out = fn(x)
                (grad_input,) = T.autograd.grad(out, inputs=(x,), create_graph=True)
            return grad_input

        return wrapper

    def total(fn):
        return lambda x: fn(x).sum()

    def c(fn):
        return lambda *args, **kw: T.utils.checkpoint.checkpoint(
            fn, *args, use_reentrant=False, **kw
        )

    return grad, total, c


def detached(t):
    """Value and requires_grad (jaxgrad names the nodes of a create_graph backward after the
    formula, ``MulBackward0Backward``, where torch's are the ops': a separate difference)."""
    return t.detach(), t.requires_grad


def graph_dies(T, fn):
    """Whether every node of ``fn``'s graph is freed once its output is gone (torch's
    ``check_graph_dies``: a handle in each node's metadata). (How many nodes a create_graph
    backward makes depends on each op's derivative formula: not compared.)"""

    class Handle:
        pass

    def scope():
        a = T.tensor(0.7, requires_grad=True)
        out = fn(a)
        refs, seen, queue = [], set(), collections.deque([out.grad_fn])
        while queue:
            node = queue.popleft()
            if node is None or node in seen:
                continue
            seen.add(node)
            handle = Handle()
            refs.append(weakref.ref(handle))
            node.metadata["blah"] = handle
            queue.extend(n for n, _ in node.next_functions)
        return refs

    refs = scope()
    return bool(refs) and all(ref() is None for ref in refs)


@pytest.mark.parametrize("early_stop", [True, False])
@pytest.mark.parametrize("body", ["f", "g"])
def test_nested_checkpoints_and_grads_in_every_order(early_stop, body):
    def program(T):
        grad, _, c = nested_helpers(T)

        def f(x):
            return x.sin().exp().sin()

        def g(x):
            a, b = x.sin().exp().sin(), x.sin().exp().sin()
            T.autograd.grad(a, x)
            T.autograd.grad(b, x)
            return x.sin()

        fn = {"f": f, "g": g}[body]
        tests = (
            (fn, (c(fn), c(c(fn)))),
            (grad(fn), (grad(c(fn)), grad(c(c(fn))))),
            (grad(grad(fn)), (grad(c(grad(fn))), c(grad(grad(c(fn)))), grad(c(grad(c(fn)))))),
            (grad(grad(grad(fn))), (grad(c(grad(grad(c(fn))))), grad(c(grad(c(grad(c(fn)))))))),
        )
        x = T.tensor(0.7, requires_grad=True)
        results = []
        with T.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            for expected_fn, actual_fns in tests:
                results.append(detached(expected_fn(x)))
                for actual_fn in actual_fns:
                    results.append((detached(actual_fn(x)), graph_dies(T, actual_fn)))
        return results

    ok(program)


@pytest.mark.parametrize("early_stop", [True, False])
def test_nested_checkpoint_two_children(early_stop):
    def program(T):
        grad, total, c = nested_helpers(T)

        def f(x):
            return x.sin().exp().sin()

        def g(x):
            return x.cos().sin().exp()

        def hc(x):
            return c(g)(c(f)(x))

        a = leaf(T, [[0.1, 0.2, 0.3], [-0.4, 0.5, 0.6], [0.7, -0.8, 0.9]])
        with T.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            return (
                detached(grad(total(grad(total(lambda x: g(f(x))))))(a)),
                detached(grad(total(grad(total(c(hc)))))(a)),
                detached(grad(total(c(grad(total(c(hc))))))(a)),
                graph_dies(T, grad(c(hc))),
                graph_dies(T, grad(total(grad(total(c(hc)))))),
                graph_dies(T, grad(total(c(grad(total(c(hc))))))),
            )

    ok(program)


@pytest.mark.parametrize("early_stop", [True, False])
def test_nested_checkpoint_non_tensor_arguments_and_kwargs(early_stop):
    def program(T):
        cp = T.utils.checkpoint

        def fn(k, a, b, f):
            return f(k * a * b.exp()), 1, "abcd"

        def fn_kw(a, blah=None):
            out = a.sin().exp()
            if blah is not None:
                out = out * blah
            return out.sin().exp()

        a, b = T.tensor(2.0, requires_grad=True), T.tensor(3.0, requires_grad=True)
        with cp.set_checkpoint_early_stop(early_stop):
            out, one, text = cp.checkpoint(fn, 3, a, b, T.sin, use_reentrant=False)
            out_kw = cp.checkpoint(fn_kw, a, blah=b, use_reentrant=False)
            return (
                out,
                one,
                text,
                T.autograd.grad(out, (a, b)),
                T.autograd.grad(fn(3, a, b, T.sin)[0], (a, b)),
                out_kw,
                T.autograd.grad(out_kw, (a, b)),
            )

    ok(program)


@pytest.mark.parametrize("early_stop", [True, False])
def test_nested_checkpoint_hooks_on_the_original_graph(early_stop):
    def program(T):
        cp, counter, log = T.utils.checkpoint, [], []
        a = T.tensor(1.0, requires_grad=True)
        with cp.set_checkpoint_early_stop(early_stop):
            out = cp.checkpoint(lambda t: t.sin().cos().sin(), a, use_reentrant=False)
        out.grad_fn.next_functions[0][0].register_hook(lambda *_: counter.append(1))
        out.backward()

        def fn(t):
            x = t.sin().cos()
            return x, x.sin()

        with cp.set_checkpoint_early_stop(early_stop):
            x, out = cp.checkpoint(fn, a, use_reentrant=False)
        # a backward started from a hook: over the part of the graph below the hook's node
        out.grad_fn.register_hook(
            lambda *_: log.append(attempt(lambda: x.backward(retain_graph=True)))
        )
        out.backward(retain_graph=True)
        return len(counter), log, a.grad

    ok(program)


def test_set_checkpoint_early_stop_precedence():
    def program(T):
        cp, runs = T.utils.checkpoint, []

        def clone(x):
            runs.append(1)
            return x.clone()

        def fn(x):  # clone saves nothing: recomputed only without early stop
            return clone(x.sin().cos())

        def count(outer=None, inner=None, **kw):
            runs.clear()
            a = T.tensor(1.0, requires_grad=True)
            with (
                cp.set_checkpoint_early_stop(outer) if outer is not None else _null(),
                cp.set_checkpoint_early_stop(inner) if inner is not None else _null(),
            ):
                out = cp.checkpoint(fn, a, use_reentrant=False, **kw)
            out.backward()
            return len(runs)

        return (
            count(),
            count(early_stop=False),
            count(early_stop=True),
            count(outer=False),
            count(outer=True),
            count(outer=False, inner=True, early_stop=False),
            count(outer=False, early_stop=True),
            count(outer=True, early_stop=False),
        )

    ok(program)


def _null():
    return contextlib.nullcontext()


def _sin_counter(T):
    modes = importlib.import_module(f"{T.__name__}.utils._python_dispatch")

    class SinCounterMode(modes.TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func == T.ops.aten.sin.default:  # (torch's test: ``is``; see below)
                self.count += 1
            return func(*args, **(kwargs or {}))

    return SinCounterMode()


def early_stop_runs(T, body, early_stop):
    """How often the function ran, how many sins a dispatch mode saw, the gradient."""
    runs = []

    def fn(x):
        runs.append(1)
        return body(x)

    a = T.tensor(1.0, requires_grad=True)
    with _sin_counter(T) as counter:
        with T.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            out = T.utils.checkpoint.checkpoint(fn, a, use_reentrant=False)
        out.backward()
    return len(runs), counter.count, a.grad


@pytest.mark.parametrize("early_stop", [True, False])
def test_early_stop_when_nothing_needs_recomputing(early_stop):
    # the function reruns (up to its first op) whether or not early stop is on; a function
    # saving nothing is never rerun
    ok(
        lambda T: (
            early_stop_runs(T, lambda x: x.sin(), early_stop)[::2],
            early_stop_runs(T, lambda x: x.clone(), early_stop),
        )
    )


def test_early_stop_without_early_stop_the_op_runs_again():
    ok(lambda T: early_stop_runs(T, lambda x: x.sin(), False))


@bug(
    "jaxgrad's autograd saves an op's inputs after running it (torch's before the kernel): "
    "with early stop, the recomputation's op that saves the last input still reaches the "
    "dispatch modes (torch stops it at the autograd level)"
)
def test_early_stop_stops_before_the_op_that_saves_the_last_input():
    ok(lambda T: early_stop_runs(T, lambda x: x.sin(), True))


def test_dispatched_op_is_the_overload_object():
    def program(T):
        seen = []
        modes = importlib.import_module(f"{T.__name__}.utils._python_dispatch")

        class Mode(modes.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append((func is T.ops.aten.sin.default, func == T.ops.aten.sin.default))
                return func(*args, **(kwargs or {}))

        x = T.ones(2)
        with Mode():
            x.sin()
        return seen

    ok(program)


# --- TestSelectiveActivationCheckpoint (test/test_autograd.py) ---------------------------------


def test_sac_output_with_autograd_meta_of_an_integer_view():
    def program(T):
        x, y = T.tensor([1, 2, 3]), leaf(T, [0.5, -1.0, 2.0])
        out = T.utils.checkpoint.checkpoint(
            lambda a, b: (a.view(-1), b.sin().cos()),
            x,
            y,
            use_reentrant=False,
            context_fn=c_sac(T, [T.ops.aten.view.default]),
        )
        out[1].sum().backward()
        return out, y.grad

    ok(program)


def test_sac_bad_inputs_messages():
    def program(T):
        create = T.utils.checkpoint.create_selective_checkpoint_contexts
        errors = []
        for bad in ([2], 2, [T.ops.aten.sin]):
            try:
                create(bad)
            except (TypeError, ValueError) as e:  # (the packet's class is each library's own)
                errors.append((type(e).__name__, re.sub(r"<class '[\w.]+'>", "<class>", str(e))))
        return errors

    ok(program)


def test_sac_stateful_policy_and_early_stop():
    # the recomputation stops after the last saved tensor: the policy sees two ops, not three
    def program(T):
        counters, seen = [], []

        class Policy:
            def __init__(self):
                self.counter = [0]
                self.recompute_counter = [0]

            def __call__(self, ctx, func, *args, **kwargs):
                counter = self.recompute_counter if ctx.is_recompute else self.counter
                counter[0] += 1
                counters.append(counter[0])
                seen.append((func.__name__, ctx.is_recompute, len(args), sorted(kwargs)))
                return T.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE

        x = leaf(T, [0.5, -1.0, 2.0])
        out = T.utils.checkpoint.checkpoint(
            lambda t: t.sin().sin().sin(),
            x,
            use_reentrant=False,
            context_fn=c_sac(T, Policy(), allow_cache_entry_mutation=True),
        )
        out.sum().backward()
        return counters, seen, x.grad

    ok(program)


@pytest.mark.parametrize("early_stop", [True, False])
def test_sac_policy_calls_with_and_without_early_stop(early_stop):
    def program(T):
        cp, calls, runs = T.utils.checkpoint, [], []

        def policy_fn(ctx, op, *args, **kwargs):
            calls.append((op.__name__, ctx.is_recompute))
            return (
                cp.CheckpointPolicy.MUST_SAVE
                if op == T.ops.aten.mm.default
                else cp.CheckpointPolicy.PREFER_RECOMPUTE
            )

        def fn(x, w):
            runs.append(1)
            h = (x @ w).relu()
            return (h @ w).sigmoid().sum()

        x = leaf(T, [[0.5, -1.0], [2.0, 0.25]])
        w = leaf(T, [[0.3, -0.2], [0.1, 0.4]])
        out = cp.checkpoint(
            fn, x, w, use_reentrant=False, context_fn=c_sac(T, policy_fn), early_stop=early_stop
        )
        out.backward()
        return out, x.grad, w.grad, calls, len(runs)

    ok(program)


def test_sac_storage_is_freed():
    def program(T):
        cp, refs = T.utils.checkpoint, []
        modes = importlib.import_module(f"{T.__name__}.utils._python_dispatch")

        def fn(x):
            mode = modes._get_current_dispatch_mode()
            out = x.cos().exp()
            if isinstance(mode, cp._CachingTorchDispatchMode):
                raw = mode.storage[T.ops.aten.exp.default][0].val
                refs.append((raw.requires_grad, weakref.ref(raw)))
            return out.sin()

        policy = lambda ctx, op, *a, **k: cp.CheckpointPolicy.MUST_SAVE
        x = leaf(T, [0.5, -1.0, 2.0])
        with gc_disabled():  # (no reference cycle may keep the cached output alive)
            out = cp.checkpoint(fn, x, use_reentrant=False, context_fn=c_sac(T, policy))
            alive = refs[-1][1]() is not None
            del out
            freed_without_backward = refs[-1][1]() is None
            out = cp.checkpoint(fn, x, use_reentrant=False, context_fn=c_sac(T, policy))
            out.sum().backward(retain_graph=True)
            freed_after_backward = refs[-1][1]() is None
        return [r for r, _ in refs], alive, freed_without_backward, freed_after_backward

    ok(program)


def test_sac_mutated_cache_entry_and_allow_cache_entry_mutation():
    def program(T):
        cp = T.utils.checkpoint
        x = leaf(T, [0.5, -1.0, 2.0])
        fn = lambda t: t.sin().mul_(2).cos().exp()
        policy = prefer_recompute_but(T, T.ops.aten.sin.default)
        out = cp.checkpoint(fn, x, use_reentrant=False, context_fn=c_sac(T, policy))
        error = attempt(lambda: out.sum().backward())
        out = cp.checkpoint(
            fn, x, use_reentrant=False, context_fn=c_sac(T, policy, allow_cache_entry_mutation=True)
        )
        out.sum().backward()
        return error, out, x.grad

    ok(program)


def test_sac_op_with_two_outputs():
    def program(T):
        counter = []

        def policy_fn(ctx, op, *args, **kwargs):
            if str(op).startswith("aten.var_mean."):  # (the overload: see below)
                counter.append(ctx.is_recompute)
                return T.utils.checkpoint.CheckpointPolicy.MUST_SAVE
            return T.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE

        def fn(x):
            a, b = T.var_mean(x)
            return a * b

        x = leaf(T, [0.5, -1.0, 2.0])
        out = T.utils.checkpoint.checkpoint(
            fn, x, use_reentrant=False, context_fn=c_sac(T, policy_fn)
        )
        return out, T.autograd.grad(out.sum(), (x,)), T.autograd.grad(fn(x).sum(), (x,)), counter

    ok(program)


def test_sac_recompute_only_once():
    def program(T):
        x = leaf(T, [0.5, -1.0, 2.0])
        out = T.utils.checkpoint.checkpoint(
            lambda t: t.sin().cos().exp(),
            x,
            use_reentrant=False,
            context_fn=c_sac(T, prefer_recompute_but(T, T.ops.aten.sin.default)),
        )
        out.sum().backward(retain_graph=True)
        return x.grad.clone(), attempt(lambda: out.sum().backward(retain_graph=True))

    ok(program)


def test_sac_saves_var_mean_correction():
    def program(T):
        seen = []

        def policy_fn(ctx, op, *args, **kwargs):
            seen.append(str(op))
            return op == T.ops.aten.var_mean.correction

        x = leaf(T, [0.5, -1.0, 2.0])
        T.utils.checkpoint.checkpoint(
            lambda t: T.var_mean(t)[0], x, use_reentrant=False, context_fn=c_sac(T, policy_fn)
        )
        return seen

    ok(program)


# --- TestAutograd's checkpoint tests (test/test_autograd.py) ------------------------------------


def small_mlp(T):
    return mlp(T)[:3]


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_per_input_then_joint_mean(use_reentrant):
    def program(T):
        module = T.nn.Sequential(*small_mlp(T))
        inputs = [
            T.linspace(-1.0, 1.0, 6).reshape(1, 6).mul(i + 1).requires_grad_() for i in range(4)
        ]
        feats = [
            T.utils.checkpoint.checkpoint(module, x, use_reentrant=use_reentrant) for x in inputs
        ]
        mean = T.stack(feats).mean()
        mean.backward()
        return mean, [x.grad for x in inputs], [p.grad for p in module.parameters()]

    ok(program)


@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_non_reentrant_module_called_with_keyword_data(input_requires_grad):
    def program(T):
        class Holder(T.nn.Module):
            def __init__(self, mod):
                super().__init__()
                self.module = mod

            def forward(self, data):
                return self.module(data)

        module = Holder(T.nn.Sequential(*small_mlp(T)))
        data = [
            T.linspace(-1.0, 1.0, 6).reshape(1, 6).add(i).requires_grad_(input_requires_grad)
            for i in range(3)
        ]
        out = T.stack(
            [T.utils.checkpoint.checkpoint(module, data=d, use_reentrant=False) for d in data]
        ).mean()
        out.backward()
        return out, [d.grad for d in data], [p.grad for p in module.parameters()]

    ok(program)


def test_non_reentrant_recomputes_under_the_forwards_autocast():
    def program(T):
        dtypes = []

        def foo(x, y, z):
            x = T.mm(x, y)
            y = T.mm(x, z)
            z = T.mm(z, z)
            dtypes.append(str(z.dtype))
            return z

        results = []
        for enabled in (True, False):
            x = leaf(T, [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [0.1, 0.2, 0.3]])
            y, z = x.detach().cos().requires_grad_(), x.detach().sin().requires_grad_()
            with T.autocast(enabled=enabled, device_type="cpu", dtype=T.bfloat16):
                loss = T.utils.checkpoint.checkpoint(foo, x, y, z, use_reentrant=False).sum()
            loss.backward()  # the recomputation runs in bfloat16 too
            results.append((loss, x.grad, y.grad, z.grad))
        return results, dtypes

    ok(program)


def test_context_fn_modes_see_the_forward_and_the_recomputation():
    def program(T):
        cp = T.utils.checkpoint
        x = T.tensor(1.0, requires_grad=True)
        forward = op_log_mode(T)
        cp.checkpoint(
            lambda t: t.exp(),
            x,
            use_reentrant=False,
            context_fn=lambda: (forward, contextlib.nullcontext()),
        )
        recompute = op_log_mode(T)
        out = cp.checkpoint(
            lambda t: t.exp(),
            x,
            use_reentrant=False,
            context_fn=lambda: (contextlib.nullcontext(), recompute),
        )
        out.backward()
        refused = attempt(
            lambda: cp.checkpoint(
                lambda t: t.sin(),
                x,
                use_reentrant=True,
                context_fn=lambda: (contextlib.nullcontext(), recompute),
            )
        )
        # (torch's recomputation hook detaches the saved exp under the mode: detach.default)
        return (
            forward.ops,
            [op for op in recompute.ops if op != "detach.default"],
            refused,
        )

    ok(program)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_function_returning_a_tensor_made_under_no_grad(use_reentrant):
    def program(T):
        class NoGradModule(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = T.nn.Linear(2, 2, bias=False)
                self.lin2 = T.nn.Linear(2, 2, bias=False)

            def forward(self, x):
                with T.no_grad():
                    return self.lin2(self.linear(x))

        T.manual_seed(0)
        module = NoGradModule()
        with T.no_grad():
            module.linear.weight.copy_(T.tensor([[0.5, -1.0], [2.0, 0.25]]))
            module.lin2.weight.copy_(T.tensor([[1.5, 0.25], [-0.75, 0.1]]))
        a = leaf(T, [[0.3, -0.2], [0.9, 1.2]])
        results = []
        for _ in range(3):

            def step():
                out = T.utils.checkpoint.checkpoint(module, a, use_reentrant=use_reentrant)
                out += a
                out.sum().backward()
                return out

            results.append(attempt(step))
        return results, a.grad

    ok(program)


def test_non_reentrant_dict_input_and_output():
    def program(T):
        class MyModel(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = T.nn.Linear(3, 3, bias=False)
                with T.no_grad():
                    self.layer.weight.copy_(T.arange(9.0).reshape(3, 3).sin())

            def forward(self, dict_input):
                return {"result": self.layer(dict_input["tensor"])}

        model = MyModel()
        inp = {"tensor": T.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])}
        out = T.utils.checkpoint.checkpoint(model, inp, use_reentrant=False)["result"].sum()
        out.backward()
        return out, model.layer.weight.grad

    ok(program)


# --- more of SAC: what a policy receives, its return values, nesting, debug ----------------------


def sac_region(T, x, w, b):
    h = T.add(x @ w, b, alpha=2)
    h = T.nn.functional.linear(h, w, b).relu()
    s = h.sum(dim=1, keepdim=True)
    return (T.softmax(h.transpose(0, 1), dim=0) * s.t()).mean()


def policy_calls(T, describe):
    cp, calls = T.utils.checkpoint, []

    def policy_fn(ctx, op, *args, **kwargs):
        calls.append(describe(T, ctx, op, args, kwargs))
        return cp.CheckpointPolicy.PREFER_RECOMPUTE

    x = leaf(T, [[0.5, -1.0], [2.0, 0.25]])
    w, b = leaf(T, [[0.3, -0.2], [0.1, 0.4]]), leaf(T, [0.1, -0.1])
    out = cp.checkpoint(sac_region, T, x, w, b, use_reentrant=False, context_fn=c_sac(T, policy_fn))
    out.backward()
    return out, x.grad, w.grad, b.grad, calls


def test_sac_policy_runs_once_per_op_in_the_forward_with_its_output():
    def describe(T, ctx, op, args, kwargs):
        return ctx.is_recompute, ctx.op_output.shape, ctx.op_output.dtype

    ok(lambda T: policy_calls(T, describe))


@bug(
    "a TorchDispatchMode (a SAC policy) sees jaxgrad's op rows, not torch's overloads and "
    "arguments: add.default without alpha (torch: add.Tensor, alpha=2), sum.default with "
    "keyword dim (sum.dim_IntList), transpose.default (transpose.int), softmax.default "
    "(_softmax.default), keyword arguments where torch passes them positionally"
)
def test_sac_policy_sees_torchs_overloads_and_arguments():
    def describe(T, ctx, op, args, kwargs):
        def arg(v):
            return ("tensor", tuple(v.shape)) if isinstance(v, T.Tensor) else v

        return str(op), [arg(a) for a in args], {k: arg(v) for k, v in kwargs.items()}

    ok(lambda T: policy_calls(T, describe)[-1])


def test_sac_policy_return_values_nesting_debug_and_second_grad():
    def program(T):
        cp, results = T.utils.checkpoint, []
        x = leaf(T, [0.5, -1.0, 2.0])
        save_exp = c_sac(T, lambda ctx, op, *a, **k: op == T.ops.aten.exp.default)
        with cp.set_checkpoint_debug_enabled(True):
            results.append(
                attempt(
                    lambda: cp.checkpoint(
                        lambda t: t.exp().sin(), x, use_reentrant=False, context_fn=save_exp
                    )
                )
            )
        for value in (None, "MUST_SAVE", 1):  # neither a policy nor a bool: recomputed
            out = cp.checkpoint(
                lambda t: t.exp().sin(),
                x,
                use_reentrant=False,
                context_fn=c_sac(T, lambda ctx, op, *a, value=value, **k: value),
            )
            results.append((out, T.autograd.grad(out.sum(), x)))
        calls = []

        def save_sin(ctx, op, *args, **kwargs):
            calls.append(str(op))
            return op == T.ops.aten.sin.default

        out = cp.checkpoint(
            lambda t: t.sin().exp().cos().sum(),
            x,
            use_reentrant=False,
            context_fn=c_sac(T, save_sin),
            early_stop=False,
        )
        results.append((T.autograd.grad(out, x), list(calls)))
        calls.clear()

        def inner(t):
            return cp.checkpoint(
                lambda u: u.exp().sin(), t, use_reentrant=False, context_fn=c_sac(T, save_sin)
            )

        out = cp.checkpoint(lambda t: inner(t * 2).cos(), x, use_reentrant=False)
        results.append((T.autograd.grad(out.sum(), x), list(calls)))
        out = cp.checkpoint(lambda t: t.exp().sin(), x, use_reentrant=False, context_fn=save_exp)
        results.append(T.autograd.grad(out.sum(), x, retain_graph=True))
        results.append(attempt(lambda: T.autograd.grad(out.sum(), x)))
        return results

    ok(program)


@pytest.mark.parametrize(
    "save",
    cases(
        [False, True],
        xfail={
            True: "torch's CPU dropout is bernoulli_ on a fresh tensor below autograd: a policy "
            "saving every op caches that tensor and its in-place fill raises 'has been "
            "mutated'; jaxgrad's dropout is one op"
        },
    ),
)
def test_sac_dropout_saved_or_recomputed(save):
    # the numbers are each library's own: does the recomputed mask match the forward's?
    def program(T):
        T.manual_seed(0)
        x = T.linspace(-1.0, 1.0, 16).requires_grad_()
        y = T.utils.checkpoint.checkpoint(
            lambda t: T.nn.functional.dropout(t, 0.5) * 3,
            x,
            use_reentrant=False,
            context_fn=c_sac(T, lambda ctx, op, *a, **k: save),
        )
        y.sum().backward()
        return bool(((x.grad != 0) == (y != 0)).all())

    ok(program)


SAC_EARLY_STOP_REGIONS = {
    # the last saved tensor is the input of the last op (sin saves its input)
    "exp_sin": lambda t: t.exp().sin(),
    # ... of the last of several ops
    "mul_exp_cos": lambda t: (t * t).exp().cos(),
    # the last saved tensor is an output (exp saves its result)
    "sin_exp": lambda t: t.sin().exp(),
    # an op with two inputs, one of them an input of the region
    "exp_mul": lambda t: t.exp() * t,
}


@pytest.mark.parametrize("early_stop", [True, False])
@pytest.mark.parametrize(
    "region, saved",
    [
        ("exp_sin", "sin"),
        ("exp_sin", "all"),
        ("mul_exp_cos", "cos"),
        ("mul_exp_cos", "exp"),
        ("sin_exp", "exp"),
        ("exp_mul", "mul"),
        ("exp_mul", "all"),
    ],
)
def test_sac_early_stop_and_a_second_backward(region, saved, early_stop):
    # with early stop the recomputation ends before the op that saves the last (input) tensor:
    # that op's cached output is not used, and a second backward may still read it
    def program(T):
        ops = {
            "sin": T.ops.aten.sin.default,
            "cos": T.ops.aten.cos.default,
            "exp": T.ops.aten.exp.default,
            "mul": T.ops.aten.mul.Tensor,
        }
        to_save = list(ops.values()) if saved == "all" else [ops[saved]]
        x = leaf(T, [0.5, -1.0, 2.0])
        out = T.utils.checkpoint.checkpoint(
            SAC_EARLY_STOP_REGIONS[region],
            x,
            use_reentrant=False,
            context_fn=c_sac(T, to_save),
            early_stop=early_stop,
        )
        first = T.autograd.grad(out.sum(), x, retain_graph=True)
        return out, first, attempt(lambda: T.autograd.grad(out.sum(), x, retain_graph=True))

    ok(program)


def test_sac_early_stop_on_a_custom_functions_saved_input():
    # a custom Function saves after its forward ran: its last op's cached output is used
    def program(T):
        class ExpSavingInput(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.exp()

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * x.exp()

        results = []
        for region in (
            lambda t: ExpSavingInput.apply(t.sin()),
            lambda t: ExpSavingInput.apply(t.sin()).cos(),
        ):
            x = leaf(T, [0.5, -1.0, 2.0])
            out = T.utils.checkpoint.checkpoint(
                region, x, use_reentrant=False, context_fn=c_sac(T, [T.ops.aten.exp.default])
            )
            first = T.autograd.grad(out.sum(), x, retain_graph=True)
            again = attempt(functools.partial(T.autograd.grad, out.sum(), x))
            results.append((first, again))
        return results

    ok(program)


def test_sac_random_op_in_place_op_and_invalid_contexts():
    # (random numbers: each library compares with itself)
    def program(T):
        cp, results = T.utils.checkpoint, []
        for save in (True, False):
            T.manual_seed(0)
            x = T.linspace(-1.0, 1.0, 8).requires_grad_()
            y = cp.checkpoint(
                lambda t: t * T.rand_like(t),
                x,
                use_reentrant=False,
                context_fn=c_sac(T, lambda ctx, op, *a, save=save, **k: save),
            )
            y.sum().backward()
            results.append(bool((x.grad * x == y).all()))
        x = leaf(T, [1.0, 2.0])
        for context_fn in (lambda: contextlib.nullcontext(), lambda: (1, 2)):
            results.append(
                attempt(
                    functools.partial(
                        cp.checkpoint,
                        lambda t: t.sin(),
                        x,
                        use_reentrant=False,
                        context_fn=context_fn,
                    )
                )
            )

        def region(t):
            y = t.sin()
            y.mul_(2)  # sin's cached output mutated
            return y.cos()

        save_all = c_sac(T, lambda ctx, op, *a, **k: True)
        out = cp.checkpoint(region, x, use_reentrant=False, context_fn=save_all)
        results.append((attempt(lambda: out.sum().backward()), x.grad))
        return results

    ok(program)


# --- test/dynamo/test_activation_checkpointing.py: compiled SAC equals eager ---------------------


def test_compiled_step_with_selective_checkpoint_equals_eager():
    def make():
        jaxgrad.manual_seed(0)
        model = jaxgrad.nn.Sequential(
            jaxgrad.nn.Linear(8, 16), jaxgrad.nn.Tanh(), jaxgrad.nn.Linear(16, 1)
        )
        opt = jaxgrad.optim.SGD(model.parameters(), lr=0.1)
        context_fn = c_sac(jaxgrad, [jaxgrad.ops.aten.addmm.default])

        def step(x):
            opt.zero_grad()
            out = jaxgrad.utils.checkpoint.checkpoint(
                model, x, use_reentrant=False, context_fn=context_fn
            )
            loss = out.pow(2).mean()
            loss.backward()
            opt.step()
            return loss

        return model, step

    x = jaxgrad.linspace(-1.0, 1.0, 32).reshape(4, 8)
    model, step = make()
    eager = [step(x).item() for _ in range(3)]
    eager_weight = model[0].weight.detach().clone()
    model, step = make()
    compiled = jaxgrad.compile(step, fullgraph=True)
    results = [compiled(x).item() for _ in range(3)]
    for a, b in zip(eager, results):
        assert abs(a - b) <= 1e-6 * max(1.0, abs(a))
    assert float((model[0].weight.detach() - eager_weight).abs().max()) < 1e-6
