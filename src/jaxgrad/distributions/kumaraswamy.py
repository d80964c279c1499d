"""``Kumaraswamy(concentration1, concentration0)`` (torch's
``torch.distributions.Kumaraswamy``): a uniform draw through powers, reparameterised."""

from __future__ import annotations

import math
from typing import Any

from . import _functions as T
from . import constraints
from ._functions import Tensor
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a: Tensor, b: Tensor, n: int) -> Tensor:
    """The ``n``-th moment, ``b * B(1 + n / a, b)``, through log-gammas."""
    arg1 = 1 + n / a
    log_value = T.lgamma(arg1) + T.lgamma(b) - T.lgamma(arg1 + b)
    return b * T.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on the unit interval.

    >>> import jaxgrad
    >>> from jaxgrad.distributions import Kumaraswamy
    >>> Kumaraswamy(jaxgrad.tensor([2.0]), jaxgrad.tensor([3.0])).mean
    tensor([0.4571])
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Tensor | float, concentration0: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(T.full_like(self.concentration0, 0),
                            T.full_like(self.concentration0, 1), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        # evaluated in log space
        log_mode = (self.concentration0.reciprocal() * (-self.concentration0).log1p()
                    - (-self.concentration0 * self.concentration1).log1p())
        log_mode[(self.concentration0 < 1) | (self.concentration1 < 1)] = math.nan
        return log_mode.exp()

    @property
    def variance(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 2) - T.pow(self.mean, 2)

    def entropy(self) -> Tensor:
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = T.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * H0 - T.log(self.concentration1) - T.log(self.concentration0)
