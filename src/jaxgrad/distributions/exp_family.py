"""``ExponentialFamily``: distributions whose density is
``exp(<t(x), theta> - F(theta) + k(x))``; their entropy (and the fallback KL) come from the
log normalizer ``F`` by autograd (the Bregman divergence of ``F``)."""

from __future__ import annotations

from typing import Any

from . import _functions as T
from ._functions import Tensor
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of exponential-family distributions: a subclass gives
    ``_natural_params``, ``_log_normalizer(*params)`` and ``_mean_carrier_measure``.

    >>> import jaxgrad
    >>> from jaxgrad.distributions import Bernoulli
    >>> from jaxgrad.distributions.exp_family import ExponentialFamily
    >>> d = Bernoulli(jaxgrad.tensor([0.3]))
    >>> ExponentialFamily.entropy(d)
    tensor([0.6109], grad_fn=<SubBackward0>)
    """

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy, ``F(theta) - <theta, grad F(theta)> - E[k(x)]``."""
        result: Any = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*params)
        gradients = T.grad(log_normalizer.sum(), params, create_graph=True)
        result += log_normalizer
        for p, g in zip(params, gradients):
            result -= (p * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
