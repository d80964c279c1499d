"""``python -m jaxgrad.distributed.run``: torchrun's launcher for jaxgrad (and torch) programs.

It starts ``--nproc-per-node`` processes on this node, each running the script with torchrun's
environment variables (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``,
``GROUP_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``) and ``JAXGRAD_COORDINATOR_PORT``, the port of
JAX's coordinator that ``jaxgrad.distributed.init_process_group()`` joins (a free port on one
node; ``--master-port`` + 1 across nodes, so that every node agrees on it). Workers inherit the
launcher's stdout and stderr. When a worker fails the others get SIGTERM and, after a short
grace, SIGKILL (JAX's runtime can ignore SIGTERM); the launcher then prints torchrun's summary,
naming the failed rank, and exits with that rank's exit code. ``--max-time SECONDS`` (jaxgrad's
addition) stops a job that runs too long (exit status 124). Ctrl-C stops the workers too.

One node, two processes, free ports on 127.0.0.1::

    python -m jaxgrad.distributed.run --standalone --nproc-per-node 2 train.py --epochs 3

Two nodes (run on each, with its ``--node-rank``)::

    python -m jaxgrad.distributed.run --nnodes 2 --node-rank 0 --nproc-per-node 4 \\
        --master-addr 10.0.0.1 --master-port 29500 train.py

where ``train.py`` calls ``jaxgrad.distributed.init_process_group("gloo")`` first.

>>> from jaxgrad.distributed.run import parse_args
>>> parse_args(["--nproc-per-node", "2", "train.py"]).nproc_per_node
'2'
"""

from __future__ import annotations

import sys

from .._distributed.launcher import (
    LaunchConfig,
    config_from_args,
    get_args_parser,
    launch,
    parse_args,
    run,
)


def main(argv: list[str] | None = None) -> None:
    """Parse ``argv`` (``sys.argv[1:]`` when None), run the job and exit with its status: 0,
    the failed rank's exit code, or 124 when ``--max-time`` passed.

    >>> from jaxgrad.distributed.run import main
    >>> main(["--nnodes", "1:4", "train.py"])  # (argparse prints why to stderr)
    Traceback (most recent call last):
    SystemExit: 2
    """
    args = parse_args(argv)
    try:
        status = run(args)
    except ValueError as error:  # (a bad flag value: argparse's way of saying so)
        get_args_parser().error(str(error))
    sys.exit(status)


__all__ = ["LaunchConfig", "config_from_args", "get_args_parser", "launch", "main",
           "parse_args", "run"]

if __name__ == "__main__":
    main()
