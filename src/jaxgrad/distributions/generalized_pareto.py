"""``GeneralizedPareto(loc, scale, concentration)`` (torch's
``torch.distributions.GeneralizedPareto``)."""

from __future__ import annotations

import math
from numbers import Number, Real
from typing import Any

from . import _functions as T
from . import constraints
from ._functions import Size, Tensor
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution; ``concentration`` 0 is the exponential case.

    >>> import jaxgrad
    >>> from jaxgrad.distributions import GeneralizedPareto
    >>> d = GeneralizedPareto(jaxgrad.tensor([0.0]), jaxgrad.tensor([1.0]), jaxgrad.tensor([0.5]))
    >>> d.log_prob(jaxgrad.tensor([1.0])), d.cdf(jaxgrad.tensor([1.0]))
    (tensor([-1.2164]), tensor([0.5556]))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 concentration: Tensor | float, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, Number) and not isinstance(v, Tensor)
                     for v in (loc, scale, concentration))
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        u = T.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _safe_concentration(self) -> tuple[Tensor, Tensor]:
        eq_zero = T.isclose(self.concentration, T.tensor(0.0))
        return eq_zero, T.where(eq_zero, T.ones_like(self.concentration), self.concentration)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + T.ones_like(z)
        where_nonzero = T.where(y == 0, y, y * T.log1p(safe_conc * z))
        log_scale = (math.log(self.scale) if isinstance(self.scale, Real)
                     and not isinstance(self.scale, Tensor) else self.scale.log())
        return -log_scale - T.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        """``log(1 - cdf(value))``."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        where_nonzero = -T.log1p(safe_conc * z) / safe_conc
        return T.where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value: Tensor) -> Tensor:
        """``log(cdf(value))``."""
        return T.log1p(-T.exp(self.log_survival_function(value)))

    def cdf(self, value: Tensor) -> Tensor:
        return T.exp(self.log_cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        loc, scale, concentration = self.loc, self.scale, self.concentration
        eq_zero = T.isclose(concentration, T.zeros_like(concentration))
        safe_conc = T.where(eq_zero, T.ones_like(concentration), concentration)
        logu = T.log1p(-value)
        where_nonzero = loc + scale / safe_conc * T.expm1(-safe_conc * logu)
        where_zero = loc - scale * logu
        return T.where(eq_zero, where_zero, where_nonzero)

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe_conc = T.where(valid, self.concentration, 0.5)
        result = self.loc + self.scale / (1 - safe_conc)
        return T.where(valid, result, math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe_conc = T.where(valid, self.concentration, 0.25)
        result = self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return T.where(valid, result, math.nan)

    def entropy(self) -> Tensor:
        ans = T.log(self.scale) + self.concentration + 1
        return T.broadcast_to(ans, self._batch_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        lower = self.loc
        upper = T.where(self.concentration < 0, lower - self.scale / self.concentration,
                        math.inf)
        return constraints.interval(lower, upper)
