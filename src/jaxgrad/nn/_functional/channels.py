"""Across-channel ops: ``local_response_norm`` (torch's composition: pad, average pool, pow)
and ``channel_shuffle``/``native_channel_shuffle``."""

from __future__ import annotations

from ..._core.tensor import Tensor
from ..._engine.dispatch import apply as _apply
from ..._functions import pointwise
from ..._functions import shapes as _shapes
from ..._functions.opgen import tensor_args
from ..._ops import nn_shuffle as S
from .convolution import pad
from .pooling import avg_pool2d
from .pooling_nd import avg_pool3d


@tensor_args
def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Divide by ``(k + alpha * mean of squares over size neighbouring channels) ** beta``.

    Composed as torch's: the squares pooled over channels with ``avg_pool2d`` (3-d input) or
    ``avg_pool3d`` on an (N, 1, C, H, -1) view.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> F.local_response_norm(jaxgrad.ones(1, 2, 1), 2, alpha=1.0, beta=1.0)
    tensor([[[0.6667],
             [0.5000]]])
    """
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = pointwise.mul(input, input)
    if dim == 3:
        div = _shapes.unsqueeze(div, 1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = _shapes.squeeze(avg_pool2d(div, (size, 1), stride=1), 1)
    else:
        sizes = tuple(input.shape)
        div = _shapes.view(div, (sizes[0], 1, sizes[1], sizes[2], -1))
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = _shapes.squeeze(avg_pool3d(div, (size, 1, 1), stride=1), 1)
        div = _shapes.view(div, sizes)
    div = pointwise.pow(pointwise.add(pointwise.mul(div, alpha), k), beta)
    return pointwise.div(input, div)


def _check_shuffle(input: Tensor, groups: int) -> None:
    """torch's channel_shuffle checks."""
    if input.dim() <= 2:
        raise RuntimeError("channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got "
                           f"{input.shape[1]} channels and {groups} groups.")


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the channels into ``groups`` and interleave them (``ChannelShuffleBackward0``).

    >>> import jaxgrad
    >>> jaxgrad.channel_shuffle(jaxgrad.arange(4.0).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    _check_shuffle(input, groups)
    return _apply(S.CHANNEL_SHUFFLE, input, groups=int(groups))


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """:func:`channel_shuffle` as torch's native kernel (it has no derivative).

    >>> import jaxgrad
    >>> jaxgrad.native_channel_shuffle(jaxgrad.arange(4.0).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    _check_shuffle(input, groups)
    return _apply(S.NATIVE_CHANNEL_SHUFFLE, input, groups=int(groups))
