"""``python -m jaxgrad.distributed.run``, torchrun's launcher: jobs of 2 processes on 127.0.0.1
(free ports), every wait bounded, every process checked gone afterwards. A failing rank ends the
job within seconds (not after JAX's shutdown barrier), ``--max-time`` stops a job that hangs, and
a collectives program prints under it what its torch twin prints under torchrun."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from jaxgrad._distributed.launcher import LaunchConfig, worker_env
from jaxgrad.distributed.run import config_from_args, get_args_parser, parse_args

LAUNCH = [sys.executable, "-m", "jaxgrad.distributed.run"]
TORCHRUN = [sys.executable, "-m", "torch.distributed.run"]
# every process on 127.0.0.1: gloo's sockets (torch's) on the loopback interface
ENV = {"JAX_PLATFORMS": "cpu", "GLOO_SOCKET_IFNAME": "lo", "MASTER_ADDR": "127.0.0.1"}


def _launch(cmd: list[str], cwd: Path, timeout: float, env: dict | None = None):
    """Run a launcher; (exit status, stdout, stderr, seconds). Past ``timeout`` the launcher gets
    SIGTERM (it stops its workers), then SIGKILL with everything in its session."""
    start = time.monotonic()
    env = {**os.environ, **ENV, "TMPDIR": str(cwd), **(env or {})}  # (its error files)
    proc = subprocess.Popen(cmd, cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate(timeout=10)
        pytest.fail(f"{cmd} ran past {timeout} s:\n{out[-2000:]}\n{err[-4000:]}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    return proc.returncode, out, err, time.monotonic() - start


def _write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def _pids(tmp_path: Path) -> list[int]:
    return [int(p.read_text()) for p in sorted(tmp_path.glob("pid_*"))]


def _assert_gone(pids: list[int]) -> None:
    deadline = time.monotonic() + 5
    for pid in pids:
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            assert time.monotonic() < deadline, f"worker {pid} outlived its launcher"
            time.sleep(0.1)


# each worker writes its pid to pid_<RANK> first, so that the test can check it is gone
PID = """
import os, pathlib
pathlib.Path(f"pid_{os.environ['RANK']}").write_text(str(os.getpid()))
"""


def test_two_ranks_all_reduce(tmp_path):
    script = _write(tmp_path, "job.py", PID + """
import json, os
import jaxgrad, jaxgrad.distributed as dist
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
t = jaxgrad.tensor([float(rank + 1)])
dist.all_reduce(t)
env = {k: os.environ.get(k) for k in ("LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR",
                                       "TORCHELASTIC_RUN_ID")}
ports = os.environ["MASTER_PORT"] != os.environ["JAXGRAD_COORDINATOR_PORT"]
line = " ".join(map(str, ("RESULT", rank, world, int(os.environ["LOCAL_RANK"]), t.tolist(),
                         json.dumps(env), ports)))
os.write(1, (line + chr(10)).encode())  # (one write: workers run unbuffered, lines must not mix)
dist.destroy_process_group()
""")
    code, out, err, _ = _launch([*LAUNCH, "--standalone", "--nproc-per-node", "2", str(script)],
                                tmp_path, timeout=60)
    assert code == 0, err[-4000:]
    env = json.dumps({"LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "0", "MASTER_ADDR": "127.0.0.1",
                      "TORCHELASTIC_RUN_ID": None})
    lines = sorted(line for line in out.splitlines() if line.startswith("RESULT "))
    assert lines == [f"RESULT 0 2 0 [3.0] {env} True", f"RESULT 1 2 1 [3.0] {env} True"]
    _assert_gone(_pids(tmp_path))


def test_a_failing_rank_stops_the_job_within_seconds(tmp_path):
    """Rank 1 raises; rank 0 waits in a collective for it. The launcher exits with rank 1's code
    well before JAX's timeouts (30 s), naming rank 1, its traceback on stderr."""
    script = _write(tmp_path, "job.py", PID + """
import time
import jaxgrad, jaxgrad.distributed as dist
dist.init_process_group("gloo")
if dist.get_rank() == 1:
    raise RuntimeError("rank 1 fails on purpose")
dist.all_reduce(jaxgrad.ones(2))
time.sleep(120)
""")
    code, _, err, seconds = _launch(
        [*LAUNCH, "--standalone", "--nproc-per-node", "2", str(script)], tmp_path, timeout=60)
    assert code == 1, err[-4000:]
    assert seconds < 30, seconds
    assert "RuntimeError: rank 1 fails on purpose" in err
    assert 'raise RuntimeError("rank 1 fails on purpose")' in err  # (the traceback)
    assert "job.py FAILED" in err and "rank      : 1 (local_rank: 1)" in err, err[-4000:]
    _assert_gone(_pids(tmp_path))


def test_a_worker_s_exit_code_is_the_launcher_s(tmp_path):
    script = _write(tmp_path, "job.py", PID + """
import os, sys, time
if os.environ["RANK"] == "1":
    sys.exit(3)
time.sleep(120)
""")
    code, _, err, seconds = _launch([*LAUNCH, "--nproc_per_node=2", str(script)], tmp_path,
                                    timeout=30)
    assert code == 3 and seconds < 20, (code, seconds, err[-4000:])
    assert "rank      : 1 (local_rank: 1)" in err and "exitcode  : 3" in err, err[-4000:]
    _assert_gone(_pids(tmp_path))


def test_max_time_stops_a_job_that_hangs(tmp_path):
    script = _write(tmp_path, "job.py", PID + """
import time
while True:
    time.sleep(1)
""")
    code, _, err, seconds = _launch(
        [*LAUNCH, "--standalone", "--nproc-per-node", "2", "--max-time", "5", str(script)],
        tmp_path, timeout=40)
    assert code == 124, err[-4000:]
    assert seconds < 20, seconds
    assert "--max-time 5" in err
    _assert_gone(_pids(tmp_path))


def test_sigterm_to_the_launcher_stops_the_workers(tmp_path):
    script = _write(tmp_path, "job.py", PID + """
import time
time.sleep(120)
""")
    proc = subprocess.Popen([*LAUNCH, "--standalone", "--nproc-per-node", "2", str(script)],
                            cwd=tmp_path, env={**os.environ, **ENV}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while len(_pids(tmp_path)) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        pids = _pids(tmp_path)
        assert len(pids) == 2
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == 128 + signal.SIGTERM, err[-4000:]
        _assert_gone(pids)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


PROGRAM = """
import os, sys
if os.environ["LIB"] == "torch":
    import torch as T
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
else:
    import jaxgrad as T
    import jaxgrad.distributed as dist
    from jaxgrad.nn.parallel import DistributedDataParallel as DDP
    from jaxgrad.utils.data import DataLoader, DistributedSampler, TensorDataset
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
t = T.tensor([float(rank + 1), 10.0 * rank])
dist.all_reduce(t)
outs = [T.zeros(2) for _ in range(world)]
dist.all_gather(outs, T.tensor([float(rank), float(rank * rank)]))
b = T.tensor([float(rank) + 5.0]); dist.broadcast(b, src=1)
if rank == 0:
    print("RESULT", world, t.tolist(), [o.tolist() for o in outs], b.tolist(), sys.argv[1:],
          __name__, os.environ["LOCAL_WORLD_SIZE"], flush=True)
# data-parallel training: DDP, DistributedSampler, DataLoader (rank 1 starts from other weights)
model = T.nn.Sequential(T.nn.Linear(3, 5), T.nn.Tanh(), T.nn.Linear(5, 1))
with T.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(T.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1 + rank))
model = DDP(model)
opt = T.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
data = TensorDataset(T.linspace(-1, 1, 30).reshape(10, 3), T.linspace(0, 2, 10).reshape(10, 1))
sampler = DistributedSampler(data, shuffle=False)
for epoch in range(2):
    sampler.set_epoch(epoch)
    for x, y in DataLoader(data, batch_size=2, sampler=sampler):
        opt.zero_grad()
        loss = T.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        dist.all_reduce(loss.detach(), op=dist.ReduceOp.AVG)
        if rank == 0:
            print("RESULT loss", round(loss.item(), 4), flush=True)
if rank == 0:
    print("RESULT params", [round(v, 4) for p in model.parameters() for v in p.reshape(-1).tolist()])
# find_unused_parameters: rank 0 skips branch b, no rank uses branch c
class Branches(T.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = T.nn.Linear(2, 1), T.nn.Linear(2, 1), T.nn.Linear(2, 1)
    def forward(self, x, use_b):
        return self.a(x) + (self.b(x) if use_b else 0)
branches = Branches()
with T.no_grad():
    for i, p in enumerate(branches.parameters()):
        p.copy_(T.linspace(0.5, 1, p.numel()).reshape(p.shape) * (i + 1))
branches = DDP(branches, find_unused_parameters=True)
branches(T.ones(3, 2) * (rank + 1), use_b=rank == 1).pow(2).sum().backward()
# when the reduction is decided (at forward, as torch), and buffers (broadcast on each forward)
def one():
    m = T.nn.Linear(2, 1)
    with T.no_grad():
        m.weight.fill_(1.0); m.bias.fill_(0.0)
    return DDP(m)
x = T.ones(1, 2) * (rank + 1)
timing = []
m = one()
with m.no_sync():
    out = m(x).sum()
out.backward(); timing.append(m.module.weight.grad.tolist())
m = one()
out = m(x).sum()
with m.no_sync():
    out.backward()
timing.append(m.module.weight.grad.tolist())
m = one()
out = m(x).sum(); out.backward(retain_graph=True); out.backward()
timing.append(m.module.weight.grad.tolist())
bn = T.nn.BatchNorm1d(2)
with T.no_grad():
    bn.running_mean.fill_(float(rank))
bn = DDP(bn, broadcast_buffers=False)
timing.append(bn.module.running_mean.tolist())
bn = DDP(T.nn.BatchNorm1d(2))
bn(T.linspace(0, 1, 6).reshape(3, 2) * (rank + 1)).sum().backward()
bn.eval()
with T.no_grad():
    bn(T.ones(1, 2))
timing.append([round(v, 4) for v in bn.module.running_mean.tolist()])
if rank == 0:
    print("RESULT timing", timing)
if rank == 0:
    print("RESULT unused", [None if p.grad is None else [round(v, 4) for v in p.grad.reshape(-1).tolist()]
                            for p in branches.parameters()])
dist.destroy_process_group()
"""


def test_same_output_as_torchrun(tmp_path):
    """The collectives program against torch under torchrun, and against jaxgrad under
    jaxgrad's launcher (both with -m and script arguments): rank 0 prints the same."""
    pytest.importorskip("torch")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    _write(tmp_path / "pkg", "job.py", PROGRAM)
    job = ["--standalone", "--nproc-per-node", "2", "-m", "pkg.job", "a", "--b"]
    with ThreadPoolExecutor(2) as pool:  # (both jobs at once: free ports apart)
        runs = [pool.submit(_launch, [*launcher, *job], tmp_path, 60,
                            {"LIB": lib, "OMP_NUM_THREADS": "1"})
                for launcher, lib in ((TORCHRUN, "torch"), (LAUNCH, "jaxgrad"))]
        done = [run.result() for run in runs]
    printed = []
    for code, out, err, _ in done:
        assert code == 0, err[-4000:]
        printed.append([line for line in out.splitlines() if line.startswith("RESULT ")])
    assert printed[0] == printed[1]
    assert printed[0][0] == ("RESULT 2 [3.0, 10.0] [[0.0, 0.0], [1.0, 1.0]] [6.0] ['a', '--b'] "
                             "__main__ 2")
    assert len(printed[0]) == 1 + 6 + 3  # (collectives, losses, parameters, DDP cases)


# --- the command line, without processes --------------------------------------------------------

def test_both_spellings_of_torchrun_s_flags():
    for argv in (["--nproc-per-node", "3", "--node-rank", "1", "--master-addr", "h",
                  "--master-port", "1234", "--nnodes", "2", "--monitor-interval", "0.5", "t.py"],
                 ["--nproc_per_node=3", "--node_rank=1", "--master_addr=h", "--master_port=1234",
                  "--nnodes=2:2", "--monitor_interval=0.5", "t.py"]):
        config, cmd = config_from_args(parse_args([*argv, "--lr", "1"]))
        assert (config.nproc_per_node, config.nnodes, config.node_rank, config.master_addr,
                config.master_port, config.monitor_interval) == (3, 2, 1, "h", 1234, 0.5)
        assert config.coordinator_port == 1235  # (every node agrees on it)
        assert cmd[0] == sys.executable and cmd[-3:] == ["t.py", "--lr", "1"]


def test_standalone_picks_free_ports_on_the_loopback():
    config, _ = config_from_args(parse_args(["--standalone", "--master-addr", "10.1.1.1",
                                             "--nnodes", "3", "--nproc-per-node", "2", "t.py"]))
    assert (config.nnodes, config.master_addr, config.world_size) == (1, "127.0.0.1", 2)
    assert config.master_port != config.coordinator_port


def test_module_and_no_python_commands():
    _, cmd = config_from_args(parse_args(["-m", "pkg.train", "x"]))
    assert cmd[-3:] == ["-m", "pkg.train", "x"] and "-u" in cmd
    _, cmd = config_from_args(parse_args(["--no-python", "prog", "x"]))
    assert cmd == ["prog", "x"]
    with pytest.raises(ValueError, match="--no-python"):
        config_from_args(parse_args(["-m", "--no-python", "prog"]))


def test_bad_values_are_refused():
    with pytest.raises(ValueError, match="elastic"):
        config_from_args(parse_args(["--nnodes", "1:4", "t.py"]))
    with pytest.raises(ValueError, match="node-rank"):
        config_from_args(parse_args(["--nnodes", "2", "--node-rank", "2", "t.py"]))
    with pytest.raises(SystemExit):
        get_args_parser().parse_args([])  # (no script)


def test_worker_environment():
    config = LaunchConfig(4, nnodes=2, node_rank=1, master_addr="h", master_port=7,
                          coordinator_port=8)
    env = worker_env(config, 2, base={"TORCHELASTIC_RUN_ID": "x", "KEEP": "1"},
                     error_file="/e")
    assert env == {"KEEP": "1", "RANK": "6", "LOCAL_RANK": "2", "WORLD_SIZE": "8",
                   "LOCAL_WORLD_SIZE": "4", "GROUP_RANK": "1", "GROUP_WORLD_SIZE": "2",
                   "ROLE_RANK": "6", "ROLE_WORLD_SIZE": "8", "ROLE_NAME": "default",
                   "MASTER_ADDR": "h", "MASTER_PORT": "7", "JAXGRAD_COORDINATOR_PORT": "8",
                   "TORCHELASTIC_ERROR_FILE": "/e"}
