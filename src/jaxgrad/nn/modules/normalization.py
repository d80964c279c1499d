"""``LayerNorm``: normalisation over the trailing dimensions; ``LocalResponseNorm`` and
``CrossMapLRN2d``: across neighbouring channels."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

from ..._core.tensor import Tensor
from ..._functions.creation import empty
from .. import functional, init
from ..parameter import Parameter
from ._functions import CrossMapLRN2d as _CrossMapLRN2dFunction
from .module import Module


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dimensions, then scale by ``weight``
    (ones) and shift by ``bias`` (zeros) when ``elementwise_affine``.

    >>> import jaxgrad
    >>> ln = jaxgrad.nn.LayerNorm(2)
    >>> ln
    LayerNorm((2,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> ln(jaxgrad.tensor([[1.0, 3.0]]))
    tensor([[-1.0000,  1.0000]], grad_fn=<NativeLayerNormBackward0>)
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight to ones, bias to zeros."""
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        """``functional.layer_norm`` of ``input`` over ``normalized_shape``, with weight, bias."""
        return functional.layer_norm(input, self.normalized_shape, self.weight, self.bias,
                                     self.eps)

    def extra_repr(self) -> str:
        """The shape, ``eps``, ``elementwise_affine`` and ``bias`` flags, as shown in the repr."""
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalise groups of channels (``num_groups`` of them) over the group and the spatial
    dims, then scale by ``weight`` (ones) and shift by ``bias`` (zeros) per channel.

    >>> import jaxgrad
    >>> gn = jaxgrad.nn.GroupNorm(2, 4)
    >>> gn
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    >>> gn(jaxgrad.randn(3, 4, 5)).shape
    jaxgrad.Size([3, 4, 5])
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(empty(num_channels, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(num_channels, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight to ones, bias to zeros."""
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        """``functional.group_norm`` of ``input``."""
        return functional.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """Groups, channels, ``eps`` and the ``affine``/``bias`` flags, as shown in the repr."""
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """Divide by the root mean square over the trailing ``normalized_shape`` dims, then scale
    by ``weight`` (ones) when ``elementwise_affine``.

    >>> import jaxgrad
    >>> norm = jaxgrad.nn.RMSNorm(2)
    >>> norm
    RMSNorm((2,), eps=None, elementwise_affine=True)
    >>> norm(jaxgrad.tensor([[3.0, -3.0]]))
    tensor([[ 1., -1.]], grad_fn=<MulBackward0>)
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight to ones."""
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        """``functional.rms_norm`` of ``x``."""
        return functional.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        """The shape, ``eps`` and ``elementwise_affine``, as shown in the repr."""
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Local response normalisation across ``size`` neighbouring channels
    (``functional.local_response_norm``).

    >>> import jaxgrad
    >>> lrn = jaxgrad.nn.LocalResponseNorm(2, alpha=1.0, beta=1.0)
    >>> lrn
    LocalResponseNorm(2, alpha=1.0, beta=1.0, k=1.0)
    >>> lrn(jaxgrad.ones(1, 2, 1)).flatten()
    tensor([0.6667, 0.5000])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        """``functional.local_response_norm`` with this layer's arguments."""
        return functional.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        """The size, alpha, beta and k, as shown in the repr."""
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """Local response normalisation across channels of (N, C, H, W) input, with torch's own
    running-sum kernel and backward (``CrossMapLRN2dBackward``).

    >>> import jaxgrad
    >>> lrn = jaxgrad.nn.CrossMapLRN2d(3, alpha=1.0, beta=1.0)
    >>> lrn
    CrossMapLRN2d(3, alpha=1.0, beta=1.0, k=1)
    >>> lrn(jaxgrad.ones(1, 2, 1, 1)).flatten()
    tensor([0.6000, 0.6000])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        """torch's ``CrossMapLRN2d`` function applied to ``input``."""
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        """The size, alpha, beta and k, as shown in the repr."""
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
