"""torch's checkpoint metadata types (``torch.distributed.checkpoint.metadata``), the exception
:func:`~jaxgrad.distributed.checkpoint.save` and ``load`` raise, and the metadata's JSON form
(the ``.metadata`` file: see :mod:`jaxgrad._distributed.checkpoint.filesystem`)."""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass, field
from typing import Any

import jax.numpy as jnp

from ..._core.dtypes import dtype as _dtype
from ..._core.dtypes import from_numpy_dtype
from ..._core.tensor import Size

__all__ = ["BytesStorageMetadata", "CheckpointException", "ChunkStorageMetadata", "Metadata",
           "MetadataIndex", "TensorProperties", "TensorStorageMetadata"]


FORMAT = "jaxgrad.distributed.checkpoint"
VERSION = 1


@dataclass
class ChunkStorageMetadata:
    """Where one saved chunk of a tensor sits in it: its ``offsets`` and ``sizes`` per dim.

    >>> from jaxgrad.distributed.checkpoint import ChunkStorageMetadata
    >>> ChunkStorageMetadata(offsets=(0, 0), sizes=(2, 3)).sizes
    (2, 3)
    """

    offsets: Size
    sizes: Size


@dataclass
class TensorProperties:
    """A saved tensor's dtype and whether it required grad.

    >>> import jaxgrad
    >>> from jaxgrad.distributed.checkpoint import TensorProperties
    >>> TensorProperties(jaxgrad.float32).dtype
    jaxgrad.float32
    """

    dtype: _dtype
    requires_grad: bool = False


@dataclass
class TensorStorageMetadata:
    """A saved tensor: its properties, global size and the chunks it was saved as.

    >>> import jaxgrad
    >>> from jaxgrad.distributed.checkpoint import TensorStorageMetadata, TensorProperties
    >>> TensorStorageMetadata(TensorProperties(jaxgrad.int64), jaxgrad.Size([3]), []).size
    jaxgrad.Size([3])
    """

    properties: TensorProperties
    size: Size
    chunks: list[ChunkStorageMetadata]


@dataclass
class BytesStorageMetadata:
    """A saved non-tensor value (pickled).

    >>> from jaxgrad.distributed.checkpoint import BytesStorageMetadata
    >>> BytesStorageMetadata()
    BytesStorageMetadata()
    """


@dataclass(frozen=True)
class MetadataIndex:
    """The key of one stored item: a value's flattened name and, for a tensor chunk, its
    offsets.

    >>> from jaxgrad.distributed.checkpoint import MetadataIndex
    >>> MetadataIndex("model.weight", (0, 0)) == MetadataIndex("model.weight", (0, 0), index=3)
    True
    """

    fqn: str
    offset: Size | None = None
    index: int | None = field(hash=False, compare=False, default=None)


@dataclass
class StorageInfo:
    """Where an item's bytes are: a file of the checkpoint directory, a byte offset, a length."""

    relative_path: str
    offset: int
    length: int


@dataclass
class Metadata:
    """A checkpoint's metadata: what :func:`save` returns and ``.metadata`` holds.
    ``state_dict_metadata`` maps each flattened name to a :class:`TensorStorageMetadata` or a
    :class:`BytesStorageMetadata`; ``storage_data`` maps each :class:`MetadataIndex` to where its
    bytes are.

    >>> from jaxgrad.distributed.checkpoint import Metadata
    >>> Metadata(state_dict_metadata={}).storage_data is None
    True
    """

    state_dict_metadata: dict[str, TensorStorageMetadata | BytesStorageMetadata]
    planner_data: Any = None
    storage_data: Any = None
    storage_meta: Any = None
    version: str | None = None


class CheckpointException(BaseException):
    """What :func:`save` and :func:`load` raise when a step fails on a rank (as torch's, a
    ``BaseException``): ``failures`` maps the rank to (the exception, its traceback).

    >>> from jaxgrad.distributed.checkpoint import CheckpointException
    >>> error = CheckpointException("load", {0: (RuntimeError("no"), None)})
    >>> print(error)
    CheckpointException ranks:dict_keys([0])
    Traceback (most recent call last): (RANK 0)
    RuntimeError: no
    """

    def __init__(self, msg: str, failures: dict[int, tuple]) -> None:
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self) -> dict[int, tuple]:
        """Each failed rank's (exception, traceback summary)."""
        return self._failures

    def __str__(self) -> str:
        text = f"CheckpointException ranks:{self._failures.keys()}\n"
        for rank, (exc, trace) in self._failures.items():
            text += f"Traceback (most recent call last): (RANK {rank})\n"
            if trace is not None:
                text += "".join(traceback.format_list(trace))
            text += "".join(traceback.format_exception_only(type(exc), exc))
        return text


def to_json(metadata: Metadata) -> str:
    """``metadata`` as the text of a ``.metadata`` file."""
    storage = metadata.storage_data
    out: dict[str, Any] = {}
    for fqn, entry in metadata.state_dict_metadata.items():
        if isinstance(entry, TensorStorageMetadata):
            chunks = []
            for chunk in entry.chunks:
                info = storage[MetadataIndex(fqn, chunk.offsets)]
                chunks.append({"offsets": list(chunk.offsets), "sizes": list(chunk.sizes),
                               "file": info.relative_path, "offset": info.offset,
                               "length": info.length})
            out[fqn] = {"type": "tensor", "dtype": entry.properties.dtype.name,
                        "requires_grad": entry.properties.requires_grad,
                        "size": list(entry.size), "chunks": chunks}
        else:
            info = storage[MetadataIndex(fqn)]
            out[fqn] = {"type": "bytes", "file": info.relative_path, "offset": info.offset,
                        "length": info.length}
    return json.dumps({"format": FORMAT, "version": VERSION, "state_dict": out}, indent=1)


def from_json(text: str) -> Metadata:
    """The :class:`Metadata` a ``.metadata`` file's text holds."""
    data = json.loads(text)
    if data.get("format") != FORMAT:
        raise RuntimeError("not a jaxgrad.distributed.checkpoint checkpoint (its .metadata has "
                           "another format)")
    entries: dict[str, Any] = {}
    storage: dict[MetadataIndex, StorageInfo] = {}
    for fqn, entry in data["state_dict"].items():
        if entry["type"] == "tensor":
            chunks = []
            for i, c in enumerate(entry["chunks"]):
                chunk = ChunkStorageMetadata(Size(c["offsets"]), Size(c["sizes"]))
                storage[MetadataIndex(fqn, chunk.offsets, i)] = StorageInfo(
                    c["file"], c["offset"], c["length"])
                chunks.append(chunk)
            d = from_numpy_dtype(jnp.dtype(entry["dtype"]))
            entries[fqn] = TensorStorageMetadata(
                TensorProperties(d, entry["requires_grad"]), Size(entry["size"]), chunks)
        else:
            storage[MetadataIndex(fqn)] = StorageInfo(entry["file"], entry["offset"],
                                                      entry["length"])
            entries[fqn] = BytesStorageMetadata()
    return Metadata(entries, storage_data=storage, version=str(data["version"]))
