"""``TaskSpec`` and ``Measurement``: what a :class:`~jaxgrad.utils.benchmark.Timer` measured,
printed as torch's ``torch.utils.benchmark`` prints it (median, interquartile range, how many
measurements of how many runs, and torch's warnings when the spread is wide).

Ported from torch's ``torch/utils/benchmark/utils/common.py`` (BSD licence), with the standard
library's arithmetic in place of torch's (quantiles interpolate linearly, as ``torch.quantile``).

>>> from jaxgrad.utils.benchmark.utils.common import Measurement, TaskSpec
>>> m = Measurement(number_per_run=10, raw_times=[2e-5, 3e-5, 4e-5],
...                 task_spec=TaskSpec(stmt="x + 1", setup="pass"))
>>> print(repr(m).split("\\n", 1)[1])  # after the "<... object at 0x...>" line
x + 1
  Median: 3.00 us
  3 measurements, 10 runs per measurement, 1 thread
  WARNING: Interquartile range is 33.3% of the median measurement.
           This suggests significant environmental influence.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import statistics
import textwrap
from collections.abc import Iterable
from typing import Any

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig",
           "ordered_unique"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer runs and how it is labelled (everything but its globals).

    >>> from jaxgrad.utils.benchmark.utils.common import TaskSpec
    >>> TaskSpec(stmt="x * 2", setup="pass", label="Scale", sub_label="float").title
    'Scale: float'
    """

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (or the statement) and the sub-label."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return (f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n"
                f"{textwrap.indent(self.stmt, '  ')}")

    def setup_str(self) -> str:
        """The setup as the summary shows it (nothing for ``pass``)."""
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The title, description and setup: the first lines of a Measurement's repr."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join([f"{i}\n" if "\n" in i else i for i in sections if i])


_TASKSPEC_FIELDS = tuple(i.name for i in dataclasses.fields(TaskSpec))


def _quantile(ordered: tuple[float, ...], q: float) -> float:
    """``torch.quantile``'s linear interpolation over sorted values."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The times of one or more blocks of ``number_per_run`` runs of a statement (seconds per
    block in ``raw_times``, per run in ``times``), with their median, mean and spread.

    >>> from jaxgrad.utils.benchmark.utils.common import Measurement, TaskSpec
    >>> m = Measurement(number_per_run=100, raw_times=[1e-3, 2e-3, 3e-3, 4e-3],
    ...                 task_spec=TaskSpec(stmt="pass", setup="pass"))
    >>> m.times, m.median, m.mean, round(m.iqr, 12)
    ([1e-05, 2e-05, 3e-05, 4e-05], 2.5e-05, 2.5e-05, 1.5e-05)
    """

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None  # reserved for user payloads

    def __post_init__(self) -> None:
        self._sorted_times: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median: float = -1.0
        self._mean: float = -1.0
        self._p25: float = -1.0
        self._p75: float = -1.0

    def __getattr__(self, name: str) -> Any:
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self) -> list[float]:
        """Seconds per run, one per measurement."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """An estimate of how many significant figures the median has (1 to 4), from the
        interquartile points' spread."""
        self._lazy_init()
        n_total = len(self._sorted_times)
        points = self._sorted_times[n_total // 4:math.ceil(3 * n_total / 4)]
        std = statistics.pstdev(points) if points else 0.0
        confidence_interval = max(1.645 * std / math.sqrt(len(points)),
                                  _MIN_CONFIDENCE_INTERVAL)
        figures = math.floor(math.log10(self._median / confidence_interval))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self) -> None:
        if self.raw_times and not self._sorted_times:
            self._sorted_times = tuple(sorted(self.times))
            self._median = _quantile(self._sorted_times, 0.5)
            self._mean = math.fsum(self._sorted_times) / len(self._sorted_times)
            self._p25 = _quantile(self._sorted_times, 0.25)
            self._p75 = _quantile(self._sorted_times, 0.75)

            def add_warning(msg: str) -> None:
                rel_iqr = self.iqr / self.median * 100
                self._warnings += (f"  WARNING: Interquartile range is {rel_iqr:.1f}% "
                                   f"of the median measurement.\n           {msg}",)

            if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
                add_warning("This suggests significant environmental influence.")
            elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
                add_warning("This could indicate system fluctuation.")

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """Whether the interquartile range is under ``threshold`` times the median."""
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str | None:
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._lazy_init()
        skip_line, newline = "MEASUREMENT_REPR_SKIP_LINE", "\n"
        n = len(self._sorted_times)
        time_unit, time_scale = select_unit(self._median)
        iqr_filter = "" if n >= 4 else skip_line
        threads = self.task_spec.num_threads
        repr_str = f"""
{super().__repr__()}
{self.task_spec.summarize()}
  {'Median: ' if n > 1 else ''}{self._median / time_scale:.2f} {time_unit}
  {iqr_filter}IQR:    {self.iqr / time_scale:.2f} {time_unit} ({self._p25 / time_scale:.2f} to {self._p75 / time_scale:.2f})
  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs {'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}
{newline.join(self._warnings)}""".strip()  # noqa: E501 (torch's template, line for line)
        return "\n".join(line for line in repr_str.splitlines(keepends=False)
                         if skip_line not in line)

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """Replicates of one task merged into one Measurement of single runs (metadata
        dropped).

        >>> from jaxgrad.utils.benchmark.utils.common import Measurement, TaskSpec
        >>> spec = TaskSpec(stmt="pass", setup="pass")
        >>> a = Measurement(2, [4e-6], spec); b = Measurement(1, [1e-6], spec)
        >>> [m.times for m in Measurement.merge([a, b])]
        [[2e-06, 1e-06]]
        """
        grouped: collections.defaultdict[TaskSpec, list[Measurement]] = \
            collections.defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].append(m)
        return [Measurement(number_per_run=1, raw_times=[t for m in group for t in m.times],
                            task_spec=spec, metadata=None)
                for spec, group in grouped.items()]


def select_unit(t: float) -> tuple[str, float]:
    """The unit that prints ``t`` seconds with a small number, and its scale.

    >>> from jaxgrad.utils.benchmark.utils.common import select_unit
    >>> select_unit(3.2e-5)
    ('us', 1e-06)
    """
    magnitude = int(math.log10(t) // 3) if t > 0 else -4
    time_unit = {-3: "ns", -2: "us", -1: "ms"}.get(magnitude, "s")
    time_scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[time_unit]
    return time_unit, time_scale


def unit_to_english(u: str) -> str:
    """A unit's English name.

    >>> from jaxgrad.utils.benchmark.utils.common import unit_to_english
    >>> unit_to_english("us")
    'microsecond'
    """
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures.

    >>> from jaxgrad.utils.benchmark.utils.common import trim_sigfig
    >>> trim_sigfig(3.14159, 2)
    3.1
    """
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = math.ceil(math.log10(abs(x)))
    scale = 10 ** (magnitude - n)
    return float(round(x / scale) * scale)


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    """The distinct elements, in their first order.

    >>> from jaxgrad.utils.benchmark.utils.common import ordered_unique
    >>> ordered_unique([3, 1, 3, 2, 1])
    [3, 1, 2]
    """
    return list(dict.fromkeys(elements))
