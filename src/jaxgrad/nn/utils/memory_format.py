"""``jaxgrad.nn.utils.convert_conv2d_weight_memory_format`` and its 3-d twin: re-lay the
weights of every (transposed) convolution in a module tree (``torch.nn.utils.memory_format``).
"""

from __future__ import annotations

from typing import Any, TypeVar

from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

_M = TypeVar("_M", bound=Module)


def _convert(module: Module, kinds: tuple[type, ...], memory_format: Any) -> None:
    if isinstance(module, kinds):
        weight_data = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = weight_data.resize_(weight_data.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, kinds, memory_format)


def convert_conv2d_weight_memory_format(module: _M, memory_format: Any) -> _M:
    """Give the weight of every ``Conv2d``/``ConvTranspose2d`` in ``module`` the
    ``memory_format`` (``channels_last``...), in place; returns ``module``.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import convert_conv2d_weight_memory_format
    >>> net = jaxgrad.nn.Sequential(jaxgrad.nn.Conv2d(2, 3, 2))
    >>> net = convert_conv2d_weight_memory_format(net, jaxgrad.channels_last)
    >>> net[0].weight.is_contiguous(memory_format=jaxgrad.channels_last)
    True
    """
    _convert(module, (Conv2d, ConvTranspose2d), memory_format)
    return module


def convert_conv3d_weight_memory_format(module: _M, memory_format: Any) -> _M:
    """Give the weight of every ``Conv3d``/``ConvTranspose3d`` in ``module`` the
    ``memory_format`` (``channels_last_3d``...), in place; returns ``module``.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import convert_conv3d_weight_memory_format
    >>> net = jaxgrad.nn.Sequential(jaxgrad.nn.Conv3d(2, 3, 2))
    >>> net = convert_conv3d_weight_memory_format(net, jaxgrad.channels_last_3d)
    >>> net[0].weight.is_contiguous(memory_format=jaxgrad.channels_last_3d)
    True
    """
    _convert(module, (Conv3d, ConvTranspose3d), memory_format)
    return module
