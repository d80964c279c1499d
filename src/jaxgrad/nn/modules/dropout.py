"""``Dropout``, the channel dropouts ``Dropout1d``/``Dropout2d``/``Dropout3d`` and SELU's
``AlphaDropout``/``FeatureAlphaDropout``, on torch's ``_DropoutNd`` base."""

from __future__ import annotations

from ..._core.tensor import Tensor
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


class Dropout1d(_DropoutNd):
    """In training mode, zero whole channels of an (N, C, L) or (C, L) input with probability
    ``p`` and scale the rest by ``1 / (1 - p)``.

    >>> import jaxgrad
    >>> drop = jaxgrad.nn.Dropout1d(0.3)
    >>> drop
    Dropout1d(p=0.3, inplace=False)
    >>> drop.eval()(jaxgrad.ones(2, 3)).sum()
    tensor(6.)
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.dropout1d`` of ``input``."""
        return functional.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """In training mode, zero whole channels of an (N, C, H, W) input with probability ``p``
    (a 3-D input is taken as (N, C, L), with torch's warning).

    >>> import jaxgrad
    >>> jaxgrad.nn.Dropout2d(p=0.0)(jaxgrad.ones(1, 2, 2, 2)).sum()
    tensor(8.)
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.dropout2d`` of ``input``."""
        return functional.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """In training mode, zero whole channels of an (N, C, D, H, W) or (C, D, H, W) input with
    probability ``p``.

    >>> import jaxgrad
    >>> jaxgrad.nn.Dropout3d(p=1.0)(jaxgrad.ones(1, 2, 1, 1, 1)).sum()
    tensor(0.)
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.dropout3d`` of ``input``."""
        return functional.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """In training mode, ``functional.alpha_dropout``: dropout that keeps a SELU network's
    zero mean and unit variance; in eval mode the input itself.

    >>> import jaxgrad
    >>> drop = jaxgrad.nn.AlphaDropout(0.2)
    >>> drop
    AlphaDropout(p=0.2, inplace=False)
    >>> x = jaxgrad.ones(3)
    >>> drop.eval()(x) is x
    True
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.alpha_dropout`` of ``input`` with ``p``."""
        return functional.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """In training mode, ``functional.feature_alpha_dropout``: alpha dropout of whole channels
    of an (N, C, ...) input; in eval mode the input itself.

    >>> import jaxgrad
    >>> jaxgrad.nn.FeatureAlphaDropout(0.2).eval()(jaxgrad.ones(2, 3)).sum()
    tensor(6.)
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.feature_alpha_dropout`` of ``input`` with ``p``."""
        return functional.feature_alpha_dropout(input, self.p, self.training)
