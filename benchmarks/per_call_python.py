"""The per-call Python of a compiled step without its XLA run (issue 23): each step's executable
is replaced, after its trace, by a function returning the outputs of one real run, so what is
timed is the signature check, the walk of the arguments, the write-back and the next call's
memo. The tiny step ``w * x + 1`` and the MLP 784-512-512-10 SGD step at batch 8; min and median
over rounds of 500 calls, the two steps interleaved.

    PYTHONPATH=src:benchmarks python benchmarks/per_call_python.py [--rounds 15]

(with ``PYTHONPATH=<another tree>/src:benchmarks`` for an older jaxgrad).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import jaxgrad
from bench_compile import _jaxgrad_step, _problem


def _without_xla(step: Any, call: Callable) -> Callable:
    """``call`` after its trace, its executable answering with the outputs of one real run."""
    for _ in range(4):
        call()
    entry = next(e for e in step._cache.values() if e.program is not None)
    real, outputs = entry.jitted, []

    def replayed(*inputs):
        if not outputs:
            outputs.append(real(*inputs))
        return outputs[0]

    entry.jitted = replayed
    return call


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    w, x = jaxgrad.ones(4), jaxgrad.ones(4)
    tiny = jaxgrad.compile(lambda x: w * x + 1)
    layers, _, (gx, gy), _ = _problem(8)
    mlp = _jaxgrad_step(layers, "sgd", compiled=True)
    calls = {"tiny step": _without_xla(tiny, lambda: tiny(x)),
             "MLP SGD step, B=8": _without_xla(mlp, lambda: mlp(gx, gy))}
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(args.rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            for _ in range(500):
                call()
            times[name].append((time.perf_counter() - start) / 500 * 1e6)
    for name, values in times.items():
        print(f"{name}: min {min(values):.1f} us, median {statistics.median(values):.1f} us")


if __name__ == "__main__":
    main()
