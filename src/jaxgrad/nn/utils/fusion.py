"""``jaxgrad.nn.utils.fusion``: folding an eval-mode batch norm into the convolution or linear
layer before it (``torch.nn.utils.fusion``).
"""

from __future__ import annotations

import copy
from typing import TypeVar

from ..._core.tensor import Tensor
from ..._functions import creation, pointwise
from ..modules.batchnorm import _BatchNorm
from ..modules.conv import _ConvNd
from ..modules.linear import Linear
from ..parameter import Parameter

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]

ConvT = TypeVar("ConvT", bound=_ConvNd)
LinearT = TypeVar("LinearT", bound=Linear)


def fuse_conv_bn_eval(conv: ConvT, bn: _BatchNorm, transpose: bool = False) -> ConvT:
    """A copy of ``conv`` computing ``bn(conv(x))`` (both in eval mode).

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import fuse_conv_bn_eval
    >>> conv, bn = jaxgrad.nn.Conv2d(1, 2, 1).eval(), jaxgrad.nn.BatchNorm2d(2).eval()
    >>> x = jaxgrad.randn(1, 1, 2, 2)
    >>> bool(jaxgrad.allclose(fuse_conv_bn_eval(conv, bn)(x), bn(conv(x)), atol=1e-6))
    True
    """
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_conv = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_conv.weight, fused_conv.bias = fuse_conv_bn_weights(
        fused_conv.weight,
        fused_conv.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
        transpose,
    )
    return fused_conv


def fuse_conv_bn_weights(
    conv_w: Tensor,
    conv_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
    transpose: bool = False,
) -> tuple[Parameter, Parameter]:
    """The weight and bias of a convolution followed by a batch norm with these statistics
    and affine parameters, as new parameters.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import fuse_conv_bn_weights
    >>> w, b = fuse_conv_bn_weights(jaxgrad.ones(1, 1, 1), None, jaxgrad.zeros(1),
    ...                             jaxgrad.full((1,), 3.0), 1.0, None, None)
    >>> w.flatten(), b
    (tensor([0.5000]), Parameter containing:
    tensor([0.]))
    """
    conv_weight_dtype = conv_w.dtype
    conv_bias_dtype = conv_b.dtype if conv_b is not None else conv_weight_dtype
    if conv_b is None:
        conv_b = creation.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = creation.ones_like(bn_rm)
    if bn_b is None:
        bn_b = creation.zeros_like(bn_rm)
    bn_var_rsqrt = pointwise.rsqrt(bn_rv + bn_eps)
    rest = [1] * (len(conv_w.shape) - 2)
    shape = [1, -1, *rest] if transpose else [-1, 1, *rest]
    fused_conv_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(dtype=conv_weight_dtype)
    fused_conv_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(dtype=conv_bias_dtype)
    return (
        Parameter(fused_conv_w, conv_w.requires_grad),
        Parameter(fused_conv_b, conv_b.requires_grad),
    )


def fuse_linear_bn_eval(linear: LinearT, bn: _BatchNorm) -> LinearT:
    """A copy of ``linear`` computing ``bn(linear(x))`` (both in eval mode).

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import fuse_linear_bn_eval
    >>> lin, bn = jaxgrad.nn.Linear(2, 3).eval(), jaxgrad.nn.BatchNorm1d(3).eval()
    >>> x = jaxgrad.randn(4, 2)
    >>> bool(jaxgrad.allclose(fuse_linear_bn_eval(lin, bn)(x), bn(lin(x)), atol=1e-6))
    True
    """
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_linear = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
            f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}"
        )
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_linear.weight, fused_linear.bias = fuse_linear_bn_weights(
        fused_linear.weight,
        fused_linear.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
    )
    return fused_linear


def fuse_linear_bn_weights(
    linear_w: Tensor,
    linear_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor,
    bn_b: Tensor,
) -> tuple[Parameter, Parameter]:
    """The weight and bias of a linear layer followed by a batch norm with these statistics
    and affine parameters, as new parameters.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import fuse_linear_bn_weights
    >>> w, b = fuse_linear_bn_weights(jaxgrad.ones(1, 2), None, jaxgrad.zeros(1),
    ...                               jaxgrad.full((1,), 3.0), 1.0, jaxgrad.ones(1),
    ...                               jaxgrad.zeros(1))
    >>> w
    Parameter containing:
    tensor([[0.5000, 0.5000]])
    """
    linear_weight_dtype = linear_w.dtype
    linear_bias_dtype = linear_b.dtype if linear_b is not None else linear_weight_dtype
    if linear_b is None:
        linear_b = creation.zeros_like(bn_rm)
    bn_scale = bn_w * pointwise.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=linear_weight_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(dtype=linear_bias_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)
