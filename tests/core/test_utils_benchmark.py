"""``utils.benchmark``: Timer and Measurement against torch's, by structure (the repr's lines
with numbers masked, attributes, ``number_per_run``), never by timings; and the timed regions
wait for jaxgrad's asynchronously dispatched work."""

from __future__ import annotations

import re
import time

import pytest

import jaxgrad
from differential import torch
from jaxgrad.utils.benchmark import Measurement, Timer
from jaxgrad.utils.benchmark.utils.common import TaskSpec

tb = pytest.importorskip("torch.utils.benchmark")


def _mask(text: str) -> list[str]:
    """The repr's lines, numbers and addresses masked, torch spelled jaxgrad."""
    text = re.sub(r"0x[0-9a-f]+", "0x?", text.replace("torch", "jaxgrad"))
    text = re.sub(r"\d+(\.\d+)?", "N", text)
    return [re.sub(r"\b(ns|us|ms|s)\b", "UNIT", line) for line in text.splitlines()]


KWARGS = [{}, {"label": "Lbl", "sub_label": "sub", "description": "desc", "setup": "y = 1",
               "num_threads": 2},
          {"sub_label": "s", "setup": "y = 1\nz = 2"}]


@pytest.mark.parametrize("kwargs", KWARGS)
def test_timeit_repr_and_attributes(kwargs):
    ours = Timer("x * 2", globals={"x": jaxgrad.ones(8)}, **kwargs).timeit(7)
    theirs = tb.Timer("x * 2", globals={"x": torch.ones(8)}, **kwargs).timeit(7)
    assert _mask(repr(ours)) == _mask(repr(theirs))
    assert repr(ours).startswith("<jaxgrad.utils.benchmark.utils.common.Measurement object at ")
    for m in (ours, theirs):
        assert m.number_per_run == 7 and len(m.raw_times) == 1 and len(m.times) == 1
        assert m.times[0] == pytest.approx(m.raw_times[0] / 7)
        assert m.median == m.mean == m.times[0] and m.iqr == 0
    assert [ours.title, ours.stmt, ours.setup, ours.label, ours.num_threads, ours.env,
            ours.as_row_name] == [theirs.title, theirs.stmt, theirs.setup, theirs.label,
                                  theirs.num_threads, theirs.env, theirs.as_row_name]


def test_blocked_autorange_structure():
    ours = Timer("x + 1", globals={"x": jaxgrad.ones(4)}).blocked_autorange(min_run_time=0.02)
    theirs = tb.Timer("x + 1", globals={"x": torch.ones(4)}).blocked_autorange(
        min_run_time=0.02)
    for m in (ours, theirs):
        assert sum(m.raw_times) >= 0.02
        assert m.times == [t / m.number_per_run for t in m.raw_times]
        assert str(m.number_per_run).lstrip("1").strip("0") == ""  # a power of ten
    # the lines up to the counts (a WARNING may follow in either, depending on the machine)
    n = 5 if len(ours.times) >= 4 and len(theirs.times) >= 4 else None
    if n and len(ours.times) > 1 and len(theirs.times) > 1:
        assert _mask(repr(ours))[:n] == _mask(repr(theirs))[:n]


def test_adaptive_autorange_runs():
    m = Timer("x.sum()", globals={"x": jaxgrad.ones(4)}).adaptive_autorange(max_run_time=0.3)
    assert len(m.times) >= 1 and m.number_per_run >= 1 and m.median > 0


@pytest.mark.parametrize("raw,number", [([2e-5, 3e-5, 4e-5], 10),
                                        ([1e-3, 1.1e-3, 1.05e-3, 1.02e-3, 0.99e-3], 100),
                                        ([5.0, 1.0, 3.0, 2.0], 1), ([4e-9, 5e-9], 1000)])
def test_measurement_statistics_and_repr_match_torch(raw, number):
    ours = Measurement(number, raw, TaskSpec("f(x)", "pass", label="L"))
    theirs = tb.Measurement(number, raw, tb.utils.common.TaskSpec("f(x)", "pass", label="L"))
    assert ours.median == pytest.approx(theirs.median)
    assert ours.mean == pytest.approx(theirs.mean)
    assert ours.iqr == pytest.approx(theirs.iqr, abs=1e-15)
    assert ours.has_warnings == theirs.has_warnings
    assert ours.significant_figures == theirs.significant_figures
    assert repr(ours).split("\n")[1:] == repr(theirs).split("\n")[1:]


def test_merge():
    spec, their_spec = TaskSpec("a", "pass"), tb.utils.common.TaskSpec("a", "pass")
    ours = Measurement.merge([Measurement(2, [4e-6], spec), Measurement(1, [1e-6], spec)])
    theirs = tb.Measurement.merge([tb.Measurement(2, [4e-6], their_spec),
                                   tb.Measurement(1, [1e-6], their_spec)])
    assert [(m.number_per_run, m.raw_times) for m in ours] == \
        [(m.number_per_run, m.raw_times) for m in theirs]


def test_errors_match_torch():
    for lib in (Timer, tb.Timer):
        with pytest.raises(ValueError, match=r"Currently only a `str` stmt is supported\."):
            lib(lambda: None)
        with pytest.raises(ValueError, match=r"global_setup is C\+\+ only"):
            lib("pass", global_setup="int x;")
        with pytest.raises(ValueError, match="Invalid language `fortran`"):
            lib("pass", language="fortran")
        with pytest.raises(NotImplementedError, match="blocked_autorange"):
            lib().repeat()


def test_statements_see_jaxgrad_and_torch_names():
    Timer("jaxgrad.ones(2) + torch.ones(2)").timeit(2)


def test_timed_region_waits_for_the_work():
    """A kernel that takes long: the time covers it, not only its dispatch."""
    x = jaxgrad.ones(1500, 1500)
    stmt = "y = x\nfor _ in range(4):\n    y = y @ x"
    Timer(stmt, globals={"x": x}).timeit(1)  # compiles
    start = time.perf_counter()
    (x @ x @ x @ x @ x).sum().item()
    blocking = time.perf_counter() - start
    measured = Timer(stmt, globals={"x": x}).timeit(1).raw_times[0]
    assert measured > 0.3 * blocking
