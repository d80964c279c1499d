"""``Laplace(loc, scale)`` (torch's ``torch.distributions.Laplace``)."""

from __future__ import annotations

from typing import Any

from . import _functions as T
from . import constraints
from ._functions import Size, Tensor
from .distribution import Distribution
from .utils import NUMBER_TYPES, broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """The Laplace (double exponential) distribution of location ``loc`` and scale ``scale``.

    >>> import jaxgrad
    >>> from jaxgrad.distributions import Laplace
    >>> Laplace(jaxgrad.tensor([0.0]), jaxgrad.tensor([1.0])).log_prob(jaxgrad.tensor([1.0]))
    tensor([-1.6931])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return 2**0.5 * self.scale

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, NUMBER_TYPES) and isinstance(scale, NUMBER_TYPES)
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Laplace:
        new = self._get_checked_instance(Laplace, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Laplace, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        finfo = T.finfo(self.loc.dtype)
        u = self.loc.new(shape).uniform_(finfo.eps - 1, 1)
        # (u.abs() < 1: log1p never sees -1)
        return self.loc - self.scale * u.sign() * T.log1p(-u.abs())

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -T.log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * T.expm1(
            -(value - self.loc).abs() / self.scale)

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * T.log1p(-2 * term.abs())

    def entropy(self) -> Tensor:
        return 1 + T.log(2 * self.scale)
