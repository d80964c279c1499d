"""Pooling layers: ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d``, ``AdaptiveAvgPool1d/2d/3d``,
``AdaptiveMaxPool1d/2d/3d``, ``MaxUnpool1d/2d/3d``, ``LPPool1d/2d/3d`` and
``FractionalMaxPool2d/3d``."""

from __future__ import annotations

from typing import Any

from ..._core.tensor import Tensor
from .. import functional
from .module import Module
from .utils import _ntuple


class _MaxPoolNd(Module):
    """Arguments and repr of the max-pooling layers (``stride`` defaults to the kernel)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        """The kernel, stride, padding, dilation and ceil_mode, as shown in the repr."""
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    """Max over 2-D windows of (N, C, H, W) or (C, H, W) input.

    >>> import jaxgrad
    >>> pool = jaxgrad.nn.MaxPool2d(2)
    >>> pool
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(jaxgrad.arange(16.0).reshape(1, 4, 4))
    tensor([[[ 5.,  7.],
             [13., 15.]]])
    """

    def forward(self, input: Tensor) -> Any:
        """``functional.max_pool2d`` of ``input`` (with the indices when ``return_indices``).

        >>> import jaxgrad
        >>> pool = jaxgrad.nn.MaxPool2d(2, return_indices=True)
        >>> pool(jaxgrad.arange(4.0).reshape(1, 2, 2))
        (tensor([[[3.]]]), tensor([[[3]]]))
        """
        return functional.max_pool2d(input, self.kernel_size, self.stride, self.padding,
                                     self.dilation, ceil_mode=self.ceil_mode,
                                     return_indices=self.return_indices)


class _AvgPoolNd(Module):
    """Repr of the average-pooling layers."""

    def extra_repr(self) -> str:
        """The kernel, stride and padding, as shown in the repr."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolWithDivisor(_AvgPoolNd):
    """The constructor and forward of the 2-d and 3-d average pools (``divisor_override``)."""

    _pool: Any

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        """The average pool of ``input`` with this layer's arguments."""
        return self._pool(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)


class AvgPool2d(_AvgPoolWithDivisor):
    """Mean over 2-D windows of (N, C, H, W) or (C, H, W) input.

    >>> import jaxgrad
    >>> pool = jaxgrad.nn.AvgPool2d((2, 1))
    >>> pool
    AvgPool2d(kernel_size=(2, 1), stride=(2, 1), padding=0)
    >>> pool(jaxgrad.tensor([[[1.0], [3.0]]]))
    tensor([[[2.]]])
    """

    _pool = staticmethod(functional.avg_pool2d)


class _AdaptiveAvgPoolNd(Module):
    """The target ``output_size`` and repr of the adaptive average-pooling layers."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        """The ``output_size``, as shown in the repr."""
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, H, W) or (C, H, W) input to a fixed output size (``None``
    keeps that input size).

    >>> import jaxgrad
    >>> pool = jaxgrad.nn.AdaptiveAvgPool2d((None, 1))
    >>> pool
    AdaptiveAvgPool2d(output_size=(None, 1))
    >>> pool(jaxgrad.ones(2, 3, 5)).shape
    jaxgrad.Size([2, 3, 1])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.adaptive_avg_pool2d`` of ``input`` to ``output_size``."""
        return functional.adaptive_avg_pool2d(input, self.output_size)


def _single(value: Any) -> tuple:
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


class MaxPool1d(_MaxPoolNd):
    """Max over 1-D windows of (N, C, L) or (C, L) input.

    >>> import jaxgrad
    >>> pool = jaxgrad.nn.MaxPool1d(2)
    >>> pool
    MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(jaxgrad.tensor([[1.0, 3.0, 2.0, 0.0]]))
    tensor([[3., 2.]])
    """

    def forward(self, input: Tensor) -> Any:
        """``functional.max_pool1d`` of ``input`` (with the indices when ``return_indices``)."""
        return functional.max_pool1d(input, self.kernel_size, self.stride, self.padding,
                                     self.dilation, ceil_mode=self.ceil_mode,
                                     return_indices=self.return_indices)


class AvgPool1d(_AvgPoolNd):
    """Mean over 1-D windows of (N, C, L) or (C, L) input.

    >>> import jaxgrad
    >>> pool = jaxgrad.nn.AvgPool1d(2)
    >>> pool
    AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    >>> pool(jaxgrad.tensor([[1.0, 3.0]]))
    tensor([[2.]])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        """``functional.avg_pool1d`` of ``input`` with this layer's arguments."""
        return functional.avg_pool1d(input, self.kernel_size, self.stride, self.padding,
                                     self.ceil_mode, self.count_include_pad)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, L) or (C, L) input to ``output_size`` positions.

    >>> import jaxgrad
    >>> jaxgrad.nn.AdaptiveAvgPool1d(1)(jaxgrad.tensor([[1.0, 3.0]]))
    tensor([[2.]])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.adaptive_avg_pool1d`` of ``input``."""
        return functional.adaptive_avg_pool1d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    """The target ``output_size``, ``return_indices`` and repr of adaptive max pooling."""

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        """The ``output_size``, as shown in the repr."""
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, L) or (C, L) input to ``output_size`` positions.

    >>> import jaxgrad
    >>> jaxgrad.nn.AdaptiveMaxPool1d(1)(jaxgrad.tensor([[1.0, 3.0]]))
    tensor([[3.]])
    """

    def forward(self, input: Tensor) -> Any:
        """``functional.adaptive_max_pool1d`` of ``input``."""
        return functional.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, H, W) or (C, H, W) input to a fixed output size.

    >>> import jaxgrad
    >>> jaxgrad.nn.AdaptiveMaxPool2d((2, None))
    AdaptiveMaxPool2d(output_size=(2, None))
    """

    def forward(self, input: Tensor) -> Any:
        """``functional.adaptive_max_pool2d`` of ``input``."""
        return functional.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class MaxPool3d(_MaxPoolNd):
    """Max over 3-D windows of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import jaxgrad
    >>> pool = jaxgrad.nn.MaxPool3d(2)
    >>> pool
    MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(jaxgrad.arange(8.0).reshape(1, 2, 2, 2))
    tensor([[[[7.]]]])
    """

    def forward(self, input: Tensor) -> Any:
        """``functional.max_pool3d`` of ``input`` (with the indices when ``return_indices``)."""
        return functional.max_pool3d(input, self.kernel_size, self.stride, self.padding,
                                     self.dilation, ceil_mode=self.ceil_mode,
                                     return_indices=self.return_indices)


class AvgPool3d(_AvgPoolWithDivisor):
    """Mean over 3-D windows of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import jaxgrad
    >>> pool = jaxgrad.nn.AvgPool3d(2)
    >>> pool
    AvgPool3d(kernel_size=2, stride=2, padding=0)
    >>> pool(jaxgrad.ones(1, 2, 2, 2))
    tensor([[[[1.]]]])
    """

    _pool = staticmethod(functional.avg_pool3d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) input to a fixed output size.

    >>> import jaxgrad
    >>> jaxgrad.nn.AdaptiveAvgPool3d((1, None, 2))(jaxgrad.ones(1, 3, 4, 5)).shape
    jaxgrad.Size([1, 1, 4, 2])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.adaptive_avg_pool3d`` of ``input`` to ``output_size``."""
        return functional.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) input to a fixed output size.

    >>> import jaxgrad
    >>> jaxgrad.nn.AdaptiveMaxPool3d(1)(jaxgrad.arange(8.0).reshape(1, 2, 2, 2))
    tensor([[[[7.]]]])
    """

    def forward(self, input: Tensor) -> Any:
        """``functional.adaptive_max_pool3d`` of ``input``."""
        return functional.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _MaxUnpoolNd(Module):
    """Arguments (as n-tuples) and repr of the max-unpooling layers."""

    _n: int = 1

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._n)
        self.padding = _ntuple(padding, self._n)

    def extra_repr(self) -> str:
        """The kernel, stride and padding, as shown in the repr."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        """Each value of ``input`` placed at its index (``functional.max_unpool{n}d``)."""
        unpool = (functional.max_unpool1d, functional.max_unpool2d,
                  functional.max_unpool3d)[self._n - 1]
        return unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    """A partial inverse of :class:`MaxPool1d`.

    >>> import jaxgrad
    >>> unpool = jaxgrad.nn.MaxUnpool1d(2)
    >>> unpool
    MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    >>> unpool(jaxgrad.tensor([[3.0, 2.0]]), jaxgrad.tensor([[1, 2]]))
    tensor([[0., 3., 2., 0.]])
    """

    _n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """A partial inverse of :class:`MaxPool2d`.

    >>> import jaxgrad
    >>> jaxgrad.nn.MaxUnpool2d(2, padding=1)
    MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(1, 1))
    """

    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """A partial inverse of :class:`MaxPool3d`.

    >>> import jaxgrad
    >>> jaxgrad.nn.MaxUnpool3d(2)
    MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0))
    """

    _n = 3


class _LPPoolNd(Module):
    """Arguments and repr of the power-average pooling layers."""

    _n: int = 1

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        """The norm, kernel, stride and ceil_mode, as shown in the repr."""
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")

    def forward(self, input: Tensor) -> Tensor:
        """``functional.lp_pool{n}d`` of ``input`` with this layer's arguments."""
        pool = (functional.lp_pool1d, functional.lp_pool2d, functional.lp_pool3d)[self._n - 1]
        return pool(input, float(self.norm_type), self.kernel_size, self.stride,
                    self.ceil_mode)


class LPPool1d(_LPPoolNd):
    """Power-average pooling over 1-D windows.

    >>> import jaxgrad
    >>> pool = jaxgrad.nn.LPPool1d(2, 2)
    >>> pool
    LPPool1d(norm_type=2, kernel_size=2, stride=None, ceil_mode=False)
    >>> pool(jaxgrad.tensor([[3.0, 4.0]]))
    tensor([[5.]])
    """

    _n = 1


class LPPool2d(_LPPoolNd):
    """Power-average pooling over 2-D windows.

    >>> import jaxgrad
    >>> jaxgrad.nn.LPPool2d(2, (2, 1))(jaxgrad.tensor([[[3.0], [4.0]]]))
    tensor([[[5.]]])
    """

    _n = 2


class LPPool3d(_LPPoolNd):
    """Power-average pooling over 3-D windows.

    >>> import jaxgrad
    >>> jaxgrad.nn.LPPool3d(2, (2, 1, 1))(jaxgrad.tensor([[[[3.0]], [[4.0]]]]))
    tensor([[[[5.]]]])
    """

    _n = 3


class _FractionalMaxPoolNd(Module):
    """Arguments of the fractional max-pooling layers; ``_random_samples`` is a buffer."""

    _n: int = 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        n = self._n
        if n == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _ntuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, "
                             "or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        """``functional.fractional_max_pool{n}d`` of ``input`` with this layer's arguments."""
        pool = functional.fractional_max_pool2d if self._n == 2 else (
            functional.fractional_max_pool3d)
        return pool(input, self.kernel_size, self.output_size, self.output_ratio,
                    self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over 2-D windows at pseudo-random positions.

    >>> import jaxgrad
    >>> pool = jaxgrad.nn.FractionalMaxPool2d(2, output_size=2,
    ...                                       _random_samples=jaxgrad.full((1, 1, 2), 0.5))
    >>> pool(jaxgrad.arange(16.0).reshape(1, 4, 4))
    tensor([[[ 5.,  7.],
             [13., 15.]]])
    """

    _n = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over 3-D windows at pseudo-random positions.

    >>> import jaxgrad
    >>> jaxgrad.nn.FractionalMaxPool3d(2, output_ratio=0.5)(jaxgrad.ones(1, 4, 4, 4)).shape
    jaxgrad.Size([1, 2, 2, 2])
    """

    _n = 3
