"""``Gumbel(loc, scale)`` (torch's ``torch.distributions.Gumbel``): a uniform draw through
``-log(-log(u))`` and an affine map."""

from __future__ import annotations

import math
from typing import Any

from . import _functions as T
from . import constraints
from ._functions import Tensor
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import NUMBER_TYPES, broadcast_all, euler_constant

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """The Gumbel (type-I extreme value) distribution of location ``loc`` and scale
    ``scale``.

    >>> import jaxgrad
    >>> from jaxgrad.distributions import Gumbel
    >>> Gumbel(jaxgrad.tensor([0.0]), jaxgrad.tensor([1.0])).log_prob(jaxgrad.tensor([0.0]))
    tensor([-1.])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = T.finfo(self.loc.dtype)
        if isinstance(loc, NUMBER_TYPES) and isinstance(scale, NUMBER_TYPES):
            base_dist = Uniform(finfo.tiny, 1 - finfo.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(T.full_like(self.loc, finfo.tiny),
                                T.full_like(self.loc, 1 - finfo.eps),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-T.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    # the transforms' log-det Jacobians give a less stable log_prob than this closed form
    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * euler_constant

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + euler_constant)
