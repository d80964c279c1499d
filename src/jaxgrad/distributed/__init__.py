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
    all_gather_object,
    all_reduce,
    barrier,
    broadcast,
    broadcast_object_list,
    gather,
    reduce,
    reduce_scatter_tensor,
    scatter,
)
from .._distributed.global_arrays import from_process_local, world_mesh
from .._distributed.process_group import (
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_initialized,
    new_group,
)


def is_available() -> bool:
    """Whether this build has distributed support (always: JAX's runtime provides it).

    >>> import jaxgrad.distributed as dist
    >>> dist.is_available()
    True
    """
    return True


__all__ = ["GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather",
           "all_gather_into_tensor", "all_gather_object", "all_reduce", "barrier", "broadcast",
           "broadcast_object_list", "destroy_process_group", "from_process_local", "gather",
           "get_backend", "get_global_rank", "get_group_rank", "get_process_group_ranks",
           "get_rank", "get_world_size", "group", "init_process_group", "is_available",
           "is_initialized", "new_group", "reduce", "reduce_scatter_tensor", "scatter",
           "world_mesh"]
