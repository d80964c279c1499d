"""The checkpoint directory (torch's ``FileSystemWriter`` / ``FileSystemReader``, the only
storage) and its files:

- ``__{rank}_0.distcp``: the raw bytes (C order, native byte order: little-endian wherever JAX
  runs) of each chunk that rank writes, one after another, and on rank 0 also the pickles of
  the non-tensor values;
- ``.metadata``: JSON, ``{"format": "jaxgrad.distributed.checkpoint", "version": 1,
  "state_dict": {fqn: entry}}`` in the state dict's order, an entry being ``{"type":
  "tensor", "dtype": "float32", "requires_grad": false, "size": [8, 6], "chunks": [{"offsets":
  [0, 0], "sizes": [4, 6], "file": "__0_0.distcp", "offset": 0, "length": 96}, ...]}`` or
  ``{"type": "bytes", "file": "__0_0.distcp", "offset": 96, "length": 15}``.

Files are written under a temporary name and renamed into place, the metadata last (after a
barrier: a checkpoint with a ``.metadata`` is complete). Data files are read memory-mapped:
only the pages needed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .metadata import Metadata, StorageInfo, from_json

__all__ = ["FileSystemReader", "FileSystemWriter"]


METADATA_FILE = ".metadata"


class _Directory:
    """The storage's checkpoint directory, ``path``: torch's ``reset`` and
    ``validate_checkpoint_id``, common to the writer and the reader."""

    path: Path

    def reset(self, checkpoint_id: str | os.PathLike | None = None) -> None:
        """Point at the directory ``checkpoint_id`` (when given)."""
        if checkpoint_id:
            self.path = Path(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike) -> bool:
        """Whether ``checkpoint_id`` names a path (any local path does)."""
        return isinstance(checkpoint_id, (str, os.PathLike))


class FileSystemWriter(_Directory):
    """Where :func:`save` writes: a directory (created if missing). ``sync_files`` fsyncs each
    file; ``overwrite=False`` refuses a directory that already holds a checkpoint. The other
    arguments are torch's and accepted for compatibility (one file per rank is always written).

    >>> import tempfile
    >>> import jaxgrad.distributed.checkpoint as dcp
    >>> with tempfile.TemporaryDirectory() as d:
    ...     str(dcp.FileSystemWriter(d).path) == d
    True
    """

    def __init__(self, path: str | os.PathLike, single_file_per_rank: bool = True,
                 sync_files: bool = True, thread_count: int = 1,
                 per_thread_copy_ahead: int = 10_000_000, cache_staged_state_dict: bool = False,
                 overwrite: bool = True) -> None:
        self.path = Path(path)
        self.single_file_per_rank = single_file_per_rank
        self.sync_files = sync_files
        self.thread_count = thread_count
        self.per_thread_copy_ahead = per_thread_copy_ahead
        self.cache_staged_state_dict = cache_staged_state_dict
        self.overwrite = overwrite


class FileSystemReader(_Directory):
    """Where :func:`load` reads: a checkpoint directory. ``read_metadata()`` gives its
    :class:`Metadata`.

    >>> import tempfile
    >>> import jaxgrad, jaxgrad.distributed as dist, jaxgrad.distributed.checkpoint as dcp
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29521", rank=0,
    ...                         world_size=1)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = dcp.save({"w": jaxgrad.ones(2, 3), "epoch": 1}, checkpoint_id=d)
    ...     metadata = dcp.FileSystemReader(d).read_metadata()
    >>> metadata.state_dict_metadata["w"].size, metadata.state_dict_metadata["epoch"]
    (jaxgrad.Size([2, 3]), BytesStorageMetadata())
    >>> dist.destroy_process_group()
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    def read_metadata(self) -> Metadata:
        """The checkpoint's :class:`Metadata` (its ``.metadata`` file)."""
        return from_json((self.path / METADATA_FILE).read_text())


def resolve_storage(given: Any, checkpoint_id: Any, kind: type) -> Any:
    """The storage to use: ``given`` (pointed at ``checkpoint_id`` when given), or a new
    ``kind`` at ``checkpoint_id``."""
    if given is not None:
        if not isinstance(given, kind):
            raise NotImplementedError(f"jaxgrad.distributed.checkpoint supports "
                                      f"{kind.__name__} storage only, not {type(given).__name__}")
        if checkpoint_id is not None:
            given.reset(checkpoint_id)
        return given
    if not checkpoint_id:
        raise RuntimeError("`checkpoint_id` must be specified if storage_reader/storage_writer "
                           "is None.")
    return kind(checkpoint_id)


def file_name(rank: int) -> str:
    """The data file rank ``rank`` writes."""
    return f"__{rank}_0.distcp"


def _as_bytes(data: Any) -> memoryview:
    if isinstance(data, bytes):
        return memoryview(data)
    return np.ascontiguousarray(data).reshape(-1).view(np.uint8).data


def write_atomic(path: Path, chunks: Iterable, sync: bool) -> None:
    """Write the byte chunks to ``path`` under a temporary name, then rename it into place (a
    reader of the old file keeps reading the old file)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        for chunk in chunks:
            f.write(chunk)
        if sync:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)


def write_items(path: Path, items: Iterable, sync: bool) -> None:
    """Write the data file ``path``: the bytes of each item (its ``produce()``), which must fill
    it end to end at the items' ``offset`` and ``length``."""

    def chunks():
        written = 0
        for item in items:
            data = _as_bytes(item.produce())
            if written != item.offset or data.nbytes != item.length:
                raise RuntimeError(f"jaxgrad.distributed.checkpoint: the layout of {path.name} "
                                   f"disagrees with its data (internal error)")
            written += data.nbytes
            yield data

    write_atomic(path, chunks(), sync)


class DataFiles:
    """The checkpoint's data files, memory-mapped when first read."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.maps: dict[str, np.ndarray] = {}

    def bytes(self, info: StorageInfo) -> np.ndarray:
        if info.relative_path not in self.maps:
            self.maps[info.relative_path] = np.memmap(self.root / info.relative_path,
                                                      np.uint8, "r")
        return self.maps[info.relative_path][info.offset:info.offset + info.length]

    def chunk(self, info: StorageInfo, np_dtype: np.dtype, sizes: tuple) -> np.ndarray:
        return self.bytes(info).view(np_dtype).reshape(sizes)
