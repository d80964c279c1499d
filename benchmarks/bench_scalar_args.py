"""A new Scalar argument every call must reuse the compiled kernel: a scheduled learning rate in
``p.add_(g, alpha=-lr)``, a moving clamp bound, a pow exponent, addcmul's value, lerp's weight, a
fill value. Median time per call on a 512x512 tensor (``--size``) with a new value every call, contenders
interleaved; the reference is ``x * v`` (a Python number as a Tensor operand, always traced),
with torch eager and a hand-written ``jax.jit`` beside it. The last column counts the kernels
compiled during the timed calls (0: every new value reused the kernel). Run:

    PYTHONPATH=src python benchmarks/bench_scalar_args.py [--calls 30] [--size 512]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

import jax
import jax.numpy as jnp
import torch

import jaxgrad

N = 512
_compiles = [0]  # XLA compilations seen (jax.monitoring), whoever asked for them


def _count_compiles(name: str, duration: float, **_: object) -> None:
    if name == "/jax/core/compile/backend_compile_duration":
        _compiles[0] += 1


def _cases(p, g, tp, tg):
    """name -> (jaxgrad call, torch call, hand-written jax.jit call), each of the new value."""
    jp, jg = p._value, g._value
    jit = {
        "mul": jax.jit(lambda x, v: x * v),
        "add_alpha": jax.jit(lambda x, y, v: x - v * y),
        "clamp": jax.jit(lambda x, v: jnp.clip(x, v, v + 1)),
        "pow": jax.jit(lambda x, v: jnp.power(x, v)),
        "addcmul": jax.jit(lambda x, y, v: x + v * y * y),
        "lerp": jax.jit(lambda x, y, v: x + v * (y - x)),
        "fill": jax.jit(lambda x, v: jnp.full_like(x, v)),
    }
    return {
        "x * v": (lambda v: g * v, lambda v: tg * v, lambda v: jit["mul"](jg, v)),
        "add_(alpha=v)": (lambda v: p.add_(g, alpha=-v), lambda v: tp.add_(tg, alpha=-v),
                          lambda v: jit["add_alpha"](jp, jg, v)),
        "clamp(v, v+1)": (lambda v: g.clamp(v, v + 1), lambda v: tg.clamp(v, v + 1),
                          lambda v: jit["clamp"](jg, v)),
        "x ** v": (lambda v: g ** (2 + v), lambda v: tg ** (2 + v),
                   lambda v: jit["pow"](jg, 2 + v)),
        "addcmul(value=v)": (lambda v: jaxgrad.addcmul(g, g, g, value=v),
                             lambda v: torch.addcmul(tg, tg, tg, value=v),
                             lambda v: jit["addcmul"](jg, jg, v)),
        "lerp(weight=v)": (lambda v: jaxgrad.lerp(g, p, v), lambda v: torch.lerp(tg, tp, v),
                           lambda v: jit["lerp"](jg, jp, v)),
        "fill_(v)": (lambda v: g.clone().fill_(v), lambda v: tg.clone().fill_(v),
                     lambda v: jit["fill"](jg, v)),
    }


def _block(out):
    if isinstance(out, jaxgrad.Tensor):
        out._value.block_until_ready()
    elif isinstance(out, jax.Array):
        out.block_until_ready()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--size", type=int, default=N, help="the tensors are size x size")
    args = parser.parse_args()
    calls, n = args.calls, args.size
    jax.monitoring.register_event_duration_secs_listener(_count_compiles)
    p, g = jaxgrad.ones(n, n), jaxgrad.full((n, n), 1e-3)
    tp, tg = torch.ones(n, n), torch.full((n, n), 1e-3)
    cases = _cases(p, g, tp, tg)
    for contenders in cases.values():
        for run in contenders:
            _block(run(0.5))  # compile once
    gc.collect()
    gc.disable()  # as timeit does: a collection landing in one contender's call is noise
    times = {name: ([], [], []) for name in cases}
    compiled = dict.fromkeys(cases, 0)
    for i in range(calls):
        for c, (name, contenders) in enumerate(cases.items()):
            # a new value every call, and each case its own (a value used a second time is
            # turned into a cached device array once, ~20 us; see _dispatch._device_scalar)
            v = 0.1 * (1 + i / 100) + c * 1e-7
            for k, run in enumerate(contenders):
                before = _compiles[0]
                start = time.perf_counter()
                _block(run(v))
                times[name][k].append(time.perf_counter() - start)
                if k == 0:
                    compiled[name] += _compiles[0] - before
    gc.enable()
    base = statistics.median(times["x * v"][0])
    print(f"{'jaxgrad eager, new value each call':36s} {'median':>9s} {'vs x*v':>7s} "
          f"{'torch':>9s} {'jax.jit':>9s} {'kernels compiled':>17s}")
    for name, (ours, theirs, jitted) in times.items():
        med = statistics.median(ours)
        print(f"- {name:34s} {med * 1e6:7.1f}us {med / base:6.2f}x "
              f"{statistics.median(theirs) * 1e6:7.1f}us {statistics.median(jitted) * 1e6:7.1f}us "
              f"{compiled[name]:17d}")


if __name__ == "__main__":
    main()
