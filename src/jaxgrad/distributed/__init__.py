"""``jaxgrad.distributed``: torch.distributed's names on JAX's multi-controller runtime.

Each process is one rank (``init_process_group`` joins ``jax.distributed``); collectives are
XLA programs over a mesh with one device per process, run by JAX's transport (gloo on CPU).

>>> import jaxgrad.distributed as dist
>>> dist.is_available()
True
"""

from .._distributed.collectives import (
    ReduceOp,
    Work,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    barrier,
    broadcast,
    reduce_scatter_tensor,
)
from .._distributed.process_group import (
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_initialized,
)


def is_available() -> bool:
    """Whether this build has distributed support (always: JAX's runtime provides it)."""
    return True


__all__ = ["ProcessGroup", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor",
           "all_reduce", "barrier", "broadcast", "destroy_process_group", "get_backend",
           "get_rank", "get_world_size", "init_process_group", "is_available",
           "is_initialized", "reduce_scatter_tensor"]
