"""``LKJCholesky(dim, concentration)``: the Cholesky factors of LKJ-distributed correlation
matrices (torch's ``torch.distributions.LKJCholesky``), sampled by the onion method."""

from __future__ import annotations

import math
from typing import Any

from . import _functions as T
from . import constraints
from ._functions import Size, Tensor
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """Lower Cholesky factors ``L`` of ``dim x dim`` correlation matrices ``L @ L.mT`` with
    density proportional to ``det(L @ L.mT) ** (concentration - 1)``.

    >>> import jaxgrad
    >>> from jaxgrad.distributions import LKJCholesky
    >>> d = LKJCholesky(3, jaxgrad.tensor(0.5))
    >>> d.event_shape, d.log_prob(jaxgrad.eye(3))
    (jaxgrad.Size([3, 3]), tensor(-2.5310))
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Tensor | float = 1.0,
                 validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = Size((dim, dim))
        # used to sample from the beta distribution
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = T.arange(self.dim - 1, dtype=self.concentration.dtype,
                          device=self.concentration.device)
        offset = T.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = Size()) -> Tensor:  # noqa: B008
        # the onion method: a beta-distributed squared radius times a uniform direction on
        # the hypersphere, per row
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = T.randn(self._extended_shape(sample_shape), dtype=y.dtype,
                           device=y.device).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        # replace NaNs in the first row
        u_hypersphere[..., 0, :].fill_(0.0)
        w = T.sqrt(y) * u_hypersphere
        # fill the diagonal so that each row has unit norm
        eps = T.finfo(w.dtype).tiny
        diag_elems = T.clamp(1 - T.sum(w**2, dim=-1), min=eps).sqrt()
        w += T.diag_embed(diag_elems)
        return w

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = T.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = T.sum(order * diag_elems.log(), dim=-1)
        # the normalising constant (Lewandowski, Kurowicka and Joe, section 3.3)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = T.lgamma(alpha) * dm1
        numerator = T.mvlgamma(alpha - 0.5, dm1)
        # pi_constant in [1] is D * (D - 1) / 4 * log(pi); in multigammaln it is
        # (D - 1) * (D - 2) / 4 * log(pi); the difference is (D - 1) / 2 * log(pi)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term
