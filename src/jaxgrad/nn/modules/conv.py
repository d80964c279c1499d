"""Convolution layers ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d`` sharing torch's
``_ConvNd`` base."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

from ..._core.grad_mode import no_grad
from ..._core.tensor import Tensor
from ..._functions.creation import empty
from .. import functional, init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _ntuple

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    """What ``Conv1d`` and ``Conv2d`` share: argument checks, parameters, initialisation
    (``kaiming_uniform_(a=sqrt(5))`` weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) bias) and
    the repr. Subclasses name their ``functional`` convolution in ``_conv_function``."""

    _conv_function: ClassVar[Callable[..., Tensor]]

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple[int, ...],
                 stride: tuple[int, ...], padding: str | tuple[int, ...],
                 dilation: tuple[int, ...], groups: int, bias: bool, padding_mode: str,
                 device: Any = None, dtype: Any = None, transposed: bool = False,
                 output_padding: tuple[int, ...] | None = None) -> None:
        super().__init__()
        _check_conv_arguments(in_channels, out_channels, stride, padding, groups, padding_mode)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding or (0,) * len(kernel_size)
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = _reversed_padding(padding, kernel_size,
                                                                  dilation)
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups))
        self.weight = Parameter(empty((*shape, *kernel_size), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Redraw the weight with ``kaiming_uniform_(a=sqrt(5))`` and the bias from
        U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
        with no_grad():
            init.kaiming_uniform_(self.weight, a=math.sqrt(5))
            if self.bias is not None:
                fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
                bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
                init.uniform_(self.bias, -bound, bound)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.padding_mode != "zeros":
            padded = functional.pad(input, self._reversed_padding_repeated_twice,
                                    mode=self.padding_mode)
            return self._conv_function(padded, weight, bias, self.stride,
                                       (0,) * len(self.kernel_size), self.dilation, self.groups)
        return self._conv_function(input, weight, bias, self.stride, self.padding,
                                   self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        """Convolve ``input`` with ``weight`` (padded by ``padding_mode``) and add ``bias``."""
        return self._conv_forward(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        """The channels, kernel size, stride and the non-default options, as shown in the repr."""
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


def _check_conv_arguments(in_channels: int, out_channels: int, stride: tuple[int, ...],
                          padding: Any, groups: int, padding_mode: str) -> None:
    """torch's constructor checks, in torch's order and with its messages."""
    if groups <= 0:
        raise ValueError("groups must be a positive integer")
    if in_channels % groups != 0:
        raise ValueError("in_channels must be divisible by groups")
    if out_channels % groups != 0:
        raise ValueError("out_channels must be divisible by groups")
    if isinstance(padding, str):
        if padding not in _PADDING_STRINGS:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             f"{_PADDING_STRINGS}")
        if padding == "same" and any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                         f"padding_mode='{padding_mode}'")


def _reversed_padding(padding: str | tuple[int, ...], kernel_size: tuple[int, ...],
                      dilation: tuple[int, ...]) -> list[int] | tuple[int, ...]:
    """The ``F.pad`` argument (last dim first, each side) for a non-zeros ``padding_mode``;
    'same' puts the odd extra element on the right, as torch does."""
    if isinstance(padding, str):
        out = [0, 0] * len(kernel_size)
        if padding == "same":
            for i, (d, k) in enumerate(zip(reversed(dilation), reversed(kernel_size))):
                total = d * (k - 1)
                out[2 * i], out[2 * i + 1] = total // 2, total - total // 2
        return out
    return tuple(p for p in reversed(padding) for _ in range(2))


def _conv_arguments(n: int, kernel_size: Any, stride: Any, padding: Any,
                    dilation: Any) -> tuple[Any, ...]:
    padding_ = padding if isinstance(padding, str) else _ntuple(padding, n)
    return _ntuple(kernel_size, n), _ntuple(stride, n), padding_, _ntuple(dilation, n)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L) input.

    >>> import jaxgrad
    >>> conv = jaxgrad.nn.Conv1d(2, 4, 3, padding="same")
    >>> conv
    Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=same)
    >>> conv(jaxgrad.ones(1, 2, 5)).shape
    jaxgrad.Size([1, 4, 5])
    """

    _conv_function = staticmethod(functional.conv1d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels,
                         *_conv_arguments(1, kernel_size, stride, padding, dilation), groups,
                         bias, padding_mode, device=device, dtype=dtype)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W) input.

    >>> import jaxgrad
    >>> conv = jaxgrad.nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
    >>> conv
    Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)
    >>> conv(jaxgrad.ones(1, 3, 8, 8)).shape
    jaxgrad.Size([1, 8, 4, 4])
    """

    _conv_function = staticmethod(functional.conv2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels,
                         *_conv_arguments(2, kernel_size, stride, padding, dilation), groups,
                         bias, padding_mode, device=device, dtype=dtype)


class _ConvTransposeNd(_ConvNd):
    """What ``ConvTranspose1d`` and ``ConvTranspose2d`` share: only 'zeros' padding, and the
    ``output_padding`` that an ``output_size`` given to ``forward`` asks for."""

    _n: ClassVar[int]

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        n = self._n
        super().__init__(in_channels, out_channels,
                         *_conv_arguments(n, kernel_size, stride, padding, dilation), groups,
                         bias, padding_mode, device=device, dtype=dtype, transposed=True,
                         output_padding=_ntuple(output_padding, n))

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple[int, ...]:
        """The output padding giving ``output_size`` (torch's ``_output_padding``)."""
        n = self._n
        if output_size is None:
            return self.output_padding
        non_spatial = 2 if input.ndim == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + n:
            output_size = output_size[non_spatial:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must "
                             f"have {n} or {non_spatial + n} elements (got {len(output_size)})")
        min_sizes = [(input.shape[d + non_spatial] - 1) * self.stride[d] - 2 * self.padding[d]
                     + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        max_sizes = [m + s - 1 for m, s in zip(min_sizes, self.stride)]
        for size, low, high in zip(output_size, min_sizes, max_sizes):
            if size < low or size > high:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{min_sizes} to {max_sizes} (for an input of {input.shape[2:]})")
        return tuple(size - low for size, low in zip(output_size, min_sizes))

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        """The transposed convolution of ``input`` (``output_size`` picks the output padding)."""
        output_padding = self._output_padding(input, output_size)
        return self._conv_function(input, self.weight, self.bias, self.stride, self.padding,
                                   output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C_in, L) or (C_in, L) input; the weight is
    (C_in, C_out / groups, k).

    >>> import jaxgrad
    >>> up = jaxgrad.nn.ConvTranspose1d(2, 3, 4, stride=2, padding=1)
    >>> up
    ConvTranspose1d(2, 3, kernel_size=(4,), stride=(2,), padding=(1,))
    >>> up(jaxgrad.ones(1, 2, 5)).shape
    jaxgrad.Size([1, 3, 10])
    """

    _n = 1
    _conv_function = staticmethod(functional.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W) input; the weight is
    (C_in, C_out / groups, kh, kw).

    >>> import jaxgrad
    >>> up = jaxgrad.nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=1, bias=False)
    >>> up
    ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1), bias=False)
    >>> up(jaxgrad.ones(1, 4, 5, 5)).shape
    jaxgrad.Size([1, 2, 12, 12])
    """

    _n = 2
    _conv_function = staticmethod(functional.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input; the weight
    is (C_in, C_out / groups, kd, kh, kw).

    >>> import jaxgrad
    >>> up = jaxgrad.nn.ConvTranspose3d(2, 3, 2, stride=2)
    >>> up
    ConvTranspose3d(2, 3, kernel_size=(2, 2, 2), stride=(2, 2, 2))
    >>> up(jaxgrad.ones(1, 2, 2, 2, 2)).shape
    jaxgrad.Size([1, 3, 4, 4, 4])
    """

    _n = 3
    _conv_function = staticmethod(functional.conv_transpose3d)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input.

    >>> import jaxgrad
    >>> conv = jaxgrad.nn.Conv3d(2, 4, 3, padding=1)
    >>> conv
    Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1))
    >>> conv(jaxgrad.ones(1, 2, 4, 4, 4)).shape
    jaxgrad.Size([1, 4, 4, 4, 4])
    """

    _conv_function = staticmethod(functional.conv3d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels,
                         *_conv_arguments(3, kernel_size, stride, padding, dilation), groups,
                         bias, padding_mode, device=device, dtype=dtype)


class _LazyConvXdMixin(LazyModuleMixin):
    """``in_channels`` from the first input's channel dim (dim 1 batched, 0 unbatched)."""

    _spatial: int = 1

    def reset_parameters(self) -> None:
        """Initialize as the convolution does once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        """Materialize weight and bias for the input's channels, then initialize them."""
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            self.weight.materialize((*shape, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        unbatched = self._spatial + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) "
                               f"input to {self.__class__.__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]

    def _lazy_init(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


class _LazyConvNd(_LazyConvXdMixin):
    """The constructor of the lazy convolutions."""

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConvNd, Conv1d):
    """A :class:`Conv1d` whose ``in_channels`` is inferred from its first input.

    >>> import jaxgrad
    >>> conv = jaxgrad.nn.LazyConv1d(4, 3)
    >>> conv(jaxgrad.ones(1, 2, 5)).shape, conv.weight.shape
    (jaxgrad.Size([1, 4, 3]), jaxgrad.Size([4, 2, 3]))
    """

    cls_to_become = Conv1d
    _spatial = 1


class LazyConv2d(_LazyConvNd, Conv2d):
    """A :class:`Conv2d` whose ``in_channels`` is inferred from its first input.

    >>> import jaxgrad
    >>> jaxgrad.nn.LazyConv2d(4, 3, padding=1)
    LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    """

    cls_to_become = Conv2d
    _spatial = 2


class LazyConv3d(_LazyConvNd, Conv3d):
    """A :class:`Conv3d` whose ``in_channels`` is inferred from its first input.

    >>> import jaxgrad
    >>> jaxgrad.nn.LazyConv3d(4, 2)(jaxgrad.ones(3, 2, 2, 2)).shape
    jaxgrad.Size([4, 1, 1, 1])
    """

    cls_to_become = Conv3d
    _spatial = 3


class _LazyConvTransposeNd(_LazyConvXdMixin):
    """The constructor of the lazy transposed convolutions."""

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose1d(_LazyConvTransposeNd, ConvTranspose1d):
    """A :class:`ConvTranspose1d` whose ``in_channels`` is inferred from its first input.

    >>> import jaxgrad
    >>> jaxgrad.nn.LazyConvTranspose1d(3, 2)(jaxgrad.ones(1, 2, 4)).shape
    jaxgrad.Size([1, 3, 5])
    """

    cls_to_become = ConvTranspose1d
    _spatial = 1


class LazyConvTranspose2d(_LazyConvTransposeNd, ConvTranspose2d):
    """A :class:`ConvTranspose2d` whose ``in_channels`` is inferred from its first input.

    >>> import jaxgrad
    >>> jaxgrad.nn.LazyConvTranspose2d(3, 2)(jaxgrad.ones(1, 2, 4, 4)).shape
    jaxgrad.Size([1, 3, 5, 5])
    """

    cls_to_become = ConvTranspose2d
    _spatial = 2


class LazyConvTranspose3d(_LazyConvTransposeNd, ConvTranspose3d):
    """A :class:`ConvTranspose3d` whose ``in_channels`` is inferred from its first input.

    >>> import jaxgrad
    >>> jaxgrad.nn.LazyConvTranspose3d(3, 2)(jaxgrad.ones(2, 1, 1, 1)).shape
    jaxgrad.Size([3, 2, 2, 2])
    """

    cls_to_become = ConvTranspose3d
    _spatial = 3
