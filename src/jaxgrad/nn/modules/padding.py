"""Padding layers: ``ConstantPad{1,2,3}d`` and ``ZeroPad{1,2,3}d``, ``ReflectionPad{1,2,3}d``,
``ReplicationPad{1,2,3}d`` and ``CircularPad{1,2,3}d``, each a call of ``functional.pad`` with
torch's argument handling (an int pads every side) and repr."""

from __future__ import annotations

from typing import Any

from ..._core.tensor import Tensor
from .. import functional
from .module import Module
from .utils import _ntuple


class _PadNd(Module):
    """What the padding layers share: ``padding`` (torch's flat, last-dim-first tuple), the mode
    passed to ``functional.pad`` and the repr ``ReflectionPad1d((1, 2))``."""

    mode = "constant"
    n = 1

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 2 * self.n)

    def forward(self, input: Tensor) -> Tensor:
        """``functional.pad`` of ``input`` with this layer's ``padding`` and ``mode``."""
        return functional.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        """The ``padding`` tuple, as shown in the repr."""
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    """Constant padding with ``value`` (repr ``padding=(1, 1), value=0.5``)."""

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        """``functional.pad`` of ``input`` with ``padding``, filled with ``value``."""
        return functional.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        """The ``padding`` and ``value``, as shown in the repr."""
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``.

    >>> import jaxgrad
    >>> jaxgrad.nn.ConstantPad1d((1, 2), 3.5)(jaxgrad.zeros(1, 2))
    tensor([[3.5000, 0.0000, 0.0000, 3.5000, 3.5000]])
    """

    n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``.

    >>> import jaxgrad
    >>> jaxgrad.nn.ConstantPad2d(1, -1.0)(jaxgrad.zeros(1, 1, 2)).shape
    jaxgrad.Size([1, 3, 4])
    """

    n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``.

    >>> import jaxgrad
    >>> jaxgrad.nn.ConstantPad3d((1, 0, 0, 0, 0, 2), 1.0)(jaxgrad.zeros(1, 1, 1)).shape
    jaxgrad.Size([3, 1, 2])
    """

    n = 3


class _ZeroPadNd(_ConstantPadNd):
    """Zero padding: a constant pad whose repr shows only the padding."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The ``padding`` tuple, as shown in the repr (no ``value``: it is always 0).

        >>> import jaxgrad
        >>> jaxgrad.nn.ZeroPad1d(2)
        ZeroPad1d((2, 2))
        """
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd, ConstantPad1d):
    """Pad the last dim with zeros.

    >>> import jaxgrad
    >>> jaxgrad.nn.ZeroPad1d(1)(jaxgrad.ones(1, 2))
    tensor([[0., 1., 1., 0.]])
    """


class ZeroPad2d(_ZeroPadNd, ConstantPad2d):
    """Pad the last two dims with zeros.

    >>> import jaxgrad
    >>> jaxgrad.nn.ZeroPad2d((1, 1, 2, 0))
    ZeroPad2d((1, 1, 2, 0))
    >>> jaxgrad.nn.ZeroPad2d((1, 1, 2, 0))(jaxgrad.ones(1, 2, 2)).shape
    jaxgrad.Size([1, 4, 4])
    """


class ZeroPad3d(_ZeroPadNd, ConstantPad3d):
    """Pad the last three dims with zeros.

    >>> import jaxgrad
    >>> jaxgrad.nn.ZeroPad3d(1)(jaxgrad.ones(1, 1, 1, 1)).shape
    jaxgrad.Size([1, 3, 3, 3])
    """


class ReflectionPad1d(_PadNd):
    """Pad the last dim of (C, W) or (N, C, W) input with its reflection (the edge itself is
    not repeated); each pad must be smaller than the dim.

    >>> import jaxgrad
    >>> jaxgrad.nn.ReflectionPad1d((3, 1))(jaxgrad.arange(4.0).reshape(1, 1, 4))
    tensor([[[3., 2., 1., 0., 1., 2., 3., 2.]]])
    """

    mode, n = "reflect", 1


class ReflectionPad2d(_PadNd):
    """Pad the last two dims of (C, H, W) or (N, C, H, W) input with their reflection.

    >>> import jaxgrad
    >>> jaxgrad.nn.ReflectionPad2d(1)(jaxgrad.arange(4.0).reshape(1, 2, 2))
    tensor([[[3., 2., 3., 2.],
             [1., 0., 1., 0.],
             [3., 2., 3., 2.],
             [1., 0., 1., 0.]]])
    """

    mode, n = "reflect", 2


class ReflectionPad3d(_PadNd):
    """Pad the last three dims of (C, D, H, W) or (N, C, D, H, W) input with their reflection.

    >>> import jaxgrad
    >>> jaxgrad.nn.ReflectionPad3d(1)(jaxgrad.ones(1, 2, 2, 2)).shape
    jaxgrad.Size([1, 4, 4, 4])
    """

    mode, n = "reflect", 3


class ReplicationPad1d(_PadNd):
    """Pad the last dim of (C, W) or (N, C, W) input by repeating its edge values.

    >>> import jaxgrad
    >>> jaxgrad.nn.ReplicationPad1d((2, 1))(jaxgrad.arange(3.0).reshape(1, 3))
    tensor([[0., 0., 0., 1., 2., 2.]])
    """

    mode, n = "replicate", 1


class ReplicationPad2d(_PadNd):
    """Pad the last two dims of (C, H, W) or (N, C, H, W) input by repeating their edges.

    >>> import jaxgrad
    >>> jaxgrad.nn.ReplicationPad2d((1, 0, 0, 1))(jaxgrad.arange(4.0).reshape(1, 2, 2))
    tensor([[[0., 0., 1.],
             [2., 2., 3.],
             [2., 2., 3.]]])
    """

    mode, n = "replicate", 2


class ReplicationPad3d(_PadNd):
    """Pad the last three dims of (C, D, H, W) or (N, C, D, H, W) input by repeating edges.

    >>> import jaxgrad
    >>> jaxgrad.nn.ReplicationPad3d(1)(jaxgrad.ones(1, 1, 1, 1)).shape
    jaxgrad.Size([1, 3, 3, 3])
    """

    mode, n = "replicate", 3


class _CircularPadNd(_PadNd):
    """Circular padding; torch checks the input's dims in the layer, before ``F.pad``."""

    mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        """``input`` padded by wrapping around (batched or unbatched input only)."""
        if input.ndim not in (self.n + 1, self.n + 2):
            raise ValueError(f"expected {self.n + 1}D or {self.n + 2}D input (got {input.ndim}D "
                             "input)")
        return functional.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dim of (C, W) or (N, C, W) input by wrapping around.

    >>> import jaxgrad
    >>> jaxgrad.nn.CircularPad1d((1, 2))(jaxgrad.arange(3.0).reshape(1, 3))
    tensor([[2., 0., 1., 2., 0., 1.]])
    """

    n = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last two dims of (C, H, W) or (N, C, H, W) input by wrapping around.

    >>> import jaxgrad
    >>> jaxgrad.nn.CircularPad2d(1)(jaxgrad.arange(4.0).reshape(1, 2, 2))
    tensor([[[3., 2., 3., 2.],
             [1., 0., 1., 0.],
             [3., 2., 3., 2.],
             [1., 0., 1., 0.]]])
    """

    n = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last three dims of (C, D, H, W) or (N, C, D, H, W) input by wrapping around.

    >>> import jaxgrad
    >>> jaxgrad.nn.CircularPad3d(1)(jaxgrad.ones(1, 1, 1, 1)).shape
    jaxgrad.Size([1, 3, 3, 3])
    """

    n = 3
