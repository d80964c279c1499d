"""Interleaved optimizer-step timings: torch.optim vs jaxgrad.optim on the MLP's parameters.

The parameters of the 784-512-512-10 MLP in bench_core, gradients set once; each contender
runs ``optimizer.step()`` (jaxgrad's result is waited for). Run:

    python benchmarks/bench_optim.py [--rounds 30]
"""

from __future__ import annotations

import argparse

import torch

import jaxgrad
from bench_core import compare, report

SHAPES = [(784, 512), (512,), (512, 512), (512,), (512, 10), (10,)]
OPTIMIZERS = {
    "SGD momentum": lambda lib, ps: lib.optim.SGD(ps, lr=0.01, momentum=0.9),
    "Adam": lambda lib, ps: lib.optim.Adam(ps, lr=1e-3),
    "AdamW amsgrad": lambda lib, ps: lib.optim.AdamW(ps, lr=1e-3, amsgrad=True),
}


def _stepper(lib, make):
    params = [lib.zeros(*shape, requires_grad=True) for shape in SHAPES]
    for p in params:
        p.grad = lib.full(tuple(p.shape), 1e-2)
    optimizer = make(lib, params)
    if lib is torch:
        return optimizer.step
    return lambda: (optimizer.step(), params[0]._value.block_until_ready())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    results = []
    for name, make in OPTIMIZERS.items():
        results.append(compare(f"{name} step", {
            "torch eager": _stepper(torch, make),
            "jaxgrad eager": _stepper(jaxgrad, make),
        }, args.rounds, inner=5))
    print(report(results))


if __name__ == "__main__":
    main()
