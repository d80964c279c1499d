"""What a dataset running inside a DataLoader worker can learn about that worker."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

_current = threading.local()


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """The worker a dataset runs in: its ``id`` (0 .. ``num_workers - 1``), ``num_workers``, the
    ``seed`` its random generators were seeded with, and its own copy of the ``dataset``.

    >>> from jaxgrad.utils.data._utils.worker import WorkerInfo
    >>> WorkerInfo(id=0, num_workers=2, seed=7, dataset=[1]).num_workers
    2
    """

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "in-process"


def get_worker_info() -> WorkerInfo | None:
    """The :class:`WorkerInfo` of the DataLoader worker running this code; None in the main
    process (and always with ``num_workers=0``).

    >>> import jaxgrad
    >>> jaxgrad.utils.data.get_worker_info() is None
    True
    """
    return getattr(_current, "info", None)


def set_worker_info(info: WorkerInfo | None) -> None:
    """Make ``info`` what :func:`get_worker_info` returns in this thread (None: the main
    process)."""
    _current.info = info
