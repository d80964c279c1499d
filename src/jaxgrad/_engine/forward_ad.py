"""Forward-mode AD (torch's dual tensors): the level state, tangents on tensors, and their
propagation through every op.

Each level maps the tensors holding a tangent at it (by id, with a weak reference whose callback
forgets a tensor when it dies) to their tangents, so leaving the level drops them all, and
``detach()``, ``.data`` and ``deepcopy`` (new tensors) carry none; ``detach_()`` marks its tensor
and the tangent is forgotten on sight. The dual-tensor API (the default level torch keeps as
``_current_level``, ``make_dual``, ``unpack_dual``) lives here too, so that ``gradcheck`` runs its
forward checks on dual tensors as torch's does. The dispatcher makes ONE check
per op, ``active`` (a module flag, true while a level exists, forward grad is enabled and no
tangent is being computed), and only then calls in here.

A result's tangent is ``jax.jvp`` of the op's own jitted forward kernel, run as a jaxgrad op
(its backward is the VJP of that JVP), so every op has forward AD, and tangents carry reverse
mode history (forward-over-reverse); a row marked ``forward_ad=False`` (torch gives no formula)
raises torch's NotImplementedError instead, and a row without formulas leaves tangents as they
are. A view's tangent is the same view of its source's tangent; an in-place op writes the new
tangent into the written tensor's tangent (which, for a view, is a view of its base's tangent:
a base without one first gets zeros). ``dispatch`` hands in its own
entry points (a :class:`Dispatch`), as the engine hands itself to the compiled backward.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from .._core.caches import cache
from .._core.grad_mode import _state as _grad_state
from .._core.grad_mode import is_inference_mode_enabled
from .._core.graph import TANGENT_SOURCE
from .._core.jax_setup import x64_scope
from .._core.storage import Layout, contiguous_strides, scatter
from .._core.tensor import FORWARD_GRAD_DROPPED, Tensor, refuse_python_dispatch
from .._core.tensor_repr import is_batched, show_tangents
from .._core.transform_stack import stack
from .._core.typename import type_name
from .._ops import elementwise as E
from .._ops import views as V
from .._ops._table import Op, jitted_forward

NOT_FORWARD_VIEW = "_fw_not_a_view"  # make_dual / unpack_dual results: no tangent from the base

active = False  # the dispatcher's one check
_levels: list[dict[int, tuple]] = []  # per level: id(tensor) -> (weakref to it, its tangent)
_enabled = True
_suspended = 0
default_level = -1  # the level make_dual & co use when given none (torch's ``_current_level``)


class Dispatch(NamedTuple):
    """The dispatcher's entry points that propagation runs tangents through."""

    apply: Callable
    apply_view: Callable
    apply_inplace: Callable
    apply_inplace_view: Callable
    make_view: Callable
    vjp_op: Callable
    snapshot: Callable  # a tensor's value and autograd identity now, apart from its storage


def _refresh() -> None:
    global active
    active = bool(_levels) and _enabled and not _suspended


# --- levels ------------------------------------------------------------------------------------

def current_level() -> int:
    """The innermost level (-1 when none)."""
    return len(_levels) - 1


def enter_level() -> int:
    """Open a level; only one may exist at a time, as in torch."""
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _levels.append({})
    _refresh()
    return 0


def exit_level(level: int) -> None:
    """Close ``level``: every tangent held at it is dropped."""
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    check_level(level)
    _levels.pop()
    _refresh()


def check_level(level: int) -> None:
    """torch's error for a level that does not exist (any more)."""
    if not 0 <= level < len(_levels):
        raise RuntimeError("Trying to access a forward AD level with an invalid index. This index "
                           "was either not created or is already deleted.")


def enter_dual_level(ops: Dispatch) -> int:
    """Open a level and make it the default one; tensors print their tangents at it."""
    global default_level
    new_level = enter_level()
    if new_level != default_level + 1:
        raise RuntimeError("Entering a new forward AD level but the current level is not valid. "
                           "Make sure you did not modify it directly.")
    default_level = new_level
    show_tangents(lambda t: tangent_of(ops, t, new_level) if _levels else None)
    return new_level


def exit_dual_level(level: int | None = None) -> None:
    """Close the default level (``level``, when given, must be it)."""
    global default_level
    if level is None:
        level = default_level
    if level != default_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was "
                           "created. This is not supported.")
    exit_level(level)
    default_level = level - 1
    show_tangents(None)


@contextmanager
def dual_level(ops: Dispatch) -> Iterator[int]:
    """A level open inside the block."""
    level = enter_dual_level(ops)
    try:
        yield level
    finally:
        exit_dual_level()


def has_tangent(ops: Dispatch, t: Any) -> bool:
    """Whether ``t`` is a tensor with a tangent at the current level."""
    return (active and isinstance(t, Tensor)
            and tangent_of(ops, t, current_level()) is not None)


def is_enabled() -> bool:
    return _enabled


def is_suspended() -> bool:
    """Whether propagation is suspended (inside an ``autograd.Function``'s forward)."""
    return bool(_suspended)


def set_enabled(mode: bool) -> None:
    global _enabled
    _enabled = bool(mode)
    _refresh()


@contextmanager
def suspended() -> Iterator[None]:
    """No propagation inside (while computing tangents, which carry none themselves)."""
    global _suspended
    _suspended += 1
    _refresh()
    try:
        yield
    finally:
        _suspended -= 1
        _refresh()


# --- tangents on tensors -------------------------------------------------------------------------

def own_tangent(t: Tensor, level: int) -> Tensor | None:
    """The tangent set on ``t`` itself at ``level`` (none since ``t.detach_()``)."""
    if not 0 <= level < len(_levels):
        return None
    if t.__dict__.pop(FORWARD_GRAD_DROPPED, False):
        _levels[level].pop(id(t), None)
        return None
    entry = _levels[level].get(id(t))
    return None if entry is None else entry[1]


def set_tangent(t: Tensor, level: int, tangent: Tensor | None) -> None:
    """Make ``tangent`` ``t``'s tangent at ``level`` (None removes it). The level holds it while
    ``t`` lives (a weak reference's callback lets go when ``t`` dies)."""
    registry, key = _levels[level], id(t)
    t.__dict__.pop(FORWARD_GRAD_DROPPED, None)
    if tangent is None:
        registry.pop(key, None)
        return
    entry = registry.get(key)
    ref = entry[0] if entry is not None else weakref.ref(
        t, lambda _, key=key, registry=registry: registry.pop(key, None))
    registry[key] = (ref, tangent)


def tangent_of(ops: Dispatch, t: Tensor, level: int) -> Tensor | None:
    """``t``'s tangent: its own, or for a view the same view of its base's tangent."""
    own = own_tangent(t, level)
    if own is not None:
        return own
    source = t.__dict__.get(TANGENT_SOURCE)
    if source is not None:  # a saved output, unpacked: its tangent is the output's
        return own_tangent(source, level)
    base = t._base
    if base is None or t.__dict__.get(NOT_FORWARD_VIEW):
        return None
    base_tangent = own_tangent(base, level)
    if base_tangent is None:
        return None
    tangent = _view_of_base_tangent(ops, t, base, base_tangent)
    set_tangent(t, level, tangent)
    return tangent


def _view_of_base_tangent(ops: Dispatch, view: Tensor, base: Tensor, tangent: Tensor) -> Tensor:
    """The elements of ``tangent`` (the base's) that ``view`` shows of ``base``: a view of the
    tangent where both cover their storage the same way, else a copy."""
    layout = view._geometry()
    base_layout = base._geometry()
    relative = Layout(layout.shape, layout.strides, layout.offset - base_layout.offset)
    with suspended():
        out = ops.apply(V.AS_STRIDED, tangent, layout_out=relative)
        own = tangent._geometry()
        if tuple(own.strides) == contiguous_strides(tuple(tangent.shape)) and tuple(
                base_layout.strides) == contiguous_strides(tuple(base.shape)):
            ops.make_view(out, tangent, Layout(layout.shape, layout.strides,
                                               own.offset + relative.offset))
    return out


# --- propagation ---------------------------------------------------------------------------------

def _is_differentiable(dtype: Any) -> bool:
    return jnp.issubdtype(dtype, jnp.inexact)


@cache(maxsize=4096)
def tangent_op(ops: Dispatch, op: Op, skey: tuple, compute_dtype: Any, out_dtype: Any,
               mask: tuple, n_aux: int, keep: tuple) -> Op:
    """An op computing the tangents of ``op``'s outputs (those ``keep`` marks) by ``jax.jvp`` of
    its jitted forward; it takes ``op``'s arguments, its aux operands, then one tangent per
    argument ``mask`` marks. Its backward is the VJP of that function (any order)."""
    forward = jitted_forward(op, skey, compute_dtype, out_dtype, True)
    positions = tuple(i for i, m in enumerate(mask) if m)
    n_primals = len(mask) + n_aux

    def tangents(*arrays):
        primals, given = arrays[:n_primals], arrays[n_primals:]

        def along(*moving):
            merged = list(primals)
            for i, value in zip(positions, moving):
                merged[i] = value
            return forward(*merged)

        diff = tuple(primals[i] for i in positions)
        _, out = jax.jvp(along, diff, tuple(t.astype(p.dtype) for t, p in zip(given, diff)))
        out = out if isinstance(out, tuple) else (out,)
        others = tuple(t for t, p in zip(given, diff) if t.dtype != p.dtype)
        return tuple(_widened(o, others) for o, k in zip(out, keep) if k)

    return ops.vjp_op(f"{op.node or op.name}Jvp", tangents)


def _widened(tangent: jax.Array, given: tuple) -> jax.Array:
    """A result's tangent in the dtype torch's formulas give it: tangents given in another
    dtype than their primal's (a float64 tangent of a float32 primal) widen it, as in
    ``self_t * result``."""
    dtype = tangent.dtype
    complex_out = jnp.issubdtype(dtype, jnp.complexfloating)
    for g in given:  # a real result takes a complex tangent's precision, not its kind
        dtype = jnp.promote_types(dtype, g.dtype if complex_out else jnp.finfo(g.dtype).dtype)
    return tangent.astype(dtype)


def _input_tangents(ops: Dispatch, args: tuple, level: int) -> list:
    return [tangent_of(ops, a, level) if isinstance(a, Tensor) and _is_differentiable(
        a._cell.array.dtype) else None for a in args]


NO_FORWARD_AD = ("Trying to use forward AD with {} that does not support it because it has not "
                 "been implemented yet.\nPlease file an issue to PyTorch at https://github.com/"
                 "pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
                 "prioritize its implementation")
NO_FORWARD_AD_FUNCTIONAL = " or submit a PR adding the implementation to derivatives.yaml"


def _compute(ops: Dispatch, op: Op, skey: tuple, compute_dtype: Any, out_dtype: Any,
             args: tuple, aux: tuple, out_dtypes: tuple, level: int,
             inplace: bool = False) -> list | None:
    """The tangents of ``op``'s outputs (None for outputs without one), or None when no
    argument carries a tangent; torch's NotImplementedError for a row marked without forward
    AD."""
    if _grad_state.inference:  # inference mode computes no forward grads either
        return None
    if not (op.grads or op.variadic):  # not differentiable (logical_and_): tangents stay as-is
        return None
    given = _input_tangents(ops, args, level)
    if all(g is None for g in given):
        return None
    if not op.forward_ad:
        raise NotImplementedError(
            NO_FORWARD_AD.format(op.name + "_" if inplace else op.name)
            + ("." if inplace else NO_FORWARD_AD_FUNCTIONAL))
    keep = tuple(_is_differentiable(d) and j not in op.nondiff_outputs
                 for j, d in enumerate(out_dtypes))
    if not any(keep):
        return [None] * len(out_dtypes)
    mask = tuple(g is not None for g in given)
    row = tangent_op(ops, op, skey, compute_dtype, out_dtype, mask, len(aux), keep)
    with suspended():
        out = ops.apply(row, *args, *aux, *[g for g in given if g is not None])
    it = iter(out if isinstance(out, tuple) else (out,))
    return [next(it) if k else None for k in keep]


def on_apply(ops: Dispatch, op: Op, skey: tuple, compute_dtype: Any, args: tuple, aux: tuple,
             results: list) -> None:
    """After an out-of-place op: give its results their tangents."""
    level = current_level()
    tangents = _compute(ops, op, skey, compute_dtype, None, args, aux,
                        tuple(r._cell.array.dtype for r in results), level)
    if tangents is not None:
        for j, (r, t) in enumerate(zip(results, tangents)):
            if t is not None:
                set_tangent(r, level, t)
                _share_with_saved_output(r, j, level, t)


def _share_with_saved_output(result: Tensor, output_nr: int, level: int,
                             tangent: Tensor) -> None:
    """torch's SavedVariable keeps a saved output's forward grad: the alias the output's node
    keeps gets its tangent, and the tensors it unpacks as (``SavedTensor.unpack``) share it, so that
    forward-over-reverse sees it (``exp``'s backward uses ``result``)."""
    saved = getattr(result._grad_node, "saved", None)  # an op node's saved values by name
    for record in (saved or {}).values():
        kept = getattr(record, "tensor", None)
        if (getattr(record, "is_output", False) and not record.saved_original
                and record.output_nr == output_nr and kept is not None):
            set_tangent(kept, level, tangent)
            record.tangent_source = kept


def on_view(ops: Dispatch, op: Op, geometry: Callable, source: Tensor, out: Tensor,
            static: dict) -> None:
    """After a view op: the view's tangent is the same view of its source's tangent."""
    level = current_level()
    tangent = tangent_of(ops, source, level)
    if tangent is not None:
        with suspended():
            set_tangent(out, level, ops.apply_view(op, geometry, tangent, **static))


def on_inplace(ops: Dispatch, op: Op, skey: tuple, compute_dtype: Any, out_dtype: Any,
               args: tuple, aux: tuple) -> None:
    """Before an in-place op writes ``args[0]``: write its new tangent into its tangent (a view
    of its base's, zeros first for a base without one), or give it the new one."""
    level = current_level()
    self = args[0]
    # the tangent op saves self and its tangent as they are before the writes
    before = ops.snapshot(self)
    tangent = tangent_of(ops, self, level)
    if tangent is not None:
        set_tangent(before, level, ops.snapshot(tangent))
    new = _compute(ops, op, skey, compute_dtype, out_dtype, (before, *args[1:]), aux,
                   (self._cell.array.dtype,), level, inplace=True)
    if new is None or new[0] is None:
        return
    target = tangent
    base = self._base
    if target is None and base is not None and not self.__dict__.get(NOT_FORWARD_VIEW):
        set_tangent(base, level, Tensor._make(jnp.zeros(tuple(base.shape), base._value.dtype)))
        target = tangent_of(ops, self, level)
    if target is None:
        set_tangent(self, level, new[0])
        return
    with suspended():
        ops.apply_inplace(E.COPY, target, new[0])


def on_inplace_view(ops: Dispatch, op: Op, geometry: Callable, self: Tensor,
                    static: dict) -> None:
    """An in-place view op (``t_``, ``unsqueeze_``) reshapes the tangent the same way."""
    tangent = own_tangent(self, current_level())
    if tangent is not None:
        with suspended():
            ops.apply_inplace_view(op, geometry, tangent, **static)


# --- dual tensors ------------------------------------------------------------------------------

def make_dual(ops: Dispatch, tensor: Tensor, tangent: Tensor, level: int | None = None) -> Tensor:
    """A view of ``tensor`` carrying ``tangent`` (as-is) at ``level`` (torch's checks)."""
    if level is None:
        level = default_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    check_level(level)
    if own_tangent(tensor, level) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    if own_tangent(tangent, level) is not None:
        raise RuntimeError("Setting a forward grad that itself has a forward gradient at the same "
                           f"level{level} is not supported.")
    check_tangent_size(tensor.shape, tangent.shape)
    refuse_batched_duals("_make_dual", tensor, tangent)
    refuse_python_dispatch("Forward-mode AD", (tensor, tangent))
    if is_inference_mode_enabled() or tensor._inference:
        return tensor.detach()  # torch: no view, and inference tensors hold no tangent
    with suspended():
        if not _same_meta(tensor, tangent):
            tangent = _copy_with_meta_of(ops, tensor, tangent)
        dual = ops.apply_view(V.VIEW, V.view_geometry, tensor, shape=tuple(tensor.shape))
    dual.__dict__[NOT_FORWARD_VIEW] = True
    set_tangent(dual, level, tangent)
    return dual


def _same_meta(primal: Tensor, tangent: Tensor) -> bool:
    """torch's has_same_meta: the same strides, offset and storage size (empty tensors pass)."""
    return primal.numel() == 0 or (
        primal._cell.array.size == tangent._cell.array.size
        and tuple(primal.stride()) == tuple(tangent.stride())
        and primal.storage_offset() == tangent.storage_offset())


def _copy_with_meta_of(ops: Dispatch, primal: Tensor, tangent: Tensor) -> Tensor:
    """``tangent`` copied into a new tensor laid out as ``primal`` in a storage of its size
    (torch's ``_new_zeros_with_same_feature_meta`` then ``copy_``)."""
    with x64_scope():
        zeros = jnp.zeros(primal._cell.array.size, tangent._cell.array.dtype)
    layout = primal._geometry()
    if tangent.requires_grad:  # (the copy's node keeps the tangent's history)
        out = Tensor._make(zeros)
        out._layout = layout  # (not a view: the storage is its own)
        ops.apply_inplace(E.COPY, out, tangent)
        return out
    # a tangent vmap batches makes a batched storage, not a write into an unbatched one
    out = Tensor._make(scatter(zeros, layout, tangent._value))
    out._layout = layout
    out._vc.value = 1  # (torch's copy_)
    return out


def unpack_dual(ops: Dispatch, tensor: Tensor, level: int | None = None
                ) -> tuple[Tensor, Tensor | None]:
    """``(primal, tangent)`` of ``tensor`` at ``level``: an alias of it and its tangent as-is."""
    if level is None:
        level = default_level
    if level < 0:
        return tensor, None
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
                        f"{type_name(tensor)}")
    refuse_batched_duals("_unpack_dual", tensor)
    with suspended():
        primal = ops.apply_view(V.UNPACKED_PRIMAL, V.alias_geometry, tensor)
        tangent = tangent_of(ops, tensor, level) if level <= current_level() else None
    primal.__dict__[NOT_FORWARD_VIEW] = True
    return primal, tangent


def refuse_batched_duals(op: str, *tensors: Tensor) -> None:
    """torch.func's vmap has no batching rule for forward AD's dual tensors: a batched primal,
    tangent or dual inside ``jaxgrad.func.vmap`` is refused with its error (``jax.vmap`` of
    such code works, as does gradcheck's legacy vmap)."""
    if "vmap" in stack.kinds and not stack.legacy_vmap and any(
            is_batched(t._value) for t in tensors):
        raise RuntimeError(f"Batching rule not implemented for aten::{op}; the fallback path "
                           "doesn't work on out= or view ops.")


def check_tangent_size(primal_shape: tuple, tangent_shape: tuple) -> None:
    """torch's error for a tangent whose size differs from its primal's (``make_dual``,
    ``jaxgrad.func.jvp``)."""
    if tuple(tangent_shape) != tuple(primal_shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original "
            f"Tensor, this is not supported. Tensor is of size {list(primal_shape)} while the "
            f"given forward gradient is of size {list(tangent_shape)}.")
