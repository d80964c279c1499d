"""``jaxgrad.nn.init``: torch.nn.init's initialisers, in place under ``no_grad``.

Random fills come from jaxgrad's seeded generator (``jaxgrad.manual_seed``): the values differ
from torch's, the distributions (bounds, mean, std) are the same.

>>> import jaxgrad
>>> import jaxgrad.nn.init as init
>>> w = init.constant_(jaxgrad.empty(2, 3), 0.5)
>>> w.sum()
tensor(3.)
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from .._core.grad_mode import no_grad
from .._core.tensor import Tensor
from .._functions import pointwise
from .._functions import random as _random
from .._functions.random import Generator

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d")


def calculate_gain(nonlinearity: str, param: int | float | None = None) -> float:
    """The recommended gain for a nonlinearity (torch's table).

    >>> import jaxgrad.nn.init as init
    >>> init.calculate_gain("tanh")
    1.6666666666666667
    """
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out): input/output feature maps times the receptive field size.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init._calculate_fan_in_and_fan_out(jaxgrad.empty(4, 3, 5))
    (15, 20)
    """
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _is_empty(tensor: Tensor) -> bool:
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: Generator | None = None) -> Tensor:
    """Fill with samples from U(a, b).

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> bool((init.uniform_(jaxgrad.empty(100), -1, 1).abs() <= 1).all())
    True
    """
    with no_grad():
        return _random.uniform_(tensor, a, b, generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: Generator | None = None) -> Tensor:
    """Fill with samples from N(mean, std**2).

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init.normal_(jaxgrad.empty(2, 2), std=0.0)
    tensor([[0., 0.],
            [0., 0.]])
    """
    with no_grad():
        return _random.normal_(tensor, mean, std, generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init.constant_(jaxgrad.empty(2), 3.0)
    tensor([3., 3.])
    """
    with no_grad():
        return pointwise.fill_(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init.ones_(jaxgrad.empty(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init.zeros_(jaxgrad.empty(2))
    tensor([0., 0.])
    """
    with no_grad():
        return pointwise.zero_(tensor)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0,
                    generator: Generator | None = None) -> Tensor:
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> bool((init.xavier_uniform_(jaxgrad.empty(3, 3)).abs() <= 1).all())
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: Generator | None = None) -> Tensor:
    """Glorot normal: N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init.xavier_normal_(jaxgrad.empty(3, 3), gain=0.0).abs().sum()
    tensor(0.)
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Generator | None = None,
                     ) -> Tensor:
    """He uniform: U(-b, b) with ``b = gain * sqrt(3 / fan)``.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> w = init.kaiming_uniform_(jaxgrad.empty(4, 3), nonlinearity="relu")
    >>> bool((w.abs() <= (6 / 3) ** 0.5).all())
    True
    """
    if _is_empty(tensor):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Generator | None = None,
                    ) -> Tensor:
    """He normal: N(0, std**2) with ``std = gain / sqrt(fan)``.

    >>> import jaxgrad, jaxgrad.nn.init as init
    >>> init.kaiming_normal_(jaxgrad.empty(2, 3)).shape
    jaxgrad.Size([2, 3])
    """
    if _is_empty(tensor):
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


__all__: list[Any] = [
    "calculate_gain", "constant_", "kaiming_normal_", "kaiming_uniform_", "normal_", "ones_",
    "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_",
]
