"""``autograd.profiler``: per-op and per-node CPU times, torch's tables and Chrome traces.

While a ``profile`` is active, ``_dispatch.apply`` reports every forward op (as
``aten::<op>``), ``_engine`` every backward node (``autograd::engine::evaluate_function:
<Node>`` around ``<Node>``), ``Function.apply`` its forward (the class name) and
``record_function`` user ranges. Each op blocks on its results, so the times are real times of
the XLA work, not of its asynchronous dispatch. The compiled backward is bypassed while
profiling, so that each node is timed as torch shows it. When no profile is active the only cost
on the op path is reading ``active``.

``profile(jax_trace_dir=...)`` additionally captures a ``jax.profiler`` trace (XLA-level detail,
viewable in TensorBoard/Perfetto).
"""

from __future__ import annotations

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

active: list[profile] = []  # the profiles recording now (module attribute: read on every op)
_ids = itertools.count()
_stacks = threading.local()


# --- events -----------------------------------------------------------------------------------

class Interval:
    """A time range in microseconds (torch's ``profiler_util.Interval``).

    >>> from jaxgrad._profiler import Interval
    >>> Interval(2.0, 5.5).elapsed_us()
    3.5
    """

    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = start, end

    def elapsed_us(self) -> float:
        """The length of the range, ``end - start``, in microseconds."""
        return self.end - self.start


def _format_time(time_us: float) -> str:
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_share(time_us: float, total_us: float) -> str:
    return "NaN" if total_us == 0 else f"{time_us * 100.0 / total_us:.2f}%"


class _TimeStrings:
    """The ``*_str`` and device-time attributes tables read (no device times: we block)."""

    self_device_time_total = device_time_total = device_time = 0.0
    self_cuda_time_total = cuda_time_total = 0.0

    @property
    def self_cpu_time_total_str(self) -> str:
        return _format_time(self.self_cpu_time_total)

    @property
    def cpu_time_total_str(self) -> str:
        return _format_time(self.cpu_time_total)

    @property
    def cpu_time_str(self) -> str:
        return _format_time(self.cpu_time)


class FunctionEvent(_TimeStrings):
    """One recorded range: an op, a backward node, a Function forward or a user range.

    >>> from jaxgrad._profiler import FunctionEvent
    >>> e = FunctionEvent("aten::mul", 0, start_us=10.0, end_us=25.0, input_shapes=[])
    >>> e.name, e.cpu_time_total, e.cpu_time_total_str
    ('aten::mul', 15.0, '15.000us')
    """

    __module__ = "jaxgrad.autograd.profiler_util"  # its public path, as torch prints it

    def __init__(self, name: str, thread: int, start_us: float, end_us: float,
                 input_shapes: list, is_user_annotation: bool = False) -> None:
        self.id = next(_ids)
        self.name = self.key = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes
        self.is_user_annotation = is_user_annotation
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.count = 1

    @property
    def cpu_time_total(self) -> float:
        """The event's whole duration in microseconds, children included."""
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:
        """The duration less that of the child events, in microseconds.

        >>> from jaxgrad._profiler import FunctionEvent
        >>> parent = FunctionEvent("outer", 0, 0.0, 10.0, [])
        >>> parent.cpu_children = [FunctionEvent("inner", 0, 2.0, 6.0, [])]
        >>> parent.self_cpu_time_total
        6.0
        """
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        """The same as ``cpu_time_total`` for a single event (one call)."""
        return self.cpu_time_total

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start:.3f} end_us={self.time_range.end:.3f} "
                f"cpu_children={[c.id for c in self.cpu_children]} thread={self.thread} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg(_TimeStrings):
    """Events with the same key (and input shapes, if grouped so) added up.

    >>> from jaxgrad._profiler import FunctionEvent, FunctionEventAvg
    >>> avg = FunctionEventAvg("aten::mul", [])
    >>> _ = avg.add(FunctionEvent("aten::mul", 0, 0.0, 4.0, []))
    >>> _ = avg.add(FunctionEvent("aten::mul", 0, 5.0, 7.0, []))
    >>> avg.count, avg.cpu_time_total, avg.cpu_time
    (2, 6.0, 3.0)
    """

    __module__ = "jaxgrad.autograd.profiler_util"  # its public path, as torch prints it

    def __init__(self, key: str, input_shapes: list) -> None:
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_parent = None

    def add(self, event: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        """Add an event's count and times into this average; returns ``self``."""
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        return self

    @property
    def cpu_time(self) -> float:
        """The mean total time per call in microseconds (0 when nothing was added)."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of events that prints as torch's profiler table.

    >>> from jaxgrad._profiler import EventList, FunctionEvent
    >>> events = EventList([FunctionEvent("a", 0, 0.0, 3.0, []),
    ...                     FunctionEvent("b", 0, 3.0, 4.0, [])])
    >>> events.self_cpu_time_total, [e.key for e in events.key_averages()]
    (4.0, ['a', 'b'])
    """

    __module__ = "jaxgrad.autograd.profiler_util"  # its public path, as torch prints it

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """torch's ``key_averages().table(...)`` layout: Name, Self CPU %, Self CPU, ..."""
        return _build_table(self, sort_by, row_limit, max_name_column_width,
                            max_shapes_column_width, header, top_level_events_only, time_unit)

    def key_averages(self, group_by_input_shapes: bool = False) -> EventList:
        """One ``FunctionEventAvg`` per name (and per input shapes if asked), first-seen order."""
        groups: dict[tuple, FunctionEventAvg] = {}
        for event in self:
            shapes = event.input_shapes if group_by_input_shapes else []
            key = (event.key, str(shapes))
            if key not in groups:
                groups[key] = FunctionEventAvg(event.key, shapes)
            groups[key].add(event)
        return EventList(groups.values())

    def total_average(self) -> FunctionEventAvg:
        """All events added up into one ``FunctionEventAvg`` keyed ``"Total"``.

        >>> from jaxgrad._profiler import EventList, FunctionEvent
        >>> total = EventList([FunctionEvent("a", 0, 0.0, 3.0, [])] * 2).total_average()
        >>> total.key, total.count, total.cpu_time_total
        ('Total', 2, 6.0)
        """
        total = FunctionEventAvg("Total", [])
        for event in self:
            total.add(event)
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
                  "dur": e.cpu_time_total, "args": {"Input Dims": e.input_shapes}}
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
        row = [name, _format_share(e.self_cpu_time_total, total), fmt(e.self_cpu_time_total),
               _format_share(e.cpu_time_total, total), fmt(e.cpu_time_total), fmt(e.cpu_time),
               e.count]
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
    """An open range: pushed on this thread's stack, closed into a FunctionEvent."""

    __slots__ = ("children", "input_shapes", "is_user_annotation", "name", "start")

    def __init__(self, name: str, input_shapes: list, is_user_annotation: bool) -> None:
        self.name, self.input_shapes = name, input_shapes
        self.is_user_annotation = is_user_annotation
        self.children: list[FunctionEvent] = []
        self.start = _now_us()
        _stack().append(self)

    def close(self) -> None:
        stack = _stack()
        stack.remove(self)
        event = FunctionEvent(self.name, threading.get_ident(), self.start, _now_us(),
                              self.input_shapes, self.is_user_annotation)
        event.cpu_children = self.children
        for child in self.children:
            child.cpu_parent = event
        if stack:
            stack[-1].children.append(event)
        for prof in active:
            prof._events.append(event)


def _array(value: Any) -> jax.Array | None:
    """The array of a tensor (anything with a ``_value`` array: this layer knows no Tensor)."""
    array = getattr(value, "_value", None)
    return array if isinstance(array, jax.Array) else None


def _shapes(args: tuple) -> list:
    if not any(p.record_shapes for p in active):
        return []
    return [list(array.shape) if (array := _array(a)) is not None else [] for a in args]


def _block(result: Any) -> Any:
    """Wait for the arrays behind ``result`` so the range measures the work itself."""
    items = result if isinstance(result, (tuple, list)) else (result,)
    jax.block_until_ready([a for a in map(_array, items) if a is not None])
    return result


def record_op(name: str, args: tuple, run: Callable[[], Any]) -> Any:
    """Run ``run()`` as a range called ``name`` (an op, a node or a Function forward).

    >>> import jaxgrad
    >>> from jaxgrad._profiler import profile, record_op
    >>> with profile() as prof:
    ...     y = record_op("my_op", (), lambda: jaxgrad.ones(2))
    >>> [e.name for e in prof.function_events], y
    (['my_op'], tensor([1., 1.]))
    """
    rng = _Range(name, _shapes(args), False)
    try:
        return _block(run())
    finally:
        rng.close()


def record_node(name: str, run: Callable[[], Any]) -> Any:
    """A backward node, as torch shows it: evaluate_function around the node itself.

    >>> from jaxgrad._profiler import profile, record_node
    >>> with profile() as prof:
    ...     _ = record_node("MyBackward", lambda: None)
    >>> [e.name for e in prof.function_events]
    ['autograd::engine::evaluate_function: MyBackward', 'MyBackward']
    """
    outer = _Range(f"autograd::engine::evaluate_function: {name}", [], False)
    try:
        return record_op(name, (), run)
    finally:
        outer.close()


# --- public API ---------------------------------------------------------------------------------

class record_function(ContextDecorator):
    """A user-named range in the profile, as a context manager or a decorator.

    >>> import jaxgrad
    >>> from jaxgrad.autograd.profiler import profile, record_function
    >>> with profile() as prof:
    ...     with record_function("my_block"):
    ...         y = jaxgrad.ones(2) * 2
    >>> [e.name for e in prof.function_events]
    ['my_block', 'aten::mul']
    """

    __module__ = "jaxgrad.autograd.profiler"  # its public path, as torch prints it

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name, self.args = name, args
        self._range: _Range | None = None

    def __enter__(self) -> record_function:
        if active:
            self._range = _Range(self.name, [], True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._range is not None:
            self._range.close()
            self._range = None


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

    __module__ = "jaxgrad.autograd.profiler"  # its public path, as torch prints it

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 use_device: str | None = None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = True,
                 use_cpu: bool = True, experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None, jax_trace_dir: str | None = None) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes
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
            sorted(self._events, key=lambda e: (e.time_range.start, -e.time_range.end)))

    def _results(self) -> EventList:
        return self.function_events  # None before/without recording: torch's AttributeError

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        """Events averaged by name (``group_by_input_shape`` splits them by shapes too)."""
        return self._results().key_averages(group_by_input_shape)

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


def profiler_enabled() -> bool:
    """Whether a ``profile`` is recording now (torch's ``autograd._profiler_enabled``).

    >>> import jaxgrad
    >>> from jaxgrad._profiler import profiler_enabled
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
