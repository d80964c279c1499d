"""``Dropout`` on torch's ``_DropoutNd`` base."""

from __future__ import annotations

from ..._tensor import Tensor
from .. import functional
from .module import Module


class _DropoutNd(Module):
    """The probability ``p`` (checked to lie in [0, 1]), ``inplace`` flag and repr shared by
    the dropout layers."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        """The ``p`` and ``inplace`` arguments, as shown in the repr.

        >>> import jaxgrad
        >>> jaxgrad.nn.Dropout(0.2).extra_repr()
        'p=0.2, inplace=False'
        """
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """In training mode, zero each element with probability ``p`` (jaxgrad's seeded generator)
    and scale the rest by ``1 / (1 - p)``; in eval mode return the input itself.

    >>> import jaxgrad
    >>> drop = jaxgrad.nn.Dropout(0.5)
    >>> drop
    Dropout(p=0.5, inplace=False)
    >>> sorted(set(drop(jaxgrad.ones(1000)).tolist()))
    [0.0, 2.0]
    >>> x = jaxgrad.ones(3)
    >>> drop.eval()(x) is x
    True
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.dropout`` of ``input`` with ``p``; the input itself in eval mode."""
        return functional.dropout(input, self.p, self.training, self.inplace)
