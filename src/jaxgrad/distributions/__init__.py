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
from . import transforms as transforms
from . import utils as utils
from .bernoulli import Bernoulli as Bernoulli
from .beta import Beta as Beta
from .binomial import Binomial as Binomial
from .categorical import Categorical as Categorical
from .cauchy import Cauchy as Cauchy
from .chi2 import Chi2 as Chi2
from .constraint_registry import biject_to as biject_to
from .constraint_registry import transform_to as transform_to
from .dirichlet import Dirichlet as Dirichlet
from .distribution import Distribution as Distribution
from .exp_family import ExponentialFamily as ExponentialFamily
from .exponential import Exponential as Exponential
from .gamma import Gamma as Gamma
from .geometric import Geometric as Geometric
from .gumbel import Gumbel as Gumbel
from .independent import Independent as Independent
from .kl import kl_divergence as kl_divergence
from .kl import register_kl as register_kl
from .laplace import Laplace as Laplace
from .log_normal import LogNormal as LogNormal
from .lowrank_multivariate_normal import (
    LowRankMultivariateNormal as LowRankMultivariateNormal,
)
from .mixture_same_family import MixtureSameFamily as MixtureSameFamily
from .multivariate_normal import MultivariateNormal as MultivariateNormal
from .normal import Normal as Normal
from .one_hot_categorical import OneHotCategorical as OneHotCategorical
from .one_hot_categorical import (
    OneHotCategoricalStraightThrough as OneHotCategoricalStraightThrough,
)
from .poisson import Poisson as Poisson
from .relaxed_bernoulli import RelaxedBernoulli as RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical as RelaxedOneHotCategorical
from .studentT import StudentT as StudentT
from .transformed_distribution import TransformedDistribution as TransformedDistribution
from .transforms import AbsTransform as AbsTransform
from .transforms import AffineTransform as AffineTransform
from .transforms import CatTransform as CatTransform
from .transforms import ComposeTransform as ComposeTransform
from .transforms import CorrCholeskyTransform as CorrCholeskyTransform
from .transforms import CumulativeDistributionTransform as CumulativeDistributionTransform
from .transforms import ExpTransform as ExpTransform
from .transforms import IndependentTransform as IndependentTransform
from .transforms import LowerCholeskyTransform as LowerCholeskyTransform
from .transforms import PositiveDefiniteTransform as PositiveDefiniteTransform
from .transforms import PowerTransform as PowerTransform
from .transforms import ReshapeTransform as ReshapeTransform
from .transforms import SigmoidTransform as SigmoidTransform
from .transforms import SoftmaxTransform as SoftmaxTransform
from .transforms import SoftplusTransform as SoftplusTransform
from .transforms import StackTransform as StackTransform
from .transforms import StickBreakingTransform as StickBreakingTransform
from .transforms import TanhTransform as TanhTransform
from .transforms import Transform as Transform
from .transforms import identity_transform as identity_transform
from .uniform import Uniform as Uniform

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "biject_to", "Binomial",
           "Categorical", "CatTransform", "Cauchy", "Chi2", "ComposeTransform", "constraints",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "Dirichlet", "Distribution",
           "Exponential", "ExponentialFamily", "ExpTransform", "Gamma", "Geometric", "Gumbel",
           "identity_transform", "Independent", "IndependentTransform", "kl_divergence", "Laplace",
           "LogNormal", "LowerCholeskyTransform", "LowRankMultivariateNormal", "MixtureSameFamily",
           "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
           "Poisson", "PositiveDefiniteTransform", "PowerTransform", "register_kl",
           "RelaxedBernoulli", "RelaxedOneHotCategorical", "ReshapeTransform", "SigmoidTransform",
           "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform",
           "StudentT", "TanhTransform", "Transform", "transform_to", "TransformedDistribution",
           "transforms", "Uniform"]
