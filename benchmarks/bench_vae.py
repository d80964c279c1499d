"""Interleaved VAE training-step timings: torch eager vs jaxgrad eager vs ``jaxgrad.compile``
vs a hand-written ``jax.jit`` step.

One step of a small VAE on a fixed binary batch: an MLP encoder giving a diagonal
``Normal(mu, exp(logvar / 2))`` posterior, one reparameterised ``rsample``, an MLP decoder
giving ``Bernoulli(logits=...)``, the negative ELBO ``-(log_prob(x).sum(-1) -
kl_divergence(q, Normal(0, 1)).sum(-1)).mean()``, ``backward()`` and an ``Adam`` step. The torch
and jaxgrad steps are the same program (``torch.distributions`` / ``jaxgrad.distributions``);
the ``jax.jit`` step writes the same math and torch's Adam with ``jax.numpy``. Argument
validation is off for every contender (``Distribution.set_default_validate_args(False)``; a
compiled step cannot branch on a value) unless ``--validate`` turns it on for the eager ones.
Run:

    python benchmarks/bench_vae.py [--rounds 20] [--batch 64] [--torch-threads 1] [--validate]

(bench_core sets torch to 2 intra-op threads; on a machine with 2 busy cores ``--torch-threads
1`` gives torch its fair number.)
"""

from __future__ import annotations

import argparse
import math

import jax
import jax.numpy as jnp
import numpy as np
import torch

import jaxgrad
from bench_core import compare, report

D_IN, D_HID, D_LAT = 784, 256, 16
SIZES = [("enc1", D_IN, D_HID), ("enc_mu", D_HID, D_LAT), ("enc_lv", D_HID, D_LAT),
         ("dec1", D_LAT, D_HID), ("dec2", D_HID, D_IN)]
LR = 1e-3


def _init(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    params = {}
    for name, n_in, n_out in SIZES:
        params[f"{name}.weight"] = (rng.normal(size=(n_out, n_in)) / math.sqrt(n_in)).astype(
            np.float32)
        params[f"{name}.bias"] = np.zeros(n_out, np.float32)
    return params


def _data(batch: int) -> np.ndarray:
    return (np.random.default_rng(1).uniform(size=(batch, D_IN)) < 0.3).astype(np.float32)


class _VAE:
    """The model for torch and jaxgrad alike (``lib`` is the module)."""

    def __init__(self, lib, params: dict[str, np.ndarray]) -> None:
        nn = lib.nn
        self.lib = lib
        self.layers = {name: nn.Linear(n_in, n_out) for name, n_in, n_out in SIZES}
        with lib.no_grad():
            for name, layer in self.layers.items():
                layer.weight.copy_(lib.tensor(params[f"{name}.weight"]))
                layer.bias.copy_(lib.tensor(params[f"{name}.bias"]))
        self.parameters = [p for layer in self.layers.values() for p in layer.parameters()]

    def loss(self, x):
        lib, L = self.lib, self.layers
        D = lib.distributions
        h = lib.relu(L["enc1"](x))
        mu, logvar = L["enc_mu"](h), L["enc_lv"](h)
        q = D.Normal(mu, (0.5 * logvar).exp())
        z = q.rsample()
        logits = L["dec2"](lib.relu(L["dec1"](z)))
        rec = D.Bernoulli(logits=logits).log_prob(x).sum(-1)
        kl = D.kl_divergence(q, D.Normal(lib.zeros_like(mu), lib.ones_like(mu))).sum(-1)
        return -(rec - kl).mean()


def _stepper(lib, batch: int, compiled: bool = False):
    model = _VAE(lib, _init())
    opt = lib.optim.Adam(model.parameters, lr=LR)
    x = lib.tensor(_data(batch))

    def step():
        opt.zero_grad()
        loss = model.loss(x)
        loss.backward()
        opt.step()
        return loss.detach()

    if compiled:
        step = jaxgrad.compile(step)

    def run():
        loss = step()
        if lib is not torch:
            loss._value.block_until_ready()
        return loss

    return run


def _jax_stepper(batch: int):
    """The same step in plain JAX: one jitted function of (params, Adam state, key)."""
    params = {k: jnp.asarray(v) for k, v in _init().items()}
    x = jnp.asarray(_data(batch))
    b1, b2, eps = 0.9, 0.999, 1e-8

    def linear(p, name, h):
        return h @ p[f"{name}.weight"].T + p[f"{name}.bias"]

    def loss_fn(p, key):
        h = jax.nn.relu(linear(p, "enc1", x))
        mu, logvar = linear(p, "enc_mu", h), linear(p, "enc_lv", h)
        std = jnp.exp(0.5 * logvar)
        z = mu + jax.random.normal(key, mu.shape) * std
        logits = linear(p, "dec2", jax.nn.relu(linear(p, "dec1", z)))
        # Bernoulli(logits).log_prob(x) = -BCE-with-logits
        rec = -(jnp.maximum(logits, 0) - logits * x + jnp.log1p(jnp.exp(-jnp.abs(logits))))
        kl = 0.5 * (std**2 + mu**2 - 1 - jnp.log(std**2))
        return -(rec.sum(-1) - kl.sum(-1)).mean()

    @jax.jit
    def step(p, m, v, t, key):
        key, sub = jax.random.split(key)
        loss, g = jax.value_and_grad(loss_fn)(p, sub)
        t = t + 1
        m = jax.tree.map(lambda m_, g_: b1 * m_ + (1 - b1) * g_, m, g)
        v = jax.tree.map(lambda v_, g_: b2 * v_ + (1 - b2) * g_ * g_, v, g)
        c1, c2 = 1 - b1**t, 1 - b2**t
        p = jax.tree.map(lambda p_, m_, v_: p_ - LR / c1 * m_ / (jnp.sqrt(v_ / c2) + eps),
                         p, m, v)
        return p, m, v, t, key, loss

    state = [params, jax.tree.map(jnp.zeros_like, params), jax.tree.map(jnp.zeros_like, params),
             jnp.zeros((), jnp.float32), jax.random.key(0)]

    def run():
        *new, loss = step(*state)
        state[:] = new
        return loss.block_until_ready()

    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="torch's intra-op threads (default: bench_core's 2)")
    parser.add_argument("--validate", action="store_true",
                        help="validate distribution arguments in the eager contenders")
    args = parser.parse_args()
    if args.torch_threads is not None:
        torch.set_num_threads(args.torch_threads)
    for lib in (torch, jaxgrad):
        lib.distributions.Distribution.set_default_validate_args(False)
    contenders = {"torch eager": _stepper(torch, args.batch),
                  "jaxgrad eager": _stepper(jaxgrad, args.batch),
                  "jaxgrad compile": _stepper(jaxgrad, args.batch, compiled=True),
                  "jax.jit": _jax_stepper(args.batch)}
    if args.validate:  # (the compiled step is made above, without validation)
        for lib in (torch, jaxgrad):
            lib.distributions.Distribution.set_default_validate_args(True)
    title = (f"VAE step {D_IN}-{D_HID}-{D_LAT}, batch {args.batch}: Normal rsample, Bernoulli "
             f"log_prob, kl_divergence, Adam (validation {'on' if args.validate else 'off'})")
    results = [compare(title, contenders, args.rounds, inner=1)]
    print(f"torch threads: {torch.get_num_threads()}")
    print(report(results))


if __name__ == "__main__":
    main()
