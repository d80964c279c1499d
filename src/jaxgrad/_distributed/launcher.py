"""The mechanics of ``python -m jaxgrad.distributed.run`` (torchrun's interface): parse torchrun's
flags, start one process per local rank with torch's environment variables, watch them, and on
the first failure stop the rest (SIGTERM, a short grace, then SIGKILL: JAX's runtime may ignore
SIGTERM once it has started) and report which rank failed, as torchrun does.

A Python worker runs its script through this file (``python -u -P launcher.py script args``),
which runs the script as ``python script args`` would and, when the script fails, writes torch's
error file (``TORCHELASTIC_ERROR_FILE``) before the interpreter exits. The launcher needs that
early word: a process of JAX's runtime that exits waits at JAX's shutdown barrier for every other
process (up to its shutdown timeout) before it ends, so its exit code would come too late.

Nothing here starts JAX: the launcher only starts and watches processes (standard library only).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import datetime
import json
import os
import runpy
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field

DEFAULT_MASTER_PORT = 29500  # torchrun's
GRACE_SECONDS = 3.0  # between SIGTERM and SIGKILL when the launcher stops its workers
TIMEOUT_EXIT_CODE = 124  # the exit status of a job stopped by --max-time (as timeout(1))
_FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")  # torchrun's --signals-to-handle
_PR_SET_PDEATHSIG = 1  # prctl option (linux/prctl.h)


# --- the command line ---------------------------------------------------------------------------

def _env_default(dest: str, default):
    """torchrun's default for an option: the environment variable ``PET_<DEST>`` where set."""
    return os.environ.get(f"PET_{dest.upper()}", default)


def _env_flag(dest: str) -> bool:
    """torchrun's default for a switch: ``PET_<DEST>`` as an int (unset: off)."""
    return bool(int(os.environ.get(f"PET_{dest.upper()}", "0")))


def get_args_parser() -> argparse.ArgumentParser:
    """torchrun's command line parser, for the flags jaxgrad's launcher supports (torch's two
    spellings, ``--nproc-per-node`` and ``--nproc_per_node``; a default can come from the
    environment variable ``PET_<NAME>``, as torchrun's).

    >>> from jaxgrad.distributed.run import get_args_parser
    >>> args = get_args_parser().parse_args(["--nproc_per_node=2", "train.py", "--lr", "0.1"])
    >>> args.nproc_per_node, args.training_script, args.training_script_args
    ('2', 'train.py', ['--lr', '0.1'])
    """
    parser = argparse.ArgumentParser(
        prog="python -m jaxgrad.distributed.run",
        description="Start a jaxgrad (or torch) distributed job: one process per rank, torchrun's "
                    "flags and environment variables, on JAX's multi-controller runtime.")
    flag = parser.add_argument
    flag("--nnodes", type=str, default=_env_default("nnodes", "1"),
         help="Number of nodes (torchrun's MIN:MAX form only with MIN == MAX: no elastic "
              "ranges).")
    flag("--nproc-per-node", "--nproc_per_node", type=str,
         default=_env_default("nproc_per_node", "1"),
         help="Processes per node: an int, or 'cpu'/'auto' for this machine's CPU count.")
    flag("--node-rank", "--node_rank", type=int, default=int(_env_default("node_rank", 0)),
         help="This node's rank, 0 .. nnodes-1.")
    flag("--master-addr", "--master_addr", type=str,
         default=_env_default("master_addr", "127.0.0.1"),
         help="Address of the node of rank 0 (default 127.0.0.1).")
    flag("--master-port", "--master_port", type=int, default=_env_default("master_port", None),
         help=f"Port on the master node (default {DEFAULT_MASTER_PORT} for several nodes; a free "
              f"port on a single node, as torchrun).")
    flag("--standalone", action="store_true", default=_env_flag("standalone"),
         help="Single node on 127.0.0.1 with free ports (overrides --master-addr/--master-port "
              "and --nnodes).")
    flag("--monitor-interval", "--monitor_interval", type=float,
         default=float(_env_default("monitor_interval", 0.1)),
         help="Seconds between checks of the workers' state.")
    flag("--max-time", "--max_time", type=float, default=_env_default("max_time", None),
         help="jaxgrad's addition: stop the whole job after this many seconds and exit "
              f"{TIMEOUT_EXIT_CODE}.")
    flag("-m", "--module", action="store_true", default=_env_flag("module"),
         help="Run the training script as a module, as 'python -m'.")
    flag("--no-python", "--no_python", action="store_true",
         default=_env_flag("no_python"),
         help="Run the training script as a program itself (no 'python' in front).")
    flag("training_script", type=str,
         help="The program each process runs, followed by its arguments.")
    flag("training_script_args", nargs=argparse.REMAINDER)
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The parsed command line (``sys.argv[1:]`` when ``argv`` is None).

    >>> from jaxgrad.distributed.run import parse_args
    >>> args = parse_args(["--standalone", "--nproc-per-node", "4", "-m", "pkg.train"])
    >>> args.standalone, args.nproc_per_node, args.module, args.training_script
    (True, '4', True, 'pkg.train')
    """
    return get_args_parser().parse_args(argv)


# --- what to start ------------------------------------------------------------------------------

@dataclass
class LaunchConfig:
    """One node's share of a job: how many processes, where rank 0's node is, which ports.

    >>> from jaxgrad.distributed.run import LaunchConfig
    >>> LaunchConfig(nproc_per_node=2, nnodes=2).world_size
    4
    """

    nproc_per_node: int
    nnodes: int = 1
    node_rank: int = 0
    master_addr: str = "127.0.0.1"
    master_port: int = DEFAULT_MASTER_PORT
    coordinator_port: int = DEFAULT_MASTER_PORT + 1  # JAX's coordinator (JAXGRAD_COORDINATOR_PORT)
    max_time: float | None = None
    monitor_interval: float = 0.1
    grace: float = GRACE_SECONDS
    name: str = "worker"  # the entry point's name, for the failure report

    @property
    def world_size(self) -> int:
        """Processes in the whole job."""
        return self.nnodes * self.nproc_per_node


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct TCP ports on ``host`` that nothing listens on now.

    >>> from jaxgrad._distributed.launcher import free_ports
    >>> a, b = free_ports(2)
    >>> a != b and 0 < a < 65536
    True
    """
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for s in sockets:
            s.bind((host, 0))
        return [s.getsockname()[1] for s in sockets]


def _nproc(value: str) -> int:
    if value in ("cpu", "auto"):
        return os.cpu_count() or 1
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"--nproc-per-node: expected an int, 'cpu' or 'auto', not {value!r} "
                         f"(jaxgrad's launcher does not count accelerators)") from None
    if n < 1:
        raise ValueError(f"--nproc-per-node must be at least 1, not {n}")
    return n


def _nnodes(value: str) -> int:
    low, _, high = value.partition(":")
    if high and int(high) != int(low):
        raise ValueError(f"--nnodes={value}: jaxgrad's launcher has no elastic node ranges "
                         f"(give one number)")
    if int(low) < 1:
        raise ValueError(f"--nnodes must be at least 1, not {low}")
    return int(low)


def config_from_args(args: argparse.Namespace) -> tuple[LaunchConfig, list[str]]:
    """The launch configuration and each worker's command line from parsed arguments.

    >>> from jaxgrad.distributed.run import config_from_args, parse_args
    >>> config, cmd = config_from_args(parse_args(
    ...     ["--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "2",
    ...      "--master-addr", "10.0.0.1", "train.py", "--lr", "0.1"]))
    >>> config.world_size, config.master_port, config.coordinator_port, cmd[-3:]
    (4, 29500, 29501, ['train.py', '--lr', '0.1'])
    """
    if args.module and args.no_python:
        raise ValueError("Don't use both the '--no-python' flag and the '--module' flag at the "
                         "same time.")
    nproc, nnodes = _nproc(str(args.nproc_per_node)), _nnodes(str(args.nnodes))
    node_rank, addr = int(args.node_rank), args.master_addr
    master_port = None if args.master_port is None else int(args.master_port)
    if args.standalone:
        nnodes, node_rank, addr, master_port = 1, 0, "127.0.0.1", None
    if not 0 <= node_rank < nnodes:
        raise ValueError(f"--node-rank must be in [0, {nnodes - 1}], not {node_rank}")
    if nnodes == 1:
        # one node: free ports for both (torchrun also picks a free one without --master-port)
        master, coordinator = free_ports(2, "127.0.0.1" if addr in ("127.0.0.1", "localhost")
                                         else "")
        master_port = master if master_port is None else master_port
        if coordinator == master_port:
            coordinator = master
    else:
        # several nodes must agree on the coordinator's port without talking: the one above
        master_port = DEFAULT_MASTER_PORT if master_port is None else master_port
        coordinator = master_port + 1
    max_time = None if args.max_time is None else float(args.max_time)
    config = LaunchConfig(nproc, nnodes, node_rank, addr, master_port, coordinator, max_time,
                          float(args.monitor_interval), name=os.path.basename(
                              args.training_script))
    if args.no_python:
        cmd = [args.training_script]
    else:  # (python -u [-m] script, through this file: see the module's docstring)
        cmd = [sys.executable, "-u", "-P", os.path.abspath(__file__),
               *(["-m"] if args.module else []), args.training_script]
    return config, cmd + list(args.training_script_args)


def worker_env(config: LaunchConfig, local_rank: int, base: dict[str, str] | None = None,
               error_file: str | None = None) -> dict[str, str]:
    """The environment of local rank ``local_rank``: ``base`` (this process's environment) with
    torchrun's variables and ``JAXGRAD_COORDINATOR_PORT`` (JAX's coordinator;
    ``TORCHELASTIC_RUN_ID`` is left out, so ``init_process_group`` uses that port), and
    ``TORCHELASTIC_ERROR_FILE`` where given.

    >>> from jaxgrad._distributed.launcher import LaunchConfig, worker_env
    >>> env = worker_env(LaunchConfig(2, nnodes=2, node_rank=1), 1, base={})
    >>> env["RANK"], env["LOCAL_RANK"], env["WORLD_SIZE"], env["GROUP_RANK"]
    ('3', '1', '4', '1')
    >>> env["MASTER_PORT"], env["JAXGRAD_COORDINATOR_PORT"]
    ('29500', '29501')
    """
    env = dict(os.environ if base is None else base)
    env.pop("TORCHELASTIC_RUN_ID", None)
    rank = config.node_rank * config.nproc_per_node + local_rank
    env.update(
        RANK=str(rank), LOCAL_RANK=str(local_rank), WORLD_SIZE=str(config.world_size),
        LOCAL_WORLD_SIZE=str(config.nproc_per_node), GROUP_RANK=str(config.node_rank),
        GROUP_WORLD_SIZE=str(config.nnodes), ROLE_RANK=str(rank),
        ROLE_WORLD_SIZE=str(config.world_size), ROLE_NAME="default",
        MASTER_ADDR=config.master_addr, MASTER_PORT=str(config.master_port),
        JAXGRAD_COORDINATOR_PORT=str(config.coordinator_port))
    if error_file is not None:
        env["TORCHELASTIC_ERROR_FILE"] = error_file
    return env


# --- in a worker: run the script, and say so early when it fails -------------------------------

def _write_error_file(message: str, callstack: str, exitcode: int) -> None:
    """torch's error file (``@record``'s format, with the exit code the worker is about to
    exit with), written whole (the launcher may read it at any time); kept if one exists."""
    path = os.environ.get("TORCHELASTIC_ERROR_FILE")
    if not path or os.path.exists(path):
        return
    data = {"message": {"message": message, "extraInfo": {
        "py_callstack": callstack, "timestamp": str(int(time.time())), "exitcode": exitcode}}}
    with contextlib.suppress(OSError):
        with open(path + ".part", "w") as f:
            json.dump(data, f)
        os.replace(path + ".part", path)


def _script_frames(tb):
    """``tb`` without the frames of this file and of runpy (what ``python script`` shows)."""
    while tb is not None and (tb.tb_frame.f_code.co_filename in (__file__, runpy.__file__)
                              or tb.tb_frame.f_code.co_filename.startswith("<frozen runpy")):
        tb = tb.tb_next
    return tb


def _worker_main(argv: list[str]) -> None:
    """Run ``[-m] target args`` as ``python [-m] target args`` would (``sys.argv``, ``sys.path[0]``,
    ``__main__``); when it raises or exits non-zero, write the error file first."""
    as_module = argv[:1] == ["-m"]
    target, *args = argv[1:] if as_module else argv
    sys.argv = [target, *args]
    try:
        if as_module:
            sys.path.insert(0, os.getcwd())
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.realpath(target)))
            runpy.run_path(os.path.abspath(target), run_name="__main__")
    except SystemExit as done:
        if done.code not in (None, 0):
            status = done.code if isinstance(done.code, int) else 1
            _write_error_file(f"SystemExit: {done.code}", f"SystemExit: {done.code}", status)
        raise
    except KeyboardInterrupt as error:  # (the launcher stopping this worker: Python's exit)
        error.with_traceback(_script_frames(error.__traceback__))
        raise
    except BaseException as error:
        tb = _script_frames(error.__traceback__)
        error = error.with_traceback(tb)  # (the default excepthook reads the exception's own)
        text = "".join(traceback.format_exception(type(error), error, tb))
        _write_error_file(f"{type(error).__name__}: {error}", text, 1)
        sys.excepthook(type(error), error, tb)
        sys.exit(1)


# --- in the launcher: start, watch and stop the workers -----------------------------------------

@dataclass
class Failure:
    """A worker that failed: its exit code (negative: killed by that signal) and what its error
    file says (its traceback), where it wrote one."""

    rank: int
    local_rank: int
    exitcode: int
    pid: int
    time: float = field(default_factory=time.time)
    error_file: str | None = None
    message: str | None = None

    def describe(self, index: int) -> str:
        """torchrun's paragraph about one failure."""
        signal_name = ""
        if self.exitcode < 0:
            with contextlib.suppress(ValueError):
                signal_name = f" (Signal {-self.exitcode}: {signal.Signals(-self.exitcode).name})"
        stamp = datetime.datetime.fromtimestamp(self.time).strftime("%Y-%m-%d_%H:%M:%S")
        message = ("<N/A> (see this rank's stderr above)" if not self.message
                   else self.message.rstrip("\n").replace("\n", "\n  "))
        return (f"[{index}]:\n"
                f"  time      : {stamp}\n"
                f"  host      : {socket.gethostname()}\n"
                f"  rank      : {self.rank} (local_rank: {self.local_rank})\n"
                f"  exitcode  : {self.exitcode} (pid: {self.pid}){signal_name}\n"
                f"  error_file: {self.error_file or '<N/A>'}\n"
                f"  traceback : {message}")


def failure_report(name: str, failures: list[Failure]) -> str:
    """torchrun's summary of a failed job; the first failure is the root cause.

    >>> from jaxgrad._distributed.launcher import Failure, failure_report
    >>> print(failure_report("train.py", [Failure(1, 1, 1, 42, time=0.0)])
    ...       )  # doctest: +ELLIPSIS
    <BLANKLINE>
    ...
    train.py FAILED
    ...
    Root Cause (first observed failure):
    [0]:
      time      : ...
      rank      : 1 (local_rank: 1)
      exitcode  : 1 (pid: 42)
    ...
    """
    blocks = [f.describe(i) for i, f in enumerate(failures)]
    width = min(max(len(line) for b in blocks for line in b.splitlines()), 60)
    return "\n".join(["", "=" * width, f"{name} FAILED", "-" * width, "Failures:",
                      "\n".join(blocks[1:]) or "  <NO_OTHER_FAILURES>", "-" * width,
                      "Root Cause (first observed failure):", blocks[0], "=" * width])


def _read_error_file(path: str, finished: bool) -> tuple[str, int] | None:
    """(traceback or message, exit code) from a worker's error file; None while there is none
    (or, for a worker still running, while it is half written)."""
    try:
        with open(path) as f:
            data = json.load(f)
        message = data["message"]
        if isinstance(message, str):
            return message, 1
        extra = message.get("extraInfo", {})
        return (str(extra.get("py_callstack") or message.get("message", "")),
                int(extra.get("exitcode", 1)))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return ("", 1) if finished else None


class _Signalled(Exception):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class _PastMaxTime(Exception):
    pass


def _raise_signalled(signum, frame):
    raise _Signalled(signum)


def _death_signal_setter():
    """A function for a child to call between fork and exec (Linux): be killed when the launcher
    dies, however it dies (libc is loaded here, in the parent, not in the forked child)."""
    if sys.platform != "linux":
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _signal_group(child: subprocess.Popen, signum: int) -> None:
    """Send ``signum`` to the worker's process group (the worker and what it started)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signum)


class WorkerGroup:
    """This node's workers: started together, watched, stopped together."""

    def __init__(self, config: LaunchConfig, cmd: list[str]):
        self.config, self.cmd = config, cmd
        self.children: list[subprocess.Popen] = []
        self.error_dir = tempfile.mkdtemp(prefix="jaxgrad_run_")
        self.error_files = [os.path.join(self.error_dir, f"error_{i}.json")
                            for i in range(config.nproc_per_node)]

    def start(self) -> None:
        """Start one process per local rank, each in its own session (so the whole tree of a
        worker can be signalled) and, on Linux, killed if the launcher dies."""
        die_with_parent = _death_signal_setter()
        for local_rank in range(self.config.nproc_per_node):
            env = worker_env(self.config, local_rank, error_file=self.error_files[local_rank])
            self.children.append(subprocess.Popen(
                self.cmd, env=env, start_new_session=True, preexec_fn=die_with_parent))

    def _check(self, local_rank: int) -> Failure | None:
        child = self.children[local_rank]
        code = child.poll()
        if code == 0:
            return None
        said = _read_error_file(self.error_files[local_rank], finished=code is not None)
        if code is None and said is None:
            return None
        message, intended = said or ("", code)
        rank = self.config.node_rank * self.config.nproc_per_node + local_rank
        return Failure(rank, local_rank, intended if code is None else code, child.pid,
                       error_file=self.error_files[local_rank] if said else None,
                       message=message)

    def watch(self) -> list[Failure] | None:
        """Wait until every worker succeeded (None), some failed (the failures seen in that
        check, in rank order: exited non-zero, or wrote its error file) or ``max_time`` passed
        (raises ``_PastMaxTime``)."""
        deadline = None if self.config.max_time is None else (
            time.monotonic() + self.config.max_time)
        while True:
            failed = [f for i in range(len(self.children)) if (f := self._check(i))]
            if failed:
                return failed
            if all(child.returncode == 0 for child in self.children):
                return None
            if deadline is not None and time.monotonic() >= deadline:
                raise _PastMaxTime
            time.sleep(self.config.monitor_interval)

    def stop(self, signum: int = signal.SIGTERM, keep_error_files: bool = False) -> None:
        """Send ``signum`` to every worker still running, wait up to the grace period, then
        SIGKILL what is left (and anything the workers started)."""
        for child in self.children:
            if child.poll() is None:
                _signal_group(child, signum)
        deadline = time.monotonic() + self.config.grace
        with contextlib.suppress(_Signalled):  # (a second Ctrl-C: no more grace)
            for child in self.children:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.wait(timeout=max(deadline - time.monotonic(), 0))
        self.kill(keep_error_files)

    def kill(self, keep_error_files: bool = False) -> None:
        """SIGKILL every worker's process group and reap the workers; remove the error files
        unless ``keep_error_files`` (a failure report names them)."""
        for child in self.children:
            _signal_group(child, signal.SIGKILL)
        for child in self.children:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=10)
        if not keep_error_files:
            shutil.rmtree(self.error_dir, ignore_errors=True)


@contextlib.contextmanager
def _signals_raise():
    """While inside: the signals torchrun forwards raise ``_Signalled`` (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for name in _FORWARDED:
        if hasattr(signal, name):
            signum = getattr(signal, name)
            previous[signum] = signal.signal(signum, _raise_signalled)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _status(code: int) -> int:
    """A worker's exit code as this process's exit status (killed by signal N: 128 + N)."""
    return 128 - code if code < 0 else code


def launch(config: LaunchConfig, cmd: list[str]) -> int:
    """Run ``cmd`` as this node's workers and return the launcher's exit status: 0 when all
    succeeded; the first failed rank's exit code (128 + N for signal N) after stopping the others
    and printing torchrun's summary to stderr; 124 after ``max_time``; 128 + N when the launcher
    got signal N (the workers get it too, then SIGKILL after the grace period).

    >>> import subprocess, sys
    >>> code = "from jaxgrad.distributed.run import *; print(launch(LaunchConfig(1), ['true']))"
    >>> subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split()
    ['0']
    """
    group = WorkerGroup(config, cmd)
    with _signals_raise():
        try:
            group.start()
            failures = group.watch()
        except _PastMaxTime:
            print(f"jaxgrad.distributed.run: the job ran past --max-time {config.max_time:g} s; "
                  f"stopping its {len(group.children)} worker(s)", file=sys.stderr, flush=True)
            group.stop()
            return TIMEOUT_EXIT_CODE
        except _Signalled as received:
            print(f"jaxgrad.distributed.run: got {signal.Signals(received.signum).name}; "
                  f"stopping the workers", file=sys.stderr, flush=True)
            group.stop(received.signum)
            return 128 + received.signum
        except BaseException:
            group.kill()
            raise
        if failures is None:
            group.kill()  # (anything a worker left running)
            return 0
        group.stop(keep_error_files=any(f.error_file for f in failures))
        print(failure_report(config.name, failures), file=sys.stderr, flush=True)
        return _status(failures[0].exitcode)


def run(args: argparse.Namespace) -> int:
    """Launch the job parsed arguments describe (torchrun's ``run``); returns the exit status.

    >>> import subprocess, sys
    >>> subprocess.run([sys.executable, "-m", "jaxgrad.distributed.run", "--standalone",
    ...                 "--nproc-per-node", "1", "--no-python", "true"]).returncode
    0
    """
    config, cmd = config_from_args(args)
    return launch(config, cmd)


if __name__ == "__main__":  # (a worker: python -u -P launcher.py [-m] script args)
    _worker_main(sys.argv[1:])
