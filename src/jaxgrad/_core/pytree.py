"""Tensors as JAX pytrees: ``jax.jit``, ``vmap``, ``lax.scan``, ``tree_map``, optax and chex take
tensors, dicts of tensors and ``state_dict()``s.

A tensor flattens to one leaf, its array (a view's array materialised), with ``requires_grad``
as static data. It unflattens as a *fresh leaf* of its own class (a ``Parameter`` stays a
``Parameter``): no ``grad_fn``, ``.grad``, hooks, version history or Python attributes cross a
transformation boundary, and ``requires_grad`` is kept when the new leaf's dtype can require
grad. A leaf that is not an array (``tree_map`` returning shapes, vmap's ``in_axes`` trees) is
held as is, as JAX expects of an unflatten function.

This module imports nothing from jaxgrad: ``Tensor`` registers itself and every subclass.
"""

from __future__ import annotations

from typing import Any

import jax


def register(cls: type) -> None:
    """Make the Tensor class ``cls`` a pytree node (called for Tensor and each subclass)."""
    jax.tree_util.register_pytree_node(cls, _flatten, lambda aux, leaves: _unflatten(
        cls, aux, leaves))


def _flatten(t: Any) -> tuple[tuple[Any], tuple[bool]]:
    return (t._value,), (t._requires_grad,)


def _unflatten(cls: type, aux: tuple[bool], leaves: Any) -> Any:
    (leaf,) = leaves
    requires_grad = aux[0]
    if requires_grad:
        kind = getattr(getattr(leaf, "dtype", None), "kind", "f")
        requires_grad = kind in "fcV"  # V: bfloat16 and the other ml_dtypes floats
    return cls._make(leaf, requires_grad)

