"""DistributedDataParallel on 2 processes (127.0.0.1): a torch-style training script (process
group, DDP, DistributedSampler, DataLoader, collectives), eager and under ``jaxgrad.compile``,
ends where the single-process run on the full batch ends; construction broadcasts rank 0's
state; ``no_sync`` accumulates locally and the next backward averages the sum. The JAX-native
global mode (replicated parameters, the batch one tensor spanning the processes) ends there
too, eager and compiled. Compiled, DDP's all-reduce is an XLA collective of the step's program
(no host call)."""

from __future__ import annotations

from multiprocess import run_ranks

SCRIPT = """
import json, os
import jaxgrad as torch
import jaxgrad.distributed as dist
from jaxgrad.nn.parallel import DistributedDataParallel as DDP
from jaxgrad.utils.data import DataLoader, DistributedSampler, TensorDataset

os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ["JAX_COORDINATOR_PORT"])
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
from jaxgrad._distributed import collectives  # (compiled, DDP's all-reduce is XLA's: no host call)
host_calls = []
on_host = collectives._collect_on_host
collectives._collect_on_host = lambda *a, **k: (host_calls.append(1), on_host(*a, **k))[1]
data = TensorDataset(torch.linspace(-2, 2, 64).reshape(16, 4),
                     torch.linspace(0, 1, 16).reshape(16, 1))

def net(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))

def train(model, loader, make_opt, compiled, epochs=2, sampler=None):
    opt = make_opt(model.parameters())
    def step(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()
    run = torch.compile(step, fullgraph=True) if compiled else step
    losses = []
    for epoch in range(epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = run(x, y)
            if sampler is not None:
                dist.all_reduce(loss, op=dist.ReduceOp.AVG)
            losses.append(loss.item())
    return losses

optimizers = {"sgd": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
              "adam": lambda p: torch.optim.Adam(p, lr=0.01)}
report = {}
for compiled in (False, True):
    for name, make_opt in optimizers.items():
        model = DDP(net(seed=rank))  # (rank 1 starts elsewhere: construction broadcasts rank 0's)
        same_start = [p.tolist() for p in model.parameters()] == [p.tolist() for p in net(0).parameters()]
        sampler = DistributedSampler(data, shuffle=False)
        before = len(host_calls)
        losses = train(model, DataLoader(data, batch_size=2, sampler=sampler), make_opt,
                       compiled, sampler=sampler)
        host_calls_made = len(host_calls) - before
        reference = net(0)
        expected = train(reference, DataLoader(data, batch_size=4), make_opt, False)
        params = [p.tolist() for p in model.module.parameters()]
        gathered = [None] * world
        dist.all_gather_object(gathered, params)
        report[f"{name}_compiled={compiled}"] = {
            "same_start": same_start,
            "replicas_equal": gathered[0] == gathered[1],
            "loss_diff": max(abs(a - b) for a, b in zip(losses, expected)),
            "param_diff": max(abs(a - b) for p, q in zip(model.module.parameters(),
                                                        reference.parameters())
                              for a, b in zip(p.reshape(-1).tolist(), q.reshape(-1).tolist())),
            "keys": list(model.state_dict())[:2], "host_calls": host_calls_made}

# the JAX-native global mode: parameters replicated over a mesh of every process's devices, the
# batch one tensor spanning the processes (each gives its rows); XLA inserts the all-reduce
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = dist.world_mesh()
rows, replicated = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
for compiled in (False, True):
    model = net(0).to(replicated)
    loader = [(dist.from_process_local(x, rows), dist.from_process_local(y, rows))
              for x, y in DataLoader(data, batch_size=2, sampler=DistributedSampler(data, shuffle=False))]
    losses = train(model, loader, optimizers["adam"], compiled)
    reference = net(0)
    expected = train(reference, DataLoader(data, batch_size=4), optimizers["adam"], False)
    report[f"global_compiled={compiled}"] = {
        "same_start": True,
        "replicas_equal": all(p._value.is_fully_replicated and p._value.sharding == replicated
                              for p in model.parameters()),
        "loss_diff": max(abs(a - b) for a, b in zip(losses, expected)),
        "param_diff": max(abs(a - b) for p, q in zip(model.parameters(), reference.parameters())
                          for a, b in zip(p.reshape(-1).tolist(), q.reshape(-1).tolist()))}

model = DDP(net(0))
x, y = data.tensors
mine = slice(rank * 8, rank * 8 + 8)
with model.no_sync():
    torch.nn.functional.mse_loss(model(x[mine][:4]), y[mine][:4], reduction="sum").backward()
torch.nn.functional.mse_loss(model(x[mine][4:]), y[mine][4:], reduction="sum").backward()
reference = net(0)
torch.nn.functional.mse_loss(reference(x), y, reduction="sum").backward()
report["no_sync"] = max((a.grad * 2 - b.grad).abs().max().item()
                        for a, b in zip(model.module.parameters(), reference.parameters()))
dist.destroy_process_group()
print("RESULT " + json.dumps(report))
"""


def test_ddp_training_equals_the_single_process_full_batch_run():
    ranks = run_ranks(SCRIPT, world=2, join=False, timeout=150)
    for rank in ranks:
        assert rank.returncode == 0, rank.stderr[-4000:]
        (report,) = rank.results
        assert report["no_sync"] < 1e-5, report
        for run, checks in report.items():
            if run == "no_sync":
                continue
            assert checks["same_start"] and checks["replicas_equal"], (run, checks)
            assert checks["loss_diff"] < 1e-5 and checks["param_diff"] < 1e-5, (run, checks)
            if run.startswith(("sgd", "adam")):
                assert checks["keys"] == ["module.0.weight", "module.0.bias"], (run, checks)
                assert checks["host_calls"] == 0, (run, checks)
    assert {"global_compiled=False", "global_compiled=True"} <= set(report)
