"""Python side effects of a compiled step (issue 23): numbers the step keeps in dicts, lists and
objects, changed by the step or between calls, are traced after their first change (as
torch.compile's automatic dynamic does), so a counter is not a new program per value. Each
program runs the step compiled on jaxgrad and eagerly on torch (torch.compile keeps the same
side effects as eager; it needs a C++ toolchain here)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxgrad
from differential import compiled_on_jaxgrad as _compile
from differential import ok
from differential import traces as _traces

CALLS = 8


def _model(T):
    T.manual_seed(0)
    model = T.nn.Sequential(T.nn.Linear(4, 8), T.nn.Tanh(), T.nn.Linear(8, 1))
    rng = np.random.RandomState(0)
    with T.no_grad():
        for p in model.parameters():
            p.copy_(T.tensor((rng.randn(*p.shape) * 0.5).astype(np.float32)))
    return model


def _batch(T, i):
    rng = np.random.RandomState(10 + i)
    return (T.tensor(rng.randn(6, 4).astype(np.float32)),
            T.tensor(rng.randn(6, 1).astype(np.float32)))


def test_a_counter_the_step_increments_is_traced_after_its_first_change():
    """A counter in a dict, another on an object, a float total and a list slot: two traces
    for the whole loop (before and after the parameters have .grad), no recompile warning."""
    def prog(T):
        model = _model(T)
        opt = T.optim.SGD(model.parameters(), lr=0.1)
        history = {"step": 0, "total": 0.0, "slots": [0, 10]}

        class Meter:
            def __init__(self):
                self.calls = 0

        meter = Meter()

        def step(x, y):
            opt.zero_grad()
            loss = T.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            history["step"] += 1
            history["total"] += 0.5
            history["slots"][1] -= 2
            meter.calls += 3
            return loss.detach()

        compiled = _compile(T, step)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            losses = [compiled(*_batch(T, i)) for i in range(CALLS)]
        assert _traces(compiled) <= 2
        assert type(history["step"]) is int and type(history["total"]) is float
        assert type(history["slots"][1]) is int and type(meter.calls) is int
        return losses, history, meter.calls, [p.detach() for p in model.parameters()]
    ok(prog)


def test_a_number_changed_between_calls_is_traced_after_its_first_change():
    def prog(T):
        w = T.tensor([1.0, -2.0, 3.0])
        config = {"scale": 1.0, "shift": 0}

        def step(x):
            return (w * x * config["scale"]).sum() + config["shift"]

        compiled = _compile(T, step)
        out = []
        for i in range(CALLS):
            config["scale"], config["shift"] = 0.5 * i, i
            out.append(compiled(_batch(T, i)[0][0, :3]))
        assert _traces(compiled) <= 2
        return out
    ok(prog)


def test_a_step_that_needs_a_changing_number_specializes_again():
    """A Python branch on the number cannot trace it: the step specializes on each value, as
    before (and as torch.compile does when a dynamic number fails)."""
    def prog(T):
        state = {"phase": 0}

        def step(x):
            state["phase"] += 1
            return x * 2 if state["phase"] % 2 else x * 3

        compiled = _compile(T, step)
        out = [compiled(T.ones(2)) for _ in range(5)]
        return out, state
    ok(prog)


@pytest.mark.parametrize("dynamic", [False, None])
def test_dynamic_false_keeps_state_numbers_constant(dynamic):
    state = {"n": 0}

    def step(x):
        state["n"] += 1
        return x * state["n"]

    compiled = jaxgrad.compile(step, dynamic=dynamic)
    out = [compiled(jaxgrad.ones(1)).item() for _ in range(4)]
    assert out == [1.0, 2.0, 3.0, 4.0] and state["n"] == 4
    assert len(compiled._cache) == (4 if dynamic is False else 1)  # the first trace learns
