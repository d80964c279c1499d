"""Distances: ``cdist`` (which, like torch's, takes the matrix-product form for p = 2 on more
than 25 rows), ``pdist`` (also ``nn.functional.pdist``) and ``dist``, with torch's checks,
nodes and gradient conventions (``_ops/distance.py``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor
from .._engine.dispatch import apply
from .._ops import distance as D
from .arguments import check_broadcast, scalar
from .opgen import declare
from .shapes import contiguous, expand, view

_COMPUTE_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                  "donot_use_mm_for_euclid_dist": 2}


@declare('cdist(Tensor x1, Tensor x2, float p=2, '
         'str compute_mode="use_mm_for_euclid_dist_if_necessary") -> Tensor',
         variants='function', python_level=True)
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of ``x1`` and each row of ``x2`` (batched over
    leading dims). For p = 2 with more than 25 rows (or ``compute_mode='use_mm_for_euclid_dist'``)
    it is computed, as torch does, by one matrix product (EuclideanDistBackward0), else pair by
    pair (CdistBackward0).

    >>> import jaxgrad
    >>> jaxgrad.cdist(jaxgrad.tensor([[0.0, 0.0]]), jaxgrad.tensor([[3.0, 4.0], [1.0, 0.0]]))
    tensor([[5., 1.]])
    """
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _COMPUTE_MODES[compute_mode]
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    c1, c2 = x1.shape[-1], x2.shape[-1]
    if c1 != c2:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {c1} X2: {c2}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_dtypes.scalar_type_name(x.dtype)}")
    p = float(p)
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    _dtypes.check_scalar_type(x2.dtype, x1.dtype)
    r1, r2 = x1.shape[-2], x2.shape[-2]
    euclidean = p == 2 and (mode == 1 or (mode is None and (r1 > 25 or r2 > 25)))
    if not euclidean or x1.numel() == 0 or x2.numel() == 0:
        return apply(D.CDIST, x1, x2, p=p, compute_mode=mode)
    batch = tuple(np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    product = math.prod(batch)
    if product == 1:
        result = apply(D.EUCLIDEAN_DIST, x1, x2)
    else:  # torch's expand(...).contiguous().view(product, r, c) of each operand
        t1 = view(contiguous(expand(x1, *batch, r1, c1)), product, r1, c1)
        t2 = view(contiguous(expand(x2, *batch, r2, c2)), product, r2, c2)
        result = apply(D.EUCLIDEAN_DIST, t1, t2)
    return view(result, *batch, r1, r2)


@declare('pdist(Tensor self, float p=2) -> Tensor', variants='function')
def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distance between each pair of rows of a matrix: the upper triangle of
    ``cdist(input, input)``, row by row (PdistBackward0).

    >>> import jaxgrad
    >>> jaxgrad.pdist(jaxgrad.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return apply(D.PDIST, contiguous(input), p=float(p))


@declare('dist(Tensor self, Tensor other, Scalar p=2) -> Tensor', variants='function method')
def dist(input: Tensor, other: Tensor, p: Any = 2) -> Tensor:
    """The p-norm of ``input - other`` (broadcast), DistBackward0.

    >>> import jaxgrad
    >>> jaxgrad.dist(jaxgrad.tensor([3.0, 4.0]), jaxgrad.tensor([0.0, 0.0]))
    tensor(5.)
    """
    check_broadcast(input, other)
    for x in (input, other):
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                               f"Got {_dtypes.scalar_type_name(x.dtype)} instead.")
    p = scalar(p)
    return apply(D.DIST, input, other, p=float(p) if not isinstance(p, complex) else p)
