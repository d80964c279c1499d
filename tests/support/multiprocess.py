"""Run one Python program as several processes of one JAX multi-controller runtime, on
127.0.0.1 only: a free port per run, every wait bounded, every child killed when the run ends.

Each process first joins the runtime (``jax.distributed.initialize``, process ``RANK`` of
``WORLD_SIZE``, with short timeouts), then runs the program; what it prints on lines starting
with ``RESULT `` (a JSON value) comes back, per rank.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field

JOIN = """
import os, jax
jax.distributed.initialize(
    coordinator_address=f"127.0.0.1:{os.environ['JAX_COORDINATOR_PORT']}",
    coordinator_bind_address=f"127.0.0.1:{os.environ['JAX_COORDINATOR_PORT']}",
    num_processes=int(os.environ["WORLD_SIZE"]), process_id=int(os.environ["RANK"]),
    initialization_timeout=30, heartbeat_timeout_seconds=10, shutdown_timeout_seconds=10)
"""


@dataclass
class Rank:
    """What one process did: its exit code, its output and the values it reported."""

    returncode: int | None
    stdout: str
    stderr: str
    results: list = field(default_factory=list)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(program: str, world: int = 2, timeout: float = 90.0, join: bool = True,
              env: dict | None = None) -> list[Rank]:
    """Run ``program`` as ``world`` processes (joined into one JAX runtime when ``join``);
    children still running after ``timeout`` seconds are killed (their returncode is then
    negative)."""
    source = (JOIN if join else "") + textwrap.dedent(program)
    port = free_port()
    children = []
    try:
        for rank in range(world):
            child_env = {**os.environ, **(env or {}), "RANK": str(rank),
                         "WORLD_SIZE": str(world), "JAX_COORDINATOR_PORT": str(port),
                         "JAX_PLATFORMS": "cpu"}
            children.append(subprocess.Popen(
                [sys.executable, "-c", source], env=child_env, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True))
        deadline = time.monotonic() + timeout
        finished = []
        for child in children:
            try:
                out, err = child.communicate(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                _kill_all(children)
                out, err = child.communicate(timeout=10)
            finished.append(Rank(child.returncode, out, err, [
                json.loads(line[len("RESULT "):]) for line in out.splitlines()
                if line.startswith("RESULT ")]))
        return finished
    finally:
        _kill_all(children)


def _kill_all(children: list) -> None:
    for child in children:
        if child.poll() is None:
            child.kill()
    for child in children:
        with contextlib.suppress(subprocess.TimeoutExpired):  # (killed; reaped by the OS)
            child.wait(timeout=10)
