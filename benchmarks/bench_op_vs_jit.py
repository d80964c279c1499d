"""One eager op against one plain ``jax.jit`` call of the same computation, in one process: the
issue-24 target is ``x * y`` within 2x the jitted call. Mins over many short rounds (the most
robust figure on a noisy machine), GC off. Alternate trees in separate processes:

    for i in 1 2 3; do PYTHONPATH=/tmp/old/src python benchmarks/bench_op_vs_jit.py old
                       PYTHONPATH=src python benchmarks/bench_op_vs_jit.py new; done
"""

from __future__ import annotations

import gc
import sys
import time

import jax
import jax.numpy as jnp

import jaxgrad


def best(fn, inner: int = 500, rounds: int = 60) -> float:
    """The fastest round's mean time (us) of ``inner`` calls."""
    for _ in range(300):
        fn()
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t) / inner * 1e6)
    return min(times)


def main() -> None:
    gc.disable()
    x, y = jaxgrad.ones(4, requires_grad=True), jaxgrad.ones(4)
    jitted = jax.jit(lambda a, b: a * b)
    a, b = jnp.ones(4), jnp.ones(4)
    base = best(lambda: jitted(a, b))
    cases = {"mul": lambda: x * y, "mul_nograd": lambda: y * y, "exp": lambda: x.exp(),
             "mul_scalar": lambda: x * 2.0}
    label = sys.argv[1] if len(sys.argv) > 1 else "jaxgrad"
    row = " ".join(f"{k} {v:.2f} ({v / base:.1f}x)"
                   for k, v in ((k, best(fn)) for k, fn in cases.items()))
    print(f"{label} jax.jit {base:.2f} us | {row}")


if __name__ == "__main__":
    main()
