"""Activations: relu and its relatives (leaky, randomized: rrelu), gelu, silu, elu, selu, celu,
softplus, hardtanh, sigmoid, tanh, the shrinks, threshold, glu, prelu,
softmax/log_softmax/softmin, gumbel_softmax.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import jax
import jax.numpy as jnp

from ..._core import dtypes as _dtypes
from ..._core.jax_setup import jit
from ..._core.tensor import Tensor
from ..._engine.dispatch import apply as _apply
from ..._engine.dispatch import apply_inplace as _apply_inplace
from ..._functions import creation as _creation
from ..._functions import pointwise, reductions, scatter, tensor_surface
from ..._functions import random as _random
from ..._functions.opgen import tensor_args
from ..._ops import nn as N


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.relu(jaxgrad.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return pointwise.relu_(input) if inplace else pointwise.relu(input)


@tensor_args
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit, exact (``'none'``) or with the tanh approximation.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.gelu(jaxgrad.tensor([0.0]))
    tensor([0.])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _apply(N.GELU, input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.silu(jaxgrad.tensor([0.0]))
    tensor([0.])
    """
    return _apply_inplace(N.SILU, input) if inplace else _apply(N.SILU, input)


def _check_float_kernel(input: Tensor, kernel: str) -> None:
    """torch's dtype dispatch of the floating-point-only activation kernels."""
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f'"{kernel}_cpu" not implemented for '
                                  f"'{_dtypes.scalar_type_name(input.dtype)}'")


@tensor_args
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``negative_slope * x`` elsewhere (``LeakyReluBackward0``; in place
    ``LeakyReluBackward1``, which saves the result and refuses a negative slope in backward).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.leaky_relu(jaxgrad.tensor([-2.0, 3.0]), 0.1)
    tensor([-0.2000,  3.0000])
    """
    _check_float_kernel(input, "leaky_relu")
    if inplace:
        return _apply_inplace(N.LEAKY_RELU_, input, negative_slope=float(negative_slope))
    return _apply(N.LEAKY_RELU, input, aux=(negative_slope,))


@tensor_args
def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``leaky_relu`` written into ``input``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.leaky_relu_(jaxgrad.tensor([-2.0, 3.0]), 0.5)
    tensor([-1.,  3.])
    """
    return leaky_relu(input, negative_slope, inplace=True)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: ``x`` where positive; elsewhere ``x`` times a slope drawn
    uniformly from ``[lower, upper]`` per element in training (from jaxgrad's default
    generator), or ``(lower + upper) / 2`` in eval (the default, ``training=False``). It calls
    ``jaxgrad.rrelu`` (``jaxgrad.rrelu_`` in place), as torch's calls ``torch.rrelu``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.rrelu(jaxgrad.tensor([-2.0, 3.0]), 0.1, 0.3)
    tensor([-0.4000,  3.0000])
    """
    if inplace:
        return _random.rrelu_(input, lower, upper, training)
    return _random.rrelu(input, lower, upper, training)


rrelu_ = _random.rrelu_  # (torch's F.rrelu_ is torch.rrelu_)


@tensor_args
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere (``EluBackward0``; in place
    ``EluBackward1``, which saves the result).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.elu(jaxgrad.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    _check_float_kernel(input, "elu")
    if inplace:
        return _apply_inplace(N.ELU_, input, alpha=float(alpha), scale=1.0, input_scale=1.0)
    return _apply(N.ELU, input, aux=(alpha, 1.0, 1.0))


@tensor_args
def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``elu`` written into ``input``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.elu_(jaxgrad.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    return elu(input, alpha, inplace=True)


@tensor_args
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, or ``x`` itself where ``beta * x > threshold``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.softplus(jaxgrad.tensor([0.0, 30.0]))
    tensor([ 0.6931, 30.0000])
    """
    _check_float_kernel(input, "softplus")
    return _apply(N.SOFTPLUS, input, aux=(beta, threshold))


@tensor_args
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]`` (``HardtanhBackward0``, in place too).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.hardtanh(jaxgrad.tensor([-3.0, 0.5, 3.0]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    min_val, max_val = (_dtypes.checked_scalar(v, input.dtype) for v in (min_val, max_val))
    if inplace:
        return _apply_inplace(N.HARDTANH, input, aux=(min_val, max_val))
    return _apply(N.HARDTANH, input, aux=(min_val, max_val))


@tensor_args
def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``hardtanh`` written into ``input``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.hardtanh_(jaxgrad.tensor([-3.0, 3.0]))
    tensor([-1.,  1.])
    """
    return hardtanh(input, min_val, max_val, inplace=True)


@tensor_args
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``: torch's ``hardtanh(x, 0, 6)`` (``HardtanhBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.relu6(jaxgrad.tensor([-1.0, 3.0, 8.0]))
    tensor([0., 3., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-input))``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.sigmoid(jaxgrad.tensor([0.0]))
    tensor([0.5000])
    """
    return pointwise.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.tanh(jaxgrad.tensor([0.0]))
    tensor([0.])
    """
    return pointwise.tanh(input)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """``exp(input) / exp(input).sum(dim)``; without ``dim``, torch's deprecated implicit choice.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.softmax(jaxgrad.zeros(2), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, _stacklevel)
    return reductions.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    """``log(softmax(input, dim))``, computed stably.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.log_softmax(jaxgrad.zeros(1), dim=0)
    tensor([0.])
    """
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, _stacklevel)
    return reductions.log_softmax(input, dim, dtype)


@tensor_args
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, ``weight * x`` elsewhere, with one slope per channel (dim 1) or
    one for all (``PreluKernelBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.prelu(jaxgrad.tensor([-2.0, 3.0]), jaxgrad.tensor([0.25]))
    tensor([-0.5000,  3.0000])
    """
    return tensor_surface.prelu(input, weight)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably (``LogSigmoidBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.logsigmoid(jaxgrad.tensor([0.0]))
    tensor([-0.6931])
    """
    _check_float_kernel(input, "log_sigmoid")
    return _apply(N.LOG_SIGMOID, input)


_SELU_ALPHA = 1.6732632423543772848170429916717


_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants (torch's ``elu``
    node: ``EluBackward0``, in place ``EluBackward1``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.selu(jaxgrad.tensor([0.0, 1.0]))
    tensor([0.0000, 1.0507])
    """
    _check_float_kernel(input, "elu")
    if inplace:
        return _apply_inplace(N.ELU_, input, alpha=_SELU_ALPHA, scale=_SELU_SCALE,
                              input_scale=1.0)
    return _apply(N.ELU, input, aux=(_SELU_ALPHA, _SELU_SCALE, 1.0))


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (``CeluBackward0``; in place
    ``CeluBackward1``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.celu(jaxgrad.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    _check_float_kernel(input, "elu")
    if inplace:
        return _apply_inplace(N.CELU_, input, alpha=float(alpha))
    return _apply(N.CELU, input, aux=(alpha,))


def _unary_row(row: Any, input: Tensor, inplace: bool, kernel: str) -> Tensor:
    _check_float_kernel(input, kernel)
    return _apply_inplace(row, input) if inplace else _apply(row, input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` (``MishBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.mish(jaxgrad.tensor([0.0]))
    tensor([0.])
    """
    return _unary_row(N.MISH, input, inplace, "mish")


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6`` (``HardswishBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.hardswish(jaxgrad.tensor([-4.0, 0.0, 4.0]))
    tensor([-0., 0., 4.])
    """
    return _unary_row(N.HARDSWISH, input, inplace, "hardswish")


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6`` (``HardsigmoidBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.hardsigmoid(jaxgrad.tensor([-4.0, 0.0, 4.0]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    return _unary_row(N.HARDSIGMOID, input, inplace, "hardsigmoid")


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``, composed as torch composes it.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.softsign(jaxgrad.tensor([1.0, -3.0]))
    tensor([ 0.5000, -0.7500])
    """
    return pointwise.div(input, pointwise.add(pointwise.abs(input), 1))


def _check_lambd(input: Tensor, lambd: float) -> None:
    if lambd < 0:
        top = float(jnp.finfo(input._value.dtype).max)
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{_dtypes.scalar_type_name(input.dtype)}, but found {lambd:g}")


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between
    (``SoftshrinkBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.softshrink(jaxgrad.tensor([-1.0, 0.2, 2.0]))
    tensor([-0.5000,  0.0000,  1.5000])
    """
    _check_lambd(input, lambd)
    return _apply(N.SOFTSHRINK, input, aux=(lambd,))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, 0 elsewhere (``HardshrinkBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.hardshrink(jaxgrad.tensor([-1.0, 0.2, 2.0]))
    tensor([-1.,  0.,  2.])
    """
    return _apply(N.HARDSHRINK, input, aux=(lambd,))


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``, composed as torch composes it.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.tanhshrink(jaxgrad.tensor([0.0]))
    tensor([0.])
    """
    return pointwise.sub(input, pointwise.tanh(input))


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``value`` where ``x <= threshold``, ``x`` elsewhere (``ThresholdBackward0``; in place
    ``ThresholdBackward1``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.threshold(jaxgrad.tensor([0.5, 2.0]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    half = input.dtype in (_dtypes.float16, _dtypes.bfloat16)  # (compared in float32)
    threshold = _dtypes.checked_scalar(threshold, _dtypes.float32 if half else input.dtype)
    value = _dtypes.checked_scalar(value, input.dtype)
    if inplace:
        return _apply_inplace(N.THRESHOLD_, input, threshold=float(threshold),
                              value=float(value))
    return _apply(N.THRESHOLD, input, aux=(threshold, value))


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """``threshold`` written into ``input``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.threshold_(jaxgrad.tensor([0.5, 2.0]), 1.0, 0.0)
    tensor([0., 2.])
    """
    return globals()["threshold"](input, threshold, value, inplace=True)


def relu_(input: Tensor) -> Tensor:
    """``relu`` written into ``input``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.relu_(jaxgrad.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return pointwise.relu_(input)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: the first half of ``dim`` times the sigmoid of the second
    (``GluBackward0``).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.glu(jaxgrad.tensor([2.0, 0.0]))
    tensor([1.])
    """
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    wrapped = dim % input.dim()
    if input.shape[wrapped] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {wrapped} is size "
                           f"{input.shape[wrapped]}")
    return _apply(N.GLU, input, dim=wrapped)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """``softmax(-input, dim)``.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.softmin(jaxgrad.zeros(2), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim, _stacklevel)
    return reductions.softmax(pointwise.neg(input), dim, dtype)


@functools.partial(jit, static_argnames=("shape", "dtype"))
def _exponential_noise(key, shape, dtype):
    """(next key, Exponential(1) draws): ``exponential_`` on an ``empty_like``."""
    key, sub = jax.random.split(key)
    return key, jax.random.exponential(sub, shape, dtype)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with
    Gumbel(0, 1) noise ``g`` from jaxgrad's generator; ``hard`` returns one-hot vectors whose
    gradient is the soft sample's (straight-through).

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> y = F.gumbel_softmax(jaxgrad.zeros(2, 3), hard=True)
    >>> y.sum(-1)
    tensor([1., 1.])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    noise = _random.generator_for(logits.device).draw(functools.partial(
        _exponential_noise, shape=tuple(logits.shape), dtype=logits._value.dtype))
    gumbels = pointwise.neg(pointwise.log(Tensor._make(noise)))
    y_soft = reductions.softmax(pointwise.div(pointwise.add(logits, gumbels), tau), dim)
    if not hard:
        return y_soft
    index = reductions.max(y_soft, dim, keepdim=True)[1]
    y_hard = scatter.scatter_(_creation.zeros_like(logits), dim, index, 1.0)
    return pointwise.add(pointwise.sub(y_hard, y_soft.detach()), y_soft)
