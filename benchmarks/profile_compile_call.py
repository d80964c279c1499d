"""Where a compiled step's per-call time goes (issue 23): cProfile over repeated calls of the
tiny step ``w * x + 1`` or the MLP 784-512-512-10 SGD step at batch 8, after their trace.

    python benchmarks/profile_compile_call.py [tiny|mlp] [--calls N] [--sort cumulative|tottime]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import jaxgrad


def _tiny():
    w, x = jaxgrad.ones(4), jaxgrad.ones(4)
    step = jaxgrad.compile(lambda x: w * x + 1)
    return lambda: step(x)


def _mlp():
    from bench_compile import _jaxgrad_step, _problem

    layers, _, (gx, gy), _ = _problem(8)
    step = _jaxgrad_step(layers, "sgd", compiled=True)
    return lambda: step(gx, gy)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("workload", choices=["tiny", "mlp"], nargs="?", default="tiny")
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--sort", choices=["cumulative", "tottime"], default="cumulative")
    args = parser.parse_args()
    call = _tiny() if args.workload == "tiny" else _mlp()
    for _ in range(10):
        call().jax().block_until_ready()
    start = time.perf_counter()
    for _ in range(args.calls):
        call().jax().block_until_ready()
    print(f"{args.workload}: {(time.perf_counter() - start) / args.calls * 1e6:.1f} us per call")
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(args.calls):
        call()
    profile.disable()
    pstats.Stats(profile).sort_stats(args.sort).print_stats(25)


if __name__ == "__main__":
    main()
