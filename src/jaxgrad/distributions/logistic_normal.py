"""``LogisticNormal(loc, scale)`` (torch's ``torch.distributions.LogisticNormal``): a
:class:`Normal` pushed onto the simplex by stick breaking."""

from __future__ import annotations

from typing import Any

from . import constraints
from ._functions import Tensor
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """``StickBreakingTransform()(X)`` for ``X ~ Normal(loc, scale)`` over the last dim.

    >>> import jaxgrad
    >>> from jaxgrad.distributions import LogisticNormal
    >>> d = LogisticNormal(jaxgrad.zeros(2), jaxgrad.ones(2))
    >>> d.event_shape, d.log_prob(jaxgrad.tensor([0.2, 0.3, 0.5]))
    (jaxgrad.Size([3]), tensor(1.2980))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogisticNormal:
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale
