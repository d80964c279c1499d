"""Per-op dispatch and a 150-op forward+backward chain, for comparing two versions of jaxgrad
in alternating processes (the same package cannot be imported twice in one process). Medians
of 7 rounds, GC off as timeit does. Run, e.g. against a worktree of an older commit:

    for i in 1 2 3; do PYTHONPATH=/tmp/old/src python benchmarks/bench_dispatch.py old
                       PYTHONPATH=src python benchmarks/bench_dispatch.py new; done
"""

from __future__ import annotations

import gc
import statistics
import sys
import time

import jaxgrad

gc.disable()
x = jaxgrad.ones(4, requires_grad=True)
y = jaxgrad.ones(4)


def med(fn, inner=2000, rounds=7):
    """Median over ``rounds`` of the mean time (us) of ``inner`` calls."""
    for _ in range(200):
        fn()
    ts = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        ts.append((time.perf_counter()-t)/inner*1e6)
    return statistics.median(ts)


def chain():
    """50 x (mul by a scalar, sin, add, tanh) on (64,), then backward."""
    h = jaxgrad.ones(64, requires_grad=True)
    for _ in range(50):
        h = (h * 1.01).sin() + h
        h = h.tanh()
    h.sum().backward()


def hooked_sum_backward():
    """A hook keeps the graph on the eager engine: mul, sum's expand-view gradient, the hook."""
    h = x * 2.0
    h.register_hook(lambda g: None)
    h.sum().backward()


z = jaxgrad.ones(4)
label = sys.argv[1] if len(sys.argv) > 1 else "jaxgrad"
print(f"{label} mul {med(lambda: x * y):.2f} exp {med(lambda: x.exp()):.2f} add_scalar {med(lambda: x + 1.0):.2f} fn_exp {med(lambda: jaxgrad.exp(x)):.2f} "
      f"mul_ {med(lambda: z.mul_(1.0)):.2f} hooked_backward {med(hooked_sum_backward, inner=200):.0f} "
      f"chain {med(chain, inner=5, rounds=7):.0f}")
