"""AccumulateGrad's rule for writing a gradient into a leaf's ``.grad`` (torch's semantics).

- first gradient: ``.grad`` becomes a detached alias of it when the engine owns it exclusively
  and it obeys the layout contract (torch steals the buffer), else a copy (torch's
  ``clone_obey_contract``): for a non-overlapping and dense leaf, a tensor with the leaf's
  strides filled by ``copy_`` (version 1; ``CopyBackwards`` under ``create_graph``), for any
  other leaf a contiguous clone (version 0; ``CloneBackward0`` under ``create_graph``); either
  way of the gradient's own dtype (the engine has already cast it to the leaf's
  ``grad_dtype``: ``leaf_grad_dtype``);
- later gradients without ``create_graph``: added in place, so ``.grad`` stays the same object
  (and keeps its dtype);
- later gradients with ``create_graph``: ``.grad = .grad + new`` (out of place, with history).
The leaf's post-accumulate-grad hooks run afterwards (the engine's ``accumulate_grad``).
A gradient arriving on another device or sharding is first put where the leaf lives.
The in-place copy and add go straight to the dispatcher, so they record and bump versions as
``.copy_``/``.add_`` do (``CopyBackwards`` under ``create_graph``). Which gradients may be
taken rather than copied: Note [Gradient ownership and stealing] below.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._core.epoch import changed as structure_changed
from .._core.grad_mode import no_grad
from .._core.jax_setup import x64_scope
from .._core.placement import on_placement_of
from .._core.storage import Layout, Storage, contiguous_strides
from .._core.tensor import Tensor, dispatches_in_python
from .._ops import elementwise as E
from .._ops.views import CLONE
from .dispatch import apply, apply_inplace

# Note [Gradient ownership and stealing]
# torch's AccumulateGrad does not copy a leaf's first gradient when it can take it: when the
# engine holds the only reference to the gradient (its use_count is 1) and the gradient obeys the
# leaf's layout contract (dense, with the leaf's strides), ``.grad`` becomes that very tensor's
# storage, at that tensor's ``_version``; otherwise ``.grad`` is a copy (``_version`` 1:
# ``new_empty_strided().copy_()``) or, for a leaf that is not dense, a contiguous clone (0). The
# difference is observable: ``x.grad._version``, and whether a tensor a hook received and wrote
# into later is ``x.grad``. Later gradients are summed into ``.grad`` in place.
# jaxgrad has no use_count, so one backward's GraphTask (``_engine/engine.py``) tracks ownership:
# - ``owned``: the gradients the engine made (a node's outputs, a sum of two buffers, a dtype
#   cast), referenced by nothing outside the engine; only these may be stolen;
# - ``shared``: owned gradients a tensor hook kept a reference to (``call_hook`` compares
#   reference counts around the hook): torch's use_count is then 2, so they are copied;
# - ``holders``: a gradient a node hands to several inputs sits in several input buffers, and only
#   the last of them to run may steal it (``_only_holder``);
# - ``views``: owned gradients that are views of another gradient (torch's ``sum_to`` over
#   leading dims, ``cat``'s narrow): stealable, but never summed into in place, since their
#   storage has a second owner.
# What torch's formula returns, and so whether its gradient obeys the layout contract and at which
# ``_version``, is a row's ``grad_layout`` and ``grad_version`` (``_ops/_table.py``). The compiled
# backward makes the same decisions: it runs this engine code over a shadow graph.


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
    wanted = variable.grad_dtype if variable._grad_node is None else variable.dtype
    return None if wanted is None else wanted.np


def non_overlapping_and_dense(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """torch's ``is_non_overlapping_and_dense``: some permutation of the dims is contiguous."""
    required = 1
    for size, stride in sorted(((n, s) for n, s in zip(shape, strides) if n >= 2),
                               key=lambda pair: pair[1]):
        if stride != required:
            return False
        required *= size
    return True


def obeys_layout_contract(grad: Tensor, variable: Tensor) -> bool:
    """torch's gradient layout contract: a stolen ``.grad`` of a non-overlapping and dense leaf
    has the leaf's strides (dims of size one aside, unless the gradient's stride there is 0), so
    a non-contiguous gradient (an expand) is copied instead; any other leaf's, contiguous."""
    if not non_overlapping_and_dense(variable.shape, variable.stride()):
        return grad.is_contiguous()
    return all(b == c if size != 1 else b != 0 for size, b, c in
               zip(variable.shape, grad.stride(), variable.stride()))


def with_strides(array, strides: tuple[int, ...]) -> Tensor:
    """A tensor holding ``array`` laid out with the non-overlapping and dense ``strides``
    (torch's ``new_empty_strided(sizes, strides).copy_(...)`` without the version bump)."""
    shape = tuple(array.shape)
    if strides == contiguous_strides(shape):
        return Tensor._make(array)
    with x64_scope():
        out = Tensor._make(None, cell=Storage(jnp.zeros_like(array).reshape(-1)))
    out._layout = Layout(shape, tuple(strides), 0)
    out._write(array)
    return out


def accumulate_into_leaf(variable: Tensor, grad: Tensor, create_graph: bool,
                         stealable: bool = False) -> None:
    """Accumulate ``grad`` into ``variable.grad``; ``stealable``: the engine owns ``grad``
    (Note [Gradient ownership and stealing])."""
    if dispatches_in_python(grad) or dispatches_in_python(variable):
        structure_changed()
        with no_grad():  # (spike) a subclass gradient: stolen, or summed by its dispatch
            variable._grad = grad if variable._grad is None else apply(E.ADD, variable._grad,
                                                                       grad)
        return
    grad = on_placement_of(grad, variable, create_graph)
    if variable._grad is None or create_graph:
        structure_changed()  # .grad becomes a new tensor
    if variable._grad is None:
        dense = non_overlapping_and_dense(variable.shape, variable.stride())
        if not create_graph and stealable and obeys_layout_contract(grad, variable):
            variable._grad = grad.detach()  # torch steals the gradient: same storage and version
        elif not dense:  # torch's clone(MemoryFormat::Contiguous)
            variable._grad = apply(CLONE, grad) if create_graph else Tensor._make(grad._value)
        elif create_graph:  # new_empty_strided(...).copy_(grad), recorded
            with x64_scope():
                empty = jnp.empty(grad._value.shape, grad._value.dtype)
            target = with_strides(empty, variable.stride())
            variable._grad = apply_inplace(E.COPY, target, grad)
        else:
            variable._grad = with_strides(grad._value, variable.stride())
            variable._grad._vc.value = 1  # torch copies with new_empty_strided().copy_()
    elif not create_graph:
        with no_grad():
            apply_inplace(E.ADD, variable._grad, grad)
    else:
        variable._grad = apply(E.ADD, variable._grad, grad)
