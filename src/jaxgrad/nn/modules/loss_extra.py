"""More loss layers: ranking and embedding losses (``MarginRankingLoss``,
``HingeEmbeddingLoss``, ``CosineEmbeddingLoss``, ``TripletMarginLoss``), soft-margin losses
(``SoftMarginLoss``, ``MultiLabelSoftMarginLoss``) and likelihood losses (``PoissonNLLLoss``,
``GaussianNLLLoss``)."""

from __future__ import annotations

from ..._tensor import Tensor
from .. import functional
from .loss import _Loss, _WeightedLoss


class MarginRankingLoss(_Loss):
    """``max(0, -y * (x1 - x2) + margin)``.

    >>> import jaxgrad
    >>> loss = jaxgrad.nn.MarginRankingLoss(margin=0.5)
    >>> loss(jaxgrad.tensor([1.0]), jaxgrad.tensor([2.0]), jaxgrad.tensor([-1.0]))
    tensor(0.)
    """

    def __init__(self, margin: float = 0.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        """``functional.margin_ranking_loss``."""
        return functional.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                              reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``x`` for similar pairs (``y == 1``), ``max(0, margin - x)`` for dissimilar ones.

    >>> import jaxgrad
    >>> jaxgrad.nn.HingeEmbeddingLoss()(jaxgrad.tensor([2.0]), jaxgrad.tensor([-1.0]))
    tensor(0.)
    """

    def __init__(self, margin: float = 1.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``functional.hinge_embedding_loss``."""
        return functional.hinge_embedding_loss(input, target, margin=self.margin,
                                               reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``1 - cos(x1, x2)`` for ``y == 1``, ``max(0, cos(x1, x2) - margin)`` for ``y == -1``.

    >>> import jaxgrad
    >>> x = jaxgrad.tensor([[1.0, 0.0]])
    >>> jaxgrad.nn.CosineEmbeddingLoss()(x, x, jaxgrad.tensor([-1.0]))
    tensor(1.)
    """

    def __init__(self, margin: float = 0.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        """``functional.cosine_embedding_loss``."""
        return functional.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                                reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-y * x))``.

    >>> import jaxgrad
    >>> jaxgrad.nn.SoftMarginLoss()(jaxgrad.tensor([0.0]), jaxgrad.tensor([1.0]))
    tensor(0.6931)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``functional.soft_margin_loss``."""
        return functional.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class logistic loss averaged over the classes.

    >>> import jaxgrad
    >>> jaxgrad.nn.MultiLabelSoftMarginLoss()(jaxgrad.zeros(1, 2), jaxgrad.ones(1, 2))
    tensor(0.6931)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``functional.multilabel_soft_margin_loss`` with the ``weight`` buffer."""
        return functional.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                                      reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log likelihood (``log_input``: the input is the log rate).

    >>> import jaxgrad
    >>> jaxgrad.nn.PoissonNLLLoss()(jaxgrad.tensor([0.0]), jaxgrad.tensor([1.0]))
    tensor(1.)
    """

    def __init__(self, log_input: bool = True, full: bool = False,
                 size_average: bool | None = None, eps: float = 1e-8,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        """``functional.poisson_nll_loss``."""
        return functional.poisson_nll_loss(log_input, target, log_input=self.log_input,
                                           full=self.full, eps=self.eps,
                                           reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood with a predicted variance.

    >>> import jaxgrad
    >>> jaxgrad.nn.GaussianNLLLoss()(jaxgrad.zeros(2), jaxgrad.zeros(2), jaxgrad.ones(2))
    tensor(0.)
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6,
                 reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        """``functional.gaussian_nll_loss``."""
        return functional.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                            reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with the p-norm distance.

    >>> import jaxgrad
    >>> a = jaxgrad.zeros(1, 2)
    >>> jaxgrad.nn.TripletMarginLoss(eps=0.0)(a, a, a + 3.0)
    tensor(0.)
    """

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        """``functional.triplet_margin_loss``."""
        return functional.triplet_margin_loss(anchor, positive, negative, margin=self.margin,
                                              p=self.p, eps=self.eps, swap=self.swap,
                                              reduction=self.reduction)
