"""The optimized HLO of the compiled MLP step against the hand-written ``jax.jit`` step that
also returns the gradients (issue 23): counts of each HLO op where the two differ, and both
texts written to ``--out`` for reading.

    PYTHONPATH=src:benchmarks python benchmarks/compare_hlo.py [--batch 8] [--optimizer sgd]
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import re

from bench_compile import _jax_step, _jaxgrad_step, _problem
from jaxgrad._compile.state import StateWalk
from jaxgrad._core.jax_setup import x64_scope


def _op_counts(text: str) -> collections.Counter:
    counts = collections.Counter()
    for line in text.splitlines():
        match = re.search(r"= \S+ (\w[\w-]*)\(", line)
        if match:
            counts[match.group(1)] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
    parser.add_argument("--out", default="/tmp")
    args = parser.parse_args()
    layers, _, (gx, gy), (jx, jy) = _problem(args.batch)
    step = _jaxgrad_step(layers, args.optimizer, compiled=True)
    for _ in range(3):
        step(gx, gy)
    entry = next(e for e in step._cache.values() if e.program is not None)
    inputs = StateWalk.resume(step._memo, ((gx, gy), {})).inputs()
    # the jax.jit object inside jaxgrad's x64 wrapper
    jitted = dict(zip(entry.jitted.__code__.co_freevars,
                      (c.cell_contents for c in entry.jitted.__closure__)))["compiled"]
    with x64_scope():
        ours = jitted.lower(*inputs).compile().as_text()
    _, update, state = _jax_step(layers, args.optimizer, with_grads=True)
    theirs = update.lower(*state, jx, jy).compile().as_text()
    out = pathlib.Path(args.out)
    (out / "jaxgrad_step.hlo").write_text(ours)
    (out / "jax_step.hlo").write_text(theirs)
    mine, hand = _op_counts(ours), _op_counts(theirs)
    for op in sorted(set(mine) | set(hand)):
        if mine[op] != hand[op]:
            print(f"{op:24s} jaxgrad {mine[op]:4d}   jax.jit {hand[op]:4d}")


if __name__ == "__main__":
    main()
