"""The JAX-native data-parallel mode: tensors spanning processes. A mesh over every process's
devices, parameters replicated over it with ``Module.to(NamedSharding(mesh, P()))``, the batch
one global tensor whose rows are each process's local batch: every op is one XLA program over
all processes, and XLA inserts the all-reduce a replicated parameter's gradient needs."""

from __future__ import annotations

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding

from .._core.tensor import Tensor


def world_mesh(axis_name: str = "data") -> Mesh:
    """A one-axis mesh over the devices of every process (process by process, in order).

    >>> import jaxgrad.distributed as dist
    >>> dist.world_mesh().axis_names
    ('data',)
    """
    devices = sorted(jax.devices(), key=lambda d: (d.process_index, d.id))
    return Mesh(np.array(devices), (axis_name,))


def from_process_local(tensor: Tensor, sharding: NamedSharding) -> Tensor:
    """The tensor spanning processes whose parts are each process's ``tensor``
    (``jax.make_array_from_process_local_data``): with ``P("data")`` over a world mesh, the
    global batch whose rows are the processes' local batches in process order; with ``P()``,
    each process's ``tensor`` is its replica (they should be equal). A new tensor without
    history; every process calls it.

    >>> import jaxgrad, jaxgrad.distributed as dist
    >>> from jax.sharding import NamedSharding, PartitionSpec as P
    >>> rows = NamedSharding(dist.world_mesh(), P("data"))
    >>> dist.from_process_local(jaxgrad.ones(2, 3), rows).shape  # (one process here)
    jaxgrad.Size([2, 3])
    """
    value = tensor.detach()._value
    return Tensor._make(jax.make_array_from_process_local_data(sharding, value))
