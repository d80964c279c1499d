"""Interleaved LBFGS-step timings: torch.optim.LBFGS vs jaxgrad's, eager and with the closure
under ``jaxgrad.compile``.

Two fits of a 1-32-32-1 tanh MLP, each timed call one ``optimizer.step(closure)`` of
``max_iter`` strong-Wolfe iterations from the same start (parameters and optimizer state are
reset first, so every call does the same work; the report prints the closure evaluations one
step made in each library):

- least squares: ``mean((u(x) - sin x)^2)`` on 256 points;
- PINN-style: ``mean((du/dx - cos x)^2) + u(0)^2`` on 64 collocation points, ``du/dx`` from
  ``autograd.grad(..., create_graph=True)`` inside the closure.

The compiled closure zeroes the gradients through the model, not the optimizer: a closure that
reads the optimizer makes its state (LBFGS's history lists, growing every iteration) part of
the compiled call's signature, so every call would trace and compile again. Run:

    python benchmarks/bench_lbfgs.py [--rounds 10] [--max-iter 10] [--torch-threads N]

(bench_core sets torch to 2 intra-op threads; on a machine with 2 busy cores that makes torch's
small ops wait on each other, and ``--torch-threads 1`` gives torch its fair number.)
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import jaxgrad
from bench_core import compare, report

_rng = np.random.default_rng(0)
X_FIT = _rng.uniform(-3, 3, size=(256, 1)).astype(np.float32)
X_PINN = np.linspace(0, 3, 64, dtype=np.float32).reshape(64, 1)
SIZES = [(32, 1), (32,), (32, 32), (32,), (1, 32), (1,)]
INIT = [(_rng.normal(size=s) / np.sqrt(s[-1] if len(s) == 2 else 32)).astype(np.float32)
        for s in SIZES]


def _model(lib):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                          nn.Linear(32, 1))
    with lib.no_grad():
        for p, value in zip(model.parameters(), INIT):
            p.copy_(lib.tensor(value))
    return model


def _closure(lib, model, problem: str):
    if problem == "fit":
        x = lib.tensor(X_FIT)
        y = lib.sin(x)

        def closure():
            model.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            return loss.detach()
    else:
        xs, origin = lib.tensor(X_PINN), lib.zeros(1, 1)

        def closure():
            model.zero_grad()
            xr = xs.detach().requires_grad_()
            (du,) = lib.autograd.grad(model(xr).sum(), xr, create_graph=True)
            loss = ((du - lib.cos(xr)) ** 2).mean() + model(origin).pow(2).sum()
            loss.backward()
            return loss.detach()
    return closure


def _stepper(lib, problem: str, max_iter: int, compiled: bool = False):
    """One LBFGS step from the initial point per call; also the step's closure-call count."""
    model = _model(lib)
    params = list(model.parameters())
    start = [p.detach().clone() for p in params]
    cls = lib.optim.LBFGS
    opt = cls(params, max_iter=max_iter, line_search_fn="strong_wolfe", history_size=10,
              tolerance_grad=0.0, tolerance_change=0.0)
    closure = _closure(lib, model, problem)
    if compiled:
        closure = jaxgrad.compile(closure)

    def step():
        opt.state.clear()
        with lib.no_grad():
            for p, s in zip(params, start):
                p.copy_(s)
        opt.step(closure)
        if lib is not torch:
            params[0]._value.block_until_ready()
        return opt.state[params[0]]["func_evals"]

    return step


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--max-iter", type=int, default=10)
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="torch's intra-op threads (default: bench_core's 2)")
    args = parser.parse_args()
    if args.torch_threads is not None:
        torch.set_num_threads(args.torch_threads)
    results, evals = [], {}
    for problem, title in (("fit", "least-squares MLP fit, 256 points"),
                           ("pinn", "PINN-style closure (create_graph), 64 points")):
        contenders = {
            "torch eager": _stepper(torch, problem, args.max_iter),
            "jaxgrad eager": _stepper(jaxgrad, problem, args.max_iter),
            "jaxgrad compile": _stepper(jaxgrad, problem, args.max_iter, compiled=True),
        }
        evals[title] = {k: fn() for k, fn in contenders.items()}
        results.append(compare(f"LBFGS step (strong_wolfe, max_iter={args.max_iter}): {title}",
                               contenders, args.rounds, inner=1))
    print(f"torch threads: {torch.get_num_threads()}")
    print(report(results))
    for title, counts in evals.items():
        print(f"closure calls per step, {title}: {counts}")


if __name__ == "__main__":
    main()
