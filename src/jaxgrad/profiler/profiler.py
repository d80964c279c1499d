"""``torch.profiler.profiler``: the cycle-based profiler on top of ``autograd.profiler``.

``profile`` drives one ``jaxgrad.autograd.profiler.profile`` per profiling cycle: a cycle is
prepared (warm-up: nothing is recorded), started (ops, backward nodes and ``record_function``
ranges are recorded) and stopped, as its ``schedule`` says at each ``step()``; at the end of
every cycle ``on_trace_ready`` receives the profiler. Events are jaxgrad's own (real times of
the XLA work, each op blocks on its results); ``export_chrome_trace`` writes them in the layout
of torch's Kineto traces, and ``jax_trace_dir`` also captures ``jax.profiler``'s device-level
trace of each recorded cycle, where ops, backward nodes, steps and ``record_function`` ranges
are named ranges around the XLA work (TensorBoard's profile plugin reads ``jax_trace_dir``).
"""

from __future__ import annotations

import copy
import enum
import gzip
import json
import os
import socket
import time
import uuid
import warnings
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from .. import cuda
from .._core.warn_once import warn_once
from ..autograd import profiler as autograd_profiler
from ..autograd.profiler_util import EventList

__all__ = ["supported_activities", "ProfilerAction", "schedule", "tensorboard_trace_handler",
           "profile"]

PROFILER_STEP_NAME = "ProfilerStep"
_BACKWARD_SCOPE = 1  # a backward node's own event (torch's RecordScope.BACKWARD_FUNCTION)


class ProfilerActivity(enum.Enum):
    """The kinds of activity a profiler can trace (torch's ``ProfilerActivity``); ``CPU`` is
    jaxgrad's recorded ops, ``CUDA`` is accepted where JAX has a GPU.

    >>> from jaxgrad.profiler import ProfilerActivity
    >>> ProfilerActivity.CPU, int(ProfilerActivity.CUDA), str(ProfilerActivity.XPU)
    (<ProfilerActivity.CPU: 0>, 2, 'ProfilerActivity.XPU')
    """

    CPU = 0
    XPU = 1
    MTIA = 4
    CUDA = 2
    HPU = 3
    PrivateUse1 = 5

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value

    def __hash__(self) -> int:
        return self.value

    def __str__(self) -> str:
        return f"ProfilerActivity.{self.name}"


def supported_activities() -> set[ProfilerActivity]:
    """The activities this machine can trace: CPU, and CUDA where JAX has a GPU.

    >>> from jaxgrad.profiler import ProfilerActivity, supported_activities
    >>> ProfilerActivity.CPU in supported_activities()
    True
    """
    found = {ProfilerActivity.CPU}
    if cuda.is_available():
        found.add(ProfilerActivity.CUDA)
    return found


class ProfilerAction(enum.Enum):
    """What the profiler does at a step: nothing, warm up, record, or record and hand the
    cycle to ``on_trace_ready``. ``DEVICE_STOPPED`` is the profiler's own state after device
    collection stopped early; a schedule must not return it.

    >>> from jaxgrad.profiler import ProfilerAction
    >>> [a.name for a in ProfilerAction][:4]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE']
    """

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """A step -> ``ProfilerAction`` function: skip ``skip_first`` steps, then cycles of
    ``wait`` idle, ``warmup`` warm-up and ``active`` recorded steps (the last one saves),
    ``repeat`` times (0: forever). ``skip_first_wait`` drops the first cycle's wait.

    >>> from jaxgrad.profiler import schedule
    >>> step_action = schedule(wait=1, warmup=1, active=2, repeat=1)
    >>> [step_action(step).name for step in range(5)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    cycle = wait + warmup + active

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule_fn(_: int) -> ProfilerAction:
    """Without a schedule: record every step, one cycle from start to stop."""
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False,
                              use_python_export: bool = False) -> Callable[[Any], None]:
    """An ``on_trace_ready`` handler writing each cycle's Chrome trace into ``dir_name`` as
    ``<worker_name>.<time ns>.pt.trace.json`` (``.gz`` with ``use_gzip``), the layout
    TensorBoard's profiler plugin reads; ``worker_name`` defaults to ``<host>_<pid>``.

    >>> import os, tempfile, jaxgrad
    >>> from jaxgrad.profiler import profile, tensorboard_trace_handler
    >>> log_dir = tempfile.mkdtemp()
    >>> with profile(on_trace_ready=tensorboard_trace_handler(log_dir, "w0")):
    ...     _ = jaxgrad.ones(2) * 2
    >>> [name.split(".")[0] for name in os.listdir(log_dir)]
    ['w0']
    """

    def handler_fn(prof: _KinetoProfile) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name),
                                 use_python_export=use_python_export)

    return handler_fn


# --- activities -> the autograd profiler's device ------------------------------------------

_UNAVAILABLE = {"xpu": "XPU is not available, disabling XPU profiling",
                "hpu": "HPU is not available, disabling HPU profiling",
                "privateuseone": "The privateuseone is not a valid device option."}


def _parse_activities(activities: Iterable[Any]) -> tuple[set[ProfilerActivity], dict]:
    """The activities named, and the per-activity filters given as ``{activity: [names]}``."""
    parsed: set[ProfilerActivity] = set()
    filters: dict[ProfilerActivity, set[str]] = {}
    for item in activities:
        named = {item: None} if isinstance(item, ProfilerActivity) else item
        if not isinstance(named, dict):
            raise TypeError(f"Expected ProfilerActivity or dict, got {type(item)}")
        for activity, names in named.items():
            if activity in parsed:
                raise ValueError(f"Activity {activity} specified more than once")
            parsed.add(activity)
            if names is not None:
                filters[activity] = set(names)
    return parsed, filters


def _activity_device(activities: set[ProfilerActivity]) -> str | None:
    """The device the activities ask to trace, as torch picks it (CUDA first)."""
    for activity, device in ((ProfilerActivity.CUDA, "cuda"), (ProfilerActivity.XPU, "xpu"),
                             (ProfilerActivity.MTIA, "mtia"), (ProfilerActivity.HPU, "hpu"),
                             (ProfilerActivity.PrivateUse1, "privateuseone")):
        if activity in activities:
            return device
    return None


def _traced_device(use_device: str | None) -> str | None:
    """The device left to trace after torch's checks (a warning for each one that JAX lacks;
    CUDA is checked by the autograd profiler itself)."""
    if use_device == "mtia":
        raise AssertionError("Legacy MTIA profiling is not supported. Requires use_kineto=True "
                             "on MTIA devices.")
    if use_device in _UNAVAILABLE:
        warnings.warn(_UNAVAILABLE[use_device], stacklevel=2)
        return None
    return use_device


# --- Chrome trace ---------------------------------------------------------------------------

def _span(event: Any, pid: int, index: int, record_shapes: bool) -> dict:
    args: dict[str, Any] = {"External id": index + 1}
    if event.sequence_nr >= 0:
        args["Sequence number"], args["Fwd thread id"] = event.sequence_nr, event.fwd_thread
    args["Record function id"] = 0
    if record_shapes and event.input_shapes:
        args["Input Dims"] = event.input_shapes
    args["Ev Idx"] = index
    return {"ph": "X", "cat": "user_annotation" if event.is_user_annotation else "cpu_op",
            "name": event.trace_name or event.name, "pid": pid, "tid": event.thread,
            "ts": event.time_range.start, "dur": event.time_range.elapsed_us(), "args": args}


def _flows(events: list, pid: int) -> list[dict]:
    """Forward op -> backward node arrows (torch's ``fwdbwd`` flow events), by sequence nr."""
    forward = {e.sequence_nr: e for e in events
               if e.sequence_nr >= 0 and e.scope == 0 and e.fwd_thread == 0}
    flows = []
    for e in events:
        start = forward.get(e.sequence_nr) if e.scope == _BACKWARD_SCOPE else None
        if start is None:
            continue
        arrow = {"id": e.sequence_nr + 1, "cat": "fwdbwd", "name": "fwdbwd"}
        flows.append({"ph": "s", **arrow, "pid": pid, "tid": start.thread,
                      "ts": start.time_range.start})
        flows.append({"ph": "f", **arrow, "pid": pid, "tid": e.thread, "ts": e.time_range.start,
                      "bp": "e"})
    return flows


def _thread_labels(events: list, pid: int, ts: float) -> list[dict]:
    labels = [{"ph": "M", "name": "process_name", "args": {"name": "python"}, "tid": 0},
              {"ph": "M", "name": "process_labels", "args": {"labels": "CPU"}, "tid": 0},
              {"ph": "M", "name": "process_sort_index", "args": {"sort_index": pid}, "tid": 0}]
    for thread in dict.fromkeys(e.thread for e in events):
        labels += [{"ph": "M", "name": "thread_name", "tid": thread,
                    "args": {"name": f"thread {thread} (python)"}},
                   {"ph": "M", "name": "thread_sort_index", "tid": thread,
                    "args": {"sort_index": thread}}]
    return [{"ph": m["ph"], "name": m["name"], "ts": ts, "pid": pid, "tid": m["tid"],
             "args": m["args"]} for m in labels]


def _chrome_trace(events: list, path: str, metadata: dict, trace_id: str,
                  window: tuple[float, float], record_shapes: bool) -> dict:
    """torch's Kineto trace layout for jaxgrad's events (``ts`` in microseconds of the
    ``perf_counter`` clock; ``baseTimeNanoseconds`` is that clock's zero on the wall clock)."""
    pid = os.getpid()
    start, end = window
    trace = _thread_labels(events, pid, start)
    for index, event in enumerate(events):
        trace.append(_span(event, pid, index, record_shapes))
    trace += _flows(list(events), pid)
    trace += [{"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans",
               "tid": "PyTorch Profiler", "ts": start, "dur": end - start,
               "args": {"Op count": 0}},
              {"ph": "M", "name": "process_sort_index", "ts": start, "pid": "Spans", "tid": 0,
               "args": {"sort_index": 536870912}},
              {"ph": "i", "s": "g", "name": "Iteration Start: PyTorch Profiler", "pid": "Traces",
               "tid": "Trace PyTorch Profiler", "ts": start},
              {"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": end}]
    return {"schemaVersion": 1, "deviceProperties": [], "trace_id": trace_id,
            **{key: _json_value(value) for key, value in metadata.items()},
            "host_name": socket.gethostname(), "displayTimeUnit": "ms",
            "baseTimeNanoseconds": time.time_ns() - time.perf_counter_ns(),
            "traceEvents": trace, "traceName": path}


def _json_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


# --- the profilers ----------------------------------------------------------------------------

def _now_us() -> float:
    return time.perf_counter_ns() / 1e3


class _KinetoProfile:
    """One profiling cycle at a time over ``autograd.profiler.profile``: ``prepare_trace``
    makes the cycle's recorder (warm-up), ``start_trace`` starts recording, ``stop_trace``
    ends it. With ``acc_events`` the recorder is kept across cycles and events accumulate.

    >>> import jaxgrad
    >>> from jaxgrad.profiler.profiler import _KinetoProfile
    >>> prof = _KinetoProfile()
    >>> x = jaxgrad.ones(2)
    >>> prof.start()
    >>> _ = x * 2
    >>> prof.stop()
    >>> [e.name for e in prof.events()]
    ['aten::mul']
    """

    def __init__(self, *, activities: Iterable[Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False, with_modules: bool = False,
                 experimental_config: Any = None, execution_trace_observer: Any = None,
                 acc_events: bool = False,
                 custom_trace_id_callback: Callable[[], str] | None = None,
                 post_processing_timeout_s: float | None = None,
                 jax_trace_dir: str | None = None) -> None:
        if activities is not None:
            self.activities, self.activity_filters = _parse_activities(activities)
        else:
            self.activities, self.activity_filters = supported_activities(), {}
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.with_flops, self.with_modules = with_stack, with_flops, with_modules
        if getattr(experimental_config, "trace_only", False) and with_stack:
            warnings.warn("trace_only=True is incompatible with with_stack=True (stack traces "
                          "require event post-processing). Disabling trace_only.", stacklevel=3)
            experimental_config = copy.copy(experimental_config)
            experimental_config.trace_only = False
        self.experimental_config = experimental_config
        self.execution_trace_observer = execution_trace_observer
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.post_processing_timeout_s = post_processing_timeout_s
        self.jax_trace_dir = jax_trace_dir
        self.profiler: autograd_profiler.profile | None = None
        self.use_device = _activity_device(self.activities)
        self.preset_metadata: dict[str, str] = {}
        self._trace_metadata: dict[str, str] = {}
        self._trace_id: str | None = None
        self._window = (0.0, 0.0)
        self._earlier_events: list = []  # earlier cycles' events, kept with acc_events
        self._last_cycle: list = []  # the events of the last cycle: what a trace shows
        self._stopped = False  # the recorder has recorded and stopped since it was made
        self._recording = False  # between start_trace and stop_trace
        self._paused = False  # collection toggled off while recording
        self._annotations: autograd_profiler.emit_itt | None = None  # names in the jax trace

    def start(self) -> None:
        """Prepare and start recording a cycle."""
        self.prepare_trace()
        self.start_trace()

    def stop(self) -> None:
        """Stop recording the cycle."""
        self.stop_trace()

    def prepare_trace(self) -> None:
        """Make the cycle's recorder (nothing is recorded until ``start_trace``)."""
        if self.profiler is not None and not self.acc_events:
            warn_once("Warning: Profiler clears events at the end of each cycle. Only events "
                       "from the current cycle will be reported. To keep events across "
                       "cycles, set acc_events=True.")
        if self.profiler is None or not self.acc_events:
            self.profiler = self._new_recorder()
        self._trace_id = (self.custom_trace_id_callback() if self.custom_trace_id_callback
                          else f"{uuid.uuid4().int:032X}")

    def _new_recorder(self) -> autograd_profiler.profile:
        use_device = _traced_device(self.use_device)
        use_cpu = ProfilerActivity.CPU in self.activities
        recorder = autograd_profiler.profile(
            use_device=use_device, record_shapes=self.record_shapes, with_flops=self.with_flops,
            profile_memory=self.profile_memory, with_stack=self.with_stack,
            with_modules=self.with_modules, use_cpu=use_cpu,
            experimental_config=self.experimental_config, acc_events=self.acc_events,
            custom_trace_id_callback=self.custom_trace_id_callback,
            jax_trace_dir=self.jax_trace_dir)
        if not use_cpu and recorder.use_device is None:
            raise AssertionError("No activities specified for the profiler")
        if self.post_processing_timeout_s is not None and self.post_processing_timeout_s < 0:
            raise ValueError("post_processing_timeout_s must be non-negative")
        self._stopped = False
        return recorder

    def start_trace(self) -> None:
        """Start recording into the cycle's recorder."""
        if self.execution_trace_observer:
            self.execution_trace_observer.start()
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before starting trace")
        if self._stopped and not self.acc_events:  # restarted without a new cycle
            self.profiler = self._new_recorder()
        self._window = (_now_us(), _now_us())
        self.profiler.__enter__()
        if self.jax_trace_dir is not None:
            self._annotations = autograd_profiler.emit_itt()
            self._annotations.__enter__()
        self._recording, self._paused = True, False
        for flag in ("profile_memory", "with_stack", "record_shapes", "with_modules",
                     "with_flops"):
            if getattr(self, flag):
                self.add_metadata_json(flag, "1")
        for key, value in self.preset_metadata.items():
            self.add_metadata_json(key, value)

    def stop_trace(self) -> None:
        """Stop recording; the cycle's events become ``events()``."""
        if self.execution_trace_observer:
            self.execution_trace_observer.stop()
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before stopping trace")
        if self._annotations is not None:
            self._annotations.__exit__(None, None, None)
            self._annotations = None
        if not self._paused:
            self.profiler.__exit__(None, None, None)
        self._window = (self._window[0], _now_us())
        self._stopped, self._recording, self._paused = True, False, False
        events = self.profiler.function_events
        if events is None:
            return
        earlier = {id(e) for e in self._earlier_events}
        latest = [e for e in events if id(e) not in earlier]
        for event in latest:  # step ranges add up in tables as one row (trace_name keeps #N)
            if event.name.startswith(PROFILER_STEP_NAME + "#"):
                event.name = PROFILER_STEP_NAME + "*"
        events[:] = latest + self._earlier_events  # torch lists the latest cycle first
        self._last_cycle = latest
        if self.acc_events:
            self._earlier_events = list(events)

    def toggle_collection_dynamic(self, enable: bool, activities: Iterable[Any]) -> None:
        """Pause (``enable=False``) or resume recording ops while a cycle records; only
        ``ProfilerActivity.CPU`` is recorded apart (device work is in the ops' times).

        >>> import jaxgrad
        >>> from jaxgrad.profiler import ProfilerActivity, profile
        >>> x = jaxgrad.ones(2)
        >>> with profile() as prof:
        ...     _ = x * 2
        ...     prof.toggle_collection_dynamic(False, [ProfilerActivity.CPU])
        ...     _ = x + 2
        ...     prof.toggle_collection_dynamic(True, [ProfilerActivity.CPU])
        >>> [e.name for e in prof.events()]
        ['aten::mul']
        """
        if not self._recording or ProfilerActivity.CPU not in set(activities):
            return
        if enable and self._paused:
            self.profiler.__enter__()
        elif not enable and not self._paused:
            self.profiler.__exit__(None, None, None)
        self._paused = not enable

    def events(self) -> EventList:
        """The recorded (unaggregated) events of the last cycle (all cycles with
        ``acc_events``)."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before accessing events")
        if getattr(self.experimental_config, "trace_only", False):
            raise RuntimeError("events() is not available when trace_only=True in "
                               "ExperimentalConfig. Use export_chrome_trace() instead.")
        return self.profiler.function_events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """The events averaged by name (and input shapes, stack, overload if asked)."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before getting key averages")
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n,
                                          group_by_overload_name)

    def export_chrome_trace(self, path: str, use_python_export: bool = False) -> None:
        """Write the last cycle's events as a Chrome trace in Kineto's layout (gzipped if
        ``path`` ends in ``.gz``); ``use_python_export`` writes all of ``events()`` in the
        autograd profiler's plain layout instead."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting chrome trace")
        if use_python_export:
            self.profiler.export_chrome_trace(path)
            return
        trace = _chrome_trace(self._last_cycle, path, self._trace_metadata,
                              self._trace_id or "", self._window, self.record_shapes)
        with (gzip.open(path, "wt") if path.endswith(".gz") else open(path, "w")) as f:
            json.dump(trace, f)

    def add_metadata(self, key: str, value: str) -> None:
        """Add a string ``value`` under ``key`` to the trace file's metadata."""
        self._trace_metadata[key] = '"' + value.replace('"', '\\"') + '"'

    def add_metadata_json(self, key: str, value: str) -> None:
        """Add a JSON ``value`` under ``key`` to the trace file's metadata."""
        self._trace_metadata[key] = value

    def preset_metadata_json(self, key: str, value: str) -> None:
        """Metadata added to the trace when recording starts."""
        self.preset_metadata[key] = value


class profile(_KinetoProfile):
    """torch's ``torch.profiler.profile``: record ops, backward nodes and ``record_function``
    ranges in cycles driven by ``schedule`` and ``step()``, handing each finished cycle to
    ``on_trace_ready``. Without a schedule one cycle runs from ``start`` to ``stop``.
    ``jax_trace_dir`` (jaxgrad's own) also writes ``jax.profiler``'s trace of each recorded
    cycle there, with the recorded ranges named in it.

    >>> import jaxgrad
    >>> from jaxgrad.profiler import ProfilerActivity, profile, schedule
    >>> ready, x = [], jaxgrad.ones(2)
    >>> with profile(activities=[ProfilerActivity.CPU],
    ...              schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
    ...              on_trace_ready=lambda p: ready.append(p.step_num)) as prof:
    ...     for _ in range(6):
    ...         _ = x * 2
    ...         prof.step()
    >>> ready, [e.name for e in prof.events()]
    ([4], ['ProfilerStep*', 'aten::mul', 'ProfilerStep*', 'aten::mul'])
    """

    def __init__(self, *, activities: Iterable[Any] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[..., Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False, with_modules: bool = False,
                 experimental_config: Any = None, execution_trace_observer: Any = None,
                 acc_events: bool = False, use_cuda: bool | None = None,
                 custom_trace_id_callback: Callable[[], str] | None = None,
                 post_processing_timeout_s: float | None = None,
                 jax_trace_dir: str | None = None) -> None:
        named = _named_activities(activities)
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                          FutureWarning, stacklevel=2)
            (named.add if use_cuda else named.discard)(ProfilerActivity.CUDA)
        if not named:
            raise AssertionError("No valid profiler activities found")
        super().__init__(activities=activities, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config,
                         execution_trace_observer=execution_trace_observer,
                         acc_events=acc_events, custom_trace_id_callback=custom_trace_id_callback,
                         post_processing_timeout_s=post_processing_timeout_s,
                         jax_trace_dir=jax_trace_dir)
        self.record_steps = schedule is not None  # ProfilerStep#<n> ranges mark the steps
        self.schedule = schedule or _default_schedule_fn
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn: autograd_profiler.record_function | None = None
        self.current_action = self._scheduled(self.step_num)
        self._prev_schedule_action = self.current_action
        self.action_map = self._transitions()

    def _scheduled(self, step: int) -> ProfilerAction:
        action = self.schedule(step)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler "
                             "and must not be returned by a user-provided schedule")
        return action

    def _transitions(self) -> dict[tuple[ProfilerAction, ProfilerAction | None], list]:
        """What moving from one step's action to the next does (``None``: leaving)."""
        a = ProfilerAction
        prepare, start, stop, ready = (self.prepare_trace, self.start_trace, self.stop_trace,
                                       self._trace_ready)

        def incorrect(before: str, after: str) -> Callable[[], None]:
            return partial(warnings.warn, f"Incorrect schedule: {before} followed by {after}")

        recording = (a.RECORD, a.RECORD_AND_SAVE)
        table: dict[tuple[ProfilerAction, ProfilerAction | None], list] = {
            (a.NONE, a.WARMUP): [prepare],
            (a.WARMUP, a.NONE): [incorrect("WARMUP", "NONE"), start, stop],
            (a.RECORD, a.NONE): [incorrect("RECORD", "NONE"), stop],
            (a.RECORD, a.WARMUP): [incorrect("RECORD", "WARMUP"), stop],
            (a.RECORD_AND_SAVE, a.NONE): [stop, ready],
            (a.RECORD_AND_SAVE, a.WARMUP): [stop, ready, prepare],
            (a.WARMUP, None): [start, stop],
            (a.RECORD, None): [stop, ready],
            (a.RECORD_AND_SAVE, None): [stop, ready],
        }
        for action in recording:
            table[(a.NONE, action)] = [prepare, start]
            table[(a.WARMUP, action)] = [start]
            table[(a.RECORD_AND_SAVE, action)] = [stop, ready, prepare, start]
        return table

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if self.execution_trace_observer:
            self.execution_trace_observer.cleanup()

    def start(self) -> None:
        """Begin at the current step's action (recording if the schedule says so)."""
        self._transit_action(ProfilerAction.NONE, self.current_action)
        self._open_step_range()

    def stop(self) -> None:
        """End the current step and the cycle in progress (``on_trace_ready`` if it recorded)."""
        self._close_step_range()
        self._transit_action(self.current_action, None)
        self.current_action = self._prev_schedule_action

    def step(self) -> None:
        """Signal that the next step begins: act on the schedule's action for it.

        >>> import jaxgrad
        >>> from jaxgrad.profiler import profile, schedule
        >>> prof = profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=1))
        >>> prof.start()
        >>> prof.step()
        >>> prof.step_num, prof.current_action.name
        (1, 'RECORD_AND_SAVE')
        >>> prof.stop()
        """
        self._close_step_range()
        previous = self.current_action
        action = self._scheduled(self.step_num + 1)
        self.step_num += 1
        self.current_action = self._prev_schedule_action = action
        self._transit_action(previous, action)
        self._open_step_range()

    def _open_step_range(self) -> None:
        if self.record_steps:
            self.step_rec_fn = autograd_profiler.record_function(
                f"{PROFILER_STEP_NAME}#{self.step_num}")
            self.step_rec_fn.__enter__()

    def _close_step_range(self) -> None:
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None

    def set_custom_trace_id_callback(self, callback: Callable[[], str]) -> None:
        """The trace id maker for the next cycles."""
        self.custom_trace_id_callback = callback

    def get_trace_id(self) -> str | None:
        """The current cycle's trace id (``None`` before the first cycle)."""
        return None if self.profiler is None else self._trace_id

    def _trace_ready(self) -> None:
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action: ProfilerAction,
                        current_action: ProfilerAction | None) -> None:
        for action in self.action_map.get((prev_action, current_action), []):
            action()


def _named_activities(activities: Iterable[Any] | None) -> set[ProfilerActivity]:
    """The activities listed (plain or as keys of filters); all supported ones if none."""
    if activities is None:
        return supported_activities()
    named: set[ProfilerActivity] = set()
    for item in activities:
        if isinstance(item, ProfilerActivity):
            named.add(item)
        elif isinstance(item, dict):
            named.update(item)
    return named
