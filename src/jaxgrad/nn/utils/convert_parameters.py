"""``parameters_to_vector`` and ``vector_to_parameters``."""

from __future__ import annotations

from collections.abc import Iterable

from ..._core.tensor import Tensor
from ..._functions import joins, pointwise, shapes


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All ``parameters`` flattened and concatenated into one vector (``CatBackward0``).

    >>> import jaxgrad
    >>> lin = jaxgrad.nn.Linear(2, 3)
    >>> jaxgrad.nn.utils.parameters_to_vector(lin.parameters()).shape
    jaxgrad.Size([9])
    """
    return joins.cat([shapes.view(p, -1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Overwrite the data of ``parameters``, in order, with consecutive slices of ``vec``.

    >>> import jaxgrad
    >>> p = jaxgrad.nn.Parameter(jaxgrad.zeros(2, 2))
    >>> jaxgrad.nn.utils.vector_to_parameters(jaxgrad.arange(4.0), [p])
    >>> p
    Parameter containing:
    tensor([[0., 1.],
            [2., 3.]], requires_grad=True)
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected jaxgrad.Tensor, but got: {pointwise.typename(vec)}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
