"""``jaxgrad.distributed.checkpoint``: torch's Distributed Checkpoint (DCP). Every rank calls
:func:`save` and :func:`load` with its state dict; each writes and reads only the shards of the
tensors it holds, so a checkpoint saved with one sharding loads into another (or into plain
local tensors). The format is jaxgrad's own (raw chunks per rank and a JSON ``.metadata``;
see ``jaxgrad._distributed.checkpoint.filesystem``), not torch's pickles.

>>> import tempfile
>>> import jaxgrad, jaxgrad.distributed as dist
>>> import jaxgrad.distributed.checkpoint as dcp
>>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29524", rank=0, world_size=1)
>>> model = jaxgrad.nn.Linear(2, 2)
>>> fresh = jaxgrad.nn.Linear(2, 2)
>>> with tempfile.TemporaryDirectory() as d:
...     _ = dcp.save({"model": model.state_dict()}, checkpoint_id=d)
...     state = {"model": fresh.state_dict()}
...     dcp.load(state, checkpoint_id=d)
>>> bool((fresh.weight == model.weight).all())
True
>>> dist.destroy_process_group()
"""

from ..._distributed.checkpoint.api import load, save
from ..._distributed.checkpoint.filesystem import FileSystemReader, FileSystemWriter
from ..._distributed.checkpoint.metadata import (
    BytesStorageMetadata,
    CheckpointException,
    ChunkStorageMetadata,
    Metadata,
    MetadataIndex,
    TensorProperties,
    TensorStorageMetadata,
)
from ..._distributed.checkpoint.planner import DefaultLoadPlanner, DefaultSavePlanner

__all__ = ["BytesStorageMetadata", "CheckpointException", "ChunkStorageMetadata",
           "DefaultLoadPlanner", "DefaultSavePlanner", "FileSystemReader", "FileSystemWriter",
           "Metadata", "MetadataIndex", "TensorProperties", "TensorStorageMetadata", "load",
           "save"]
