"""Probability distributions, as ``torch.distributions``: parameterised distributions with
``sample``/``rsample``, ``log_prob``, ``entropy``, ``cdf``/``icdf``, moments, argument
validation, ``kl_divergence`` and bijective ``transforms``; built on jaxgrad's tensor ops, so
gradients, hooks and ``jaxgrad.compile`` work through them.

>>> import jaxgrad
>>> import jaxgrad.distributions as D
>>> loc = jaxgrad.tensor([0.0, 1.0], requires_grad=True)
>>> D.Normal(loc, 1.0).log_prob(jaxgrad.tensor([0.0, 0.0])).sum().backward()
>>> loc.grad
tensor([ 0., -1.])
"""

from . import constraints as constraints
from . import kl as kl
from . import utils as utils
from .bernoulli import Bernoulli as Bernoulli
from .categorical import Categorical as Categorical
from .distribution import Distribution as Distribution
from .exp_family import ExponentialFamily as ExponentialFamily
from .independent import Independent as Independent
from .kl import kl_divergence as kl_divergence
from .kl import register_kl as register_kl
from .normal import Normal as Normal
from .one_hot_categorical import OneHotCategorical as OneHotCategorical
from .one_hot_categorical import (
           OneHotCategoricalStraightThrough as OneHotCategoricalStraightThrough,
)
from .uniform import Uniform as Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "ExponentialFamily", "Independent",
           "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Uniform",
           "constraints", "kl_divergence", "register_kl"]
