"""The tensor functions the distributions call, by torch's names (``torch.distributions``
calls ``torch.erf``, ``torch.lgamma``...): jaxgrad's public functions, so that every formula
records torch's nodes and runs under autograd, hooks and ``jaxgrad.compile`` alike."""

from __future__ import annotations

from .._autograd.function import Function as Function
from .._autograd.function import once_differentiable as once_differentiable
from .._core.dtypes import float64 as float64
from .._core.dtypes import get_default_dtype as get_default_dtype
from .._core.dtypes import int64 as int64
from .._core.grad_mode import enable_grad as enable_grad
from .._core.grad_mode import no_grad as no_grad
from .._core.tensor import Size as Size
from .._core.tensor import Tensor as Tensor
from .._core.tensor import is_tensor as is_tensor
from .._core.type_info import finfo as finfo
from .._engine.engine import grad as grad
from .._functions.arguments import broadcast_shapes as _broadcast_shapes
from .._functions.catalog import FUNCTIONS
from .._functions.creation import arange as arange
from .._functions.creation import as_tensor as as_tensor
from .._functions.creation import empty as empty
from .._functions.creation import eye as eye
from .._functions.creation import full as full
from .._functions.creation import full_like as full_like
from .._functions.creation import ones as ones
from .._functions.creation import ones_like as ones_like
from .._functions.creation import tensor as tensor
from .._functions.creation import zeros as zeros
from .._functions.creation import zeros_like as zeros_like
from .._functions.linalg import tril_indices as tril_indices
from .._functions.random import bernoulli as bernoulli
from .._functions.random import binomial as binomial
from .._functions.random import multinomial as multinomial
from .._functions.random import normal as normal
from .._functions.random import poisson as poisson
from .._functions.random import rand as rand
from .._functions.random import randn as randn
from .._functions.random_gamma import _dirichlet_grad as _dirichlet_grad
from .._functions.random_gamma import _sample_dirichlet as _sample_dirichlet
from .._functions.random_gamma import _standard_gamma as _standard_gamma
from ..linalg import cholesky as cholesky
from ..linalg import slogdet as slogdet
from ..linalg import solve_triangular as solve_triangular
from ..nn.functional import binary_cross_entropy_with_logits as binary_cross_entropy_with_logits
from ..nn.functional import log_softmax as log_softmax
from ..nn.functional import logsigmoid as logsigmoid
from ..nn.functional import one_hot as one_hot
from ..nn.functional import pad as pad
from ..nn.functional import softmax as softmax
from ..nn.functional import softplus as softplus
from ..special import gammainc as gammainc

abs = FUNCTIONS["abs"]
atan = FUNCTIONS["atan"]
atanh = FUNCTIONS["atanh"]
broadcast_tensors = FUNCTIONS["broadcast_tensors"]
broadcast_to = FUNCTIONS["broadcast_to"]
cat = FUNCTIONS["cat"]
cholesky_inverse = FUNCTIONS["cholesky_inverse"]
cholesky_solve = FUNCTIONS["cholesky_solve"]
clamp = FUNCTIONS["clamp"]
cumsum = FUNCTIONS["cumsum"]
cos = FUNCTIONS["cos"]
diag_embed = FUNCTIONS["diag_embed"]
einsum = FUNCTIONS["einsum"]
digamma = FUNCTIONS["digamma"]
erf = FUNCTIONS["erf"]
erfc = FUNCTIONS["erfc"]
erfinv = FUNCTIONS["erfinv"]
exp = FUNCTIONS["exp"]
expm1 = FUNCTIONS["expm1"]
flip = FUNCTIONS["flip"]
ge = FUNCTIONS["ge"]
gt = FUNCTIONS["gt"]
isclose = FUNCTIONS["isclose"]
le = FUNCTIONS["le"]
lgamma = FUNCTIONS["lgamma"]
log = FUNCTIONS["log"]
log1p = FUNCTIONS["log1p"]
logit = FUNCTIONS["logit"]
logsumexp = FUNCTIONS["logsumexp"]
matmul = FUNCTIONS["matmul"]
maximum = FUNCTIONS["maximum"]
mvlgamma = FUNCTIONS["mvlgamma"]
pow = FUNCTIONS["pow"]
rsqrt = FUNCTIONS["rsqrt"]
sigmoid = FUNCTIONS["sigmoid"]
sqrt = FUNCTIONS["sqrt"]
square = FUNCTIONS["square"]
stack = FUNCTIONS["stack"]
sum = FUNCTIONS["sum"]
tan = FUNCTIONS["tan"]
tanh = FUNCTIONS["tanh"]
transpose = FUNCTIONS["transpose"]
where = FUNCTIONS["where"]
xlogy = FUNCTIONS["xlogy"]


def broadcast_shapes(*shapes: tuple) -> Size:
    """torch.broadcast_shapes: the shape the given shapes broadcast to."""
    return Size(_broadcast_shapes(*(tuple(s) for s in shapes)))
