"""Module hooks against torch: forward pre/post hooks (prepend, with_kwargs, always_call,
global), full backward (pre) hooks through BackwardHook, legacy backward hooks and their
pitfall, return-value rules and errors. Each program records events in a list."""

from __future__ import annotations

import pytest
import torch

import jaxgrad
from differential import Raised, attempt, captured_warnings, ok, raises, same, val
from test_nn_module import B1, B2, W1, W2, seed_model, set_linear


def plain(t):
    """Values and requires_grad only: Linear's grad_fn is AddBackward0 in jaxgrad, AddmmBackward0
    in torch, until jaxgrad has an addmm op."""
    return None if t is None else (t.detach().clone(), t.requires_grad)


def describe(arg, show=val):
    if isinstance(arg, tuple):
        return tuple(describe(a, show) for a in arg)
    if isinstance(arg, dict):
        return sorted(arg)
    return show(arg)


def recorder(events, name, replace=None, show=val):
    """A module hook that logs its call; returns ``replace(module, *args)`` if given."""

    def hook(module, *args):
        events.append((name, type(module).__name__, *[describe(a, show) for a in args]))
        return None if replace is None else replace(module, *args)

    return hook


@pytest.fixture(autouse=True)
def reset_global_backward_hook_mode():
    yield
    for lib in (torch, jaxgrad):
        lib.nn.modules.module._global_is_full_backward_hook = None


class TwoInOut:
    """A module ``(a, b, scale=1) -> (a * b * scale, a + b)``."""

    @staticmethod
    def build(T):
        class Pair(T.nn.Module):
            def forward(self, a, b, scale=1.0):
                return a * b * scale, a + b

        return Pair()


# -- forward hooks ---------------------------------------------------------------------------


def test_forward_hook_order_prepend_and_removal():
    def program(T):
        events = []
        m = T.nn.ReLU()
        h1 = m.register_forward_pre_hook(recorder(events, "pre1"))
        m.register_forward_pre_hook(recorder(events, "pre0"), prepend=True)
        m.register_forward_pre_hook(recorder(events, "pre_kw"), with_kwargs=True)
        m.register_forward_hook(recorder(events, "fwd1"))
        h0 = m.register_forward_hook(recorder(events, "fwd0"), prepend=True)
        m.register_forward_hook(recorder(events, "fwd_kw"), with_kwargs=True)
        gh = T.nn.modules.module.register_module_forward_pre_hook(recorder(events, "gpre"))
        gf = T.nn.modules.module.register_module_forward_hook(recorder(events, "gfwd"))
        try:
            x = T.tensor([-1.0, 2.0], requires_grad=True)
            out1 = m(x)
            h1.remove()
            h0.remove()
            h0.remove()
            out2 = m(x)
        finally:
            gh.remove()
            gf.remove()
        m(x)
        return events, out1, out2, len(m._forward_hooks_with_kwargs)

    ok(program)


@pytest.mark.parametrize("replace", [
    lambda m, args: args[0] * 2,
    lambda m, args: (args[0] + 1, args[1]),
    lambda m, args: None,
])
def test_forward_pre_hook_replaces_arguments(replace):
    def program(T):
        events = []
        m = TwoInOut.build(T)
        m.register_forward_pre_hook(lambda mod, args: replace(mod, args))
        m.register_forward_hook(recorder(events, "fwd"))
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([3.0, 4.0])
        return events, attempt_call(lambda: m(a, b))

    same(program)


def attempt_call(f):
    from differential import attempt

    return attempt(f)


@pytest.mark.parametrize("replace", [
    lambda m, args, kwargs: (args, {"scale": 10.0}),
    lambda m, args, kwargs: (args[::-1], kwargs),
    lambda m, args, kwargs: args,
    lambda m, args, kwargs: None,
])
def test_forward_pre_hook_with_kwargs(replace):
    def program(T):
        events = []
        m = TwoInOut.build(T)
        m.register_forward_pre_hook(lambda mod, a, k: replace(mod, a, k), with_kwargs=True)
        m.register_forward_hook(recorder(events, "fwd_kw"), with_kwargs=True)
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([3.0, 4.0])
        return events, attempt_call(lambda: m(a, b, scale=2.0))

    same(program)


def test_forward_hook_replaces_output():
    def program(T):
        events = []
        m = T.nn.Sigmoid()
        m.register_forward_hook(lambda mod, args, out: out * 100)
        m.register_forward_hook(recorder(events, "after"))
        m.register_forward_hook(lambda mod, args, kwargs, out: out + 1, with_kwargs=True)
        return events, m(T.zeros(2, requires_grad=True))

    ok(program)


@pytest.mark.parametrize("hook_raises", [False, True])
def test_always_call_when_forward_raises(hook_raises):
    def program(T):
        events = []

        class Broken(T.nn.Module):
            def forward(self, x):
                events.append("forward")
                raise ValueError("forward failed")

        m = Broken()

        def always(mod, args, out):
            events.append(("always", out))
            if hook_raises:
                raise KeyError("hook failed")

        m.register_forward_hook(recorder(events, "normal"))
        m.register_forward_hook(always, always_call=True)
        m.register_forward_hook(recorder(events, "always_kw"), always_call=True,
                                with_kwargs=True)
        g = T.nn.modules.module.register_module_forward_hook(
            lambda mod, args, out: events.append("global_always"), always_call=True)
        try:
            result = attempt_call(lambda: m(T.ones(1)))
        finally:
            g.remove()
        return events, result

    same(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_always_call_hook_not_rerun_when_a_later_hook_raises():
    def program(T):
        events = []
        m = T.nn.Identity()
        m.register_forward_hook(recorder(events, "always"), always_call=True)

        def failing(mod, args, out):
            raise ValueError("late failure")

        m.register_forward_hook(failing)
        return events, attempt_call(lambda: m(T.ones(1)))

    same(program)


# -- full backward hooks ---------------------------------------------------------------------


def pair_program(T, *, b_requires_grad=True, hooks=(), pre_hooks=(), use=(0, 1)):
    events = []
    m = TwoInOut.build(T)
    for name, replace in pre_hooks:
        m.register_full_backward_pre_hook(recorder(events, name, replace))
    for name, replace in hooks:
        m.register_full_backward_hook(recorder(events, name, replace))
    a = T.tensor([1.0, 2.0], requires_grad=True)
    b = T.tensor([3.0, 4.0], requires_grad=b_requires_grad)
    outs = m(a, b, scale=2.0)
    events.append(("outputs", [val(o) for o in outs]))
    loss = sum((o * (i + 1)).sum() for i, o in enumerate(outs) if i in use)
    result = attempt_call(loss.backward)
    return events, result, val(a.grad), val(b.grad)


@pytest.mark.parametrize("kw", [
    {},
    {"b_requires_grad": False, "hooks": [("h", None)], "pre_hooks": [("p", None)]},
    {"use": (0,), "hooks": [("h", None)]},
    {"use": (1,), "hooks": [("h", None)], "pre_hooks": [("p", None)]},
    {"hooks": [("h", lambda m, gi, go: (gi[0] * 10, None))]},
    {"hooks": [("h", lambda m, gi, go: (gi[0],))]},
    {"hooks": [("h", lambda m, gi, go: (gi[0], gi[1], gi[0]))]},
    {"hooks": [("h1", None), ("h2", lambda m, gi, go: (gi[1], gi[0])), ("h3", None)]},
    {"pre_hooks": [("p", lambda m, go: (go[0] * 3, go[1]))]},
    {"pre_hooks": [("p", lambda m, go: (go[0],))]},
    {"pre_hooks": [("p1", None), ("p2", lambda m, go: (None, go[1]))], "hooks": [("h", None)]},
])
def test_full_backward_hooks(kw):
    ok(lambda T: pair_program(T, **kw))


def test_full_backward_hook_order_prepend_global_and_removal():
    def program(T):
        events = []
        m = T.nn.Tanh()
        h = m.register_full_backward_hook(recorder(events, "bw1"))
        m.register_full_backward_hook(recorder(events, "bw0"), prepend=True)
        m.register_full_backward_pre_hook(recorder(events, "pre1"))
        m.register_full_backward_pre_hook(recorder(events, "pre0"), prepend=True)
        mod = T.nn.modules.module
        g1 = mod.register_module_full_backward_hook(recorder(events, "gbw"))
        g2 = mod.register_module_full_backward_pre_hook(recorder(events, "gpre"))
        x = T.tensor([0.5, -1.0], requires_grad=True)
        try:
            m(x).sum().backward()
            h.remove()
            events.append("removed")
            m(x).sum().backward()
        finally:
            g1.remove()
            g2.remove()
        return events, x.grad

    ok(program)


def test_full_backward_hooks_in_nested_modules():
    def program(T):
        events = []
        net = seed_model(T)
        for name, module in net.named_modules():
            module.register_full_backward_hook(recorder(events, "bw:" + name, show=plain))
            module.register_full_backward_pre_hook(recorder(events, "pre:" + name, show=plain))
            module.register_forward_hook(recorder(events, "fwd:" + name, show=plain))
        x = T.tensor([[1.0, 1.0, 1.0]], requires_grad=True)
        net(x).backward()
        return events, x.grad

    ok(program)


def test_full_backward_hook_when_no_input_requires_grad():
    def program(T, replace=None):
        events = []
        m = set_linear(T, T.nn.Linear(3, 4), W1, B1)
        m.register_full_backward_hook(recorder(events, "bw", replace))
        m(T.ones(1, 3)).sum().backward()
        return events, m.weight.grad

    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)
    raises(lambda T: program(T, lambda mod, gi, go: (T.ones(1, 3),)))
    ok(lambda T: program(T, lambda mod, gi, go: (None,)))


def test_full_backward_hook_non_tensor_output_warns():
    def program(T):
        events = []

        class Listy(T.nn.Module):
            def forward(self, x):
                return [x * 2]

        m = Listy()
        m.register_full_backward_hook(recorder(events, "bw"))
        return events, attempt_call(lambda: m(T.ones(1, requires_grad=True)))

    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)
    same(program)


def test_backward_hook_inputs_are_identity_nodes():
    def program(T):
        seen = []
        m = T.nn.Identity()
        m.register_full_backward_hook(lambda *a: None)
        m.register_forward_pre_hook(lambda mod, args: seen.append(val(args[0])))
        m.register_forward_hook(lambda mod, args, out: seen.append((val(args[0]), val(out))))
        x = T.ones(2, requires_grad=True)
        out = m(x)
        return seen, out, out.grad_fn.next_functions[0][0].name()

    ok(program)


def test_mixing_backward_hook_kinds_raises():
    raises(lambda T: (T.nn.ReLU().register_backward_hook(lambda *a: None),)[0].__class__
           and _mixed(T))


def _mixed(T):
    m = T.nn.ReLU()
    m.register_backward_hook(lambda *a: None)
    m.register_full_backward_hook(lambda *a: None)


def test_mixing_global_backward_hook_kinds_raises():
    def program(T):
        mod = T.nn.modules.module
        h = mod.register_module_full_backward_hook(lambda *a: None)
        try:
            mod.register_module_backward_hook(lambda *a: None)
        finally:
            h.remove()

    raises(program)


# -- legacy backward hooks -----------------------------------------------------------------


def legacy_program(T, build, x_values, through_op=False, show=val):
    events = []
    net = build(T)
    for name, module in net.named_modules():
        module.register_backward_hook(recorder(events, "legacy:" + (name or "net"), show=show))
    x = T.tensor(x_values, requires_grad=True)
    net(x * 1 if through_op else x).sum().backward()
    return events, x.grad


def composite(T):
    """A composite module whose last autograd op is the Sigmoid's."""
    net = T.nn.Sequential(T.nn.Tanh(), T.nn.Softmax(dim=1), T.nn.Sigmoid())
    return net


@pytest.mark.parametrize("through_op", [True, False])
def test_legacy_backward_hook_sees_only_last_op(through_op):
    def program(T):
        return legacy_program(T, composite, [[0.5, -1.0, 2.0]], through_op)

    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_legacy_backward_hook_return_replaces_grad_input():
    def program(T):
        m = T.nn.Sigmoid()
        m.register_backward_hook(lambda mod, gi, go: (gi[0] * 0 + 7,))
        x = T.tensor([0.5, -1.0], requires_grad=True)
        m(x * 1).sum().backward()
        return x.grad

    ok(program)


def test_seed_002_legacy_hook_on_linear_layers():
    ok(lambda T: legacy_program(T, seed_model, [[1.0, 1.0, 1.0]], show=plain))


def test_seed_002_full_hooks_see_documented_gradients():
    def program(T):
        events = []
        net = seed_model(T)
        for name, module in net.named_children():
            module.register_full_backward_hook(recorder(events, name, show=plain))
        x = T.tensor([[1.0, 1.0, 1.0]], requires_grad=True)
        net(x).backward()
        return events

    ok(program)


def test_seed_002_forward_hooks_record_features():
    def program(T):
        feats = []
        net = seed_model(T)
        for _, module in net.named_children():
            module.register_forward_hook(
                lambda mod, inp, out: feats.append((repr(mod), plain(inp[0]), plain(out))))
        out = net(T.tensor([[1.0, 1.0, 1.0]], requires_grad=True))
        return feats, out.detach()

    ok(program)


def test_module_values_are_second_layer():
    ok(lambda T: set_linear(T, T.nn.Linear(4, 1), W2, B2)(T.ones(4)).detach())


def test_seed_002_pre_hook_drops_keyword_argument_error():
    def program(T):
        class SumNet(T.nn.Module):
            @staticmethod
            def forward(a, b, c):
                return a + b + c

        net = SumNet()
        net.register_forward_pre_hook(lambda mod, inp: (inp[0] + 10, inp[1]))
        a, b, c = (T.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0))
        return net(a, b, c=c)

    ok(program)


MODULE_HOOK_RESULTS = {
    "full_size": ("full", lambda m, gi, go: (gi[0][:, :1],)),
    "full_dtype": ("full", lambda m, gi, go: (gi[0].double(),)),
    "pre_size": ("pre", lambda m, go: (go[0][:, :1],)),
    "legacy_size": ("legacy", lambda m, gi, go: (gi[0], gi[1][:, :1], gi[2])),
    "legacy_count": ("legacy", lambda m, gi, go: (gi[0],)),
    "legacy_list": ("legacy", lambda m, gi, go: list(gi)),
}


@pytest.mark.parametrize("name", MODULE_HOOK_RESULTS)
def test_backward_hook_results_with_wrong_size_or_count(name):
    """A module backward hook's replacement gradients go through the engine's checks of Node
    hook results: torch's errors name the wrapper ('hook') or, for legacy hooks, the user's."""
    kind, hook = MODULE_HOOK_RESULTS[name]

    def program(T):
        m = set_linear(T, T.nn.Linear(2, 2), [[1.0, 2.0], [3.0, 4.0]], [0.5, -0.5])
        register = {"full": m.register_full_backward_hook, "legacy": m.register_backward_hook,
                    "pre": m.register_full_backward_pre_hook}[kind]
        register(hook)
        x = T.ones(3, 2, requires_grad=True)
        return attempt(lambda: m(x).sum().backward()), val(x.grad)

    torch_result, _ = ok(program)
    assert isinstance(torch_result[0], Raised)


# -- the hook dicts ----------------------------------------------------------------------------

def test_module_hook_dicts_are_ordered_dicts():
    def program(T):
        m = T.nn.Linear(2, 2)
        m.register_forward_hook(lambda *a: None)
        m.register_forward_pre_hook(lambda *a: None)
        m.register_full_backward_hook(lambda *a: None)
        m.register_full_backward_pre_hook(lambda *a: None)
        return [type(getattr(m, name)).__name__ for name in (
            "_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")]

    ok(program)


def test_global_registration_hooks_see_and_replace_what_modules_register():
    def program(T):
        module = T.nn.modules.module
        seen = []

        def note(kind, replace=None):
            def hook(owner, name, value):
                seen.append((kind, type(owner).__name__, name, type(value).__name__))
                return replace(value) if replace and value is not None else None
            return hook

        handles = [
            module.register_module_parameter_registration_hook(note("param")),
            module.register_module_buffer_registration_hook(note("buffer", lambda b: b + 1)),
            module.register_module_module_registration_hook(note("module")),
        ]
        try:
            net = T.nn.Sequential(T.nn.Linear(2, 3), T.nn.BatchNorm1d(3))
            net.extra = T.nn.ReLU()
            net.extra = None
            net.register_buffer("count", T.zeros(2))
            net.register_buffer("nothing", None)
            net.register_parameter("p", None)
            net.q = T.nn.Parameter(T.ones(1))
            net.add_module("tail", T.nn.Tanh())
        finally:
            for handle in handles:
                handle.remove()
        after = T.nn.Linear(1, 1)  # (removed: no more calls)
        return seen, net.count, net[1].running_var, after.weight.shape
    ok(program)


@pytest.mark.parametrize("nb_hooks", [1, 3])
@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_create_graph_and_full_backward_hook_cycle_is_collected(nb_hooks, input_requires_grad):
    """torch's test_create_graph_and_full_backward_hook_cycle: a full backward hook's graph
    under create_graph holds no cycle once the leaves' .grad are dropped (what the graph held
    is freed), with torch's create_graph warnings."""
    import gc
    import warnings
    import weakref

    class Held:
        pass

    def program(T):
        t = T.ones(10, requires_grad=input_requires_grad)
        a = T.tensor(1.0, requires_grad=True)

        class Square(T.nn.Module):
            def forward(self, x):
                return x ** 2 * a ** 2

        mod = Square()
        for _ in range(nb_hooks):
            mod.register_full_backward_hook(lambda m, gi, go: None)
        out = mod(t)
        held = Held()
        ref = weakref.ref(held)
        out.grad_fn.metadata["a"] = held
        del held
        T.set_warn_always(True)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out.exp().sum().backward(create_graph=True)
        finally:
            T.set_warn_always(False)
        a.grad = None
        t.grad = None
        del out, mod
        gc.collect()
        return ref() is None, len(caught)

    ok(program)
