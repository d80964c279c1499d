"""``unravel_index``: flat indices to coordinates, written as torch writes it in Python
(``torch.functional.unravel_index``): a floor division by the shape's row-major strides, then a
remainder by the shape.

>>> import jaxgrad
>>> jaxgrad.unravel_index(jaxgrad.tensor([4, 1]), (2, 3))
(tensor([1, 0]), tensor([1, 1]))
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence

from .._core import dtypes as _dtypes
from .._core.tensor import Size, Tensor
from . import creation, joins, pointwise, shapes


def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """The coordinates, one int64 tensor per dimension of ``shape``, of each flat index in
    ``indices`` (negative indices count from the end, as torch's remainder does).

    >>> import jaxgrad
    >>> jaxgrad.unravel_index(jaxgrad.tensor(5), (2, 3))
    (tensor(1), tensor(2))
    """
    if indices.is_complex() or indices.is_floating_point() or indices.dtype is _dtypes.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if not isinstance(shape, (int, Sequence)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if isinstance(shape, int):
        shape = Size([shape])
    else:
        for dim in shape:
            if not isinstance(dim, int):
                raise TypeError(
                    f"expected 'shape' sequence to only contain ints, but got {type(dim)}"
                )
        shape = Size(shape)
    if not all(dim >= 0 for dim in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    coefs = list(reversed(list(itertools.accumulate(reversed((*shape[1:], 1)), func=operator.mul))))
    divided = pointwise.floor_divide(
        shapes.unsqueeze(indices, -1), creation.tensor(coefs, dtype=_dtypes.int64)
    )
    return joins.unbind(
        pointwise.remainder(divided, creation.tensor(list(shape), dtype=_dtypes.int64)), -1
    )
