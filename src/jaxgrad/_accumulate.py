"""AccumulateGrad's rule for writing a gradient into a leaf's ``.grad`` (torch's semantics).

- first gradient: ``.grad`` becomes a detached alias of it when the engine owns it exclusively
  (torch steals the buffer), else a copy at version 1; under ``create_graph`` a copy with history,
  whose grad_fn is ``CopyBackwards``; either way of the gradient's own dtype (the engine has
  already cast it to the leaf's ``grad_dtype``: ``leaf_grad_dtype``);
- later gradients without ``create_graph``: added in place, so ``.grad`` stays the same object
  (and keeps its dtype);
- later gradients with ``create_graph``: ``.grad = .grad + new`` (out of place, with history).
The leaf's post-accumulate-grad hooks run afterwards (the engine's ``accumulate_grad``).
A gradient arriving on another device or sharding is first put where the leaf lives.
The in-place copy and add go straight to the dispatcher, so they record and bump versions as
``.copy_``/``.add_`` do (``CopyBackwards`` under ``create_graph``).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ._dispatch import apply, apply_inplace
from ._epoch import changed as structure_changed
from ._grad_mode import no_grad
from ._ops import elementwise as E
from ._placement import on_placement_of
from ._tensor import Tensor


def reset_grad(tensor, set_to_none: bool) -> None:
    """torch's zero_grad for one tensor: drop ``.grad``, or detach it and zero it in place."""
    grad = tensor.grad
    if grad is None:
        return
    if set_to_none:
        tensor.grad = None
        return
    if grad.grad_fn is not None:
        grad.detach_()
    else:
        grad.requires_grad_(False)
    apply_inplace(E.ZERO, grad)


def leaf_grad_dtype(variable: Tensor) -> np.dtype | None:
    """The dtype the engine casts a gradient for ``variable`` to before it reaches its
    AccumulateGrad node (torch's input metadata of that node): the leaf's ``grad_dtype``, read
    when the gradient arrives; None: any dtype is kept."""
    wanted = variable.grad_dtype if variable._grad_fn is None else variable.dtype
    return None if wanted is None else wanted.np


def obeys_layout_contract(grad: Tensor, variable: Tensor) -> bool:
    """torch's gradient layout contract: a stolen ``.grad`` has the leaf's strides (dims of
    size one aside), so a non-contiguous gradient (an expand) is copied instead."""
    return all(size == 1 or a == b for size, a, b in
               zip(variable.shape, grad.stride(), variable.stride()))


def accumulate_into_leaf(variable: Tensor, grad: Tensor, create_graph: bool,
                         stealable: bool = False) -> None:
    """Accumulate ``grad`` into ``variable.grad``; ``stealable``: the engine owns ``grad``."""
    grad = on_placement_of(grad, variable, create_graph)
    if variable._grad is None or create_graph:
        structure_changed()  # .grad becomes a new tensor
    if variable._grad is None:
        if create_graph:
            target = Tensor._make(jnp.empty(grad._value.shape, grad._value.dtype))
            variable._grad = apply_inplace(E.COPY, target, grad)
        elif stealable and obeys_layout_contract(grad, variable):
            variable._grad = grad.detach()  # torch steals the gradient: same storage and version
        else:
            variable._grad = Tensor._make(grad._value)
            variable._grad._vc.value = 1  # torch copies with new_empty_strided().copy_()
    elif not create_graph:
        with no_grad():
            apply_inplace(E.ADD, variable._grad, grad)
    else:
        variable._grad = apply(E.ADD, variable._grad, grad)
