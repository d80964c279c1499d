"""torch's ``repr`` for jaxgrad tensors: data text from ``tensor_str`` plus torch's suffixes;
and reading a tensor's values on the host (:func:`host_value`).

While a forward-AD dual level exists, forward AD hands in how to find a tensor's tangent
(:func:`show_tangents`), and a dual tensor prints it as torch does (``tangent=tensor(...)``).

A tensor may hold a *global* ``jax.Array``, laid out over the devices of several processes
(``jaxgrad.distributed``). A host read never starts a program across processes (only the
calling process may be reading, and the others would never join it): it reads this process's
own copy when the array is replicated (or this process's devices hold every part of it), and
otherwise raises at once (:func:`held_here`, :func:`spans_processes_error`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from . import dtypes as _dtypes
from .tensor_str import format_tensor
from .tracing import note_per_call_python

_INVALID = object()
_tangent_of: Callable[[Any], Any] | None = None  # set while a dual level exists


def show_tangents(tangent_of: Callable[[Any], Any] | None) -> None:
    """Print tensors' tangents found by ``tangent_of`` (None: no dual level, no tangents)."""
    global _tangent_of
    _tangent_of = tangent_of


def tensor_repr(t, prefix: str = "tensor(") -> str:
    """``tensor([2., 4.], grad_fn=<MulBackward0>)`` as torch prints it."""
    held = t._cell.array
    if t._layout is None and not isinstance(held, (jax.Array, np.ndarray)):
        # a pytree unflattened over other leaves: jax.tree.map(lambda a: a.shape, params),
        # jax.eval_shape's ShapeDtypeStructs, None
        return f"{type(t).__name__}(leaf={held!r})"
    if isinstance(t._value, jax.core.Tracer):
        note_per_call_python()  # (eager mode prints values here)
        return _transformed_repr(t, t._value, prefix)
    values = host_value(t._value, what="Printing it")
    d = t.dtype
    if d is _dtypes.bfloat16:
        values = values.astype(np.float32)
    suffixes = []
    try:
        fn = t.grad_fn
    except RuntimeError:  # a no_grad view modified in place: torch prints it as invalid
        fn = _INVALID
    if fn is _INVALID:
        suffixes.append("grad_fn=<Invalid>")
    elif fn is not None:
        suffixes.append(f"grad_fn=<{type(fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    tangent = None if _tangent_of is None else _tangent_of(t)
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")  # (a 0-dim one formats as its number)
    dev = t.device
    device_suffix = None if dev.type == "cpu" else f"device='{dev}'"
    default = d in (_dtypes.get_default_dtype(), _dtypes.scalar_dtype(1j), _dtypes.int64,
                    _dtypes.bool_)
    return format_tensor(values, dtype_name=repr(d), is_default_dtype=default,
                         suffixes=suffixes, prefix=prefix, device_suffix=device_suffix)


VMAP_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
             "calling .item() on a Tensor, please try to rewrite what you're doing with other "
             "operations. If error is occurring somewhere inside PyTorch internals, please file a "
             "bug report.")
VMAP_CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent "
                     "control flow. We don't support that yet, please file an issue at "
                     "https://github.com/pytorch/pytorch/issues .")
NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"


def dynamic_shape_error(op: str) -> str:
    """torch.func's error for an op whose output shape depends on values, under vmap."""
    return (f"vmap: We do not support batching operators that can output dynamic shape. "
            f"Attempted to vmap over aten::{op}. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues if you need this feature.")


_GRAD = object()  # a grad or jvp level (a vmap level is its batch dim)


def host_value(array: Any, batched_error: str = NO_STORAGE, *,
               what: str = "Reading it") -> np.ndarray:
    """``array``'s values on the host. Inside transforms that hold it concretely (grad and jvp
    levels outside ``jax.jit``), torch.func reads the value there too (``.item()``, ``.tolist()``,
    ``if x > 0``); under a vmap level, torch's ``batched_error``; under ``jax.jit``, JAX's
    error for a traced value. An array spanning processes is read from this process's copy
    when it holds one, else :func:`spans_processes_error` (``what``: the read, for the
    message)."""
    if isinstance(array, jax.core.Tracer):
        levels, inner = _transform_levels(array)
        if any(bdim is not _GRAD for bdim in levels):
            raise RuntimeError(batched_error)
        if inner is not None:
            array = inner
    if not held_here(array):
        raise spans_processes_error(what)
    return np.asarray(array)


def spans_processes(array: Any) -> bool:
    """Whether ``array`` is a concrete ``jax.Array`` laid out over devices of other processes
    too (not a tracer: a trace's values are nobody's to read)."""
    return (isinstance(array, jax.Array) and jax.process_count() > 1  # (the cheap tests first)
            and not isinstance(array, jax.core.Tracer) and not array.is_fully_addressable)


def held_here(array: Any) -> bool:
    """Whether this process holds every value of ``array``: any array but one spanning
    processes that is neither replicated nor covered by the shards of this process's own
    devices (then reading it needs the other processes)."""
    if not spans_processes(array) or array.is_fully_replicated:
        return True
    shape = array.shape
    everywhere = {_index_key(i) for i in array.sharding.devices_indices_map(shape).values()}
    here = {_index_key(i)
            for i in array.sharding.addressable_devices_indices_map(shape).values()}
    return everywhere == here


def _index_key(index: tuple) -> tuple:
    """A shard's index (a tuple of slices) as a hashable key."""
    return tuple((s.start, s.stop, s.step) if isinstance(s, slice) else s for s in index)


def concrete_here(array: Any) -> bool:
    """Whether ``array``'s values can be read here without any other process: not a tracer
    (inside ``jax.jit`` or a transform), and held by this process (:func:`held_here`). Input
    checks that read values (class indices in range, ...) skip arrays that are not."""
    return not isinstance(array, jax.core.Tracer) and held_here(array)


def spans_processes_error(what: str) -> RuntimeError:
    """The error of a host read of a tensor spanning processes that this process does not
    hold: raised at once on the calling process (a read never starts a program the other
    processes would have to join); ``what``: the read (``"item()"``, ``"nonzero"``...)."""
    return RuntimeError(
        f"{what} needs the values of a tensor that spans several processes (its jax.Array is "
        "sharded over devices of other processes too) and is not replicated: this process "
        "holds only its own shards. Gather it first, on every process (a collective all "
        "processes must run): t.to('cpu') (or another device of this process) gives each "
        "process the whole tensor, t.to(NamedSharding(mesh, PartitionSpec())) a replicated "
        "one; or read this process's part with t.jax().addressable_shards.")


def _transform_levels(array: Any) -> tuple[list, Any]:
    """The JAX transforms wrapping ``array``, innermost first: a vmap level's batch dim, or
    ``_GRAD`` for a grad or jvp level; and the value inside them (None where JAX holds none:
    under ``jax.jit``)."""
    levels: list = []
    while isinstance(array, jax.core.Tracer):
        level, array = _peel(array)
        if level is None:
            return levels, None
        levels.append(level)
    return levels, array


def _peel(tracer: Any) -> tuple[Any, Any]:
    """One transform level off: (its batch dim or ``_GRAD``, the value inside), or (None, None)
    for a tracer that holds no value (``jax.jit``'s)."""
    if hasattr(tracer, "batch_dim") and hasattr(tracer, "val"):
        return tracer.batch_dim, tracer.val
    if hasattr(tracer, "primal"):
        return _GRAD, tracer.primal
    return None, None


def is_batched(array: Any) -> bool:
    """Whether a vmap level batches ``array``."""
    return any(level is not _GRAD for level in _transform_levels(array)[0])


def unwrap_levels(array: Any, count: int | None = None) -> Any:
    """``array`` with ``count`` transform levels (all when None) taken off: the value JAX holds
    inside them (a vmap level's keeps its batch dim); None under ``jax.jit``."""
    while isinstance(array, jax.core.Tracer) and count != 0:
        array = _peel(array)[1]
        count = None if count is None else count - 1
    return array


def _transformed_repr(t, array: Any, prefix: str) -> str:
    """torch.func's repr of a tensor inside transforms, with its values where JAX has them
    (``jaxgrad.func``, a user's ``jax.grad`` or ``jax.vmap``); under ``jax.jit`` a placeholder
    with its size, as torch prints a meta tensor.

    >>> import jaxgrad
    >>> _ = jaxgrad.func.grad(lambda x: print(x) or x.sum())(jaxgrad.tensor([1.0, 2.0]))
    GradTrackingTensor(lvl=1, value=
        tensor([1., 2.])
    )
    """
    levels, inner = _transform_levels(array)
    if inner is None:
        d = t.dtype
        dtype = "" if d is _dtypes.get_default_dtype() else f", dtype={d!r}"
        text = f"{prefix}..., size={tuple(array.shape)}{dtype})"
    else:
        text = tensor_repr(type(t)._make(inner), prefix)
    for lvl, bdim in enumerate(reversed(levels), start=1):  # the outermost transform: lvl 1
        indented = "\n".join("    " + line for line in text.split("\n"))
        wrapper = (f"GradTrackingTensor(lvl={lvl}" if bdim is _GRAD
                   else f"BatchedTensor(lvl={lvl}, bdim={bdim}")
        text = f"{wrapper}, value=\n{indented}\n)"
    return text
