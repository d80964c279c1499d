"""Comparisons without autograd: equal, allclose, isclose, isin, searchsorted, bucketize.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from .._core.dtypes import scalar_type_name
from .._core.tensor import Tensor
from .._engine.dispatch import apply
from .._ops._table import Op
from . import creation as _creation
from .arguments import check_broadcast
from .opgen import declare


@declare('equal(Tensor self, Tensor other) -> bool')
def equal(input: Tensor, other: Tensor) -> bool:
    """True if both have the same shape and elements.

    >>> import jaxgrad
    >>> jaxgrad.equal(jaxgrad.tensor([1, 2]), jaxgrad.tensor([1, 2]))
    True
    """
    return tuple(input.shape) == tuple(other.shape) and bool(jnp.all(input._value == other._value))


@declare(
    'allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, '
    'bool equal_nan=False) -> bool')
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True if every element is close: ``|input - other| <= atol + rtol * |other|``.

    >>> import jaxgrad
    >>> jaxgrad.allclose(jaxgrad.tensor([1.0]), jaxgrad.tensor([1.0 + 1e-9]))
    True
    """
    return bool(jnp.allclose(input._value, other._value, rtol=rtol, atol=atol,
                             equal_nan=equal_nan))


@declare(
    'isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, '
    'bool equal_nan=False) -> Tensor')
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Elementwise ``|input - other| <= atol + rtol * |other|``.

    >>> import jaxgrad
    >>> jaxgrad.isclose(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([1.0, 2.1]))
    tensor([ True, False])
    """
    if input.dtype != other.dtype:  # (torch compares one dtype: no promotion)
        raise RuntimeError(f"{scalar_type_name(input.dtype)} did not match "
                           f"{scalar_type_name(other.dtype)}")
    check_broadcast(input, other)
    return Tensor._make(jnp.isclose(input._value, other._value, rtol=rtol, atol=atol,
                                    equal_nan=equal_nan))


_ISIN = Op("isin", None, lambda elements, test, invert: jnp.isin(elements, test, invert=invert),
             aux=("test_elements",))


@declare('isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, '
         'bool invert=False) -> Tensor', variants='function',
         numbers_as_tensors=('elements', 'test_elements'))
def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """True where an element of ``elements`` is among ``test_elements`` (``invert``: is not).

    >>> import jaxgrad
    >>> jaxgrad.isin(jaxgrad.tensor([1, 2, 3]), jaxgrad.tensor([2, 5]))
    tensor([False,  True, False])
    """
    elements, test_elements = (t if isinstance(t, Tensor) else _creation.tensor(t)
                               for t in (elements, test_elements))
    return apply(_ISIN, elements, aux=(test_elements,), invert=bool(invert))


def _search(sequence, values, sorter, right, out_int32):
    """torch's searchsorted kernel: the insertion points of ``values`` in each innermost row
    of ``sequence`` (one row for all values when ``sequence`` is 1-D)."""
    side = "right" if right else "left"
    if sorter is not None:
        sequence = jnp.take_along_axis(sequence, sorter, axis=-1)
    dtype = jnp.int32 if out_int32 else jnp.int64
    if sequence.ndim == 1:
        return jnp.searchsorted(sequence, values, side=side).astype(dtype)
    rows = sequence.reshape(-1, sequence.shape[-1])
    found = jax.vmap(lambda row, v: jnp.searchsorted(row, v, side=side))(
        rows, values.reshape(rows.shape[0], -1))
    return found.reshape(values.shape).astype(dtype)


_SEARCHSORTED = Op("searchsorted", None, _search, inputs=("sorted_sequence",),
                   aux=("input", "sorter"))


@declare('searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, '
         'bool right=False, str? side=None, Tensor? sorter=None) -> Tensor', variants='function',
         numbers_as_tensors=('input',))
def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None,
                 sorter: Tensor | None = None) -> Tensor:
    """Where each value of ``input`` would be inserted in the innermost rows of
    ``sorted_sequence`` to keep them sorted (``right``/``side='right'``: after equal values).

    >>> import jaxgrad
    >>> jaxgrad.searchsorted(jaxgrad.tensor([1.0, 3.0, 5.0]), jaxgrad.tensor([3.0, 6.0]))
    tensor([1, 3])
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    values = input if isinstance(input, Tensor) else _creation.tensor(input)
    return apply(_SEARCHSORTED, sorted_sequence, aux=(values, sorter), right=bool(right),
                 out_int32=bool(out_int32))


@declare('bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, '
         'bool right=False) -> Tensor', variants='function', numbers_as_tensors=('input',))
def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False,
              right: bool = False) -> Tensor:
    """The bucket of each element of ``input`` among the sorted 1-D ``boundaries``
    (``right``: a value equal to a boundary goes to the bucket after it).

    >>> import jaxgrad
    >>> jaxgrad.bucketize(jaxgrad.tensor([1.0, 4.0]), jaxgrad.tensor([1.0, 3.0, 5.0]))
    tensor([0, 2])
    """
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)
