"""Moving tensors between devices and shardings, and keeping gradients where their leaves live.

``move`` is ``Tensor.to``'s device part: ``jax.device_put`` eagerly (inside ``jax.jit`` a
``device_put`` cannot change devices), recorded as torch's ``ToCopyBackward0``, whose backward
puts the gradient back on the source's placement. ``on_placement_of`` puts a gradient on its
leaf's device or sharding before it is accumulated into ``.grad`` (torch: ``.grad`` lives on the
parameter's device).
"""

from __future__ import annotations

from typing import Any

import jax

from .grad_mode import _state as _grad_state
from .graph import Node
from .tensor import Tensor
from .typename import public_path


def move(t: Tensor, target: Any) -> Tensor:
    """``t`` put on ``target`` (a jax.Device or Sharding); its grad_fn puts gradients back."""
    out = Tensor._make(jax.device_put(t._value, target))
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
        return [Tensor._make(jax.device_put(grad._value, self.source))]


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
    return jax.device_put(array, want)
