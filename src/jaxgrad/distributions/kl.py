"""``kl_divergence(p, q)`` and ``register_kl`` (torch's ``torch.distributions.kl``): a registry
of closed forms keyed by the two distribution classes, dispatched to the most specific
registered pair (with torch's warning when the two ways to be most specific disagree)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from functools import total_ordering
from typing import Any

from . import _functions as T
from ._functions import Tensor
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .independent import Independent
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .uniform import Uniform
from .utils import _sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict[tuple[type, type], Callable] = {}  # the registered pairs
_KL_MEMOIZE: dict[tuple[type, type], Callable] = {}  # the pair each (p, q) type dispatched to

inf = math.inf
_euler_gamma = 0.57721566490153286060


def register_kl(type_p: type, type_q: type) -> Callable[[Callable], Callable]:
    """Register a closed form of ``KL(p || q)`` for ``p`` of ``type_p`` and ``q`` of
    ``type_q`` (subclasses included: the most specific registered pair wins).

    >>> import jaxgrad
    >>> from jaxgrad.distributions import Normal, kl_divergence, register_kl
    >>> class MyNormal(Normal):
    ...     pass
    >>> @register_kl(MyNormal, MyNormal)
    ... def _kl(p, q):
    ...     return jaxgrad.zeros(p.batch_shape)
    >>> kl_divergence(MyNormal(0.0, 1.0), MyNormal(1.0, 1.0))
    tensor(0.)
    """
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun: Callable) -> Callable:
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # a new pair may be more specific for types seen before
        return fun

    return decorator


@total_ordering
class _Match:
    """A registered pair, ordered lexicographically by subclassing."""

    __slots__ = ["types"]

    def __init__(self, *types: type) -> None:
        self.types = types

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Match) and self.types == other.types

    def __hash__(self) -> int:
        return hash(self.types)

    def __le__(self, other: _Match) -> bool:
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p: type, type_q: type) -> Any:
    """The most specific registered function for ``(type_p, type_q)``, or NotImplemented."""
    matches = [(super_p, super_q) for super_p, super_q in _KL_REGISTRY
               if issubclass(type_p, super_p) and issubclass(type_q, super_q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=2)
    return left_fun


def _infinite_like(tensor: Tensor) -> Tensor:
    return T.full_like(tensor, inf)


def _x_log_x(tensor: Tensor) -> Tensor:
    return T.xlogy(tensor, tensor)


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """The Kullback-Leibler divergence ``KL(p || q)``, batched over the batch shape.

    >>> import jaxgrad
    >>> from jaxgrad.distributions import Normal, kl_divergence
    >>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0))
    tensor(0.5000)
    """
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


# --- same-family pairs ----------------------------------------------------------------------

@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (T.softplus(-q.logits) - T.softplus(-p.logits))
    t1[q.probs == 0] = inf
    t1[p.probs == 0] = 0
    t2 = (1 - p.probs) * (T.softplus(q.logits) - T.softplus(p.logits))
    t2[q.probs == 1] = inf
    t2[p.probs == 1] = 0
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t[(q.probs == 0).expand_as(t)] = inf
    t[(p.probs == 0).expand_as(t)] = 0
    return t.sum(-1)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p: ExponentialFamily, q: ExponentialFamily) -> Tensor:
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot                             be computed "
                                  "using Bregman divergences")
    p_params = [n.detach().requires_grad_() for n in p._natural_params]
    q_params = q._natural_params
    log_normalizer = p._log_normalizer(*p_params)
    gradients = T.grad(log_normalizer.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q_params) - log_normalizer
    for pn, qn, g in zip(p_params, q_params, gradients):
        result -= _sum_rightmost((qn - pn) * g, len(q.event_shape))
    return result


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p: OneHotCategorical,
                                            q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    result[(q.low > p.low) | (q.high < p.high)] = inf
    return result


# --- cross-family pairs ---------------------------------------------------------------------

@register_kl(Normal, Uniform)
def _kl_normal_infinity(p: Distribution, q: Distribution) -> Tensor:
    return _infinite_like(p.loc)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p: Uniform, q: Normal) -> Tensor:
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)
