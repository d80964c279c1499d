"""The top-level ``jaxgrad.*`` pooling forms with torch's native signatures
(``torch.max_pool2d(input, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False)``
returns only the values; ``torch.max_pool1d_with_indices`` and ``torch.adaptive_max_pool1d``
return values and indices). Each calls the ``nn.functional`` implementation, so graphs are the
same.
"""

from __future__ import annotations

from typing import Any

from ..._core.tensor import Tensor
from . import pooling as _pool
from . import pooling_nd as _pool_nd


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    """Max over 1-D windows (an empty ``stride`` is the kernel size).

    >>> import jaxgrad
    >>> jaxgrad.max_pool1d(jaxgrad.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[3., 2.]])
    """
    return _pool.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (),
                            padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """Max over 1-D windows and each maximum's position.

    >>> import jaxgrad
    >>> jaxgrad.max_pool1d_with_indices(jaxgrad.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    (tensor([[3., 2.]]), tensor([[1, 2]]))
    """
    return _pool.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    """Max over 2-D windows (an empty ``stride`` is the kernel size).

    >>> import jaxgrad
    >>> jaxgrad.max_pool2d(jaxgrad.arange(4.0).reshape(1, 2, 2), 2)
    tensor([[[3.]]])
    """
    return _pool.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    """Max over 3-D windows (an empty ``stride`` is the kernel size).

    >>> import jaxgrad
    >>> jaxgrad.max_pool3d(jaxgrad.arange(8.0).reshape(1, 2, 2, 2), 2)
    tensor([[[[7.]]]])
    """
    return _pool_nd.max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    """Adaptive max pooling of (N, C, L) or (C, L) input: values and indices.

    >>> import jaxgrad
    >>> jaxgrad.adaptive_max_pool1d(jaxgrad.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    (tensor([[3., 2.]]), tensor([[1, 2]]))
    """
    return _pool.adaptive_max_pool1d(input, output_size, True)
