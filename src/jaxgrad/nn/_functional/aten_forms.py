"""The top-level ``jaxgrad.*`` forms of functional ops, with torch's native signatures (which
differ from ``nn.functional``'s: ``torch.dropout(input, p, train)``,
``torch.embedding(weight, indices, ...)``, ``torch.batch_norm(input, weight, bias,
running_mean, running_var, training, momentum, eps, cudnn_enabled)``, an integer
``reduction``). Each calls the ``nn.functional`` implementation, so graphs are the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._core.tensor import Tensor
from . import activations as _act
from . import convolution as _conv
from . import dropout as _drop
from . import losses as _losses
from . import normalization as _norm
from . import sparse as _sparse

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``nn.functional.dropout(input, p, train)``.

    >>> import jaxgrad
    >>> x = jaxgrad.ones(3)
    >>> jaxgrad.dropout(x, 0.5, False) is x
    True
    """
    return _drop.dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`dropout`.

    >>> import jaxgrad
    >>> jaxgrad.dropout_(jaxgrad.ones(2), 0.0, True)
    tensor([1., 1.])
    """
    return _drop.dropout(input, p, train, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``nn.functional.alpha_dropout(input, p, train)``.

    >>> import jaxgrad
    >>> x = jaxgrad.ones(3)
    >>> jaxgrad.alpha_dropout(x, 0.5, False) is x
    True
    """
    return _drop.alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`alpha_dropout`.

    >>> import jaxgrad
    >>> jaxgrad.alpha_dropout_(jaxgrad.ones(2), 0.5, False)
    tensor([1., 1.])
    """
    return _drop.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``nn.functional.feature_alpha_dropout(input, p, train)``.

    >>> import jaxgrad
    >>> x = jaxgrad.ones(1, 2, 2)
    >>> jaxgrad.feature_alpha_dropout(x, 0.5, False) is x
    True
    """
    return _drop.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`feature_alpha_dropout`.

    >>> import jaxgrad
    >>> jaxgrad.feature_alpha_dropout_(jaxgrad.ones(1, 2), 0.5, False)
    tensor([[1., 1.]])
    """
    return _drop.feature_alpha_dropout(input, p, train, inplace=True)


def selu(input: Tensor) -> Tensor:
    """``nn.functional.selu``.

    >>> import jaxgrad
    >>> jaxgrad.selu(jaxgrad.tensor([0.0]))
    tensor([0.])
    """
    return _act.selu(input)


def selu_(input: Tensor) -> Tensor:
    """In-place :func:`selu`.

    >>> import jaxgrad
    >>> jaxgrad.selu_(jaxgrad.tensor([0.0]))
    tensor([0.])
    """
    return _act.selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``nn.functional.celu``.

    >>> import jaxgrad
    >>> jaxgrad.celu(jaxgrad.tensor([2.0]), 0.5)
    tensor([2.])
    """
    return _act.celu(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`celu`.

    >>> import jaxgrad
    >>> jaxgrad.celu_(jaxgrad.tensor([2.0]))
    tensor([2.])
    """
    return _act.celu(input, alpha, inplace=True)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """``nn.functional.threshold``: ``value`` where ``input <= threshold``.

    >>> import jaxgrad
    >>> jaxgrad.threshold(jaxgrad.tensor([0.5, 2.0]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    return _act.threshold(input, threshold, value)


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """torch's native ``batch_norm`` (its argument order; ``cudnn_enabled`` is ignored).

    >>> import jaxgrad
    >>> jaxgrad.batch_norm(jaxgrad.tensor([[1.0], [3.0]]), None, None, None, None, True,
    ...                    0.1, 1e-5, False)
    tensor([[-1.0000],
            [ 1.0000]])
    """
    return _norm.batch_norm(input, running_mean, running_var, weight, bias, training,
                            momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                  running_mean: Tensor | None, running_var: Tensor | None,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    """torch's native ``instance_norm`` (its argument order).

    >>> import jaxgrad
    >>> jaxgrad.instance_norm(jaxgrad.tensor([[[1.0, 3.0]]]), None, None, None, None, True,
    ...                       0.1, 1e-5, False)
    tensor([[[-1.0000,  1.0000]]])
    """
    return _norm.instance_norm(input, running_mean, running_var, weight, bias,
                               use_input_stats, momentum, eps)


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5,
               cudnn_enable: bool = True) -> Tensor:
    """torch's native ``layer_norm``.

    >>> import jaxgrad
    >>> jaxgrad.layer_norm(jaxgrad.tensor([1.0, 3.0]), [2])
    tensor([-1.0000,  1.0000])
    """
    return _norm.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5,
               cudnn_enabled: bool = True) -> Tensor:
    """torch's native ``group_norm``.

    >>> import jaxgrad
    >>> jaxgrad.group_norm(jaxgrad.tensor([[[1.0], [3.0]]]), 1)
    tensor([[[-1.0000],
             [ 1.0000]]])
    """
    return _norm.group_norm(input, num_groups, weight, bias, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """torch's native ``embedding``: ``weight`` first, ``padding_idx=-1`` for none.

    >>> import jaxgrad
    >>> jaxgrad.embedding(jaxgrad.eye(3), jaxgrad.tensor([2]))
    tensor([[0., 0., 1.]])
    """
    return _sparse.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                             scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, reduction: int = 0) -> Tensor:
    """torch's native ``triplet_margin_loss``: ``reduction`` an int (0 none, 1 mean, 2 sum);
    left out, torch's binding reads its schema default ``Mean`` as 0: no reduction.

    >>> import jaxgrad
    >>> a = jaxgrad.zeros(1, 2)
    >>> jaxgrad.triplet_margin_loss(a, a, a + 3.0, reduction=1)
    tensor(0.)
    """
    return _losses.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                       reduction=_REDUCTIONS[reduction])


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *,
           log_target: bool = False) -> Tensor:
    """torch's native ``kl_div``: an int ``reduction`` (1, mean: over every element, without
    ``nn.functional``'s warning; left out, torch's binding reads its schema default ``Mean`` as
    0, as for the other losses here: no reduction).

    >>> import jaxgrad
    >>> jaxgrad.kl_div(jaxgrad.tensor([-1.0, -1.0]), jaxgrad.tensor([0.5, 0.5]), 2)
    tensor(0.3069)
    """
    return _losses.kl_div_reduced(input, target, _enum(reduction), log_target)


def _enum(reduction: int) -> int:
    """torch's apply_loss_reduction: any value but mean (1) and sum (2) reduces nothing."""
    return reduction if reduction in (1, 2) else 0


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 0) -> Tensor:
    """torch's native ``hinge_embedding_loss`` (an int ``reduction``, none when left out).

    >>> import jaxgrad
    >>> jaxgrad.hinge_embedding_loss(jaxgrad.tensor([0.3, 2.0]), jaxgrad.tensor([-1.0, 1.0]))
    tensor([0.7000, 2.0000])
    """
    return _losses.hinge_embedding_loss(input, target, margin,
                                        reduction=_REDUCTIONS[_enum(reduction)])


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    """torch's native ``cosine_embedding_loss`` (an int ``reduction``, none when left out).

    >>> import jaxgrad
    >>> x = jaxgrad.tensor([[1.0, 0.0]])
    >>> jaxgrad.cosine_embedding_loss(x, x, jaxgrad.tensor([1.0]), 0.0, 1)
    tensor(0.)
    """
    return _losses.cosine_embedding_loss(input1, input2, target, margin,
                                         reduction=_REDUCTIONS[_enum(reduction)])


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    """torch's native ``margin_ranking_loss`` (an int ``reduction``, none when left out).

    >>> import jaxgrad
    >>> jaxgrad.margin_ranking_loss(jaxgrad.tensor([1.0]), jaxgrad.tensor([2.0]),
    ...                             jaxgrad.tensor([1.0]))
    tensor([1.])
    """
    return _losses.margin_ranking_loss(input1, input2, target, margin,
                                       reduction=_REDUCTIONS[_enum(reduction)])


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """torch's native ``poisson_nll_loss``: every argument positional, an int ``reduction``.

    >>> import jaxgrad
    >>> jaxgrad.poisson_nll_loss(jaxgrad.tensor([0.0]), jaxgrad.tensor([1.0]), True, False,
    ...                          1e-8, 1)
    tensor(1.)
    """
    return _losses.poisson_nll_loss(input, target, log_input, full, eps=eps,
                                    reduction=_REDUCTIONS[_enum(reduction)])


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None,
                                     reduction: int = 0) -> Tensor:
    """torch's native ``binary_cross_entropy_with_logits``: ``pos_weight`` before an int
    ``reduction`` (none when left out).

    >>> import jaxgrad
    >>> jaxgrad.binary_cross_entropy_with_logits(jaxgrad.tensor([0.0]), jaxgrad.tensor([1.0]))
    tensor([0.6931])
    """
    return _losses.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_REDUCTIONS[_enum(reduction)], pos_weight=pos_weight)


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """torch's native ``rms_norm`` (``nn.functional.rms_norm``).

    >>> import jaxgrad
    >>> jaxgrad.rms_norm(jaxgrad.tensor([[3.0, -3.0]]), [2])
    tensor([[ 1., -1.]])
    """
    return _norm.rms_norm(input, normalized_shape, weight, eps)


def _check_feature_p(p: float) -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """torch's native ``feature_dropout``: whole channels (dim 1) of an input of 2 or more
    dims zeroed with probability ``p``, the rest scaled by ``1 / (1 - p)``.

    >>> import jaxgrad
    >>> x = jaxgrad.ones(2, 3)
    >>> jaxgrad.feature_dropout(x, 0.5, False) is x
    True
    """
    _check_feature_p(p)
    return _drop._channel_dropout(input, p, train, False, True)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`feature_dropout`.

    >>> import jaxgrad
    >>> jaxgrad.feature_dropout_(jaxgrad.ones(1, 2), 0.0, True)
    tensor([[1., 1.]])
    """
    _check_feature_p(p)
    return _drop._channel_dropout(input, p, train, True, True)


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    """torch's native ``constant_pad_nd``: (left, right) pads from the last dim backwards,
    negative ones crop (``ConstantPadNdBackward0``).

    >>> import jaxgrad
    >>> jaxgrad.constant_pad_nd(jaxgrad.ones(1, 2), [1, 0], -1.0)
    tensor([[-1.,  1.,  1.]])
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals "
                           f"{len(pad)}")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)}while the input has "
                           f"{input.ndim}dimensions.")
    return _conv._constant_pad_nd(input, pad, value)


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """torch's native ``embedding_bag`` (``weight`` first, an int ``mode``: 0 sum, 1 mean,
    2 max): the bags, each index's bag, the bag sizes and the rows the maxima came from.

    >>> import jaxgrad
    >>> w = jaxgrad.arange(6.0).reshape(3, 2)
    >>> jaxgrad.embedding_bag(w, jaxgrad.tensor([0, 2, 1]), jaxgrad.tensor([0, 2]), False,
    ...                       2)[0]
    tensor([[4., 5.],
            [2., 3.]])
    """
    return _sparse.embedding_bag_native(weight, indices, offsets, scale_grad_by_freq, mode,
                                        sparse, per_sample_weights, include_last_offset,
                                        padding_idx)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: int = 0, zero_infinity: bool = False) -> Tensor:
    """torch's native ``ctc_loss``: an int ``reduction`` (none when left out, as torch's
    binding reads its schema default).

    >>> import jaxgrad
    >>> lp = jaxgrad.full((2, 1, 2), 0.5).log()
    >>> jaxgrad.ctc_loss(lp, jaxgrad.tensor([[1]]), [2], [1])
    tensor([0.2877])
    """
    return _losses.ctc_loss_enum(log_probs, targets, input_lengths, target_lengths, blank,
                                 _enum(reduction), zero_infinity)
