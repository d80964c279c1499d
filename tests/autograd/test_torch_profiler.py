"""``jaxgrad.profiler`` against ``torch.profiler``: schedules, cycles, handlers, traces, ITT.

Op-level events differ by design (torch also records its own helper ops such as ``aten::to``;
see test_profiler.py), so the event lists compared here keep the ranges both libraries must
agree on: ``ProfilerStep`` markers, ``record_function`` ranges, backward nodes and the
``aten::`` ops both record.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
from pathlib import Path

import pytest

import jaxgrad
from differential import attempt, captured_warnings, ok, raises, torch
from jaxgrad._core import warn_once as jaxgrad_warn_once
from test_profiler import TORCH_ONLY_EVENTS

HAS_GPU = jaxgrad.cuda.is_available()


def _kept(name):
    """Ranges both libraries record alike (torch's aten:: ops include its helper ops)."""
    return not name.startswith("aten::") and name not in TORCH_ONLY_EVENTS


def _names(events):
    return [e.name for e in events if _kept(e.name)]


def _fresh_warnings(T):
    """Forget which once-per-process profiler warnings were shown (each library keeps a set)."""
    if T.__name__ == "torch":
        T.profiler.profiler._WARNINGS_SHOWN.clear()
    else:  # jaxgrad keeps one set for all its warn-once warnings
        jaxgrad_warn_once._state.given.clear()


def _workload(T, i):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    with T.profiler.record_function(f"iteration_{i}"):
        y = x * float(i + 1)
    y.sum().backward()


def _cycles(T, steps=9, **kwargs):
    """Run ``steps`` profiled iterations; return what each ``on_trace_ready`` call saw."""
    seen = []

    def handler(prof):
        seen.append((prof.step_num, prof.current_action.name, _names(prof.events()),
                     [k.key for k in prof.key_averages() if _kept(k.key)]))

    with T.profiler.profile(on_trace_ready=handler, **kwargs) as prof:
        for i in range(steps):
            _workload(T, i)
            prof.step()
    return seen, _names(prof.events()), prof.step_num


# --- schedule and ProfilerAction ------------------------------------------------------------

SCHEDULES = [dict(wait=1, warmup=1, active=2), dict(wait=1, warmup=1, active=2, repeat=2),
             dict(wait=0, warmup=0, active=1), dict(wait=2, warmup=1, active=3, skip_first=3),
             dict(wait=3, warmup=1, active=1, repeat=2, skip_first=2, skip_first_wait=1),
             dict(wait=0, warmup=2, active=1, repeat=1), dict(wait=5, warmup=0, active=2,
                                                               skip_first_wait=1)]


@pytest.mark.parametrize("args", SCHEDULES, ids=str)
def test_schedule_action_sequences(args):
    def program(T):
        step_action = T.profiler.schedule(**args)
        return [step_action(step).name for step in range(24)]

    ok(program)


@pytest.mark.parametrize("args", [dict(wait=-1, warmup=0, active=1), dict(wait=0, warmup=-2,
                                  active=1), dict(wait=0, warmup=0, active=0),
                                  dict(wait=0, warmup=1, active=1, repeat=-1),
                                  dict(wait=0, warmup=1, active=1, skip_first=-3)], ids=str)
def test_schedule_rejects_bad_arguments(args):
    raises(lambda T: T.profiler.schedule(**args))


def test_schedule_warnings_and_negative_steps():
    def program(T):
        return [attempt(lambda: T.profiler.schedule(wait=1, warmup=0, active=1)(-1))]

    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)
    raises(lambda T: T.profiler.schedule(wait=1, warmup=1, active=1)(1, 2))
    raises(lambda T: T.profiler.schedule(1, 1, 1))


def test_profiler_action_and_activity_enums():
    def program(T):
        activity, action = T.profiler.ProfilerActivity, T.profiler.ProfilerAction
        cpu = activity.CPU
        return ([(name, int(member), member.value, repr(member), str(member), f"{member}")
                 for name, member in activity.__members__.items()],
                [(a.name, a.value, repr(a)) for a in action], repr(action),
                activity(2).name, cpu == 0, hash(cpu), cpu.__index__(), activity.CUDA in {
                    activity.CUDA}, type(attempt(lambda: cpu < activity.CUDA)).__name__,
                sorted(a.name for a in T.profiler.supported_activities()))

    ok(program)


def test_public_names_and_paths():
    def program(T):
        P = T.profiler
        return (repr(P.profile), repr(P.profiler.profile), repr(P.record_function),
                repr(P._KinetoProfile), P.profile.__mro__[1].__name__, P.itt.__all__,
                [name for name in P.profiler.__all__ if name != "ExecutionTraceObserver"],
                [name for name in P.__all__ if hasattr(jaxgrad.profiler, name)],
                P.record_function is T.autograd.profiler.record_function,
                P.profiler.PROFILER_STEP_NAME)

    ok(program)


# --- cycles: when on_trace_ready runs and what it sees ----------------------------------------

@pytest.mark.parametrize("args", SCHEDULES, ids=str)
@pytest.mark.parametrize("acc_events", [False, True])
def test_cycles_hand_the_recorded_steps_to_on_trace_ready(args, acc_events):
    def program(T):
        _fresh_warnings(T)
        return _cycles(T, schedule=T.profiler.schedule(**args), acc_events=acc_events)

    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_without_a_schedule_one_cycle_records_everything():
    def program(T):
        return _cycles(T, steps=3)

    ok(program)


def test_incorrect_schedules_warn_and_recover():
    def custom(actions):
        return lambda T: lambda step: getattr(T.profiler.ProfilerAction,
                                              actions[min(step, len(actions) - 1)])

    orders = [["WARMUP", "NONE", "RECORD", "RECORD_AND_SAVE", "NONE"],
              ["RECORD", "NONE", "RECORD_AND_SAVE"],
              # (RECORD, WARMUP, RECORD, ...) starts a stopped recorder: torch crashes
              ["RECORD_AND_SAVE", "RECORD_AND_SAVE", "RECORD"]]
    for actions in orders:
        def program(T, actions=actions):
            _fresh_warnings(T)
            return _cycles(T, steps=6, schedule=custom(actions)(T))

        ok(program)
        assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_device_stopped_is_not_for_schedules():
    def program(T):
        P = T.profiler
        stopped = P.ProfilerAction.DEVICE_STOPPED
        first = attempt(lambda: P.profile(schedule=lambda step: stopped))
        prof = P.profile(schedule=lambda step: stopped if step else P.ProfilerAction.RECORD)
        prof.start()
        later = attempt(prof.step)
        prof.stop()
        return first, later, prof.step_num, _names(prof.events())

    ok(program)


def test_start_stop_and_step_by_hand():
    def program(T):
        seen = []
        prof = T.profiler.profile(schedule=T.profiler.schedule(wait=0, warmup=1, active=1),
                                  on_trace_ready=lambda p: seen.append(p.step_num))
        before = (attempt(prof.events), attempt(prof.key_averages),
                  attempt(lambda: prof.export_chrome_trace("unused.json")), prof.get_trace_id())
        prof.start()
        for i in range(4):
            _workload(T, i)
            prof.step()
        prof.stop()
        return before, seen, prof.current_action.name, _names(prof.events())

    ok(program)


def test_toggling_collection():
    def program(T):
        A = T.profiler.ProfilerActivity
        x = T.ones(2)
        prof = T.profiler.profile(activities=[A.CPU],
                                  schedule=T.profiler.schedule(wait=0, warmup=1, active=2))
        prof.toggle_collection_dynamic(False, [A.CPU])  # before any cycle: nothing to do
        prof.start()
        prof.toggle_collection_dynamic(False, [A.CPU])  # warming up: nothing to do
        prof.step()
        x * 2
        for enable, activities in ((False, [A.CPU]), (False, [A.CPU]), (True, [A.CUDA]),
                                   (True, [A.CPU]), (True, [A.CPU]), (False, [A.CPU, A.CUDA]),
                                   (True, [A.CPU, A.CUDA])):
            prof.toggle_collection_dynamic(enable, activities)
            with T.profiler.record_function(f"enable={enable} {activities}"):
                x + 2
        prof.step()
        x - 2
        prof.stop()
        return _names(prof.events())

    ok(program)


def test_record_shapes_and_key_average_grouping():
    def program(T):
        x, y, z = T.ones(2, 3), T.ones(2, 3), T.ones(3)
        with T.profiler.profile(record_shapes=True) as prof:
            x * y
            x * z
            y * x
        return [(k.key, k.count, k.input_shapes) for k in
                prof.key_averages(group_by_input_shape=True)]

    ok(program)


def test_key_averages_of_a_small_program():
    def program(T):
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        with T.profiler.profile(activities=[T.profiler.ProfilerActivity.CPU]) as prof:
            with T.profiler.record_function("model"):
                loss = (x * x).sum()
            loss.backward()
        return [(k.key, k.count) for k in prof.key_averages() if _kept(k.key)
                and "AccumulateGrad" not in k.key]

    ok(program)


# --- activities -------------------------------------------------------------------------------

def _activity_cases(T):
    A = T.profiler.ProfilerActivity
    return [[], ["cpu"], [A.CPU, A.CPU], [{A.CPU: []}], [A.CPU, {A.CPU: ["x"]}], [A.MTIA],
            [A.CPU, A.MTIA], [A.XPU], [A.CPU, A.XPU], [A.HPU], [A.CPU, A.HPU],
            [A.PrivateUse1], [A.CPU, A.PrivateUse1], [3]]


@pytest.mark.parametrize("case", range(14))
def test_activities_accepted_warned_and_refused(case):
    def program(T):
        def run():
            with T.profiler.profile(activities=_activity_cases(T)[case]) as prof:
                T.ones(2) * 2.0
            return _names(prof.events())
        return [attempt(run)]

    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


@pytest.mark.skipif(HAS_GPU, reason="a GPU is present")
@pytest.mark.parametrize("use_cuda", [None, True, False])
def test_cuda_activity_on_a_cpu_only_machine(use_cuda):
    def program(T):
        A = T.profiler.ProfilerActivity
        results = []
        for activities in ([A.CUDA], [A.CPU, A.CUDA], None):
            def run(activities=activities):
                with T.profiler.profile(activities=activities, use_cuda=use_cuda) as prof:
                    T.ones(2) * 2.0
                return prof.use_device, _names(prof.events())
            results.append(attempt(run))
        return results

    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


def test_trace_only_experimental_config_with_stack():
    class Config:  # what profile reads of torch's _ExperimentalConfig
        trace_only = True

    def program(T):
        config = Config()
        prof = T.profiler.profile(experimental_config=config, with_stack=True)
        return config.trace_only, prof.experimental_config.trace_only

    ok(program)
    assert captured_warnings(program, jaxgrad) == captured_warnings(program, torch)


# --- Chrome traces and TensorBoard handler ----------------------------------------------------

NOT_RECORDED_ARGS = {"Concrete Inputs", "Input Strides", "Input type"}  # jaxgrad keeps shapes


def _trace_structure(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        trace = json.load(f)
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X" and e.get("cat") != "Trace"]
    kept = [e for e in spans if _kept(e["name"]) and "AccumulateGrad" not in e["name"]]
    return (list(trace), sorted({e["ph"] for e in trace["traceEvents"]}),
            sorted({e["name"] for e in trace["traceEvents"] if e["ph"] == "M"}),
            [(e["cat"], e["name"], sorted(e), sorted(set(e["args"]) - NOT_RECORDED_ARGS))
             for e in kept],
            path.endswith(".gz") or trace["traceName"] == path,  # torch: its gzip's temp file
            trace["record_shapes"], trace["user"])


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_chrome_trace_layout(tmp_path, suffix):
    def program(T):
        path = str(tmp_path / f"{T.__name__}{suffix}")
        with T.profiler.profile(record_shapes=True,
                                schedule=T.profiler.schedule(wait=0, warmup=1, active=2),
                                on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
            prof.add_metadata("user", "a value")
            for i in range(3):
                _workload(T, i)
                prof.step()
        return _trace_structure(path)

    ok(program)


def test_chrome_trace_shows_the_last_cycle_only(tmp_path):
    def program(T):
        path = str(tmp_path / f"{T.__name__}.json")
        results = []
        for steps in (3, 4):
            with T.profiler.profile(schedule=T.profiler.schedule(wait=0, warmup=1, active=1),
                                    acc_events=True) as prof:
                for i in range(steps):
                    with T.profiler.record_function(f"iteration_{i}"):
                        pass
                    prof.step()
            prof.export_chrome_trace(path)
            trace = json.loads(Path(path).read_text())
            results.append(([e["name"] for e in trace["traceEvents"] if e["ph"] == "X"],
                            _names(prof.events())))
        return results

    ok(program)


def test_chrome_trace_times_lie_in_the_recorded_window(tmp_path):
    path = str(tmp_path / "trace.json")
    with jaxgrad.profiler.profile() as prof:
        _workload(jaxgrad, 0)
    prof.export_chrome_trace(path)
    trace = json.loads(Path(path).read_text())
    (window,) = [e for e in trace["traceEvents"] if e.get("cat") == "Trace"]
    spans = [e for e in trace["traceEvents"] if e.get("cat") in ("cpu_op", "user_annotation")]
    assert [e["name"] for e in spans] == [e.name for e in prof.events()]
    assert all(window["ts"] <= e["ts"] and e["ts"] + e["dur"] <= window["ts"] + window["dur"]
               for e in spans)
    flows = [e for e in trace["traceEvents"] if e.get("cat") == "fwdbwd"]
    arrows = {(e["id"], e["ph"]): e["ts"] for e in flows}  # aten::sum -> SumBackward0, mul
    assert len(flows) == len(arrows) == 4
    assert all(arrows[(i, "s")] < arrows[(i, "f")] for i, _ in arrows)


def test_python_export_writes_the_autograd_profilers_trace(tmp_path):
    path = str(tmp_path / "trace.json")
    with jaxgrad.profiler.profile() as prof:
        _workload(jaxgrad, 0)
    prof.export_chrome_trace(path, use_python_export=True)
    events = json.loads(Path(path).read_text())["traceEvents"]
    assert [e["name"] for e in events] == [e.name for e in prof.events()]


def test_tensorboard_trace_handler_files(tmp_path):
    def program(T):
        out = tmp_path / T.__name__
        handlers = [T.profiler.tensorboard_trace_handler(str(out / "a"), "worker0"),
                    T.profiler.tensorboard_trace_handler(str(out / "b"), use_gzip=True)]
        for handler in handlers:
            with T.profiler.profile(schedule=T.profiler.schedule(wait=0, warmup=1, active=1),
                                    on_trace_ready=handler) as prof:
                for i in range(4):
                    _workload(T, i)
                    prof.step()
        default_worker = f"{socket.gethostname()}_{os.getpid()}"
        return [sorted(re.sub(r"\.\d+\.", ".<ns>.", name).replace(default_worker, "<host_pid>")
                       for name in os.listdir(out / d)) for d in ("a", "b")]

    ok(program)


def test_tensorboard_trace_handler_cannot_create_its_directory(tmp_path):
    (tmp_path / "file").write_text("")

    def program(T):
        handler = T.profiler.tensorboard_trace_handler(str(tmp_path / "file" / "logs"))
        return [attempt(lambda: handler(None))]

    ok(program)


def test_trace_ids_and_metadata():
    def program(T):
        ids = iter(["first", "second"])
        prof = T.profiler.profile(schedule=T.profiler.schedule(wait=0, warmup=1, active=1),
                                  custom_trace_id_callback=lambda: next(ids))
        before = prof.get_trace_id()
        prof.start()
        seen = [prof.get_trace_id()]
        prof.step()
        prof.step()
        seen.append(prof.get_trace_id())
        prof.set_custom_trace_id_callback(lambda: "third")
        prof.step()
        seen.append(prof.get_trace_id())
        prof.stop()
        default = T.profiler.profile()
        default.start()
        default.stop()
        return before, seen, bool(re.fullmatch(r"[0-9A-F]{32}", default.get_trace_id()))

    ok(program)


def test_jax_trace_of_the_recorded_cycles(tmp_path):
    P = jaxgrad.profiler
    with P.profile(schedule=P.schedule(wait=0, warmup=1, active=1, repeat=1),
                   jax_trace_dir=str(tmp_path)) as prof:
        for i in range(3):
            _workload(jaxgrad, i)
            prof.step()
    (trace,) = [Path(root) / f for root, _, files in os.walk(tmp_path) for f in files
                if f.endswith(".xplane.pb")]
    data = trace.read_bytes()
    named = [name for name in ("ProfilerStep#0", "ProfilerStep#1", "iteration_0", "iteration_1",
                               "aten::mul", "MulBackward0") if name.encode() in data]
    assert named == ["ProfilerStep#1", "iteration_1", "aten::mul", "MulBackward0"]


# --- ITT ----------------------------------------------------------------------------------

def test_itt_ranges_and_marks():
    def program(T):
        itt = T.profiler.itt
        results = [itt.is_available(), itt.range_pop(), itt.range_push("outer"),
                   itt.range_push("inner"), itt.mark("instant"), itt.range_pop(),
                   itt.range_pop(), attempt(lambda: itt.range_push(3)),
                   attempt(lambda: itt.mark(3)), itt.mark(None), itt.range_push(b"bytes"),
                   itt.range_pop()]
        with itt.range("epoch {} of {n}", 1, n=2):
            results.append(T.ones(1).tolist())
        return results

    ok(program)


def test_emit_itt_runs_where_itt_is_available():
    """test_autograd.py's ``test_profiler_emit_itt`` runs when ``itt.is_available()``."""
    def program(T):
        a = T.tensor([1, 2, 3], dtype=T.float32)
        with T.autograd.profiler.emit_itt():
            b = a.add(1.0)
        return T.profiler.itt.is_available(), b

    ok(program)
