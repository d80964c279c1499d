"""``autograd.profiler``: per-op and per-node CPU times, torch's tables and Chrome traces.

While a ``profile`` is active, ``dispatch.apply`` reports every forward op (as
``aten::<op>``; a function torch implements as a composite op, ``composite``, one range
around the ops it dispatches), ``engine`` every backward node
(``autograd::engine::evaluate_function: <Node>`` around ``<Node>``), ``Function.apply`` its
forward (the class name) and ``record_function`` user ranges. Each op blocks on its results, so
the times are real times of the XLA work, not of its asynchronous dispatch. The compiled
backward is bypassed while profiling, so that each node is timed as torch shows it. When no
profile is active the only cost on the op path is reading ``active``.

``profile(jax_trace_dir=...)`` additionally captures a ``jax.profiler`` trace (XLA-level detail,
viewable in TensorBoard/Perfetto).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import json
import os
import threading
import time
import warnings
from collections.abc import Callable
from contextlib import ContextDecorator
from typing import Any

import jax

from .._core.jax_setup import x64_scope
from .._core.typename import public_path

active: list[profile] = []  # the profiles recording now (module attribute: read on every op)
_ids = itertools.count()
BACKWARD_SCOPE, USER_SCOPE = 1, 7  # torch's RecordScope.BACKWARD_FUNCTION and USER_SCOPE
_stacks = threading.local()


# --- events -----------------------------------------------------------------------------------

@public_path("jaxgrad.autograd.profiler_util")
class Interval:
    """A time range in microseconds (torch's ``profiler_util.Interval``).

    >>> from jaxgrad._engine.profiling import Interval
    >>> Interval(2.0, 5.5).elapsed_us()
    3.5
    """


    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = start, end

    def elapsed_us(self) -> float:
        """The length of the range, ``end - start``, in microseconds."""
        return self.end - self.start


def _format_time(time_us: float) -> str:
    """A time in microseconds as torch's tables print it.

    >>> from jaxgrad.autograd.profiler_util import _format_time
    >>> _format_time(12.5), _format_time(2500.0), _format_time(3.2e6)
    ('12.500us', '2.500ms', '3.200s')
    """
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us: float, total_us: float) -> str:
    return "NaN" if total_us == 0 else f"{time_us * 100.0 / total_us:.2f}%"


class _TimeStrings:
    """The ``*_str`` attributes and per-call averages tables read (from ``*_total`` and
    ``count``)."""

    @property
    def cpu_time(self) -> float:
        """The total CPU time per call, in microseconds."""
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self) -> float:
        """The total device time per call, in microseconds (0: ops block on their results, so
        device work is in the CPU times)."""
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    @property
    def self_cpu_time_total_str(self) -> str:
        return _format_time(self.self_cpu_time_total)

    @property
    def cpu_time_total_str(self) -> str:
        return _format_time(self.cpu_time_total)

    @property
    def cpu_time_str(self) -> str:
        return _format_time(self.cpu_time)

    @property
    def device_time_str(self) -> str:
        return _format_time(self.device_time)

    @property
    def device_time_total_str(self) -> str:
        return _format_time(self.device_time_total)

    @property
    def self_device_time_total_str(self) -> str:
        return _format_time(self.self_device_time_total)


@public_path("jaxgrad.autograd.profiler_util")
class FunctionEvent(_TimeStrings):
    """One recorded range: an op, a backward node, a Function forward or a user range.

    ``sequence_nr`` is the sequence number of the autograd node an op made (-1: none), and of
    a backward node's events; ``fwd_thread`` the thread of a backward node's forward; ``scope``
    1 for a backward node itself (torch's ``RecordScope.BACKWARD_FUNCTION``).

    >>> from jaxgrad.autograd.profiler_util import FunctionEvent
    >>> e = FunctionEvent(id=0, name="aten::mul", thread=0, start_us=10.0, end_us=25.0)
    >>> e.key, e.cpu_time_total, e.cpu_time_total_str, e.sequence_nr
    ('aten::mul', 15.0, '15.000us', -1)
    """


    def __init__(self, id: int, name: str, thread: int, start_us: float, end_us: float,
                 overload_name: str | None = None, fwd_thread: int | None = None,
                 input_shapes: list | None = None, stack: list | None = None, scope: int = 0,
                 use_device: str | None = None, cpu_memory_usage: int = 0,
                 device_memory_usage: int = 0, is_async: bool = False, is_remote: bool = False,
                 sequence_nr: int = -1, node_id: int = -1, is_legacy: bool = False,
                 flops: int | None = None, trace_name: str | None = None,
                 is_user_annotation: bool = False) -> None:
        self.id, self.node_id, self.name = id, node_id, name
        self.overload_name, self.trace_name = overload_name, trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread, self.fwd_thread = thread, fwd_thread
        self.count = 1
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.input_shapes = input_shapes
        self.stack, self.scope, self.use_device = stack, scope, use_device
        self.cpu_memory_usage, self.device_memory_usage = cpu_memory_usage, device_memory_usage
        self.is_async, self.is_remote, self.is_legacy = is_async, is_remote, is_legacy
        self.sequence_nr, self.flops = sequence_nr, flops
        self.is_user_annotation = is_user_annotation
        self.device_time_total = self.self_device_time_total = 0.0

    @property
    def key(self) -> str:
        """What ``key_averages`` groups by: the name."""
        return self.name

    @property
    def cpu_time_total(self) -> float:
        """The event's whole duration in microseconds, children included."""
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:
        """The duration less that of the child events, in microseconds (0 for async events).

        >>> from jaxgrad.autograd.profiler_util import FunctionEvent
        >>> parent = FunctionEvent(id=0, name="outer", thread=0, start_us=0.0, end_us=10.0)
        >>> parent.append_cpu_child(FunctionEvent(id=1, name="inner", thread=0, start_us=2.0,
        ...                                       end_us=6.0))
        >>> parent.self_cpu_time_total
        6.0
        """
        if self.is_async:
            return 0
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def append_cpu_child(self, child: FunctionEvent) -> None:
        """Add a direct child event (its range lies within this one's)."""
        if not isinstance(child, FunctionEvent):
            raise AssertionError("Expected child to be a FunctionEvent")
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent: FunctionEvent) -> None:
        """Set the event this one is a direct child of."""
        if not isinstance(parent, FunctionEvent):
            raise AssertionError("Expected parent to be a FunctionEvent")
        self.cpu_parent = parent

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} "
                f"overload_name={self.overload_name} device_type=DeviceType.CPU "
                f"node_id={self.node_id} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start} end_us={self.time_range.end} "
                f"cpu_children={[c.id for c in self.cpu_children]} "
                f"{self.use_device}_time={self.device_time_str} name={self.name} "
                f"thread={self.thread} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} "
                f"{self.use_device}_memory_usage={self.device_memory_usage} "
                f"is_async={self.is_async} is_remote={self.is_remote} seq_nr={self.sequence_nr} "
                f"is_legacy={self.is_legacy}>")


@public_path("jaxgrad.autograd.profiler_util")
class FunctionEventAvg(_TimeStrings):
    """Events with the same key (and input shapes, if grouped so) added up; the first event
    added gives the key and the descriptive fields.

    >>> from jaxgrad.autograd.profiler_util import FunctionEvent, FunctionEventAvg
    >>> avg = FunctionEventAvg()
    >>> _ = avg.add(FunctionEvent(id=0, name="aten::mul", thread=0, start_us=0.0, end_us=4.0))
    >>> _ = avg.add(FunctionEvent(id=1, name="aten::mul", thread=0, start_us=5.0, end_us=7.0))
    >>> avg.key, avg.count, avg.cpu_time_total, avg.cpu_time
    ('aten::mul', 2, 6.0, 3.0)
    """


    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0
        self.node_id = 0
        self.is_async = self.is_remote = self.is_legacy = False
        self.is_user_annotation = False
        self.use_device: str | None = None
        self.cpu_time_total = self.self_cpu_time_total = 0
        self.device_time_total = self.self_device_time_total = 0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.device_memory_usage = self.self_device_memory_usage = 0
        self.input_shapes: Any = None
        self.overload_name: str | None = None
        self.stack: list | None = None
        self.scope: int | None = None
        self.cpu_children: list | None = None
        self.cpu_parent: FunctionEvent | None = None
        self.flops = 0

    def add(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        """Add an event's (or another average's) count, times and memory; returns ``self``."""
        if self.key is None:
            self.key, self.node_id = other.key, other.node_id
            self.is_async, self.is_remote = other.is_async, other.is_remote
            self.cpu_parent, self.cpu_children = other.cpu_parent, other.cpu_children
            self.overload_name, self.input_shapes = other.overload_name, other.input_shapes
            self.stack, self.scope, self.is_legacy = other.stack, other.scope, other.is_legacy
            self.use_device = other.use_device
            self.is_user_annotation = other.is_user_annotation
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("Expected other to be a FunctionEvent or FunctionEventAvg")
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.count += other.count
        if other.flops is not None:
            self.flops = (self.flops or 0) + other.flops
        return self

    def __iadd__(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        return self.add(other)

    def __repr__(self) -> str:
        device = self.use_device or "cuda"
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str}  self_{device}_time="
                f"{self.self_device_time_total_str} {device}_time={self.device_time_str} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
                f"{device}_memory_usage={self.device_memory_usage}>")


@public_path("jaxgrad.autograd.profiler_util")
class EventList(list):
    """A list of events that prints as torch's profiler table.

    >>> from jaxgrad.autograd.profiler_util import EventList, FunctionEvent
    >>> events = EventList([FunctionEvent(id=0, name="a", thread=0, start_us=0.0, end_us=3.0),
    ...                     FunctionEvent(id=1, name="b", thread=0, start_us=3.0, end_us=4.0)])
    >>> events._build_tree()
    >>> events.self_cpu_time_total, [e.key for e in events.key_averages()]
    (4.0, ['a', 'b'])
    """


    def __init__(self, *args: Any, use_device: str | None = None, profile_memory: bool = False,
                 with_flops: bool = False) -> None:
        super().__init__(*args)
        self._use_device, self._profile_memory, self._with_flops = (
            use_device, profile_memory, with_flops)
        self._tree_built = False

    def _build_tree(self) -> None:
        self._populate_cpu_children()
        self._tree_built = True

    def _populate_cpu_children(self) -> None:
        """Make each event the child of the innermost event of its thread (and node) whose
        range contains it; ranges that only overlap stay unrelated (async events are left
        out)."""
        by_thread: dict[tuple, list] = {}
        for event in self:
            if not event.is_async:
                by_thread.setdefault((event.thread, event.node_id), []).append(event)
        for events in by_thread.values():
            events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
            open_events: list[FunctionEvent] = []
            for event in events:
                while open_events:
                    parent = open_events[-1]
                    if (event.time_range.start >= parent.time_range.end
                            or event.time_range.end > parent.time_range.end):
                        open_events.pop()
                        continue
                    parent.append_cpu_child(event)
                    if event.cpu_parent is not None:
                        raise AssertionError(
                            f"There is already a CPU parent event for {event.key}")
                    event.set_cpu_parent(parent)
                    break
                open_events.append(event)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """torch's ``key_averages().table(...)`` layout: Name, Self CPU %, Self CPU, ..."""
        return _build_table(self, sort_by, row_limit, max_name_column_width,
                            max_shapes_column_width, header, top_level_events_only, time_unit)

    def key_averages(self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """One ``FunctionEventAvg`` per name (and per input shapes, the first
        ``group_by_stack_n`` stack entries or the overload if asked), in first-seen order."""
        if not self._tree_built:
            raise AssertionError("Expected tree to be built before calling key_averages")
        groups: dict[tuple, FunctionEventAvg] = {}
        for event in self:
            key = (event.key, event.node_id, event.is_legacy, event.is_user_annotation)
            if group_by_overload_name:
                key += (event.overload_name,)
            if group_by_input_shapes:
                key += (str(event.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple((event.stack or [])[:group_by_stack_n])
            groups.setdefault(key, FunctionEventAvg()).add(event)
        averages = EventList(groups.values(), use_device=self._use_device,
                             profile_memory=self._profile_memory, with_flops=self._with_flops)
        for average in averages:
            average.stack = (average.stack or [])[:group_by_stack_n]
            if not group_by_input_shapes:
                average.input_shapes = ""
            if not group_by_overload_name:
                average.overload_name = ""
        return averages

    def total_average(self) -> FunctionEventAvg:
        """All events added up into one ``FunctionEventAvg`` keyed ``"Total"``.

        >>> from jaxgrad.autograd.profiler_util import EventList, FunctionEvent
        >>> event = FunctionEvent(id=0, name="a", thread=0, start_us=0.0, end_us=3.0)
        >>> total = EventList([event, event]).total_average()
        >>> total.key, total.count, total.cpu_time_total
        ('Total', 2, 6.0)
        """
        total = FunctionEventAvg()
        for event in self:
            total.add(event)
            total.key = None  # the next event's key is taken up, whatever it is
        total.key = "Total"
        return total

    @property
    def self_cpu_time_total(self) -> float:
        """The summed self CPU time of all events, in microseconds."""
        return sum(e.self_cpu_time_total for e in self)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (chrome://tracing, Perfetto)."""
        pid = os.getpid()
        trace = [{"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                  "name": e.name, "pid": pid, "tid": e.thread, "ts": e.time_range.start,
                  "dur": e.cpu_time_total, "args": {"Input Dims": e.input_shapes or []}}
                 for e in self]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)

    def __str__(self) -> str:
        return self.table()


def _build_table(events: list, sort_by, row_limit, name_width_limit, shapes_width_limit,
                 header, top_level_events_only, time_unit) -> str:
    if not events:
        return ""
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by.replace("cuda", "device")),
                        reverse=True)
    name_width = min(max(len(e.key) for e in events) + 4, name_width_limit)
    has_shapes = any(e.input_shapes for e in events)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
               "# of Calls"]
    widths = [name_width] + [12] * 6
    if has_shapes:
        shapes_width = min(max(len(str(e.input_shapes)) for e in events) + 4, shapes_width_limit)
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{:>" + str(w) + "}  " for w in widths)
    separator = "".join("-" * w + "  " for w in widths)
    total = sum(e.self_cpu_time_total for e in events)

    def fmt(time_us: float) -> str:
        scale = {"s": 1e6, "ms": 1e3, "us": 1.0}.get(time_unit)
        return _format_time(time_us) if scale is None else f"{time_us / scale:.3f}{time_unit}"

    lines = []
    if header is not None:
        lines += ["=" * (sum(widths) + 2 * len(widths) - 2), header]
    if top_level_events_only:
        lines += ["=" * (sum(widths) + 2 * len(widths) - 2),
                  "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key if len(e.key) < name_width_limit - 3 else e.key[:name_width_limit - 3] + "..."
        row = [name, _format_time_share(e.self_cpu_time_total, total),
               fmt(e.self_cpu_time_total), _format_time_share(e.cpu_time_total, total),
               fmt(e.cpu_time_total), fmt(e.cpu_time), e.count]
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        lines.append(row_format.format(*row))
    lines += [separator, f"Self CPU time total: {fmt(total)}"]
    return "".join(line + "\n" for line in lines)


# --- recording ----------------------------------------------------------------------------------

def _now_us() -> float:
    return time.perf_counter_ns() / 1e3


def _stack() -> list:
    stack = getattr(_stacks, "open", None)
    if stack is None:
        stack = _stacks.open = []
    return stack


class _Range:
    """An open range: pushed on this thread's stack, closed into a FunctionEvent that every
    active ``profile`` collects (an active ``emit_itt``/``emit_nvtx`` annotates it instead)."""

    __slots__ = ("annotations", "children", "fwd_thread", "id", "input_shapes",
                 "is_user_annotation", "name", "scope", "sequence_nr", "start")

    def __init__(self, name: str, input_shapes: list, is_user_annotation: bool = False,
                 sequence_nr: int = -1, fwd_thread: int = 0, scope: int = 0) -> None:
        self.id = next(_ids)
        self.name, self.input_shapes = name, input_shapes
        self.is_user_annotation = is_user_annotation
        self.sequence_nr, self.fwd_thread, self.scope = sequence_nr, fwd_thread, scope
        self.children: list[FunctionEvent] = []
        self.annotations = [a for a in (r._annotate(name) for r in active) if a is not None]
        self.start = _now_us()
        _stack().append(self)

    def close(self) -> None:
        end = _now_us()
        stack = _stack()
        stack.remove(self)
        for annotation in reversed(self.annotations):
            annotation.__exit__(None, None, None)
        event = FunctionEvent(self.id, self.name, threading.get_ident(), self.start, end,
                              overload_name="", fwd_thread=self.fwd_thread,
                              input_shapes=self.input_shapes, stack=[], scope=self.scope,
                              sequence_nr=self.sequence_nr, flops=0, trace_name=self.name,
                              is_user_annotation=self.is_user_annotation)
        for child in self.children:
            event.append_cpu_child(child)
            child.set_cpu_parent(event)
        if stack:
            stack[-1].children.append(event)
        for recorder in active:
            recorder._collect(event)


def _array(value: Any) -> jax.Array | None:
    """The array of a tensor (anything with a ``_value`` array: this layer knows no Tensor)."""
    array = getattr(value, "_value", None)
    return array if isinstance(array, jax.Array) else None


def _shapes(values: Any) -> list:
    if not any(r.record_shapes for r in active):
        return []
    return [list(array.shape) if (array := _array(a)) is not None else [] for a in values]


def _block(result: Any) -> Any:
    """Wait for the arrays behind ``result`` so the range measures the work itself."""
    items = result if isinstance(result, (tuple, list)) else (result,)
    jax.block_until_ready([a for a in map(_array, items) if a is not None])
    return result


def _sequence_nr(seq: float) -> int:
    """A node's sequence number as torch reports it (-1 for AccumulateGrad's, which is last)."""
    return int(seq) if seq != float("inf") else -1


def _new_node_sequence_nr(before: list, result: Any) -> int:
    """The sequence number of the node an op made for ``result`` (-1: it made none; an output
    whose history is that of an input, as before the op, is not new)."""
    items = result if isinstance(result, (tuple, list)) else (result,)
    for item in items:
        node = getattr(item, "_grad_node", None)
        if node is not None:
            return -1 if any(node is b for b in before) else _sequence_nr(node.seq)
    return -1


def record_op(name: str, args: tuple, run: Callable[[], Any]) -> Any:
    """Run ``run()`` as a range called ``name`` (an op or a Function forward), with the
    sequence number of the node it makes.

    >>> import jaxgrad
    >>> from jaxgrad._engine.profiling import profile, record_op
    >>> with profile() as prof:
    ...     y = record_op("my_op", (), lambda: jaxgrad.ones(2))
    >>> [(e.name, e.sequence_nr) for e in prof.function_events], y
    ([('my_op', -1), ('aten::ones', -1)], tensor([1., 1.]))
    """
    before = [getattr(a, "_grad_node", None) for a in args]
    rng = _Range(name, _shapes(args))
    try:
        result = _block(run())
        rng.sequence_nr = _new_node_sequence_nr(before, result)
        return result
    finally:
        rng.close()


def composite(name: str) -> Callable[[Callable], Callable]:
    """Decorate a function torch implements as a composite op (``aten::linear``: ``aten::t``,
    then ``aten::addmm`` or ``aten::matmul``) and that jaxgrad builds from the same ops: while
    profiling, a call is one range around the ranges of the ops it dispatches, with the input
    shapes of its tensor arguments and, as torch's, the sequence number of the first node made
    inside (-1: none).

    >>> import jaxgrad
    >>> from jaxgrad._engine.profiling import composite, profile
    >>> double_exp = composite("aten::double_exp")(lambda x: (x * 2).exp())
    >>> x = jaxgrad.ones(2, requires_grad=True)
    >>> with profile() as prof:
    ...     _ = double_exp(x)
    >>> outer, mul, exp = prof.function_events
    >>> outer.name, [c.name for c in outer.cpu_children]
    ('aten::double_exp', ['aten::mul', 'aten::exp'])
    >>> outer.sequence_nr == mul.sequence_nr == exp.sequence_nr - 1
    True
    """
    def decorate(fn: Callable) -> Callable:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def recorded(*args: Any, **kwargs: Any) -> Any:
            if not active:
                with x64_scope():
                    return fn(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()  # torch records every argument of the schema
            rng = _Range(name, _shapes(bound.arguments.values()))
            try:
                with x64_scope():
                    result = _block(fn(*args, **kwargs))
                made = [c.sequence_nr for c in rng.children if c.sequence_nr >= 0]
                rng.sequence_nr = min(made, default=-1)
                return result
            finally:
                rng.close()

        return recorded

    return decorate


def record_node(name: str, seq: float, grads: list, run: Callable[[], Any]) -> Any:
    """A backward node, as torch shows it: evaluate_function around the node itself (scope 1,
    the gradients it receives as input shapes), both with the node's sequence number.

    >>> from jaxgrad._engine.profiling import profile, record_node
    >>> with profile() as prof:
    ...     _ = record_node("MyBackward", 7, [], lambda: None)
    >>> [(e.name, e.sequence_nr, e.scope) for e in prof.function_events]
    [('autograd::engine::evaluate_function: MyBackward', 7, 0), ('MyBackward', 7, 1)]
    """
    seq = _sequence_nr(seq)
    thread = threading.get_ident() if seq >= 0 else 0  # the forward ran here (not recorded)
    outer = _Range(f"autograd::engine::evaluate_function: {name}", [], sequence_nr=seq,
                   fwd_thread=thread)
    try:
        inner = _Range(name, _shapes(grads), sequence_nr=seq, fwd_thread=thread,
                       scope=BACKWARD_SCOPE)
        try:
            return _block(run())
        finally:
            inner.close()
    finally:
        outer.close()


# --- public API ---------------------------------------------------------------------------------

@public_path("jaxgrad.autograd.profiler")
class record_function(ContextDecorator):
    """A user-named range in the profile, as a context manager or a decorator.

    >>> import jaxgrad
    >>> from jaxgrad.autograd.profiler import profile, record_function
    >>> x = jaxgrad.ones(2)
    >>> with profile() as prof:
    ...     with record_function("my_block"):
    ...         y = x * 2
    >>> [e.name for e in prof.function_events]
    ['my_block', 'aten::mul']
    """


    def __init__(self, name: str, args: str | None = None) -> None:
        self.name, self.args = name, args
        self._handle: RecordFunctionHandle | None = None

    def __enter__(self) -> record_function:
        self._handle = RecordFunctionHandle(self.name, self.args)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


class RecordFunctionHandle:
    """The open range ``_record_function_enter_new`` hands back (torch's
    ``torch.classes.profiler._RecordFunction``); ``_record_function_exit`` closes it."""

    def __init__(self, name: str, args: str | None) -> None:
        self._range = _Range(name, [], True, scope=USER_SCOPE) if active else None

    def close(self) -> None:
        if self._range is not None:
            self._range.close()
            self._range = None


def record_function_enter(name: str, args: str | None = None) -> RecordFunctionHandle:
    """Open a ``record_function`` range by hand (torch's legacy
    ``torch.ops.profiler._record_function_enter_new``); close it with
    :func:`record_function_exit`.

    >>> import jaxgrad
    >>> from jaxgrad.autograd.profiler import profile
    >>> with profile() as prof:
    ...     handle = jaxgrad.ops.profiler._record_function_enter_new("bar", None)
    ...     y = jaxgrad.ones(2) * 2
    ...     jaxgrad.ops.profiler._record_function_exit._RecordFunction(handle)
    >>> [e.name for e in prof.function_events][:2]
    ['bar', 'aten::ones']
    """
    return RecordFunctionHandle(name, args)


def record_function_exit(handle: RecordFunctionHandle) -> None:
    """Close a range :func:`record_function_enter` opened."""
    handle.close()


@public_path("jaxgrad.autograd.profiler")
class profile:
    """Record ops, backward nodes and ``record_function`` ranges with their CPU times.

    ``use_cuda``/``use_device`` are accepted as in torch; times always include the device work
    (each op blocks on its results). ``jax_trace_dir`` also writes a ``jax.profiler`` trace.

    >>> import jaxgrad
    >>> x = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> with jaxgrad.autograd.profiler.profile() as prof:
    ...     (x * 2).sum().backward()
    >>> [e.key for e in prof.key_averages()][:3]
    ['aten::mul', 'aten::sum', 'autograd::engine::evaluate_function: SumBackward0']
    """


    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 use_device: str | None = None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = True,
                 use_cpu: bool = True, experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None, jax_trace_dir: str | None = None) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory, self.with_flops, self.with_stack = (
            profile_memory, with_flops, with_stack)
        self.jax_trace_dir = jax_trace_dir
        self.use_device = use_device
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use "
                          "``use_device = 'cuda'`` instead.", FutureWarning, stacklevel=2)
            self.use_device = "cuda"
        if self.use_device == "cuda" and not any(
                d.platform == "gpu" for d in jax.devices()):
            warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
            self.use_device = None
        self._events: list[FunctionEvent] = []
        self.function_events: EventList | None = None

    def __enter__(self) -> profile:
        if self.enabled:
            if self.jax_trace_dir is not None:
                jax.profiler.start_trace(self.jax_trace_dir)
            active.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.enabled:
            return
        active.remove(self)
        if self.jax_trace_dir is not None:
            jax.profiler.stop_trace()
        self.function_events = EventList(
            sorted(self._events, key=lambda e: (e.time_range.start, -e.time_range.end, e.id)),
            use_device=self.use_device, profile_memory=self.profile_memory,
            with_flops=self.with_flops)
        self.function_events._tree_built = True  # children were linked as ranges closed

    def _annotate(self, name: str) -> None:
        """A range opens: a profile collects it when it closes (see ``_collect``)."""

    def _collect(self, event: FunctionEvent) -> None:
        self._events.append(event)

    def _results(self) -> EventList:
        return self.function_events  # None before/without recording: torch's AttributeError

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """Events averaged by name (``group_by_input_shape`` splits them by shapes too)."""
        return self._results().key_averages(group_by_input_shape, group_by_stack_n,
                                            group_by_overload_name)

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs: Any) -> str:
        """The recorded events as torch's profiler table (see ``EventList.table``).

        >>> import jaxgrad
        >>> with jaxgrad.autograd.profiler.profile() as prof:
        ...     _ = jaxgrad.ones(2) * 2
        >>> prof.table().splitlines()[1].split()[:4]
        ['Name', 'Self', 'CPU', '%']
        """
        return self._results().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def total_average(self) -> FunctionEventAvg:
        """All recorded events added up into one ``FunctionEventAvg`` keyed ``"Total"``.

        >>> import jaxgrad
        >>> with jaxgrad.autograd.profiler.profile() as prof:
        ...     _ = jaxgrad.ones(2) * 2
        >>> prof.total_average().count
        1
        """
        return self._results().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        """The summed self CPU time of the recorded events, in microseconds."""
        return self._results().self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        """Write a Chrome trace of the recorded events (chrome://tracing, Perfetto)."""
        self._results().export_chrome_trace(path)

    def __str__(self) -> str:
        return str(self.function_events)


class _Emitter:
    """While active, every range the profiler would record (ops, backward nodes, user ranges)
    is also a named range of ``jax.profiler``'s trace (``TraceAnnotation``): what torch's
    NVTX/ITT ranges are to its GPU and VTune timelines."""

    _kind = ""
    record_shapes = False

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self) -> _Emitter | None:
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError(f"{self._kind} annotation context manager is not reentrant")
        self.entered = True
        self._check_available()
        active.append(self)
        return self

    def __exit__(self, *exc: object) -> bool | None:
        if not self.enabled:
            return None
        active.remove(self)
        return False

    def _check_available(self) -> None:
        """Raise if the ranges have nowhere to go (the base class can always annotate)."""

    def _annotate(self, name: str) -> Any:
        annotation = jax.profiler.TraceAnnotation(name)
        annotation.__enter__()
        return annotation

    def _collect(self, event: FunctionEvent) -> None:
        """Emitters only annotate; the range's event is for profiles."""


@public_path("jaxgrad.autograd.profiler")
class emit_itt(_Emitter):
    """Mark every op, backward node and ``record_function`` range as a named range of the
    ``jax.profiler`` trace (torch marks them for Intel VTune's ITT).

    >>> import jaxgrad
    >>> with jaxgrad.autograd.profiler.emit_itt() as emitter:
    ...     y = jaxgrad.ones(2) + 1.0
    >>> emitter.entered
    True
    """

    _kind = "ITT"


@public_path("jaxgrad.autograd.profiler")
class emit_nvtx(_Emitter):
    """Mark every op, backward node and ``record_function`` range as a named range of the
    ``jax.profiler`` trace (torch emits them as NVTX ranges); needs a GPU, as torch's does.

    >>> import jaxgrad
    >>> with jaxgrad.autograd.profiler.emit_nvtx(enabled=False) as emitter:
    ...     emitter is None
    True
    """

    _kind = "NVTX"

    def _check_available(self) -> None:
        if not any(d.platform == "gpu" for d in jax.devices()):
            raise AssertionError("Torch not compiled with CUDA enabled")


def profiler_enabled() -> bool:
    """Whether a ``profile`` is recording now (torch's ``autograd._profiler_enabled``).

    >>> import jaxgrad
    >>> from jaxgrad._engine.profiling import profiler_enabled
    >>> with jaxgrad.autograd.profiler.profile():
    ...     inside = profiler_enabled()
    >>> inside, profiler_enabled()
    (True, False)
    """
    return any(isinstance(p, profile) for p in active)


def kineto_available() -> bool:
    """Whether torch's Kineto profiler library backs ``profile``: never here (jaxgrad records
    its own events, and ``jax.profiler`` gives the device-level trace).

    >>> import jaxgrad
    >>> jaxgrad.autograd.kineto_available()
    False
    """
    return False
