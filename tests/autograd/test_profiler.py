"""The autograd profiler against torch's: which ranges are recorded, nesting, tables, traces.

Op-level events differ by design (torch also records its own helper ops such as ``aten::to``),
so structural comparisons use the ranges both libraries must agree on: Function forwards,
backward nodes, ``record_function`` ranges, and the ``aten::`` ops that both record.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

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


def test_legacy_record_function_ops():
    """torch.ops.profiler's range ops, as traced programs and torch's own tests call them."""

    def program(T):
        x = T.ones(2, requires_grad=True)
        ops = T.ops.profiler
        with T.autograd.profiler.profile() as prof:
            handle = ops._record_function_enter_new("bar", None)
            y = x * 2
            ops._record_function_exit._RecordFunction(handle)
            handle = ops._record_function_enter_new.default("baz")
            y = y * 3
            ops._record_function_exit(handle)
        structure = _structure(prof.function_events,
                               keep=lambda n: n in {"bar", "baz", "aten::mul"})
        return (structure, ops._record_function_exit.overloads(),
                ops._record_function_enter_new.overloads(), attempt(lambda: ops.nope))

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
    from jaxgrad._engine import profiling as _profiler

    with pytest.raises(ZeroDivisionError), jaxgrad.autograd.profiler.profile():
        1 / 0
    assert _profiler.active == []


# --- events built by hand, as torch's own tests build them ------------------------------------

def test_function_event_avg_adds_events_and_itself():
    def program(T):
        util = T.autograd.profiler_util
        avg = util.FunctionEventAvg()
        empty = (avg.key, avg.count, avg.cpu_time, avg.input_shapes)
        avg.add(util.FunctionEvent(id=0, node_id=0, name="foo", thread=0, start_us=10,
                                   end_us=15))
        avg.add(util.FunctionEvent(id=1, node_id=0, name="foo", thread=0, start_us=20,
                                   end_us=30))
        avg.add(avg)
        wrong_key = attempt(lambda: avg.add(util.FunctionEvent(id=2, name="bar", thread=0,
                                                               start_us=0, end_us=1)))
        return (empty, avg.key, avg.count, avg.cpu_time_total, avg.self_cpu_time_total,
                avg.device_time_total, avg.cpu_time, avg.cpu_time_str, wrong_key)

    ok(program)


def test_populate_cpu_children_of_hand_made_events():
    def program(T):
        util = T.autograd.profiler_util
        events = util.EventList()
        ranges = [(1, [(0, 1), (1, 2)]), (0, [(0, 2), (1, 2), (1, 3)]), (0, [(5, 9), (6, 7)])]
        for thread, spans in ranges:
            for start, end in spans:
                events.append(util.FunctionEvent(id=len(events) + 1, node_id=0, name="",
                                                 thread=thread, start_us=start, end_us=end))
        not_built = attempt(lambda: events.key_averages())
        events._populate_cpu_children()
        return ([[c.id for c in e.cpu_children] for e in events],
                [None if e.cpu_parent is None else e.cpu_parent.id for e in events], not_built)

    ok(program)


def test_format_time_and_event_defaults():
    def program(T):
        util = T.autograd.profiler_util
        e = util.FunctionEvent(id=3, name="x", thread=1, start_us=0.5, end_us=2.0)
        return ([util._format_time(t) for t in (0.0, 12.3456, 999.9999, 1500.0, 2.5e6)],
                (e.sequence_nr, e.fwd_thread, e.node_id, e.scope, e.input_shapes, e.stack,
                 e.is_async, e.count, e.key, e.cpu_time_total_str, e.device_time_total))

    ok(program)


def test_total_average_of_mixed_events():
    def program(T):
        util = T.autograd.profiler_util
        events = util.EventList([util.FunctionEvent(id=i, name=n, thread=0, start_us=i,
                                                    end_us=i + 2)
                                 for i, n in enumerate(["a", "b", "a"])])
        total = events.total_average()
        return total.key, total.count, total.cpu_time_total, total.cpu_time

    ok(program)


# --- what a profile records -------------------------------------------------------------------

def _autograd_events(prof):
    """Per forward op that made a node: its event's, its backward events' sequence numbers
    as relations (same number, fwd_thread the forward's thread), and the node's scope."""
    events = prof.function_events
    found = {}
    for fwd, node in (("aten::add", "AddBackward0"), ("aten::mul", "MulBackward0")):
        forward = next(e for e in events if e.name == fwd)
        wrapper = next(e for e in events
                       if e.name == f"autograd::engine::evaluate_function: {node}")
        backward = next(e for e in events if e.name == node)
        found[fwd] = (forward.sequence_nr >= 0, wrapper.sequence_nr == forward.sequence_nr,
                      backward.sequence_nr == forward.sequence_nr,
                      wrapper.fwd_thread == forward.thread,
                      backward.fwd_thread == forward.thread, wrapper.scope, backward.scope,
                      backward.cpu_parent is wrapper)
    accumulate = [e for e in events if "AccumulateGrad" in e.name]
    found["AccumulateGrad"] = sorted({e.sequence_nr for e in accumulate})
    found["no grad"] = [e.sequence_nr for e in events if e.name == "aten::sub"]
    return found


def test_sequence_numbers_link_forward_ops_and_their_nodes():
    def program(T):
        x = T.ones(3, requires_grad=True)
        with T.autograd.profiler.profile() as prof:
            with T.no_grad():
                x - 1
            ((x + 2) * x).sum().backward()
        return _autograd_events(prof)

    ok(program)


def test_backward_nodes_record_the_shapes_of_their_gradients():
    def program(T):
        x = T.ones(2, 3, requires_grad=True)
        with T.autograd.profiler.profile(record_shapes=True) as prof:
            (x * 2).sum().backward()
        return [(e.name, e.input_shapes) for e in prof.function_events
                if e.name in ("SumBackward0", "MulBackward0")]

    ok(program)


def test_key_averages_drop_shapes_unless_grouped_by_them():
    def program(T):
        x = T.ones(2, requires_grad=True)
        with T.autograd.profiler.profile(record_shapes=True) as prof:
            x * 2
        (plain,) = [a for a in prof.key_averages() if a.key == "aten::mul"]
        (grouped,) = [a for a in prof.key_averages(group_by_input_shape=True)
                      if a.key == "aten::mul"]
        return plain.input_shapes, grouped.input_shapes, plain.stack

    ok(program)


def test_str_of_a_profile_is_its_table():
    def program(T):
        with T.autograd.profiler.profile() as prof:
            T.einsum("i->", T.ones(8))
        return str(prof) == prof.table()

    ok(program)


def test_profiler_enabled_flag():
    def program(T):
        before = T.autograd._profiler_enabled()
        with T.autograd.profiler.profile():
            inside = T.autograd._profiler_enabled()
        return before, inside, T.autograd._profiler_enabled()

    ok(program)


def test_kineto_is_not_behind_jaxgrad_profiles():
    assert jaxgrad.autograd.kineto_available() is False
    assert jaxgrad.autograd.profiler.kineto_available is jaxgrad.autograd.kineto_available


# --- range emitters ---------------------------------------------------------------------------

def test_emit_itt_enter_exit_and_reentrancy():
    def program(T):
        emitter = T.autograd.profiler.emit_itt(record_shapes=True)
        with emitter as entered:
            T.ones(2) + 1.0
            again = attempt(lambda: emitter.__enter__())
        with T.autograd.profiler.emit_itt(enabled=False) as disabled:
            pass
        return entered is emitter, again, disabled, T.autograd._profiler_enabled()

    ok(program)


def test_emit_nvtx_needs_a_gpu():
    if any(d.platform == "gpu" for d in __import__("jax").devices()):
        pytest.skip("a GPU is present")

    def program(T):
        def enter():
            with T.autograd.profiler.emit_nvtx():
                pass
        with T.autograd.profiler.emit_nvtx(enabled=False) as disabled:
            pass
        return attempt(enter), disabled

    ok(program)


def test_emitted_ranges_reach_the_jax_trace(tmp_path):
    import jax
    x = jaxgrad.ones(2, requires_grad=True)
    jax.profiler.start_trace(str(tmp_path))
    try:
        with jaxgrad.autograd.profiler.emit_itt(), \
                jaxgrad.autograd.profiler.record_function("my_itt_range"):
            (x * 2).sum().backward()
    finally:
        jax.profiler.stop_trace()
    traces = [Path(d, f).read_bytes() for d, _, files in os.walk(tmp_path) for f in files
              if f.endswith(".xplane.pb")]
    assert traces and any(b"my_itt_range" in t for t in traces)
    assert any(b"MulBackward0" in t for t in traces)


def test_recorded_event_descriptions():
    def program(T):
        x = T.ones(2, requires_grad=True)
        with T.autograd.profiler.profile() as prof, T.autograd.profiler.record_function("r"):
            x * 2
        described = [(e.name, e.stack, e.overload_name, e.trace_name, e.scope, e.node_id,
                      e.is_async, e.is_legacy, e.cpu_memory_usage)
                     for e in prof.function_events if e.name in ("r", "aten::mul")]
        (avg,) = [a for a in prof.key_averages() if a.key == "r"]
        return described, (avg.stack, avg.overload_name, avg.scope, avg.input_shapes)

    ok(program)


def test_linear_is_one_range_around_t_and_addmm():
    """torch's linear is a composite op: an ``aten::linear`` range (all its arguments' shapes,
    the sequence number of the first node made inside) around ``aten::t`` and ``aten::addmm``."""
    def program(T):
        layer = T.nn.Linear(20, 30)
        x = T.ones(8, 20)
        with T.autograd.profiler.profile(record_shapes=True) as prof:
            layer(x)
            with T.no_grad():
                layer(x)
        events = [e for e in prof.function_events if e.name in ("aten::linear", "aten::t",
                                                                "aten::addmm")]
        first = min(e.sequence_nr for e in events if e.sequence_nr >= 0)
        return [(e.name, e.input_shapes[:3], -1 if e.sequence_nr < 0 else e.sequence_nr - first,
                 [c.name for c in e.cpu_children if c.name in ("aten::t", "aten::addmm")])
                for e in events]

    ok(program)


def test_factories_are_top_level_ranges_named_as_torch():
    """Creating tensors is recorded (torch's ``aten::randn``, ``aten::zeros``, ...), one range
    each; the ops torch builds them from inside (``aten::empty``, ``aten::fill_``) are torch's
    implementation and not jaxgrad's, so only the top-level ranges are compared."""
    def program(T):
        like = T.ones(2, 3)
        with T.autograd.profiler.profile() as prof:
            T.randn(4, 4, requires_grad=True), T.rand(3), T.randint(0, 5, (2,))
            T.zeros(2), T.ones(2), T.empty(3), T.full((2,), 1.0), T.eye(2)
            T.arange(3), T.linspace(0, 1, 5), T.logspace(0, 1, 5), T.randperm(4)
            T.zeros_like(like), T.ones_like(like), T.full_like(like, 2.0), T.rand_like(like)
            T.randn_like(like), T.randint_like(like, 3), T.normal(0.0, 1.0, (2,))
        return [(e.name, e.sequence_nr) for e in prof.function_events if e.cpu_parent is None]

    ok(program)
