"""``Timer``: torch's ``torch.utils.benchmark.Timer`` for jaxgrad statements.

jaxgrad dispatches its kernels asynchronously (JAX's async dispatch), so a clock read right after
a statement returns would time the dispatch, not the work. The default clock of a ``Timer``
first waits for every local JAX device to finish what was queued on it (JAX runs a device's
computations in order: waiting for a fresh one there waits for those before it), as torch's
waits for CUDA; the timed region ends only when the statement's kernels have run.

Ported from torch's ``torch/utils/benchmark/utils/timer.py`` (BSD licence): Python statements
only (torch's C++ ``language`` and Callgrind are not available).

>>> import jaxgrad
>>> from jaxgrad.utils.benchmark import Timer
>>> m = Timer("x * 2", globals={"x": jaxgrad.ones(8)}).timeit(10)
>>> m.number_per_run, len(m.times), m.median > 0
(10, 1, True)
"""

from __future__ import annotations

import enum
import textwrap
import timeit
from collections.abc import Callable
from typing import Any, NoReturn

import jax
import jax.numpy as jnp

import jaxgrad as _jaxgrad

from . import common

__all__ = ["Timer", "timer", "Language"]


class Language(enum.Enum):
    """The languages of a statement (torch's enum): jaxgrad's Timer runs ``PYTHON`` only.

    >>> from jaxgrad.utils.benchmark import Language
    >>> Language.PYTHON
    <Language.PYTHON: 0>
    """

    PYTHON = 0
    CPP = 1


def synchronize() -> None:
    """Wait for the work queued on every local JAX device (and JAX's effects).

    >>> from jaxgrad.utils.benchmark.utils.timer import synchronize
    >>> synchronize()
    """
    jax.effects_barrier()
    jax.block_until_ready([jax.device_put(jnp.zeros(()), d) + 0 for d in jax.local_devices()])


def timer() -> float:
    """The default clock: ``timeit.default_timer`` read once the devices' queued work is done.

    >>> from jaxgrad.utils.benchmark.utils.timer import timer
    >>> timer() <= timer()
    True
    """
    synchronize()
    return timeit.default_timer()


class Timer:
    """Times a Python statement, as torch's ``Timer``: ``timeit(number)``,
    ``blocked_autorange()`` and ``adaptive_autorange()`` return a
    :class:`~jaxgrad.utils.benchmark.utils.common.Measurement`.

    ``globals`` gets ``jaxgrad`` (and ``torch``, naming jaxgrad too, for statements written for
    torch) unless it has them. ``num_threads`` is recorded and printed only: XLA sizes its own
    thread pool.

    >>> import jaxgrad
    >>> from jaxgrad.utils.benchmark import Timer
    >>> t = Timer("x.sum()", setup="x = jaxgrad.ones(64)", label="sum", description="ones")
    >>> m = t.blocked_autorange(min_run_time=0.01)
    >>> print(repr(m).splitlines()[0].startswith("<jaxgrad.utils.benchmark.utils.common."))
    True
    >>> m.title, m.number_per_run >= 1, m.mean > 0
    ('sum', True, True)
    """

    _timer_cls: type = timeit.Timer

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict[str, Any] | None = None,
                 label: str | None = None, sub_label: str | None = None,
                 description: str | None = None, env: str | None = None,
                 num_threads: int = 1, language: Language | str = Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._globals = dict(globals or {})
        if language in (Language.PYTHON, "py", "python"):
            self._globals.setdefault("jaxgrad", _jaxgrad)
            self._globals.setdefault("torch", _jaxgrad)
            self._language: Language = Language.PYTHON
            if global_setup:
                raise ValueError(
                    f"global_setup is C++ only, got `{global_setup}`. Most "
                    "likely this code can simply be moved to `setup`.")
        elif language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("jaxgrad's Timer times Python statements only: jaxgrad "
                                      "has no C++ API")
        else:
            raise ValueError(f"Invalid language `{language}`.")
        stmt = textwrap.dedent(stmt)
        stmt = (stmt[1:] if stmt and stmt[0] == "\n" else stmt).rstrip()
        setup = textwrap.dedent(setup)
        setup = (setup[1:] if setup and setup[0] == "\n" else setup).rstrip()
        self._timer = self._timer_cls(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(
            stmt=stmt, setup=setup, global_setup=global_setup, label=label, sub_label=sub_label,
            description=description, env=env, num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        # never return 0: a zero would break the ratios below
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """One measurement of ``number`` runs (after a warm-up of ``number // 100``, at least
        2, runs: jaxgrad compiles a kernel the first time it meets a shape).

        >>> import jaxgrad
        >>> from jaxgrad.utils.benchmark import Timer
        >>> m = Timer("x + 1", globals={"x": jaxgrad.ones(3)}).timeit(5)
        >>> m.number_per_run, len(m.raw_times)
        (5, 1)
        """
        self._timeit(number=max(int(number // 100), 2))
        return common.Measurement(number_per_run=number, raw_times=[self._timeit(number=number)],
                                  task_spec=self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        """Not provided (as in torch): see :meth:`blocked_autorange`.

        >>> from jaxgrad.utils.benchmark import Timer
        >>> Timer().repeat()
        Traceback (most recent call last):
        NotImplementedError: See `Timer.blocked_autorange.`
        """
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], NoReturn] | None = None) -> None:
        """Not provided (as in torch): see :meth:`blocked_autorange`.

        >>> from jaxgrad.utils.benchmark import Timer
        >>> Timer().autorange()
        Traceback (most recent call last):
        NotImplementedError: See `Timer.blocked_autorange.`
        """
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _threaded_measurement_loop(self, number: int, time_hook: Callable[[], float],
                                   stop_hook: Callable[[list[float]], bool],
                                   min_run_time: float, max_run_time: float | None = None,
                                   callback: Callable[[int, float], Any] | None = None,
                                   ) -> list[float]:
        total_time = 0.0
        can_stop = False
        times: list[float] = []
        while (total_time < min_run_time) or (not can_stop):
            time_spent = time_hook()
            times.append(time_spent)
            total_time += time_spent
            if callback:
                callback(number, time_spent)
            can_stop = stop_hook(times)
            if max_run_time and total_time > max_run_time:
                break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        overheads = sorted(self._timeit(0) for _ in range(5))
        overhead = overheads[2]
        number = 1
        while True:
            time_taken = self._timeit(number)
            relative_overhead = overhead / time_taken
            if relative_overhead <= 1e-4 and time_taken >= min_run_time / 1000:
                break
            if time_taken > min_run_time:
                break
            # avoid overflowing torch's C++ int in number * 10 (kept for the same block sizes)
            if number * 10 > 2147483647:
                break
            number *= 10
        return number

    def blocked_autorange(self, callback: Callable[[int, float], Any] | None = None,
                          min_run_time: float = 0.2) -> common.Measurement:
        """Blocks of runs, sized so that the clock's overhead is negligible, until at least
        ``min_run_time`` seconds have been measured; ``callback(number, seconds)`` sees each.

        >>> import jaxgrad
        >>> from jaxgrad.utils.benchmark import Timer
        >>> m = Timer("x @ x", globals={"x": jaxgrad.ones(4, 4)}).blocked_autorange(
        ...     min_run_time=0.01)
        >>> sum(m.raw_times) >= 0.01, m.times == [t / m.number_per_run for t in m.raw_times]
        (True, True)
        """
        number = self._estimate_block_size(min_run_time)
        times = self._threaded_measurement_loop(
            number, lambda: self._timeit(number), lambda times: True,
            min_run_time=min_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], Any] | None = None,
                           ) -> common.Measurement:
        """Blocks of runs until more than 3 of them have an interquartile range under
        ``threshold`` times their median (and ``min_run_time`` has passed), or
        ``max_run_time`` has.

        >>> import jaxgrad
        >>> from jaxgrad.utils.benchmark import Timer
        >>> m = Timer("x + x", globals={"x": jaxgrad.ones(2)}).adaptive_autorange(
        ...     max_run_time=0.2)
        >>> len(m.times) >= 1
        True
        """
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times: list[float]) -> bool:
            if len(times) > 3:
                return common.Measurement(number_per_run=number, raw_times=times,
                                          task_spec=self._task_spec
                                          ).meets_confidence(threshold=threshold)
            return False

        times = self._threaded_measurement_loop(
            number, lambda: self._timeit(number), stop_hook, min_run_time, max_run_time,
            callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)
