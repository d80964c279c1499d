"""A new Scalar argument each call (a scheduled learning rate in ``p.add_(g, alpha=-lr)``) must
reuse the compiled kernel. Median time per call on a 512x512 parameter, a new lr every call,
contenders interleaved; torch eager and a hand-written ``jax.jit`` (lr traced) for reference. Run:

    PYTHONPATH=src python benchmarks/bench_scalar_args.py [--calls 30]
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import torch

import jaxgrad


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=30)
    calls = parser.parse_args().calls
    p, g = jaxgrad.ones(512, 512), jaxgrad.full((512, 512), 1e-3)
    tp, tg = torch.ones(512, 512), torch.full((512, 512), 1e-3)
    jp, jg = p._value, g._value
    update = jax.jit(lambda p, g, lr: p - lr * g)
    contenders = {
        "torch eager": lambda lr: tp.add_(tg, alpha=-lr),
        "jax.jit": lambda lr: update(jp, jg, lr).block_until_ready(),
        "jaxgrad eager": lambda lr: p.add_(g, alpha=-lr)._value.block_until_ready(),
    }
    for run in contenders.values():
        run(0.5)  # compile once
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for i in range(calls):
        lr = 0.1 * (1 + i / 100)  # a scheduled learning rate: a new value every step
        for name, run in contenders.items():
            start = time.perf_counter()
            run(lr)
            times[name].append(time.perf_counter() - start)
    torch_median = statistics.median(times["torch eager"])
    for name, ts in times.items():
        median = statistics.median(ts)
        print(f"- {name:14s} median {median * 1e6:9.1f} us  x{median / torch_median:.2f} vs torch")


if __name__ == "__main__":
    main()
