"""Gradient clipping: ``clip_grad_norm_`` (= ``get_total_norm`` then ``clip_grads_with_norm_``;
its deprecated alias ``clip_grad_norm``) and ``clip_grad_value_``, each writing into the
``.grad`` tensors in place as torch does (CPU tensors take torch's foreach path unless
``foreach=False``, so the version counters move as torch's: the foreach clamp is two in-place
ops, the plain one is one)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import jax.numpy as jnp

from ..._core.grad_mode import no_grad
from ..._core.jax_setup import in_x64_scope
from ..._core.tensor import Tensor
from ..._functions import pointwise
from ..._functions.creation import tensor

_TensorOrTensors = Tensor | Iterable[Tensor]


def _vector_norm(array: jnp.ndarray, norm_type: float) -> jnp.ndarray:
    """torch.linalg.vector_norm of the flattened ``array``."""
    flat = jnp.abs(array.reshape(-1))
    if norm_type == float("inf"):
        return jnp.max(flat, initial=0.0).astype(array.dtype)
    if norm_type == float("-inf"):
        return jnp.min(flat)
    if norm_type == 0:
        return jnp.sum(flat != 0).astype(array.dtype)
    return (jnp.sum(flat ** norm_type) ** (1.0 / norm_type)).astype(array.dtype)


def _as_list(tensors: _TensorOrTensors) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


@in_x64_scope
def get_total_norm(tensors: _TensorOrTensors, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` taken together as one vector (the norm of
    their norms, grouped by dtype as torch groups them).

    >>> import jaxgrad
    >>> jaxgrad.nn.utils.get_total_norm([jaxgrad.tensor([3.0]), jaxgrad.tensor([4.0])])
    tensor(5.)
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    by_dtype: dict = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    norms = [_vector_norm(t._value, norm_type) for group in by_dtype.values() for t in group]
    dtype = jnp.result_type(*norms)
    total = _vector_norm(jnp.stack([n.astype(dtype) for n in norms]), norm_type)
    if error_if_nonfinite and not bool(jnp.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return Tensor._make(total)


@in_x64_scope
def clip_grads_with_norm_(parameters: _TensorOrTensors, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale every ``.grad`` by ``min(1, max_norm / (total_norm + 1e-6))``, in place.

    >>> import jaxgrad
    >>> p = jaxgrad.nn.Parameter(jaxgrad.ones(1))
    >>> p.grad = jaxgrad.tensor([4.0])
    >>> jaxgrad.nn.utils.clip_grads_with_norm_([p], 2.0, jaxgrad.tensor(4.0))
    >>> p.grad
    tensor([2.0000])
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    with no_grad():
        coef = pointwise.clamp(pointwise.div(max_norm, pointwise.add(total_norm, 1e-6)), max=1.0)
        for g in grads:
            pointwise.mul_(g, coef)


@in_x64_scope
def clip_grad_norm_(parameters: _TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their total ``norm_type``-norm
    is at most ``max_norm``; returns the total norm before clipping.

    >>> import jaxgrad
    >>> p = jaxgrad.nn.Parameter(jaxgrad.zeros(2))
    >>> p.grad = jaxgrad.tensor([3.0, -4.0])
    >>> jaxgrad.nn.utils.clip_grad_norm_(p, 1.0, norm_type="inf")
    tensor(4.)
    >>> p.grad
    tensor([ 0.7500, -1.0000])
    """
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters: _TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_` (with torch's FutureWarning).

    >>> import jaxgrad, warnings
    >>> p = jaxgrad.nn.Parameter(jaxgrad.ones(4))
    >>> p.grad = jaxgrad.full((4,), 3.0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     jaxgrad.nn.utils.clip_grad_norm([p], max_norm=1.0)
    tensor(6.)
    """
    warnings.warn("`jaxgrad.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`jaxgrad.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@in_x64_scope
def clip_grad_value_(parameters: _TensorOrTensors, clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every ``.grad`` of ``parameters`` to ``[-clip_value, clip_value]``, in place.

    >>> import jaxgrad
    >>> p = jaxgrad.nn.Parameter(jaxgrad.zeros(2))
    >>> p.grad = jaxgrad.tensor([3.0, -0.5])
    >>> jaxgrad.nn.utils.clip_grad_value_([p], 1.0)
    >>> p.grad
    tensor([ 1.0000, -0.5000])
    """
    clip_value = float(clip_value)
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    with no_grad():
        for g in grads:
            if foreach is False:
                pointwise.clamp_(g, min=-clip_value, max=clip_value)
            else:  # torch's _foreach_clamp_min_ then _foreach_clamp_max_
                pointwise.clamp_(g, min=-clip_value)
                pointwise.clamp_(g, max=clip_value)
