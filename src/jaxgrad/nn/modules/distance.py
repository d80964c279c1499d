"""``PairwiseDistance`` and ``CosineSimilarity``."""

from __future__ import annotations

from ..._core.tensor import Tensor
from .. import functional
from .module import Module


class PairwiseDistance(Module):
    """The p-norm distance between rows of ``x1`` and ``x2`` (``eps`` added to the difference).

    >>> import jaxgrad
    >>> jaxgrad.nn.PairwiseDistance(eps=0.0)(jaxgrad.tensor([[3.0, 4.0]]), jaxgrad.zeros(1, 2))
    tensor([5.])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """``functional.pairwise_distance`` of ``x1`` and ``x2``."""
        return functional.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """Cosine similarity of ``x1`` and ``x2`` along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.nn.CosineSimilarity(dim=0)(jaxgrad.tensor([1.0, 0.0]), jaxgrad.tensor([2.0, 0.0]))
    tensor(1.)
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """``functional.cosine_similarity`` of ``x1`` and ``x2``."""
        return functional.cosine_similarity(x1, x2, self.dim, self.eps)
