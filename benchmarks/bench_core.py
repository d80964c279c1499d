"""Interleaved, in-process speed comparison: torch eager vs hand-written jax.jit vs jaxgrad.

Workloads (issue 2): per-op dispatch on tiny tensors; forward+backward of a 200-op elementwise
chain on shape (64,); an MLP 784-512-512-10 training step (B=8 and B=128) written with jaxgrad
ops by hand. Each round runs every contender once (in a rotating order) and we report the median
time per contender and the median of the per-round ratios. Run:

    python benchmarks/bench_core.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import torch

import jaxgrad

torch.set_num_threads(2)


def timed(fn: Callable[[], object], inner: int) -> float:
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - start) / inner


def compare(name: str, contenders: dict[str, Callable[[], object]], rounds: int,
            inner: int, reference: str = "torch eager") -> dict:
    for fn in contenders.values():  # warm up: compile caches, allocator
        for _ in range(3):
            fn()
    times: dict[str, list[float]] = {k: [] for k in contenders}
    names = list(contenders)
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for k in order:
            times[k].append(timed(contenders[k], inner))
    med = {k: statistics.median(v) for k, v in times.items()}
    ratios = {
        k: statistics.median(a / b for a, b in zip(times[k], times[reference]))
        for k in names if k != reference
    }
    jit_ratios = {}
    if "jax.jit" in times:
        jit_ratios = {
            k: statistics.median(a / b for a, b in zip(times[k], times["jax.jit"]))
            for k in names if k.startswith("jaxgrad")
        }
    return {"name": name, "median_s": med, "vs_ref": ratios, "vs_jit": jit_ratios,
            "reference": reference}


# --- workloads -------------------------------------------------------------------------------

def tiny_op(rounds: int) -> dict:
    tx, ty = torch.ones(4, requires_grad=True), torch.ones(4)
    gx, gy = jaxgrad.ones(4, requires_grad=True), jaxgrad.ones(4)
    return compare("per-op dispatch, x*y on (4,), x requires grad", {
        "torch eager": lambda: tx * ty,
        "jaxgrad eager": lambda: gx * gy,
    }, rounds, inner=2000)


def profiler_off(rounds: int) -> dict:
    """The op path with the profiler check (``apply``) vs without it (``_apply``)."""
    from jaxgrad._engine import dispatch as _dispatch
    from jaxgrad._ops import elementwise

    gx, gy = jaxgrad.ones(4, requires_grad=True), jaxgrad.ones(4)
    return compare("profiling off: x*y on (4,) through apply vs the unprofiled core", {
        "jaxgrad _apply": lambda: _dispatch._apply(elementwise.MUL, (gx, gy), (), {}),
        "jaxgrad apply": lambda: _dispatch.apply(elementwise.MUL, gx, gy),
    }, rounds, inner=2000, reference="jaxgrad _apply")


def _chain(x, sin, tanh, n: int = 200):
    for i in range(n):
        k = i % 4
        if k == 0:
            x = x * 1.001
        elif k == 1:
            x = sin(x)
        elif k == 2:
            x = x + 0.5
        else:
            x = tanh(x)
    return x.sum()


def chain(rounds: int) -> dict:
    rng = np.random.RandomState(0)
    data = rng.randn(64).astype(np.float32)
    tx = torch.tensor(data, requires_grad=True)
    gx = jaxgrad.tensor(data, requires_grad=True)
    jx = jnp.asarray(data)
    jit_grad = jax.jit(jax.value_and_grad(lambda v: _chain(v, jnp.sin, jnp.tanh)))

    def run_torch():
        tx.grad = None
        _chain(tx, torch.sin, torch.tanh).backward()

    def run_jaxgrad():
        gx.grad = None
        _chain(gx, jaxgrad.sin, jaxgrad.tanh).backward()
        gx.grad._value.block_until_ready()

    return compare("200-op elementwise chain (64,), forward+backward", {
        "torch eager": run_torch,
        "jax.jit": lambda: jit_grad(jx)[1].block_until_ready(),
        "jaxgrad eager": run_jaxgrad,
    }, rounds, inner=5)


def _mlp_params(lib, rng):
    shapes = [(784, 512), (512,), (512, 512), (512,), (512, 10), (10,)]
    arrays = [(rng.randn(*s) * 0.05).astype(np.float32) for s in shapes]
    if lib is jnp:
        return [jnp.asarray(a) for a in arrays]
    return [lib.tensor(a, requires_grad=True) for a in arrays]


def _mlp_loss(params, x, y, lib):
    w1, b1, w2, b2, w3, b3 = params
    h = (x @ w1 + b1).relu() if lib is not jnp else jax.nn.relu(x @ w1 + b1)
    h = (h @ w2 + b2).relu() if lib is not jnp else jax.nn.relu(h @ w2 + b2)
    logits = h @ w3 + b3
    if lib is jnp:
        logp = jax.nn.log_softmax(logits, axis=1)
        return -logp[jnp.arange(x.shape[0]), y].mean()
    logp = logits.log_softmax(1)
    return -logp[lib.arange(x.shape[0]), y].mean()


def mlp(batch: int, rounds: int) -> dict:
    rng = np.random.RandomState(0)
    xs = rng.randn(batch, 784).astype(np.float32)
    ys = rng.randint(0, 10, size=batch)
    tp, gp, jp = _mlp_params(torch, rng), _mlp_params(jaxgrad, rng), _mlp_params(jnp, rng)
    tx, ty = torch.tensor(xs), torch.tensor(ys)
    gx, gy = jaxgrad.tensor(xs), jaxgrad.tensor(ys)
    jx, jy = jnp.asarray(xs), jnp.asarray(ys)
    lr = 0.01

    def step(lib, params, x, y):
        loss = _mlp_loss(params, x, y, lib)
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= lr * p.grad
                p.grad = None
        return loss

    @jax.jit
    def jit_step(params, x, y):
        loss, grads = jax.value_and_grad(lambda p: _mlp_loss(p, x, y, jnp))(params)
        return [p - lr * g for p, g in zip(params, grads)], loss

    state = {"jp": jp}

    def run_jit():
        state["jp"], loss = jit_step(state["jp"], jx, jy)
        loss.block_until_ready()

    def run_jaxgrad():
        step(jaxgrad, gp, gx, gy)
        gp[0]._value.block_until_ready()

    return compare(f"MLP 784-512-512-10 SGD step, B={batch}", {
        "torch eager": lambda: step(torch, tp, tx, ty),
        "jax.jit": run_jit,
        "jaxgrad eager": run_jaxgrad,
    }, rounds, inner=3)


def report(results: list[dict]) -> str:
    lines = [f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, "
             f"jax {jax.__version__} ({jax.default_backend()}), torch {torch.__version__}", ""]
    for r in results:
        lines.append(f"## {r['name']}")
        for k, v in r["median_s"].items():
            extra = ""
            if k in r["vs_ref"]:
                extra += f"  x{r['vs_ref'][k]:.2f} vs {r['reference']}"
            if k in r["vs_jit"]:
                extra += f"  x{r['vs_jit'][k]:.2f} vs jax.jit"
            lines.append(f"- {k:15s} median {v * 1e6:10.1f} us{extra}")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    suites = {
        "tiny": lambda: tiny_op(args.rounds),
        "profiler_off": lambda: profiler_off(args.rounds),
        "chain": lambda: chain(args.rounds),
        "mlp8": lambda: mlp(8, args.rounds),
        "mlp128": lambda: mlp(128, args.rounds),
    }
    chosen = [s for s in suites if not args.only or s in args.only.split(",")]
    print(report([suites[s]() for s in chosen]))


if __name__ == "__main__":
    main()
