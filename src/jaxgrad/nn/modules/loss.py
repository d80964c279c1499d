"""Loss layers on torch's ``_Loss``/``_WeightedLoss`` bases: ``L1Loss``, ``MSELoss``,
``NLLLoss``, ``CrossEntropyLoss``, ``LinearCrossEntropyLoss``, ``BCELoss``, ``BCEWithLogitsLoss``,
``SmoothL1Loss``, ``HuberLoss`` and ``KLDivLoss``."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

from ..._core.tensor import Tensor
from .. import functional
from .._functional.losses import _REDUCTIONS, _reduction
from .distance import PairwiseDistance
from .linear import Linear
from .linear_cross_entropy_options import LinearCrossEntropyOptions
from .module import Module


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """The ``reduction`` named by the deprecated ``size_average``/``reduce`` flags (with
    torch's deprecation warning)."""
    code = _reduction("mean", size_average, reduce)
    name = next(name for name, value in _REDUCTIONS.items() if value == code)
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  f"reduction='{name}' instead.", stacklevel=3)
    return name


class _Loss(Module):
    """The ``reduction`` ('mean', 'sum' or 'none') every loss layer carries."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = _legacy_reduction(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    """A loss with an optional per-class rescaling ``weight``, kept as a buffer."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Mean absolute error between ``input`` and ``target``.

    >>> import jaxgrad
    >>> jaxgrad.nn.L1Loss()(jaxgrad.tensor([1.0, -3.0]), jaxgrad.zeros(2))
    tensor(2.)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``functional.l1_loss`` of ``input`` and ``target`` with this loss's ``reduction``."""
        return functional.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean squared error between ``input`` and ``target``.

    >>> import jaxgrad
    >>> jaxgrad.nn.MSELoss(reduction="sum")(jaxgrad.tensor([1.0, 3.0]), jaxgrad.zeros(2))
    tensor(10.)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``functional.mse_loss`` of ``input`` and ``target`` with this loss's ``reduction``."""
        return functional.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of log-probabilities ``input`` at class indices ``target``
    (targets equal to ``ignore_index`` are skipped).

    >>> import jaxgrad
    >>> jaxgrad.nn.NLLLoss()(jaxgrad.tensor([[-1.0, -2.0]]), jaxgrad.tensor([1]))
    tensor(2.)
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``functional.nll_loss`` with this loss's weight, ignore_index and reduction."""
        return functional.nll_loss(input, target, weight=self.weight,
                                   ignore_index=self.ignore_index, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits ``input`` against class indices or class probabilities, with
    optional class ``weight``, ``ignore_index`` and ``label_smoothing``.

    >>> import jaxgrad
    >>> loss = jaxgrad.nn.CrossEntropyLoss()
    >>> loss
    CrossEntropyLoss()
    >>> loss(jaxgrad.zeros(1, 2), jaxgrad.tensor([0]))
    tensor(0.6931)
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``functional.cross_entropy`` with this loss's weight, ignore_index, reduction etc."""
        return functional.cross_entropy(input, target, weight=self.weight,
                                        ignore_index=self.ignore_index,
                                        reduction=self.reduction,
                                        label_smoothing=self.label_smoothing)


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of ``input`` projected to logits by an owned ``Linear`` (stored flat,
    ``(C * prod(out_features), in_features)``), against ``target``: the module form of
    ``functional.linear_cross_entropy`` with its ``options`` for the chunked path.

    >>> import jaxgrad
    >>> loss = jaxgrad.nn.LinearCrossEntropyLoss(2, 3)
    >>> with jaxgrad.no_grad():
    ...     _ = loss.linear.weight.zero_()
    >>> loss(jaxgrad.ones(1, 2), jaxgrad.tensor([0]))
    tensor(1.0986, grad_fn=<NllLossBackward0>)
    """

    __constants__ = ["num_classes", "out_features", "reduction", "ignore_index",
                     "label_smoothing"]

    def __init__(self, in_features: int, num_classes: int, *,
                 out_features: tuple[int, ...] = (), bias: bool = False, device: Any = None,
                 dtype: Any = None, reduction: str = "mean", weight: Tensor | None = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: LinearCrossEntropyOptions | None = None) -> None:
        if weight is not None and weight.shape != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError("expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias,
                             device=device, dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``functional.linear_cross_entropy`` with the linear weight (and bias) reshaped to
        ``(C, *out_features, in_features)``."""
        linear_weight = self.linear.weight.reshape(
            (self.num_classes, *self.out_features, self.linear.in_features))
        linear_bias = (self.linear.bias.reshape((self.num_classes, *self.out_features))
                       if self.linear.bias is not None else None)
        return functional.linear_cross_entropy(
            input, linear_weight, target, linear_bias=linear_bias, weight=self.weight,
            reduction=self.reduction, ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        """in_features, num_classes, out_features, bias and the loss settings."""
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities ``input`` against ``target``.

    >>> import jaxgrad
    >>> jaxgrad.nn.BCELoss()(jaxgrad.tensor([0.5]), jaxgrad.tensor([1.0]))
    tensor(0.6931)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``functional.binary_cross_entropy`` with this loss's ``weight`` and ``reduction``."""
        return functional.binary_cross_entropy(input, target, weight=self.weight,
                                               reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits ``input`` against ``target``, with optional element
    ``weight`` and positive-class ``pos_weight`` (both buffers).

    >>> import jaxgrad
    >>> loss = jaxgrad.nn.BCEWithLogitsLoss(pos_weight=jaxgrad.tensor([2.0]))
    >>> list(loss.state_dict())
    ['pos_weight']
    >>> loss(jaxgrad.zeros(1), jaxgrad.ones(1))
    tensor(1.3863)
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``functional.binary_cross_entropy_with_logits`` with this loss's buffers, reduction."""
        return functional.binary_cross_entropy_with_logits(input, target, self.weight,
                                                           pos_weight=self.pos_weight,
                                                           reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error below ``beta``, absolute error above it (``functional.smooth_l1_loss``).

    >>> import jaxgrad
    >>> jaxgrad.nn.SmoothL1Loss(beta=0.5)(jaxgrad.tensor([0.2, 2.0]), jaxgrad.zeros(2))
    tensor(0.8950)
    """

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``functional.smooth_l1_loss`` with this loss's ``reduction`` and ``beta``."""
        return functional.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Squared error below ``delta``, ``delta``-scaled absolute error above it
    (``functional.huber_loss``).

    >>> import jaxgrad
    >>> jaxgrad.nn.HuberLoss(delta=2.0)(jaxgrad.tensor([0.5, 3.0]), jaxgrad.zeros(2))
    tensor(2.0625)
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``functional.huber_loss`` with this loss's ``reduction`` and ``delta``."""
        return functional.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities ``input`` from ``target``
    (``functional.kl_div``; ``reduction='batchmean'`` is the mathematical KL divergence).

    >>> import jaxgrad
    >>> loss = jaxgrad.nn.KLDivLoss(reduction="batchmean", log_target=True)
    >>> loss(jaxgrad.zeros(1, 2), jaxgrad.zeros(1, 2))
    tensor(0.)
    """

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``functional.kl_div`` with this loss's ``reduction`` and ``log_target``."""
        return functional.kl_div(input, target, reduction=self.reduction,
                                 log_target=self.log_target)


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


class NLLLoss2d(NLLLoss):
    """torch's deprecated alias of ``NLLLoss`` for (N, C, H, W) inputs.

    >>> import jaxgrad
    >>> jaxgrad.nn.NLLLoss2d()(jaxgrad.zeros(1, 2, 1, 1), jaxgrad.tensor([[[1]]]))
    tensor(-0.)
    """


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss (``functional.multi_margin_loss``) with ``p`` 1 or 2, a
    ``margin`` and optional class ``weight``.

    >>> import jaxgrad
    >>> jaxgrad.nn.MultiMarginLoss()(jaxgrad.tensor([[0.1, 0.2, 0.4, 0.8]]), jaxgrad.tensor([3]))
    tensor(0.3250)
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError("MultiMarginLoss: expected weight to be None or 1D tensor, got "
                             f"{weight.dim()}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``functional.multi_margin_loss`` with this loss's p, margin, weight and reduction."""
        return functional.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                            weight=self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss (``functional.multilabel_margin_loss``).

    >>> import jaxgrad
    >>> jaxgrad.nn.MultiLabelMarginLoss()(jaxgrad.tensor([[0.1, 0.2, 0.4, 0.8]]),
    ...                                   jaxgrad.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """``functional.multilabel_margin_loss`` with this loss's reduction."""
        return functional.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet loss with any ``distance_function`` (a ``PairwiseDistance`` by default).

    >>> import jaxgrad
    >>> a = jaxgrad.zeros(1, 2)
    >>> jaxgrad.nn.TripletMarginWithDistanceLoss()(a, a, a + 3.0)
    tensor(0.)
    """

    def __init__(self, *, distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                 margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError("TripletMarginWithDistanceLoss: expected margin to be greater than "
                             f"0, got {margin} instead")
        self.distance_function = (distance_function if distance_function is not None
                                  else PairwiseDistance())
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        """``functional.triplet_margin_with_distance_loss`` with this loss's arguments."""
        return functional.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification loss (``functional.ctc_loss``) with a ``blank``
    class and ``zero_infinity``.

    >>> import jaxgrad
    >>> lp = jaxgrad.full((2, 1, 2), 0.5).log()
    >>> jaxgrad.nn.CTCLoss(reduction="sum")(lp, jaxgrad.tensor([[1]]), [2], [1])
    tensor(0.2877)
    """

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Any,
                target_lengths: Any) -> Tensor:
        """``functional.ctc_loss`` with this loss's blank, reduction and zero_infinity."""
        return functional.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                                   self.reduction, self.zero_infinity)
