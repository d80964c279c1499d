"""Collectives inside ``jaxgrad.compile`` on 2 processes (127.0.0.1): a compiled step that makes
collectives runs as one XLA program over the group's processes, each collective an XLA
collective of it (no host call), and gives what the same step gives eagerly; where the step
cannot be such a program (an ordered ``jaxgrad.compiler.callback``, collectives over two
groups), its collectives are host calls in each process's program, with the same results."""

from __future__ import annotations

from multiprocess import run_ranks

PROGRAM = """
import json, os
import jaxgrad as torch
import jaxgrad.distributed as dist
from jaxgrad._distributed import collectives
from jaxgrad.nn.parallel import DistributedDataParallel as DDP

os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ["JAX_COORDINATOR_PORT"])
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
host_calls = []
on_host = collectives._collect_on_host
collectives._collect_on_host = lambda *a, **k: (host_calls.append(1), on_host(*a, **k))[1]

def every_collective(x, scale):
    y = x * scale
    out = {}
    for op in ("SUM", "AVG", "MAX", "MIN", "PRODUCT"):
        t = y.clone(); dist.all_reduce(t, op=getattr(dist.ReduceOp, op)); out[op] = t
    n = (x * 4).to(torch.int64)
    for op in ("BAND", "BOR", "BXOR"):
        t = n.clone(); dist.all_reduce(t, op=getattr(dist.ReduceOp, op)); out[op] = t
    t = y.clone(); dist.broadcast(t, src=1, async_op=True).wait(); out["broadcast"] = t
    t = y.clone(); dist.reduce(t, dst=0); out["reduce"] = t
    parts = [torch.zeros(3) for _ in range(world)]; dist.all_gather(parts, y)
    out["all_gather"] = torch.stack(parts)
    t = torch.zeros(3 * world); dist.all_gather_into_tensor(t, y); out["into_tensor"] = t
    t = torch.zeros(1); dist.reduce_scatter_tensor(t, y[:2]); out["reduce_scatter"] = t
    t = torch.zeros(3); dist.scatter(t, [y * 2, y * 3] if rank == 0 else None, src=0)
    out["scatter"] = t
    s = y.sum(); dist.all_reduce(s); out["scalar"] = s
    c = torch.tensor([float(rank + 1)]); dist.all_reduce(c)  # (a constant of each rank's trace)
    out["constant"] = c
    w = y.to(torch.float64) / 3; dist.all_reduce(w); out["float64"] = w
    out["versions"] = torch.tensor([float(y._version), float(out["AVG"]._version)])
    return out

def as_lists(out):
    return {k: [v.dtype.__repr__(), v.tolist()] for k, v in out.items()}

report = {}
compiled = torch.compile(every_collective, fullgraph=True)
for i in range(3):
    x = torch.tensor([1.0, 2.0, 3.0]) * (rank + 1) + i
    eager = as_lists(every_collective(x, 2.0))
    before = len(host_calls)
    report[f"call{i}"] = [eager == as_lists(compiled(x, 2.0 + 0 * i)), len(host_calls) - before]

def dropout_step(x):  # random numbers (the generator's key) in the program over processes
    y = torch.nn.functional.dropout(x, 0.5)
    dist.all_reduce(y)
    return y
drop = torch.compile(dropout_step, fullgraph=True)
torch.manual_seed(rank); eager = [dropout_step(torch.ones(6)).tolist() for _ in range(3)]
before = len(host_calls)
torch.manual_seed(rank); report["dropout"] = [
    eager == [drop(torch.ones(6)).tolist() for _ in range(3)], len(host_calls) - before]

seen = []
def with_callback(x):  # (an ordered host callback: the collectives stay host calls)
    y = x * 2; dist.all_reduce(y)
    torch.compiler.callback(lambda t: seen.append(t.tolist()), y)
    return y
fn = torch.compile(with_callback, fullgraph=True)
before = len(host_calls)
report["callback"] = [[fn(torch.ones(2) * (rank + i)).tolist() for i in range(3)], seen,
                      len(host_calls) - before]

pair = dist.new_group([0, 1])
def two_groups(x):  # (collectives over two groups: host calls)
    a = x.clone(); dist.all_reduce(a)
    b = x.clone(); dist.all_reduce(b, group=pair, op=dist.ReduceOp.MAX)
    return a, b
fn = torch.compile(two_groups, fullgraph=True)
before = len(host_calls)
report["two_groups"] = [[[t.tolist() for t in fn(torch.ones(2) * (rank + i))] for i in range(3)],
                        [[t.tolist() for t in two_groups(torch.ones(2) * (rank + i))]
                         for i in range(3)], len(host_calls) - before]

# a compiled DDP forward broadcasting BatchNorm's buffers; its backward runs outside the step
# (the VJP of the program over processes), then DDP's all-reduce eagerly
runs = {}
for compiled in (False, True):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 1))
    model = DDP(net)
    forward = torch.compile(model, fullgraph=True) if compiled else model
    before, out = len(host_calls), []
    for i in range(3):
        loss = forward(torch.linspace(-1, 1, 24).reshape(6, 4) * (rank + 1 + i)).square().mean()
        loss.backward()
        out.append([loss.item(), net[1].running_mean.tolist()]
                   + [p.grad.tolist() for p in model.parameters()])
        model.zero_grad()
    runs[compiled] = [out, len(host_calls) - before]
flat = lambda v: [w for u in v for w in flat(u)] if isinstance(v, list) else [v]
report["ddp_forward"] = [runs[True][1], max(
    abs(a - b) for a, b in zip(flat(runs[True][0]), flat(runs[False][0])))]
dist.destroy_process_group()
print("RESULT " + json.dumps(report))
"""


def test_compiled_collectives_run_as_one_program_over_the_processes():
    ranks = run_ranks(PROGRAM, world=2, join=False, timeout=150)
    reports = []
    for rank in ranks:
        assert rank.returncode == 0, rank.stderr[-4000:]
        (report,) = rank.results
        reports.append(report)
        for i in range(3):  # the same values, dtypes and versions as eager; no host call
            assert report[f"call{i}"] == [True, 0], report
        assert report["dropout"] == [True, 0], report
        values, seen, calls = report["callback"]
        assert seen == values and calls == 3, report
        compiled, eager, calls = report["two_groups"]
        assert compiled == eager and calls == 6, report
        calls, difference = report["ddp_forward"]
        assert calls == 0 and difference < 1e-6, report
    assert reports[0]["callback"][0] == reports[1]["callback"][0]
