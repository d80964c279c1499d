"""``ChannelShuffle``: interleave groups of channels."""

from __future__ import annotations

from ..._core.tensor import Tensor
from .. import functional
from .module import Module


class ChannelShuffle(Module):
    """Split the channels into ``groups`` and interleave them (``functional.channel_shuffle``).

    >>> import jaxgrad
    >>> shuffle = jaxgrad.nn.ChannelShuffle(2)
    >>> shuffle
    ChannelShuffle(groups=2)
    >>> shuffle(jaxgrad.arange(4.0).reshape(1, 4, 1)).flatten()
    tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        """``functional.channel_shuffle(input, groups)``."""
        return functional.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        """The group count, as shown in the repr."""
        return f"groups={self.groups}"
