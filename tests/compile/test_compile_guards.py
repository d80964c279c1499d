"""What a compiled step's programs are guarded on (issue 23): what its trace used, not everything
it can reach. Attributes of user objects the trace never read, and functions it never ran (their
globals and closures), are not part of the signature: a hook that closes over an object whose
statistics grow each call compiles once. What the trace did read is guarded: changing it traces
again. Each program runs the step compiled on jaxgrad and eagerly on torch."""

from __future__ import annotations

import sys
import warnings

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxgrad
from differential import compiled_on_jaxgrad as _compile
from differential import ok
from differential import traces as _traces

CALLS = 6


def _record(T):
    """The demo's recorder: jaxgrad's host callback (every call of a compiled step), torch's
    direct call."""
    return jaxgrad.compiler.callback if T is jaxgrad else (lambda fn, *args: fn(*args))


def _model(T):
    model = T.nn.Sequential(T.nn.Linear(4, 8), T.nn.ReLU(), T.nn.Linear(8, 2))
    rng = np.random.RandomState(0)
    with T.no_grad():
        for p in model.parameters():
            p.copy_(T.tensor((rng.randn(*p.shape) * 0.5).astype(np.float32)))
    return model


def _batch(T, i):
    rng = np.random.RandomState(20 + i)
    return (T.tensor(rng.randn(5, 4).astype(np.float32)), T.tensor(rng.randint(0, 2, 5)))


class Stats:
    """The README demo's statistics collector: module and tensor hooks recording into a dict of
    growing lists (``rows``), which the traced step never reads."""

    def __init__(self, model, T):
        self.rows = {}
        self.record = _record(T)
        model[2].register_full_backward_hook(self._grad_hook("2"))
        model[1].register_forward_hook(self._activation_hook("1"))

    def _add(self, key, value):
        self.rows.setdefault(key, []).append(round(float(value), 5))

    def _grad_hook(self, label):
        def hook(module, grad_input, grad_output):
            self.record(lambda v: self._add(f"{label} grad_output", v), grad_output[0].norm())
        return hook

    def _activation_hook(self, label):
        def hook(module, inputs, output):
            self.record(lambda v: self._add(f"{label} active", v), (output > 0).float().mean())
            output.register_hook(
                lambda g: self.record(lambda v: self._add(f"{label} grad", v), g.norm()))
        return hook


def test_hooks_recording_into_growing_lists_compile_once():
    """The demo's step: the hooks close over the collector, whose lists grow every call; the
    loop compiles one program (the first call, creating .grad and the momentum buffers, runs
    eagerly) and records every call."""
    def prog(T):
        model = _model(T)
        stats = Stats(model, T)
        opt = T.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(x, y):
            loss = T.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.detach()

        compiled = _compile(T, step)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            losses = [compiled(*_batch(T, i)) for i in range(CALLS)]
        assert _traces(compiled) == (1 if T is jaxgrad else 0)
        assert all(len(v) == CALLS for v in stats.rows.values())
        return losses, stats.rows, [p.detach() for p in model.parameters()]
    ok(prog)


def test_a_global_function_run_only_on_the_host_is_not_walked():
    """A function handed to the host callback never runs in the trace: the list it appends to
    is not part of the signature."""
    log = []

    def keep(v):
        log.append(v.item())

    w = jaxgrad.tensor([1.0, 2.0])

    @jaxgrad.compile
    def step(x):
        y = (w * x).sum()
        jaxgrad.compiler.callback(keep, y)
        return y

    out = [step(jaxgrad.full((2,), float(i))).item() for i in range(CALLS)]
    assert log == out == [3.0 * i for i in range(CALLS)]
    assert len(step._cache) == 1


class Holder:
    def __init__(self, T):
        self.scale = T.tensor([2.0, 3.0])
        self.factor = 1.5
        self.unused = []


def test_what_the_trace_read_is_guarded_and_the_rest_is_not():
    """Growing an attribute the step never reads traces nothing new; changing one it reads
    (a tensor's shape, a number, a replaced tensor) is seen on the next call."""
    def prog(T):
        holder = Holder(T)

        def step(x):
            return x * holder.scale * holder.factor

        compiled = _compile(T, step)
        out = []
        for i in range(CALLS):
            holder.unused.append(i)
            out.append(compiled(T.ones(2)))
        quiet = _traces(compiled)
        holder.factor = 0.5
        out.append(compiled(T.ones(2)))
        holder.scale = T.tensor([1.0, -1.0, 4.0])
        out.append(compiled(T.ones(3)))
        holder.scale.mul_(2)
        out.append(compiled(T.ones(3)))
        if T is jaxgrad:
            assert quiet == 1
        return out
    ok(prog)


def test_an_attribute_read_only_in_a_later_trace_is_walked_again():
    """A branch that reads an attribute the first trace skipped: that trace is redone with the
    attribute walked, and the attribute's changes are seen from then on."""
    def prog(T):
        holder = Holder(T)

        def step(x, use_scale):
            return x * holder.scale if use_scale else x * 2

        compiled = _compile(T, step)
        out = [compiled(T.ones(2), False), compiled(T.ones(2), False),
               compiled(T.ones(2), True)]
        holder.scale = T.tensor([5.0, 6.0])
        out += [compiled(T.ones(2), True), compiled(T.ones(2), False)]
        return out
    ok(prog)


def test_a_hook_that_runs_only_in_a_later_trace_is_walked_again():
    """A module hook that did not run (eval mode) and then runs (train mode): its closure's
    tensor is an input of the trace that runs it, and its updates are seen."""
    def prog(T):
        model = _model(T)
        shift = {"t": T.tensor([1.0, -1.0])}

        def hook(module, inputs, output):
            if module.training:
                return output + shift["t"]
            return None

        model[2].register_forward_hook(hook)

        def step(x):
            return model(x)

        compiled = _compile(T, step)
        x = _batch(T, 0)[0]
        out = []
        for training in (False, True, True):
            model.train(training)
            out.append(compiled(x).detach())
        shift["t"] = T.tensor([0.5, 0.5])
        out.append(compiled(x).detach())
        return out
    ok(prog)


def test_state_written_to_a_skipped_attribute_is_kept():
    """A step that starts writing an attribute it never used before: the write is replayed."""
    def prog(T):
        holder = Holder(T)

        def step(x, write):
            if write:
                holder.last = x.sum() * 1
            return x * 2

        compiled = _compile(T, step)
        out = [compiled(T.ones(2), False), compiled(T.ones(2), False)]
        out.append(compiled(T.full((2,), 3.0), True))
        out.append(holder.last)
        out.append(compiled(T.full((2,), 4.0), True))
        out.append(holder.last)
        return out
    ok(prog)


def test_watching_leaves_the_objects_and_a_profiler_alone():
    """During the trace a user object's class is a recording subclass; afterwards it is its own
    class again, and a profiler the user installed stays installed."""
    holder = Holder(jaxgrad)
    seen = []

    def step(x):
        seen.append(type(holder).__name__)
        return x * holder.scale

    calls = []

    def profiler(frame, event, arg):
        calls.append(event)

    sys.setprofile(profiler)
    try:
        out = jaxgrad.compile(step)(jaxgrad.ones(2))
    finally:
        installed = sys.getprofile()
        sys.setprofile(None)
    assert installed is profiler and calls
    assert type(holder) is Holder and seen == ["Holder"]
    assert out.tolist() == [2.0, 3.0]


@pytest.mark.parametrize("kind", ["frozen_dataclass", "slots_and_dict", "init_subclass"])
def test_unusual_classes_compile_and_keep_their_class(kind):
    """A frozen dataclass, a class with slots and a ``__dict__``, and one with its own
    ``__init_subclass__`` (not watched: making a subclass would run it) compile, read right and
    keep their class."""
    import dataclasses

    if kind == "frozen_dataclass":
        @dataclasses.dataclass(frozen=True)
        class Config:
            scale: float
            extra: list
        config = Config(2.0, [])
    elif kind == "slots_and_dict":
        class Config:
            __slots__ = ("__dict__", "extra", "scale")

            def __init__(self):
                self.scale, self.extra = 2.0, []
        config = Config()
    else:
        class Base:
            registry = []

            def __init_subclass__(cls, **kw):
                super().__init_subclass__(**kw)
                Base.registry.append(cls)

        class Config(Base):
            def __init__(self):
                self.scale, self.extra = 2.0, []
        config = Config()

    @jaxgrad.compile
    def step(x):
        return x * config.scale

    assert step(jaxgrad.ones(1)).item() == 2.0
    assert step(jaxgrad.ones(1)).item() == 2.0
    if kind == "init_subclass":
        assert Base.registry == [Config]  # no recording subclass was made
    assert type(config) is Config


def test_an_adam_loop_compiles_one_program():
    """Adam's first step creates its state (step, exp_avg, exp_avg_sq): that call runs eagerly,
    and the steady state is the one program."""
    def prog(T):
        model = _model(T)
        opt = T.optim.Adam(model.parameters(), lr=0.01)

        def step(x, y):
            opt.zero_grad()
            loss = T.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss.detach()

        compiled = _compile(T, step)
        losses = [compiled(*_batch(T, i)) for i in range(CALLS)]
        assert _traces(compiled) == (1 if T is jaxgrad else 0)
        state = [(s["step"], s["exp_avg"], s["exp_avg_sq"]) for s in opt.state.values()]
        return losses, state, [p.detach() for p in model.parameters()]
    ok(prog)


def test_a_forward_alone_compiles_on_its_first_call():
    """A compiled forward creates no state: its first call is compiled (its result hangs off
    the compiled function's node)."""
    model = _model(jaxgrad)
    compiled = jaxgrad.compile(model)
    out = compiled(_batch(jaxgrad, 0)[0])
    assert len(compiled._cache) == 1 and type(out.grad_fn).__name__ == "CompiledFunctionBackward"


# -- user lists: walked by the items a trace read; a list the step only appends to is not walked


def test_a_loss_history_the_step_appends_to_compiles_once():
    def prog(T):
        model = _model(T)
        opt = T.optim.SGD(model.parameters(), lr=0.1)
        history = {"losses": []}
        outputs = []

        def step(x, y):
            opt.zero_grad()
            out = model(x)
            loss = T.nn.functional.cross_entropy(out, y)
            loss.backward()
            opt.step()
            history["losses"].append(loss.detach())
            outputs.extend([out.detach(), out.detach().sum()])
            return loss.detach()

        compiled = _compile(T, step)
        results = [compiled(*_batch(T, i)) for i in range(CALLS)]
        assert _traces(compiled) <= 1
        assert len(outputs) == 2 * CALLS and len(set(map(id, history["losses"]))) == CALLS
        return results, history, outputs, [p.detach() for p in model.parameters()]
    ok(prog)


SCALES = [0.5 * i for i in range(5000)]


def test_a_large_global_list_is_guarded_on_the_items_read():
    """Reading one item of a large module-level list: only that item is guarded (a change to
    any other item is not a new program; a change to it is); the list is not walked whole."""
    def prog(T):
        w = T.tensor([1.0, -2.0, 3.0])

        def step(x):
            return (w * x * SCALES[3]).sum()

        compiled = _compile(T, step)
        out = [compiled(T.ones(3)) for _ in range(3)]
        SCALES[4000] = -1.0
        out.append(compiled(T.ones(3)))
        assert _traces(compiled) <= 1
        SCALES[3] = 10.0
        try:
            out.append(compiled(T.ones(3)))
        finally:
            SCALES[3], SCALES[4000] = 1.5, 2000.0
        assert _traces(compiled) in (0, 2)
        if T is jaxgrad:
            assert compiled._policy.items[id(SCALES)] == (frozenset({3}), False)
        return out
    ok(prog)


@pytest.mark.parametrize("use", ["length", "last item", "whole"])
def test_a_list_changed_between_calls_by_what_the_step_read(use):
    """The length (``len``, a negative index) and whole uses (iteration) are guarded: a list
    that grows between calls is a new program whenever the step's result depends on it."""
    def prog(T):
        w = T.tensor([1.0, 2.0])
        values = [1.0, 2.0]

        def step(x):
            if use == "length":
                return w * x * len(values)
            if use == "last item":
                return w * x * values[-1]
            return w * x * sum(values)

        compiled = _compile(T, step)
        out = []
        for i in range(4):
            out.append(compiled(T.ones(2)))
            values.append(float(i + 3))
        return out, values
    ok(prog)


def test_a_list_the_step_stores_elsewhere_or_that_two_places_hold():
    """A list the step stores in another place, and one that two walked places hold, are
    walked whole (their stand-in could be seen past the trace): eager's results, the same
    list objects."""
    def prog(T):
        w = T.tensor([1.0, 2.0])
        seen, shared = [], []

        class Box:
            pass

        box, other = Box(), Box()
        other.shared = shared

        def step(x):
            seen.append(w * x)
            box.kept = seen
            shared.append(x.sum())
            return w * x

        compiled = _compile(T, step)
        out = [compiled(T.ones(2) * i) for i in range(3)]
        assert box.kept is seen and other.shared is shared
        return out, seen, shared
    ok(prog)


def test_a_list_read_by_items_that_later_gains_a_second_holder():
    """A list walked by the items the traces read is walked whole once a second place holds
    it (its stand-in could be bypassed there): reads through the new place are seen."""
    def prog(T):
        w = T.tensor([1.0, 2.0])
        values = [1.0, 2.0, 3.0]

        class Box:
            pass

        box = Box()
        box.ref = None

        def step(x):
            if box.ref is None:
                return w * x * values[0]
            return w * x * sum(box.ref)

        compiled = _compile(T, step)
        out = [compiled(T.ones(2)) for _ in range(2)]
        box.ref = values
        out += [compiled(T.ones(2)) for _ in range(2)]
        values[2] = 10.0
        out.append(compiled(T.ones(2)))
        return out
    ok(prog)


_IN_STEP = ["item", "last", "length", "sum", "append"]
_BETWEEN = ["set read item", "set other item", "append", "pop", "nothing"]


@settings(max_examples=10, deadline=None, database=None)
@given(uses=st.lists(st.sampled_from(_IN_STEP), min_size=1, max_size=3),
       changes=st.lists(st.sampled_from(_BETWEEN), min_size=3, max_size=5),
       holder=st.sampled_from(["closure", "dict", "attribute"]))
def test_random_list_uses_and_changes_between_calls(uses, changes, holder):
    """Random uses of a list inside a step (held by a closure cell, a dict or an attribute)
    and random changes to it between calls: the compiled step's results, and the list, are
    eager torch's."""
    def prog(T):
        w = T.tensor([1.0, 2.0])
        values = [1.0, 2.0, 3.0, 4.0]

        class Box:
            pass

        box = Box()
        box.values = values
        store = {"values": values}
        get = {"closure": lambda: values, "dict": lambda: store["values"],
               "attribute": lambda: box.values}[holder]  # the step reaches it in one place

        def step(x):
            held = get()
            out = w * x
            for use in uses:
                if use == "item":
                    out = out * held[1]
                elif use == "last":
                    out = out + held[-1]
                elif use == "length":
                    out = out * len(held)
                elif use == "sum":
                    out = out + sum(v if isinstance(v, float) else v.sum() for v in held)
                else:
                    held.append(out.sum())
            return out

        compiled = _compile(T, step)
        out = [compiled(T.ones(2))]
        for i, change in enumerate(changes):
            if change == "set read item":
                values[1] = float(i + 5)
            elif change == "set other item":
                values[2] = float(i + 7)
            elif change == "append":
                values.append(float(i))
            elif change == "pop" and len(values) > 3:
                values.pop()
            out.append(compiled(T.ones(2)))
        return out, values
    ok(prog)


def test_jax_tree_functions_see_a_watched_list_as_the_list():
    """A JAX user's ``jax.tree.map`` over a list the step reaches: the same result compiled as
    eager (the list's stand-in is a pytree of its items, and counts as wholly used)."""
    params = [jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([3.0])]

    def step(x):
        doubled = jax.tree.map(lambda a: a * 2, params)
        return x * doubled[0].sum() + len(jax.tree.leaves(params))

    compiled = jaxgrad.compile(step)
    eager = [step(jaxgrad.ones(2)).tolist()]
    results = [compiled(jaxgrad.ones(2)).tolist() for _ in range(3)]
    assert results == eager * 3 and type(params) is list
