"""Data-parallel training step on 2 processes (127.0.0.1): torch DDP (gloo) vs jaxgrad DDP
eager vs jaxgrad DDP under ``jaxgrad.compile`` vs hand-written ``jax.jit`` over a mesh spanning
both processes (the batch a global array sharded over them, XLA inserting the all-reduce).

Each rank joins both runtimes (torch's process group and jaxgrad's) and runs the contenders
interleaved, in lock step (each step is collective). The 784-512-512-10 MLP of bench_core, SGD
with momentum, a local batch of B rows per rank. Rank 0 prints the report. Run:

    python benchmarks/bench_ddp.py [--rounds 20] [--batch 64]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(argv: list[str]) -> None:
    ports = [str(_free_port()), str(_free_port())]
    children = [subprocess.Popen(
        [sys.executable, __file__, "--rank", str(r), "--ports", *ports, *argv],
        env={**os.environ, "JAX_PLATFORMS": "cpu", "GLOO_SOCKET_IFNAME": "lo"})
        for r in range(2)]
    try:
        for child in children:
            child.wait(timeout=900)
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()


def rank_main(rank: int, ports: list[str], rounds: int, batch: int) -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np
    import torch
    import torch.distributed as tdist
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P
    from torch.nn.parallel import DistributedDataParallel as TorchDDP

    import jaxgrad
    import jaxgrad.distributed as dist
    from bench_core import _mlp_loss, compare, report
    from jaxgrad.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{ports[0]}", rank=rank,
                            world_size=2)
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{ports[1]}", rank=rank,
                             world_size=2)
    rng = np.random.RandomState(rank)
    xs = rng.randn(batch, 784).astype(np.float32)
    ys = rng.randint(0, 10, size=batch)

    def model(lib):
        return lib.nn.Sequential(lib.nn.Linear(784, 512), lib.nn.ReLU(), lib.nn.Linear(512, 512),
                                 lib.nn.ReLU(), lib.nn.Linear(512, 10))

    def stepper(lib, ddp, compiled=False):
        net = ddp(model(lib))
        opt = lib.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
        x, y = lib.tensor(xs), lib.tensor(ys)

        def step():
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            return loss.detach()
        run = jaxgrad.compile(step) if compiled else step
        if lib is torch:
            return run
        return lambda: run()._value.block_until_ready()

    mesh = Mesh(np.array(jax.devices()), ("data",))
    replicated, rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    params = [np.asarray(p.detach()) for p in model(torch).parameters()]
    params = [jax.make_array_from_process_local_data(replicated, p.T if p.ndim == 2 else p)
              for p in params]
    gx = jax.make_array_from_process_local_data(rows, xs)
    gy = jax.make_array_from_process_local_data(rows, ys)

    @jax.jit
    def jit_step(params, momentum, x, y):
        loss, grads = jax.value_and_grad(lambda p: _mlp_loss(p, x, y, jnp))(params)
        momentum = [0.9 * m + g for m, g in zip(momentum, grads)]
        return [p - 0.01 * m for p, m in zip(params, momentum)], momentum, loss

    state = {"params": params, "momentum": [jnp.zeros_like(p) for p in params]}

    def run_jit():
        state["params"], state["momentum"], loss = jit_step(
            state["params"], state["momentum"], gx, gy)
        loss.block_until_ready()

    result = compare(f"2-process data-parallel MLP 784-512-512-10 SGD momentum step, "
                     f"B={batch} per rank", {
                         "torch eager": stepper(torch, TorchDDP),
                         "jax.jit": run_jit,
                         "jaxgrad eager": stepper(jaxgrad, DDP),
                         "jaxgrad compile": stepper(jaxgrad, DDP, compiled=True),
                     }, rounds, inner=3)
    if rank == 0:
        print(report([result]), flush=True)
    tdist.destroy_process_group()
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rank", type=int)
    parser.add_argument("--ports", nargs=2)
    args = parser.parse_args()
    if args.rank is None:
        launch(["--rounds", str(args.rounds), "--batch", str(args.batch)])
    else:
        sys.path.insert(0, HERE)
        rank_main(args.rank, args.ports, args.rounds, args.batch)


if __name__ == "__main__":
    main()
