"""Every collective against its definition, on 2 processes of one JAX runtime (127.0.0.1): rank
r holds known values, and each rank checks what it received against what the definition gives
from all ranks' values, computed locally."""

from __future__ import annotations

from multiprocess import run_ranks

PROGRAM = """
import json, os
import numpy as np
import jaxgrad
import jaxgrad.distributed as dist
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ["JAX_COORDINATOR_PORT"])
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
values = lambda r: np.arange(6, dtype=np.float32).reshape(3, 2) * (r + 1) - r
every = [values(r) for r in range(world)]
mine = lambda: jaxgrad.tensor(values(rank))
checks = {}
for name, fn in [("SUM", np.sum), ("AVG", np.mean), ("PRODUCT", np.prod), ("MIN", np.min),
                 ("MAX", np.max)]:
    t = mine()
    dist.all_reduce(t, op=getattr(dist.ReduceOp, name))
    checks["all_reduce_" + name] = bool(np.allclose(t.numpy(), fn(np.stack(every), axis=0)))
    checks["version_" + name] = t._version == int(name == "AVG")  # (torch: AVG divides in place)
t = mine(); dist.broadcast(t, src=1)
checks["broadcast"] = bool(np.array_equal(t.numpy(), every[1]))
outs = [jaxgrad.zeros(3, 2) for _ in range(world)]; dist.all_gather(outs, mine())
checks["all_gather"] = all(np.array_equal(o.numpy(), v) for o, v in zip(outs, every))
out = jaxgrad.zeros(3 * world, 2); dist.all_gather_into_tensor(out, mine())
checks["all_gather_into_tensor"] = bool(np.array_equal(out.numpy(), np.concatenate(every)))
big = lambda r: np.arange(8, dtype=np.float32).reshape(4, 2) + 10 * r
out = jaxgrad.zeros(2, 2); dist.reduce_scatter_tensor(out, jaxgrad.tensor(big(rank)))
total = sum(big(r) for r in range(world))
checks["reduce_scatter_tensor"] = bool(np.array_equal(out.numpy(), total[2 * rank:2 * rank + 2]))
wide = jaxgrad.tensor(values(rank), dtype=jaxgrad.float64) / 3
outs = [jaxgrad.zeros(3, 2, dtype=jaxgrad.float64) for _ in range(world)]
dist.all_gather(outs, wide); dist.all_reduce(wide)
checks["float64_kept"] = all(o.dtype == jaxgrad.float64 and np.allclose(
    o.numpy(), v.astype(np.float64) / 3, rtol=1e-15, atol=0) for o, v in zip(outs, every))
checks["float64_all_reduce"] = bool(np.allclose(
    wide.numpy(), sum(v.astype(np.float64) / 3 for v in every), rtol=1e-15, atol=0))
work = dist.all_reduce(mine(), async_op=True)
checks["async_wait"] = work.wait()
dist.barrier()
dist.destroy_process_group()
checks["destroyed"] = not dist.is_initialized()
dist.init_process_group("gloo")  # (again, as torch's test fixtures do)
t = mine(); dist.all_reduce(t)
checks["initialised_again"] = bool(np.allclose(t.numpy(), np.sum(every, axis=0)))
dist.destroy_process_group()
print("RESULT " + json.dumps(checks))
"""


def test_collectives_match_their_definitions():
    ranks = run_ranks(PROGRAM, world=2, join=False)
    for rank in ranks:
        assert rank.returncode == 0, rank.stderr[-4000:]
        (checks,) = rank.results
        assert checks and all(checks.values()), checks


def test_a_group_of_one_process():
    ranks = run_ranks("""
import json, jaxgrad, jaxgrad.distributed as dist
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", rank=0, world_size=1)
t = jaxgrad.ones(3); dist.all_reduce(t); dist.barrier()
print("RESULT " + json.dumps([dist.get_rank(), dist.get_world_size(), t.tolist()]))
dist.destroy_process_group()
""", world=1, join=False)
    assert ranks[0].returncode == 0, ranks[0].stderr[-4000:]
    assert ranks[0].results == [[0, 1, [1.0, 1.0, 1.0]]]


def test_errors_without_a_group():
    """torch's errors when no process group exists (in this process: no runtime is joined)."""
    import torch.distributed as tdist

    import jaxgrad.distributed as dist
    from differential import same

    def program(T):
        d = tdist if T.__name__ == "torch" else dist
        out = []
        for fn in (d.get_rank, d.get_world_size, d.get_backend, d.barrier,
                   d.destroy_process_group, lambda: d.all_reduce(T.ones(2))):
            try:
                fn()
            except Exception as error:  # (the error is what is compared)
                out.append((type(error).__name__, str(error)))
        return out, d.is_initialized(), d.is_available()

    same(program)


def test_a_group_over_a_runtime_joined_first():
    """A program that joined ``jax.distributed`` itself: the group takes the runtime's processes
    (no second join), and a rank or world size that disagrees with it is refused."""
    ranks = run_ranks("""
import json, os
import jaxgrad, jaxgrad.distributed as dist
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
try:
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", rank=rank, world_size=3)
    refused = None
except ValueError as error:
    refused = str(error)
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", rank=rank, world_size=world)
t = jaxgrad.ones(2) * (rank + 1); dist.all_reduce(t)
print("RESULT " + json.dumps([refused is not None and "already joined" in refused, t.tolist()]))
dist.destroy_process_group()
""", world=2, join=True)
    for rank in ranks:
        assert rank.returncode == 0, rank.stderr[-4000:]
        assert rank.results == [[True, [3.0, 3.0]]]
