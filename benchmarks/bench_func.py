"""Interleaved timings of the transform routes: per-sample gradients (torch.func's tutorial,
``vmap(grad(loss), in_dims=(None, 0, 0))`` over ``functional_call``) with torch.func, jaxgrad.func
called eagerly (cached: one XLA program per signature), jaxgrad.func without the cache (JAX's
transformations op by op), and hand-written ``jax.jit(jax.vmap(jax.grad(...)))``. Run:

    python benchmarks/bench_func.py [--rounds 30]
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np
import torch

import jaxgrad
from bench_core import compare, report
from jaxgrad._func import transforms as uncached

SIZES = {"MLP 32-64-10, batch 64": (32, 64, 10, 64), "MLP 784-128-10, batch 64": (784, 128, 10, 64)}


def _per_sample(lib, sizes, transforms):
    n_in, hidden, n_out, batch = sizes
    rs = np.random.RandomState(0)
    model = lib.nn.Sequential(lib.nn.Linear(n_in, hidden), lib.nn.ReLU(),
                              lib.nn.Linear(hidden, n_out))
    params = {k: lib.tensor(rs.randn(*v.shape).astype(np.float32) * 0.1)
              for k, v in model.named_parameters()}
    x = lib.tensor(rs.randn(batch, n_in).astype(np.float32))
    y = lib.tensor(rs.randint(0, n_out, batch))

    def loss(p, xi, yi):
        out = lib.func.functional_call(model, p, (xi.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    grads = transforms.vmap(transforms.grad(loss), in_dims=(None, 0, 0))
    if lib is torch:
        return lambda: grads(params, x, y)
    return lambda: grads(params, x, y)["0.weight"]._value.block_until_ready()


def _pure_jax(sizes):
    n_in, hidden, n_out, batch = sizes
    rs = np.random.RandomState(0)
    params = {"w1": rs.randn(hidden, n_in), "b1": rs.randn(hidden), "w2": rs.randn(n_out, hidden),
              "b2": rs.randn(n_out)}
    params = {k: jnp.asarray(v.astype(np.float32) * 0.1) for k, v in params.items()}
    x = jnp.asarray(rs.randn(batch, n_in).astype(np.float32))
    y = jnp.asarray(rs.randint(0, n_out, batch))

    def loss(p, xi, yi):
        h = jax.nn.relu(p["w1"] @ xi + p["b1"])
        logits = p["w2"] @ h + p["b2"]
        return -jax.nn.log_softmax(logits)[yi]

    grads = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    return lambda: grads(params, x, y)["w1"].block_until_ready()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    results = []
    for name, sizes in SIZES.items():
        results.append(compare(f"per-sample grads, {name}", {
            "torch eager": _per_sample(torch, sizes, torch.func),
            "jaxgrad eager": _per_sample(jaxgrad, sizes, jaxgrad.func),
            "jaxgrad uncached": _per_sample(jaxgrad, sizes, uncached),
            "jax.jit": _pure_jax(sizes),
        }, args.rounds, inner=5))
    print(report(results))


if __name__ == "__main__":
    main()
