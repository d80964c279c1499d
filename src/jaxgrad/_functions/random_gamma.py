"""torch's gamma-family samplers: ``_standard_gamma`` (differentiable: StandardGammaBackward0,
whose formula is torch's reparameterised gradient), ``_sample_dirichlet`` and the gradient
kernels ``_standard_gamma_grad`` and ``_dirichlet_grad`` that torch.distributions' Gamma, Beta
and Dirichlet ``rsample`` use. The draws come from JAX's gamma sampler with a key of the
generator (so they differ from torch's); what is made of them (clamping, normalising) and
every gradient are torch's."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes
from .._core.jax_setup import in_x64_scope
from .._core.tensor import Tensor
from .._engine.dispatch import apply
from .._ops import gamma_grads as G
from .random import Generator, _key, _parsed, _width


def _check_floating(t: Tensor, kernel: str) -> None:
    if not t.dtype.is_floating_point or t.dtype.name in ("float16", "bfloat16"):
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dtypes.scalar_type_name(t.dtype)}'")


def _gamma_draws(key: jax.Array, alpha: jax.Array, width: np.dtype) -> jax.Array:
    """Gamma(alpha, 1) draws at ``width``, clamped below at its smallest normal number as
    torch's kernel clamps them (a NaN draw, from ``alpha <= 0``, becomes that number too)."""
    draws = jax.random.gamma(key, alpha.astype(width), alpha.shape, width)
    tiny = jnp.finfo(width).tiny
    return jnp.where(draws > tiny, draws, tiny)


@_parsed("_standard_gamma", self="Tensor", generator="Generator")
@in_x64_scope
def _standard_gamma(self: Tensor, generator: Generator | None = None) -> Tensor:
    """Gamma(``self``, 1) samples, one per element; differentiable in ``self`` by torch's
    reparameterised gradient (``StandardGammaBackward0``).

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> a = jaxgrad.full((4000,), 3.0, requires_grad=True)
    >>> x = jaxgrad._standard_gamma(a, generator=g)
    >>> x.grad_fn.name(), round(x.mean().item())
    ('StandardGammaBackward0', 3)
    """
    _check_floating(self, "gamma_cpu")
    alpha = jax.lax.stop_gradient(self._value)
    width = np.dtype(_width(alpha.dtype))
    values = _gamma_draws(_key(generator, self.device, "_standard_gamma"), alpha, width)
    tiny = jnp.finfo(alpha.dtype).tiny
    values = jnp.maximum(values.astype(alpha.dtype), tiny)
    return apply(G.STANDARD_GAMMA, self, aux=(Tensor._make(values),))


@_parsed("_standard_gamma_grad", self="Tensor", output="Tensor")
@in_x64_scope
def _standard_gamma_grad(self: Tensor, output: Tensor) -> Tensor:
    """The derivative of a Gamma(``self``, 1) draw ``output`` in ``self``, as torch
    approximates it (``-(d/dalpha cdf) / pdf``).

    >>> import jaxgrad
    >>> jaxgrad._standard_gamma_grad(jaxgrad.tensor([1.0]), jaxgrad.tensor([0.5]))
    tensor([0.8070])
    """
    _check_floating(self, "_standard_gamma_grad_cpu")
    return apply(G.STANDARD_GAMMA_GRAD, self, output)


@_parsed("_sample_dirichlet", self="Tensor", generator="Generator")
@in_x64_scope
def _sample_dirichlet(self: Tensor, generator: Generator | None = None) -> Tensor:
    """Dirichlet samples over the last dim of ``self`` (the concentrations): gamma draws in
    double, normalised, clamped into ``[tiny, 1)`` of ``self``'s dtype, as torch's kernel.

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> x = jaxgrad._sample_dirichlet(jaxgrad.tensor([[1.0, 2.0, 3.0]]), generator=g)
    >>> x.shape, round(x.sum().item(), 5)
    (jaxgrad.Size([1, 3]), 1.0)
    """
    _check_floating(self, "dirichlet")
    alpha = jax.lax.stop_gradient(self._value)
    gamma = _gamma_draws(_key(generator, self.device, "_sample_dirichlet"), alpha,
                         np.dtype(_width(alpha.dtype)))
    ratio = (gamma / gamma.sum(-1, keepdims=True)).astype(alpha.dtype)
    tiny = jnp.finfo(alpha.dtype).tiny
    below_one = jnp.nextafter(jnp.ones((), alpha.dtype), jnp.zeros((), alpha.dtype))
    values = jnp.minimum(below_one, jnp.maximum(tiny, ratio))
    return apply(G.SAMPLE_DIRICHLET, self, aux=(Tensor._make(values),))


@_parsed("_dirichlet_grad", x="Tensor", alpha="Tensor", total="Tensor")
@in_x64_scope
def _dirichlet_grad(x: Tensor, alpha: Tensor, total: Tensor) -> Tensor:
    """The reparameterised gradient of a Beta(``alpha``, ``total - alpha``) draw ``x`` in
    ``alpha``, over ``1 - x`` (torch's ``_dirichlet_grad``, which Dirichlet's rsample uses).

    >>> import jaxgrad
    >>> jaxgrad._dirichlet_grad(jaxgrad.tensor([0.3]), jaxgrad.tensor([1.0]),
    ...                         jaxgrad.tensor([2.0]))
    tensor([0.5160])
    """
    _check_floating(x, "_dirichlet_grad_cpu")
    return apply(G.DIRICHLET_GRAD, x, alpha, total)
