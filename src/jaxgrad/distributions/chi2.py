"""``Chi2(df)``: a :class:`Gamma` of shape ``df / 2`` and rate 1/2 (torch's
``torch.distributions.Chi2``)."""

from __future__ import annotations

from typing import Any

from . import constraints
from ._functions import Tensor
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom.

    >>> import jaxgrad
    >>> from jaxgrad.distributions import Chi2
    >>> Chi2(jaxgrad.tensor([4.0])).mean
    tensor([4.])
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Tensor | float, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Chi2:
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2
