"""The autograd profiler against torch's: which ranges are recorded, nesting, tables, traces.

Op-level events differ by design (torch also records its own helper ops such as ``aten::to``),
so structural comparisons use the ranges both libraries must agree on: Function forwards,
backward nodes, ``record_function`` ranges, and the ``aten::`` ops that both record.
"""

from __future__ import annotations

import json
import os
import re

import pytest

import jaxgrad
from differential import attempt, captured_warnings, normalise, ok, torch
from test_function import seed_function

TORCH_ONLY_EVENTS = {"aten::to", "aten::_to_copy", "aten::empty_strided", "aten::copy_",
                    "aten::detach", "detach", "aten::lift_fresh", "aten::ones_like",
                    "aten::empty_like", "aten::fill_", "aten::empty", "aten::zeros",
                    "aten::zero_", "aten::resolve_conj", "aten::resolve_neg", "aten::detach_",
                    "detach_"}


def seed_profile(T, **kwargs):
    """Seed 001's profiler example (CPU), with a user range around the forward."""
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = T.tensor([3.0, 4.0], requires_grad=True)
    with T.autograd.profiler.profile(**kwargs) as prof:
        with T.autograd.profiler.record_function("my_block"):
            z = seed_function(T).apply(x, y)
        z.backward(T.tensor([1.0, 1.0]))
    return prof


def _structure(events, keep=lambda name: not name.startswith("aten::")
               and name not in TORCH_ONLY_EVENTS):
    """(name, [children]) for the kept events, children in start order."""
    def describe(e):
        return (normalise(e.name), [describe(c) for c in e.cpu_children if keep(c.name)])
    return [describe(e) for e in events if keep(e.name) and (
        e.cpu_parent is None or not keep(e.cpu_parent.name))]


def test_seed_profile_records_torch_ranges_and_nodes():
    def program(T):
        return _structure(seed_profile(T).function_events)

    ok(program)


def test_ops_inside_a_function_forward_are_its_children():
    def program(T):
        prof = seed_profile(T)
        func = next(e for e in prof.function_events if e.name == "Func")
        return sorted({c.name for c in func.cpu_children} - TORCH_ONLY_EVENTS)

    ok(program)


def test_key_averages_counts_of_shared_keys():
    def program(T):
        averages = seed_profile(T).key_averages()
        return sorted((normalise(a.key), a.count) for a in averages
                      if a.key not in TORCH_ONLY_EVENTS)

    ok(program)


def _masked(table: str) -> list[str]:
    """A table with every time and percentage replaced, spacing collapsed."""
    return [" ".join(re.sub(r"-?[\d.]+(us|ms|s|%)|NaN", "T", line).split())
            for line in table.splitlines()]


def test_table_layout_matches_torch():
    def program(T):
        with T.autograd.profiler.profile() as prof:
            for name in ("short", "a_rather_long_range_name_" * 3, "mid_name"):
                with T.autograd.profiler.record_function(name):
                    pass
        table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)
        lines = table.splitlines()
        return [lines[0], lines[2], lines[-2]], _masked(table)[1], sorted(_masked(table)[3:6])

    ok(program)


def test_table_row_limit_header_and_top_level_only():
    def program(T):
        with T.autograd.profiler.profile() as prof, T.autograd.profiler.record_function("outer"):
            for i in range(3):
                with T.autograd.profiler.record_function(f"inner{i}"):
                    pass
        events = prof.function_events
        return (_masked(events.table(row_limit=2))[3:5],
                _masked(events.table(header="HEADER", top_level_events_only=True)))

    ok(program)


def test_record_shapes_column():
    def program(T):
        x = T.ones(2, 3, requires_grad=True)
        with T.autograd.profiler.profile(record_shapes=True) as prof:
            (x * T.ones(3)).sum()
        rows = [e for e in prof.key_averages(group_by_input_shape=True) if e.key == "aten::mul"]
        table = prof.key_averages(group_by_input_shape=True).table()
        return [r.input_shapes for r in rows], _masked(table)[1]

    ok(program)


def test_record_function_as_decorator_and_nesting():
    def program(T):
        @T.autograd.profiler.record_function("decorated")
        def step(v):
            with T.autograd.profiler.record_function("inner"):
                return v * 3

        x = T.ones(2, requires_grad=True)
        step(x)  # outside a profile: records nothing
        with T.autograd.profiler.profile() as prof:
            step(x)
        return _structure(prof.function_events, keep=lambda n: n in {"decorated", "inner",
                                                                      "aten::mul"})

    ok(program)


def test_disabled_empty_and_unfinished_profiles():
    def program(T):
        x = T.ones(2, requires_grad=True)
        with T.autograd.profiler.profile(enabled=False) as off:
            x * 2
        with T.autograd.profiler.profile() as empty:
            pass
        return (str(off), attempt(lambda: off.key_averages()), str(empty),
                list(empty.function_events))

    ok(program)


def test_use_cuda_warnings_on_a_cpu_only_machine():
    if any(d.platform == "gpu" for d in __import__("jax").devices()):
        pytest.skip("a GPU is present")

    def program(T):
        with T.autograd.profiler.profile(use_cuda=True):
            T.ones(1) * 2

    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_function_events_fields():
    def program(T):
        x = T.ones(2, requires_grad=True)
        with T.autograd.profiler.profile() as prof:
            x * 2
        e = next(e for e in prof.function_events if e.name == "aten::mul")
        return (e.key, e.count, e.cpu_time_total > 0, e.self_cpu_time_total > 0,
                e.cpu_time_total >= e.self_cpu_time_total, e.input_shapes,
                e.time_range.elapsed_us() == e.cpu_time_total, e.cpu_parent,
                prof.self_cpu_time_total > 0, prof.total_average().key)

    ok(program)


def test_chrome_trace_export(tmp_path):
    prof = seed_profile(jaxgrad)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert [e["name"] for e in spans] == [e.name for e in prof.function_events]
    assert all(e["dur"] >= 0 and e["ts"] > 0 for e in spans)
    (user,) = [e for e in spans if e["name"] == "my_block"]
    assert user["cat"] == "user_annotation"
    func = next(e for e in spans if e["name"] == "Func")
    assert user["ts"] <= func["ts"] and func["ts"] + func["dur"] <= user["ts"] + user["dur"]


def test_jax_trace_is_captured(tmp_path):
    seed_profile(jaxgrad, jax_trace_dir=str(tmp_path))
    written = [f for _, _, files in os.walk(tmp_path) for f in files]
    assert any(f.endswith(".xplane.pb") for f in written)


def test_profiled_backward_matches_the_compiled_one():
    # profiling runs the eager engine (per-node times); gradients must not change
    def grads(profiled):
        x = jaxgrad.tensor([0.5, 1.5], requires_grad=True)
        if profiled:
            with jaxgrad.autograd.profiler.profile():
                (x.sin() * x).sum().backward()
        else:
            (x.sin() * x).sum().backward()
        return x.grad

    assert jaxgrad.equal(grads(True), grads(False))


def test_profile_stops_recording_after_an_exception():
    from jaxgrad import _profiler

    with pytest.raises(ZeroDivisionError), jaxgrad.autograd.profiler.profile():
        1 / 0
    assert _profiler.active == []
