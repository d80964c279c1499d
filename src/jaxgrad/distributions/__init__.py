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
from .continuous_bernoulli import ContinuousBernoulli as ContinuousBernoulli
from .dirichlet import Dirichlet as Dirichlet
from .distribution import Distribution as Distribution
from .exp_family import ExponentialFamily as ExponentialFamily
from .exponential import Exponential as Exponential
from .fishersnedecor import FisherSnedecor as FisherSnedecor
from .gamma import Gamma as Gamma
from .generalized_pareto import GeneralizedPareto as GeneralizedPareto
from .geometric import Geometric as Geometric
from .gumbel import Gumbel as Gumbel
from .half_cauchy import HalfCauchy as HalfCauchy
from .half_normal import HalfNormal as HalfNormal
from .independent import Independent as Independent
from .inverse_gamma import InverseGamma as InverseGamma
from .kl import kl_divergence as kl_divergence
from .kl import register_kl as register_kl
from .kumaraswamy import Kumaraswamy as Kumaraswamy
from .laplace import Laplace as Laplace
from .lkj_cholesky import LKJCholesky as LKJCholesky
from .log_normal import LogNormal as LogNormal
from .logistic_normal import LogisticNormal as LogisticNormal
from .lowrank_multivariate_normal import (
    LowRankMultivariateNormal as LowRankMultivariateNormal,
)
from .mixture_same_family import MixtureSameFamily as MixtureSameFamily
from .multinomial import Multinomial as Multinomial
from .multivariate_normal import MultivariateNormal as MultivariateNormal
from .negative_binomial import NegativeBinomial as NegativeBinomial
from .normal import Normal as Normal
from .one_hot_categorical import OneHotCategorical as OneHotCategorical
from .one_hot_categorical import (
    OneHotCategoricalStraightThrough as OneHotCategoricalStraightThrough,
)
from .pareto import Pareto as Pareto
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
from .von_mises import VonMises as VonMises
from .weibull import Weibull as Weibull
from .wishart import Wishart as Wishart

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "biject_to", "Binomial",
           "Categorical", "CatTransform", "Cauchy", "Chi2", "ComposeTransform",
           "ContinuousBernoulli", "CorrCholeskyTransform", "CumulativeDistributionTransform",
           "Dirichlet", "Distribution", "Exponential", "ExponentialFamily", "ExpTransform",
           "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy",
           "HalfNormal", "identity_transform", "Independent", "IndependentTransform",
           "InverseGamma", "kl_divergence", "Kumaraswamy", "Laplace", "LKJCholesky",
           "LogisticNormal", "LogNormal", "LowerCholeskyTransform", "LowRankMultivariateNormal",
           "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal",
           "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson",
           "PositiveDefiniteTransform", "PowerTransform", "register_kl", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "StudentT",
           "TanhTransform", "Transform", "transform_to", "TransformedDistribution", "Uniform",
           "VonMises", "Weibull", "Wishart"]
