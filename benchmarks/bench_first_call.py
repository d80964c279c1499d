"""How long a fresh process takes to run a short program: torch against jaxgrad with a cold
kernel cache (an empty directory) and a warm one (the directory the cold run filled).

Each round starts one child per contender, interleaved. A child reports the time its
``import`` took and the time from after the import to the end of the program (``run``), which
is where jaxgrad compiles its kernels; the table gives medians over rounds, the median
per-round ratio against torch and the number of XLA kernels jaxgrad compiled or loaded.

    PYTHONPATH=src python benchmarks/bench_first_call.py --rounds 5
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

PROGRAMS = {
    # the first training step of an MLP (784-256-10, batch 32, SGD with momentum)
    "mlp": """
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x, y = torch.randn(32, 784), torch.randint(0, 10, (32,))
loss = nn.functional.cross_entropy(model(x), y)
opt.zero_grad(); loss.backward(); opt.step()
out = loss.item()
""",
    # two small programs in the style of the seed posts: retained grads and hooks, then a
    # module with a forward hook and a chain of pointwise ops
    "seeds": """
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
y.retain_grad()
seen = []
y.register_hook(lambda g: seen.append(g.sum().item()))
z = (y ** 2).mean()
z.backward()
out = [x.grad.tolist(), y.grad.tolist(), seen]
lin = nn.Linear(4, 2)
acts = []
lin.register_forward_hook(lambda m, i, o: acts.append(o.detach()))
w = torch.ones(5, 4, requires_grad=True)
h = torch.tanh(lin(w)).exp().sum()
h.backward()
out.append([w.grad.shape[0], len(acts)])
""",
}

CHILD = """
import time
t0 = time.perf_counter()
import {lib} as torch
import {lib}.nn as nn
t1 = time.perf_counter()
{program}
t2 = time.perf_counter()
kernels = None
if "{lib}" == "jaxgrad":
    i = torch.kernel_cache.info()
    kernels = i.hits + i.misses
import json
print(json.dumps({{"import": t1 - t0, "run": t2 - t1, "kernels": kernels}}))
"""


def run_child(lib: str, program: str, cache_dir: str | None) -> dict:
    env = dict(os.environ)
    if cache_dir is not None:
        env["JAXGRAD_KERNEL_CACHE_DIR"] = cache_dir
    code = CHILD.format(lib=lib, program=PROGRAMS[program])
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def compile_bytecode() -> None:
    """Write jaxgrad's bytecode first, as a regular install (or any first import) does: where
    ``PYTHONDONTWRITEBYTECODE`` is set, an editable install would otherwise compile its source in
    every child (about a second), which is not what a user's second run pays."""
    spec = importlib.util.find_spec("jaxgrad")
    compileall.compile_dir(spec.submodule_search_locations[0], quiet=1)


def main() -> None:
    compile_bytecode()
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=sorted(PROGRAMS))
    args = parser.parse_args()
    programs = [args.only] if args.only else list(PROGRAMS)
    for program in programs:
        rows: dict[str, list[dict]] = {"torch": [], "cold": [], "warm": []}
        for _ in range(args.rounds):
            cache_dir = tempfile.mkdtemp(prefix="jaxgrad-kernels-")
            try:
                rows["torch"].append(run_child("torch", program, None))
                rows["cold"].append(run_child("jaxgrad", program, cache_dir))
                rows["warm"].append(run_child("jaxgrad", program, cache_dir))
            finally:
                shutil.rmtree(cache_dir, ignore_errors=True)
        print(f"\n{program} ({args.rounds} rounds; seconds, medians; ratio = per-round median "
              "of (import + run) against torch's)")
        print(f"{'':8} {'import':>8} {'run':>8} {'total':>8} {'x torch':>8} {'kernels':>8}")
        for name, results in rows.items():
            total = [r["import"] + r["run"] for r in results]
            ratio = [t / (r["import"] + r["run"]) for t, r in zip(total, rows["torch"])]
            kernels = results[0]["kernels"]
            print(f"{name:8} {statistics.median(r['import'] for r in results):8.2f} "
                  f"{statistics.median(r['run'] for r in results):8.2f} "
                  f"{statistics.median(total):8.2f} {statistics.median(ratio):8.2f} "
                  f"{'' if kernels is None else kernels:>8}")


if __name__ == "__main__":
    main()
