"""``Flatten``: collapse a range of dimensions into one."""

from __future__ import annotations

from ..._core.tensor import Tensor
from .module import Module


class Flatten(Module):
    """Flatten dimensions ``start_dim`` to ``end_dim`` (default: all but the batch dimension).

    >>> import jaxgrad
    >>> jaxgrad.nn.Flatten()(jaxgrad.ones(2, 3, 4)).shape
    jaxgrad.Size([2, 12])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        """``input.flatten(start_dim, end_dim)``."""
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        """The ``start_dim`` and ``end_dim`` arguments, as shown in the repr.

        >>> import jaxgrad
        >>> jaxgrad.nn.Flatten()
        Flatten(start_dim=1, end_dim=-1)
        """
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
