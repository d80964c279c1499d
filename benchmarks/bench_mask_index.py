"""Boolean-mask indexing whose True-count changes every step (issue 26: normalizing flows),
torch eager against jaxgrad eager, interleaved in one process.

Each form runs ``x = x0 * 1``, the masked read or write, and a backward, with a mask of a
True-count not seen before (``new``: what a flow pays every step, the kernels jaxgrad compiles
for the new shapes included) and then again with the same mask (``repeat``). Per form: the
median over the rounds of each, torch's and jaxgrad's. jaxgrad's disk cache of kernels is off
here, so a count is new to every run.

    python benchmarks/bench_mask_index.py [--rounds 10] [--rows 1000]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

import jaxgrad

torch.set_num_threads(2)


def setitem_number(T, x0, m):
    x = x0 * 1
    x[m] = 0
    x.sum().backward()


def setitem_0d(T, x0, m):
    x = x0 * 1
    x[m] = T.tensor(2.0)
    x.sum().backward()


def setitem_row(T, x0, m):
    x = x0 * 1
    x[m] = T.ones(x0.shape[1])
    x.sum().backward()


def iadd(T, x0, m):
    x = x0 * 1
    x[m] += 1
    x.sum().backward()


def masked_fill(T, x0, m):
    x0.masked_fill(m[:, None], 0).sum().backward()


def getitem_sum(T, x0, m):
    x0[m].sum().backward()


FORMS = {
    "x[m] = 0": setitem_number,
    "x[m] = tensor(2.)": setitem_0d,
    "x[m] = row": setitem_row,
    "x[m] += 1": iadd,
    "masked_fill": masked_fill,
    "x[m].sum()": getitem_sum,
}


def _timed(f) -> float:
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--rows", type=int, default=1000)
    args = parser.parse_args()
    jaxgrad.kernel_cache.set_dir(None)
    rng = np.random.default_rng(0)
    values = rng.standard_normal((args.rows, 4)).astype(np.float32)
    x0 = {T: T.tensor(values, requires_grad=True) for T in (torch, jaxgrad)}
    counts = iter(rng.permutation(np.arange(1, args.rows)))
    print(f"rows {args.rows}, {args.rounds} rounds; medians per step, in ms")
    print(f"{'form':<20}{'torch new':>11}{'jaxgrad new':>13}{'torch rep':>11}{'jaxgrad rep':>13}")
    for name, form in FORMS.items():
        for T in (torch, jaxgrad):  # the kernels of the shapes that do not depend on the count
            mask = np.zeros(args.rows, bool)
            mask[: next(counts)] = True
            form(T, x0[T], T.tensor(mask))
        times = {(T, kind): [] for T in (torch, jaxgrad) for kind in ("new", "rep")}
        for _ in range(args.rounds):
            mask = np.zeros(args.rows, bool)
            mask[rng.choice(args.rows, next(counts), replace=False)] = True
            for T in (torch, jaxgrad):
                m = T.tensor(mask)
                times[T, "new"].append(_timed(lambda T=T, m=m, f=form: f(T, x0[T], m)))
                times[T, "rep"].append(_timed(lambda T=T, m=m, f=form: f(T, x0[T], m)))
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        print(
            f"{name:<20}{med[torch, 'new']:>11.2f}{med[jaxgrad, 'new']:>13.2f}"
            f"{med[torch, 'rep']:>11.2f}{med[jaxgrad, 'rep']:>13.2f}"
        )


if __name__ == "__main__":
    main()
