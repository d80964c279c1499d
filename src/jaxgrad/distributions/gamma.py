"""``Gamma(concentration, rate)`` (torch's ``torch.distributions.Gamma``), reparameterised
through ``jaxgrad._standard_gamma`` and torch's gradient of it."""

from __future__ import annotations

from typing import Any

from . import _functions as T
from . import constraints
from ._functions import Size, Tensor
from .exp_family import ExponentialFamily
from .utils import NUMBER_TYPES, broadcast_all

__all__ = ["Gamma"]


def _standard_gamma(concentration: Tensor) -> Tensor:
    return T._standard_gamma(concentration)


class Gamma(ExponentialFamily):
    """The gamma distribution of shape ``concentration`` and rate ``rate``.

    >>> import jaxgrad
    >>> from jaxgrad.distributions import Gamma
    >>> d = Gamma(jaxgrad.tensor([2.0]), jaxgrad.tensor([3.0]))
    >>> d.log_prob(jaxgrad.tensor([1.0])), d.mean
    (tensor([-0.8028]), tensor([0.6667]))
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration: Tensor | float, rate: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, NUMBER_TYPES) and isinstance(rate, NUMBER_TYPES)
        batch_shape = Size() if scalar else self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # (never exactly 0: torch clamps the draws in place, past autograd)
        value.detach().clamp_(min=T.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value: Tensor) -> Tensor:
        value = T.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (T.xlogy(self.concentration, self.rate) + T.xlogy(self.concentration - 1, value)
                - self.rate * value - T.lgamma(self.concentration))

    def entropy(self) -> Tensor:
        return (self.concentration - T.log(self.rate) + T.lgamma(self.concentration)
                + (1.0 - self.concentration) * T.digamma(self.concentration))

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return T.lgamma(x + 1) + (x + 1) * T.log(-y.reciprocal())

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return T.gammainc(self.concentration, self.rate * value)
