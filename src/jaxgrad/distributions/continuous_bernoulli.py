"""``ContinuousBernoulli(probs | logits)`` (torch's
``torch.distributions.ContinuousBernoulli``): the normalised Bernoulli density on ``[0, 1]``,
with Taylor expansions around ``probs = 0.5`` (inside ``lims``) where the closed forms cancel."""

from __future__ import annotations

import math
from typing import Any

from . import _functions as T
from . import constraints
from ._functions import Size, Tensor
from .exp_family import ExponentialFamily
from .utils import (
    NUMBER_TYPES,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution on the unit interval, reparameterised through
    its ``icdf``.

    >>> import jaxgrad
    >>> from jaxgrad.distributions import ContinuousBernoulli
    >>> ContinuousBernoulli(jaxgrad.tensor([0.3])).log_prob(jaxgrad.tensor([0.2]))
    tensor([0.2245])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs: Tensor | float | None = None, logits: Tensor | float | None = None,
                 lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            scalar = isinstance(probs, NUMBER_TYPES)
            (self.probs,) = broadcast_all(probs)
            # validate 'probs' here if necessary as it is later clamped for numerical stability
            # close to 0 and 1, later on; otherwise the clamped 'probs' would always pass
            if validate_args is not None and not self.arg_constraints["probs"].check(
                    self.probs).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            scalar = isinstance(logits, NUMBER_TYPES)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(Size() if scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self) -> Tensor:
        return T.maximum(T.le(self.probs, self._lims[0]), T.gt(self.probs, self._lims[1]))

    def _cut_probs(self) -> Tensor:
        return T.where(self._outside_unstable_region(), self.probs,
                       self._lims[0] * T.ones_like(self.probs))

    def _cont_bern_log_norm(self) -> Tensor:
        """The log of the normalising constant, a Taylor expansion around 0.5 inside the
        unstable region."""
        cut_probs = self._cut_probs()
        cut_probs_below_half = T.where(T.le(cut_probs, 0.5), cut_probs, T.zeros_like(cut_probs))
        cut_probs_above_half = T.where(T.ge(cut_probs, 0.5), cut_probs, T.ones_like(cut_probs))
        log_norm = (T.log(T.abs(T.log1p(-cut_probs) - T.log(cut_probs)))
                    - T.where(T.le(cut_probs, 0.5), T.log1p(-2.0 * cut_probs_below_half),
                              T.log(2.0 * cut_probs_above_half - 1.0)))
        x = T.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return T.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut_probs = self._cut_probs()
        mus = (cut_probs / (2.0 * cut_probs - 1.0)
               + 1.0 / (T.log1p(-cut_probs) - T.log(cut_probs)))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * T.pow(x, 2)) * x
        return T.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return T.sqrt(self.variance)

    @property
    def variance(self) -> Tensor:
        cut_probs = self._cut_probs()
        variances = (cut_probs * (cut_probs - 1.0) / T.pow(1.0 - 2.0 * cut_probs, 2)
                     + 1.0 / T.pow(T.log1p(-cut_probs) - T.log(cut_probs), 2))
        x = T.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return T.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape: Any = Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        u = T.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with T.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        u = T.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-T.binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = ((T.pow(cut_probs, value) * T.pow(1.0 - cut_probs, 1.0 - value)
                 + cut_probs - 1.0) / (2.0 * cut_probs - 1.0))
        unbounded_cdfs = T.where(self._outside_unstable_region(), cdfs, value)
        return T.where(T.le(value, 0.0), T.zeros_like(value),
                       T.where(T.ge(value, 1.0), T.ones_like(value), unbounded_cdfs))

    def icdf(self, value: Tensor) -> Tensor:
        cut_probs = self._cut_probs()
        return T.where(
            self._outside_unstable_region(),
            (T.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - T.log1p(-cut_probs))
            / (T.log(cut_probs) - T.log1p(-cut_probs)),
            value)

    def entropy(self) -> Tensor:
        log_probs0 = T.log1p(-self.probs)
        log_probs1 = T.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        """The log normaliser in the natural parameter, a Taylor expansion around 0."""
        out_unst_reg = T.maximum(T.le(x, self._lims[0] - 0.5), T.gt(x, self._lims[1] - 0.5))
        cut_nat_params = T.where(out_unst_reg, x, (self._lims[0] - 0.5) * T.ones_like(x))
        log_norm = T.log(T.abs(T.expm1(cut_nat_params))) - T.log(T.abs(cut_nat_params))
        taylor = 0.5 * x + T.pow(x, 2) / 24.0 - T.pow(x, 4) / 2880.0
        return T.where(out_unst_reg, log_norm, taylor)
