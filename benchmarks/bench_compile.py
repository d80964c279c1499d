"""jaxgrad.compile vs hand-written jax.jit vs eager (issue 12), interleaved in one process.

Workloads: the MLP 784-512-512-10 training step (nn.Sequential, cross_entropy, zero_grad,
backward, optimizer.step) at batch 8 and 128, with SGD (plain, against a hand-written
``jax.jit(value_and_grad)`` + SGD update) and with Adam (against the same with ``optax.adam``);
contenders: torch eager, jax.jit, the same jax.jit step also returning the gradients (the work a
torch-style step does: ``.grad`` is readable after ``step()``), jaxgrad eager, jaxgrad compiled.
Then the first call (trace + compile) of jaxgrad.compile against jax.jit's first call of the
same step, each on fresh functions. Every timed call waits for its result (block_until_ready / .item()).

    python benchmarks/bench_compile.py [--rounds 20] [--first-calls 5]
                                       [--only steps|xla|first|guards]

``--only xla`` times the compiled step's XLA executable alone against the hand-written ones.
``--only guards`` times per-call overhead (issue 23): a tiny step, a step reading one item of a
large global list (1,000 and 100,000 items), one appending its result to a history list and the
README demo's hooked step, each against the same step under hand-written ``jax.jit`` (and eager
jaxgrad), with the number of traces.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
import torch

import jaxgrad
from bench_core import compare

torch.set_num_threads(2)
SIZES = [(784, 512), (512, 512), (512, 10)]


def _initial(rng):
    """(weight (out, in), bias) arrays of each layer, float32."""
    return [((rng.randn(o, i) * 0.05).astype(np.float32), (rng.randn(o) * 0.05).astype(np.float32))
            for i, o in SIZES]


def _problem(batch: int) -> tuple:
    """The initial layers and one batch (x, y) as torch tensors, jaxgrad tensors, JAX arrays."""
    rng = np.random.RandomState(0)
    layers = _initial(rng)
    xs = rng.randn(batch, 784).astype(np.float32)
    ys = rng.randint(0, 10, size=batch)
    return (layers, (torch.tensor(xs), torch.tensor(ys)), (jaxgrad.tensor(xs), jaxgrad.tensor(ys)),
            (jnp.asarray(xs), jnp.asarray(ys)))


def _step(lib, layers, optimizer: str):
    """The training step, written once for torch and jaxgrad (only the module differs)."""
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    with lib.no_grad():
        for lin, (w, b) in zip(model[::2], layers):
            lin.weight.copy_(lib.tensor(w))
            lin.bias.copy_(lib.tensor(b))
    opt = (lib.optim.SGD(model.parameters(), lr=0.01) if optimizer == "sgd"
           else lib.optim.Adam(model.parameters(), lr=1e-3))

    def step(x, y):
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def _torch_step(layers, optimizer: str):
    return _step(torch, layers, optimizer)


def _jaxgrad_step(layers, optimizer: str, compiled: bool):
    step = _step(jaxgrad, layers, optimizer)
    return jaxgrad.compile(step) if compiled else step


def _jax_step(layers, optimizer: str, with_grads: bool = False):
    """The hand-written step; ``with_grads``: it also returns the gradients (what a torch-style
    step leaves in ``.grad``, so an XLA program of the same work as jaxgrad.compile's)."""
    params = [(jnp.asarray(w), jnp.asarray(b)) for w, b in layers]

    def loss_fn(params, x, y):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w.T + b
            if i < len(params) - 1:
                h = jax.nn.relu(h)
        return optax.softmax_cross_entropy_with_integer_labels(h, y).mean()

    if optimizer == "sgd":
        @jax.jit
        def update(params, x, y):
            loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
            new = jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)
            return (loss, new, grads) if with_grads else (loss, new)

        state = {"params": params}

        def step(x, y):
            loss, state["params"], *grads = update(state["params"], x, y)
            state["grads"] = grads
            return loss
        return step, update, (params,)

    tx = optax.adam(1e-3)

    @jax.jit
    def update_adam(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        new = optax.apply_updates(params, updates)
        return (loss, new, opt_state, grads) if with_grads else (loss, new, opt_state)

    state = {"params": params, "opt": tx.init(params)}

    def step_adam(x, y):
        loss, state["params"], state["opt"], *grads = update_adam(state["params"], state["opt"],
                                                                  x, y)
        state["grads"] = grads
        return loss
    return step_adam, update_adam, (params, state["opt"])


def steps(batch: int, optimizer: str, rounds: int) -> dict:
    layers, (tx, ty), (gx, gy), (jx, jy) = _problem(batch)
    torch_step = _torch_step(layers, optimizer)
    jax_step = _jax_step(layers, optimizer)[0]
    jax_grads_step = _jax_step(layers, optimizer, with_grads=True)[0]
    eager = _jaxgrad_step(layers, optimizer, compiled=False)
    compiled = _jaxgrad_step(layers, optimizer, compiled=True)
    result = compare(f"MLP 784-512-512-10 {optimizer.upper()} step, B={batch}", {
        "torch eager": lambda: torch_step(tx, ty).item(),
        "jax.jit": lambda: jax_step(jx, jy).block_until_ready(),
        "jax.jit, grads out": lambda: jax_grads_step(jx, jy).block_until_ready(),
        "jaxgrad eager": lambda: eager(gx, gy).jax().block_until_ready(),
        "jaxgrad compiled": lambda: compiled(gx, gy).jax().block_until_ready(),
    }, rounds, inner=20 if batch <= 8 else 5)
    med = result["median_s"]
    result["vs_grads_out"] = med["jaxgrad compiled"] / med["jax.jit, grads out"]
    return result


def first_calls(optimizer: str, repeats: int) -> dict:
    """Seconds to the steady state, the first two calls: jax.jit's trace + compile + two runs
    against jaxgrad.compile's (whose first call of a training step runs eagerly and whose second
    traces and compiles the steady state)."""
    layers, _, (gx, gy), (jx, jy) = _problem(128)
    times: dict[str, list[float]] = {"jax.jit": [], "jaxgrad compiled": []}
    for r in range(repeats):
        for name in (["jax.jit", "jaxgrad compiled"] if r % 2 == 0
                     else ["jaxgrad compiled", "jax.jit"]):
            if name == "jax.jit":
                step = _jax_step(layers, optimizer)[0]
                start = time.perf_counter()
                step(jx, jy).block_until_ready()
                step(jx, jy).block_until_ready()
            else:
                step = _jaxgrad_step(layers, optimizer, compiled=True)
                start = time.perf_counter()
                step(gx, gy).item()
                step(gx, gy).item()
            times[name].append(time.perf_counter() - start)
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = statistics.median(a / b for a, b in zip(times["jaxgrad compiled"], times["jax.jit"]))
    return {"name": f"first two calls (to the steady state), {optimizer.upper()}, B=128",
            "median_s": med, "vs_ref": {"jaxgrad compiled": ratio}, "vs_jit": {},
            "reference": "jax.jit"}


def xla_only(batch: int, rounds: int) -> dict:
    """The compiled step's XLA executable alone against the hand-written ones, all called on the
    same input arrays every time (so not chained through their updated parameters as the steps
    above are): is it the same XLA work?"""
    from jaxgrad._compile.state import StateWalk
    from jaxgrad._functions.random import default_generator

    layers, _, (gx, gy), (jx, jy) = _problem(batch)
    compiled = _jaxgrad_step(layers, "sgd", compiled=True)
    for _ in range(4):
        compiled(gx, gy)
    entry = list(compiled._cache.values())[-1]
    inputs = StateWalk((compiled._fn, default_generator), ((gx, gy), {})).inputs()
    _, update, (params,) = _jax_step(layers, "sgd")
    _, update_grads, _ = _jax_step(layers, "sgd", with_grads=True)
    return compare(f"XLA executables alone, SGD step, B={batch}", {
        "jax.jit": lambda: jax.block_until_ready(update(params, jx, jy)),
        "jax.jit, grads out": lambda: jax.block_until_ready(update_grads(params, jx, jy)),
        "jaxgrad compiled, XLA only": lambda: jax.block_until_ready(entry.jitted(*inputs)),
    }, rounds, inner=20 if batch <= 8 else 5, reference="jax.jit")


BIG_LIST = list(range(100_000))
SMALL_LIST = list(range(1_000))


def guards(rounds: int) -> list[dict]:
    """Per-call overhead of the compiled step's guard and write-back on steps with little XLA
    work, against jax.jit of the same computation."""
    results = []
    w_jax, x_jax = jnp.ones(4), jnp.ones(4)
    w, x = jaxgrad.ones(4), jaxgrad.ones(4)

    def tiny(x):
        return w * x + 1

    def small(x):
        return w * x + SMALL_LIST[3]

    def big(x):
        return w * x + BIG_LIST[3]

    history = []

    def appends(x):
        y = w * x + 1
        history.append(y)
        return y

    plain = jax.jit(lambda w, x: w * x + 1)
    with_item = jax.jit(lambda w, x: w * x + BIG_LIST[3])
    for name, fn, ref in (("tiny step (w * x + 1)", tiny, plain),
                          ("reads one item of a 1,000-item global list", small, with_item),
                          ("reads one item of a 100,000-item global list", big, with_item),
                          ("appends its result to a history list", appends, plain)):
        compiled = jaxgrad.compile(fn)
        result = compare(name, {
            "jax.jit": lambda ref=ref: ref(w_jax, x_jax).block_until_ready(),
            "jaxgrad compiled": lambda c=compiled: c(x).jax().block_until_ready(),
        }, rounds, inner=200, reference="jax.jit")
        result["traces"] = len(compiled._cache)
        results.append(result)
    results.append(_hooked_demo_step(rounds))
    return results


def _hooked_demo_step(rounds: int) -> dict:
    """The README demo's step (64-128-64-10 MLP, SGD with momentum, hooks recording statistics
    into growing lists through jaxgrad.compiler.callback), eager and compiled."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "train_mlp.py"
    spec = importlib.util.spec_from_file_location("train_mlp", path)
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    rng = np.random.RandomState(0)
    x = jaxgrad.tensor(rng.rand(64, 64).astype(np.float32))
    y = jaxgrad.tensor(rng.randint(0, 10, 64))
    steps = {}
    for name in ("jaxgrad eager", "jaxgrad compiled"):
        model = demo.make_model(jaxgrad, 0)
        demo.GradientStats(model, jaxgrad)
        optimizer = jaxgrad.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

        def step(x, y, model=model, optimizer=optimizer):
            loss = jaxgrad.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return loss

        steps[name] = jaxgrad.compile(step) if name.endswith("compiled") else step
    result = compare("README demo step with its hooks, B=64", {
        name: lambda s=s: s(x, y).item() for name, s in steps.items()},
        rounds, inner=10, reference="jaxgrad eager")
    result["traces"] = len(steps["jaxgrad compiled"]._cache)
    return result


def report(result: dict) -> None:
    print(f"\n## {result['name']}")
    for name, seconds in result["median_s"].items():
        line = f"- {name}: {seconds * 1e3:.3f} ms"
        if name in result["vs_ref"]:
            line += f" ({result['vs_ref'][name]:.2f}x {result['reference']}"
            if name in result["vs_jit"] and result["reference"] != "jax.jit":
                line += f", {result['vs_jit'][name]:.2f}x jax.jit"
            line += ")"
        print(line)
    if "traces" in result:
        print(f"- traces of the compiled step: {result['traces']}")
    if "vs_grads_out" in result:
        print(f"- jaxgrad compiled / jax.jit with grads out (medians): "
              f"{result['vs_grads_out']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--first-calls", type=int, default=5)
    parser.add_argument("--only", choices=["steps", "first", "xla", "guards"], default=None)
    args = parser.parse_args()
    print(f"# {platform.processor() or platform.machine()}, {jax.devices()[0].device_kind}, "
          f"jax {jax.__version__}, torch {torch.__version__}, "
          f"{time.strftime('%Y-%m-%d %H:%M')}")
    if args.only in (None, "steps"):
        for optimizer in ("sgd", "adam"):
            for batch in (8, 128):
                report(steps(batch, optimizer, args.rounds))
    if args.only in (None, "xla"):
        for batch in (8, 128):
            report(xla_only(batch, args.rounds))
    if args.only in (None, "guards"):
        for result in guards(args.rounds):
            report(result)
    if args.only in (None, "first"):
        for optimizer in ("sgd", "adam"):
            report(first_calls(optimizer, args.first_calls))


if __name__ == "__main__":
    main()
