"""``Dirichlet(concentration)`` (torch's ``torch.distributions.Dirichlet``), reparameterised
through torch's ``_Dirichlet`` function (``_sample_dirichlet`` forward, ``_dirichlet_grad``
backward)."""

from __future__ import annotations

from typing import Any

from . import _functions as T
from . import constraints
from ._functions import Size, Tensor
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


def _Dirichlet_backward(x: Tensor, concentration: Tensor, grad_output: Tensor) -> Tensor:
    total = concentration.sum(-1, True).expand_as(concentration)
    grad = T._dirichlet_grad(x, concentration, total)
    return grad * (grad_output - (x * grad_output).sum(-1, True))


class _Dirichlet(T.Function):
    """A Dirichlet draw whose backward is torch's reparameterised gradient (its node is
    ``_DirichletBackward``, as torch's)."""

    @staticmethod
    def forward(ctx: Any, concentration: Tensor) -> Tensor:
        x = T._sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @T.once_differentiable
    def backward(ctx: Any, grad_output: Tensor) -> Tensor:
        x, concentration = ctx.saved_tensors
        return _Dirichlet_backward(x, concentration, grad_output)


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the simplex of the last dim of ``concentration``.

    >>> import jaxgrad
    >>> from jaxgrad.distributions import Dirichlet
    >>> d = Dirichlet(jaxgrad.tensor([1.0, 2.0, 3.0]))
    >>> d.event_shape, d.log_prob(jaxgrad.tensor([0.2, 0.3, 0.5]))
    (jaxgrad.Size([3]), tensor(1.5041))
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return _Dirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (T.xlogy(self.concentration - 1.0, value).sum(-1)
                + T.lgamma(self.concentration.sum(-1)) - T.lgamma(self.concentration).sum(-1))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = T.one_hot(mode[mask].argmax(dim=-1), concentrationm1.shape[-1]).to(mode)
        return mode

    @property
    def variance(self) -> Tensor:
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self) -> Tensor:
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (T.lgamma(self.concentration).sum(-1) - T.lgamma(a0)
                - (k - a0) * T.digamma(a0)
                - ((self.concentration - 1.0) * T.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.lgamma().sum(-1) - T.lgamma(x.sum(-1))
