"""Does ``import jaxgrad`` change a plain-JAX program in the same process?

A hand-written JAX MLP training step (``jnp`` defaults, no dtypes named: the way JAX users write
it) is timed in child processes, alternately without and with ``import jaxgrad`` before it, so
the two runs are interleaved. Each child reports the dtype of its parameters and the median step
time; the table gives medians over rounds and the median per-round ratio.

    PYTHONPATH=src python benchmarks/bench_import_side_effects.py --rounds 6
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
if sys.argv[1] == "with":
    import jaxgrad  # noqa: F401
import jax, jax.numpy as jnp

def init(key, sizes):
    params = []
    for din, dout in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        params.append((jax.random.normal(sub, (din, dout)) / jnp.sqrt(din), jnp.zeros(dout)))
    return params

def loss(params, x, y):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return jnp.mean((x @ w + b - y) ** 2)

@jax.jit
def step(params, x, y):
    g = jax.grad(loss)(params, x, y)
    return jax.tree.map(lambda p, d: p - 0.01 * d, params, g)

params = init(jax.random.key(0), [784, 512, 512, 10])
x = jnp.ones((128, 784)); y = jnp.zeros((128, 10))
params = step(params, x, y); jax.block_until_ready(params)
times = []
for _ in range(int(sys.argv[2])):
    t0 = time.perf_counter(); params = step(params, x, y); jax.block_until_ready(params)
    times.append(time.perf_counter() - t0)
times.sort()
print(json.dumps({"ms": 1e3 * times[len(times) // 2], "dtype": str(params[0][0].dtype),
                  "arange": str(jnp.arange(3).dtype)}))
"""


def child(mode: str, steps: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(steps)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {"without": [], "with": []}
    ratios = []
    for r in range(args.rounds):
        order = ("without", "with") if r % 2 == 0 else ("with", "without")
        got = {mode: child(mode, args.steps) for mode in order}
        for mode in order:
            runs[mode].append(got[mode])
        ratios.append(got["with"]["ms"] / got["without"]["ms"])
    print("| plain-JAX MLP step (784-512-512-10, B=128) | median ms | param dtype | arange dtype |")
    print("|---|---|---|---|")
    for mode in ("without", "with"):
        ms = statistics.median(run["ms"] for run in runs[mode])
        label = "import jaxgrad first" if mode == "with" else "jax alone"
        print(f"| {label} | {ms:.2f} | {runs[mode][0]['dtype']} | {runs[mode][0]['arange']} |")
    print(f"\nwith / without, median of per-round ratios: {statistics.median(ratios):.3f}x "
          f"({args.rounds} rounds)")


if __name__ == "__main__":
    main()
