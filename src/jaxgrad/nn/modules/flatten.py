"""``Flatten``: collapse a range of dimensions into one; ``Unflatten``: expand one."""

from __future__ import annotations

from collections.abc import Sequence

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


class Unflatten(Module):
    """Expand dimension ``dim`` into ``unflattened_size`` (a tuple or list of ints).

    >>> import jaxgrad
    >>> jaxgrad.nn.Unflatten(1, (2, 3))(jaxgrad.ones(4, 6)).shape
    jaxgrad.Size([4, 2, 3])
    """

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self._require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    @staticmethod
    def _require_tuple_int(input: object) -> None:
        if isinstance(input, (tuple, list)):
            for idx, elem in enumerate(input):
                if not isinstance(elem, int):
                    raise TypeError("unflattened_size must be tuple of ints, but found element "
                                    f"of type {type(elem).__name__} at pos {idx}")
            return
        raise TypeError("unflattened_size must be a tuple of ints, but found type "
                        f"{type(input).__name__}")

    def forward(self, input: Tensor) -> Tensor:
        """``input.unflatten(dim, unflattened_size)``."""
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        """The ``dim`` and ``unflattened_size`` arguments, as shown in the repr."""
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
