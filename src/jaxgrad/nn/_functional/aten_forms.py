"""The top-level ``jaxgrad.*`` forms of functional ops, with torch's native signatures (which
differ from ``nn.functional``'s: ``torch.dropout(input, p, train)``,
``torch.embedding(weight, indices, ...)``, ``torch.batch_norm(input, weight, bias,
running_mean, running_var, training, momentum, eps, cudnn_enabled)``, an integer
``reduction``). Each calls the ``nn.functional`` implementation, so graphs are the same.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._core.tensor import Tensor
from . import activations as _act
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
