"""Moving tensors between devices and shardings, and keeping gradients where their leaves live.

``move`` is ``Tensor.to``'s device part: ``jax.device_put`` eagerly (inside ``jax.jit`` a
``device_put`` cannot change devices), recorded as torch's ``ToCopyBackward0``, whose backward
puts the gradient back on the source's placement. ``on_placement_of`` puts a gradient on its
leaf's device or sharding before it is accumulated into ``.grad`` (torch: ``.grad`` lives on the
parameter's device).

Across processes (``jaxgrad.distributed``: a sharding over the devices of several processes),
every process runs the same ``.to()``, as it runs every op on such a global tensor (:func:`put`):
onto a global sharding, each process gives the whole value it holds (the same tensor on every
process, as single-process ``.to(sharding)`` gives that tensor laid out over the devices) and
keeps the parts its own devices take; from a global tensor onto this process's devices, each
process receives the whole value (gathered first, a collective, unless it is replicated). A
gradient flows back the same way: onto this process's tensor, the whole gradient; onto a global
tensor, from each process's own whole gradient the parts its devices hold (torch DTensor's
``Replicate`` semantics: the processes' copies are one value).
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from .grad_mode import _state as _grad_state
from .graph import Node
from .tensor import Tensor
from .tensor_repr import spans_processes
from .typename import public_path


def move(t: Tensor, target: Any) -> Tensor:
    """``t`` put on ``target`` (a jax.Device or Sharding); its grad_fn puts gradients back."""
    out = Tensor._make(put(t._value, target))
    if _grad_state.grad and t._requires_grad:
        out._requires_grad = True
        out._grad_node = ToCopyBackward0(t._gradient_edge(), (out.shape, out._value.dtype),
                                       t._value.sharding)
    return out


@public_path("builtins")  # a C++ class in torch
class ToCopyBackward0(Node):
    """grad_fn of a move between devices: the gradient goes back to the source's placement
    (torch's ``grad.to(self.device)``), differentiably under ``create_graph``."""

    __slots__ = ("source",)

    def __init__(self, edge: Any, meta: tuple, source: Any) -> None:
        super().__init__((edge,), (meta,))
        self.source = source

    def apply(self, grads: list, create_graph: bool, wanted: tuple | None = None) -> list:
        grad = grads[0]
        if grad is None:
            return [None]
        if create_graph:
            return [move(grad, self.source)]
        return [Tensor._make(put(grad._value, self.source))]


def on_placement_of(grad: Tensor, leaf: Tensor, create_graph: bool) -> Tensor:
    """``grad`` on ``leaf``'s device or sharding (itself when it already is there)."""
    array = placed_like(grad._value, leaf)
    if array is grad._value:
        return grad
    return move(grad, array.sharding) if create_graph else Tensor._make(array)


def placed_like(array: jax.Array, leaf: Tensor) -> jax.Array:
    """``array`` on ``leaf``'s device or sharding (itself when it already is, or is traced, or
    the leaf is not committed to a placement: JAX moves such an array to the committed arrays
    it meets, and committing its gradient to one device would make it clash with them)."""
    if isinstance(array, jax.core.Tracer):
        return array
    value = leaf._value
    if not value.committed:
        return array
    have, want = array.sharding, value.sharding
    if have == want or have.is_equivalent_to(want, array.ndim):
        return array
    return put(array, want)


def put(array: jax.Array, target: Any) -> jax.Array:
    """``jax.device_put(array, target)`` (``target``: a jax.Device or Sharding), also between
    this process's devices and a sharding over several processes' devices, which JAX's
    ``device_put`` refuses (every process must make the same call, see the module's doc):

    - from this process's devices onto a sharding spanning processes: the whole ``array`` is
      this process's copy of the value (``jax.make_array_from_process_local_data`` with the full
      shape: each process's devices take their parts of it);
    - from an array spanning processes onto this process's devices: the whole value, read from
      this process's replica (gathered onto every device first unless it is replicated)."""
    if isinstance(array, jax.core.Tracer):
        return jax.device_put(array, target)
    if isinstance(target, jax.sharding.Sharding) and not target.is_fully_addressable:
        if spans_processes(array):
            return jax.device_put(array, target)
        return jax.make_array_from_process_local_data(target, array, array.shape)
    if spans_processes(array):
        if not array.is_fully_replicated:
            array = jax.device_put(array, _replicated(array.sharding))
        array = array.addressable_data(0)
    return jax.device_put(array, target)


def _replicated(sharding: jax.sharding.Sharding) -> jax.sharding.Sharding:
    """A sharding replicating an array over the devices of ``sharding``."""
    if isinstance(sharding, NamedSharding):
        return NamedSharding(sharding.mesh, PartitionSpec())
    devices = sorted(sharding.device_set, key=lambda d: d.id)
    return NamedSharding(Mesh(np.array(devices), ("devices",)), PartitionSpec())
