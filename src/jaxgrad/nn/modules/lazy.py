"""Lazy modules: ``LazyModuleMixin`` and the layers whose input size is inferred from their
first input (``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``,
``LazyBatchNorm1d/2d/3d``, ``LazyInstanceNorm1d/2d/3d``).

Until the first forward their parameters (and running-statistics buffers) are
``UninitializedParameter`` / ``UninitializedBuffer``; a forward pre-hook then materializes them,
initializes them as the regular layer does and turns the module into its ``cls_to_become``.
"""

from __future__ import annotations

import itertools
from typing import Any

from ..._core.dtypes import int64
from ..._core.grad_mode import no_grad
from ..._core.tensor import Tensor
from ..._functions.creation import tensor
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm
from .linear import Linear


class LazyModuleMixin:
    """A module whose parameters' shapes come from its first input: torch's mixin (a
    load-state-dict pre-hook materializing uninitialized entries that are loaded initialized,
    a forward pre-hook calling ``initialize_parameters``).

    >>> import jaxgrad
    >>> lin = jaxgrad.nn.LazyLinear(2)
    >>> lin.has_uninitialized_params()
    True
    >>> _ = lin(jaxgrad.ones(1, 3))
    >>> lin
    Linear(in_features=3, out_features=2, bias=True)
    """

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else (
                    param.detach())
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict: dict, prefix: str, local_metadata: Any, strict: bool,
                        missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                input_param = state_dict[key]
                if not is_lazy(input_param):
                    with no_grad():
                        param.materialize(input_param.shape)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialize and initialize the parameters from the first input (each lazy layer
        says how)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module is still uninitialized."""
        return any(is_lazy(p) for p in itertools.chain(self._parameters.values(),
                                                       self._buffers.values()))

    def _infer_parameters(self, module: Any, args: tuple, kwargs: dict | None = None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self) -> Any:
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize the "
                           "modules")


class LazyLinear(LazyModuleMixin, Linear):
    """A :class:`Linear` whose ``in_features`` is the last size of its first input.

    >>> import jaxgrad
    >>> lin = jaxgrad.nn.LazyLinear(4)
    >>> lin
    LazyLinear(in_features=0, out_features=4, bias=True)
    >>> lin(jaxgrad.ones(2, 3)).shape
    jaxgrad.Size([2, 4])
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """Initialize as :class:`Linear` once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        """``in_features`` from ``input``'s last dim; weight and bias materialized and
        initialized."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # (a state dict loaded before the first forward)
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} "
                                     "is not equal to in_features from self.weight: "
                                     f"{self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


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


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """A :class:`Conv1d` whose ``in_channels`` is inferred from its first input.

    >>> import jaxgrad
    >>> conv = jaxgrad.nn.LazyConv1d(4, 3)
    >>> conv(jaxgrad.ones(1, 2, 5)).shape, conv.weight.shape
    (jaxgrad.Size([1, 4, 3]), jaxgrad.Size([4, 2, 3]))
    """

    cls_to_become = Conv1d
    _spatial = 1

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """A :class:`Conv2d` whose ``in_channels`` is inferred from its first input.

    >>> import jaxgrad
    >>> jaxgrad.nn.LazyConv2d(4, 3, padding=1)
    LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    """

    cls_to_become = Conv2d
    _spatial = 2

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    """A :class:`Conv3d` whose ``in_channels`` is inferred from its first input.

    >>> import jaxgrad
    >>> jaxgrad.nn.LazyConv3d(4, 2)(jaxgrad.ones(3, 2, 2, 2)).shape
    jaxgrad.Size([4, 1, 1, 1])
    """

    cls_to_become = Conv3d
    _spatial = 3

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


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


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """``num_features`` from the first input's dim 1; affine parameters and running
    statistics uninitialized until then."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=int64, device=device)

    def reset_parameters(self) -> None:
        """Reset as the normalisation does once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        """Materialize the parameters and buffers for ``input.shape[1]`` features."""
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A :class:`BatchNorm1d` whose ``num_features`` is inferred from its first input.

    >>> import jaxgrad
    >>> bn = jaxgrad.nn.LazyBatchNorm1d()
    >>> bn(jaxgrad.ones(2, 3)).shape, bn.running_mean.shape
    (jaxgrad.Size([2, 3]), jaxgrad.Size([3]))
    """

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A :class:`BatchNorm2d` whose ``num_features`` is inferred from its first input.

    >>> import jaxgrad
    >>> jaxgrad.nn.LazyBatchNorm2d()
    LazyBatchNorm2d(0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A :class:`BatchNorm3d` whose ``num_features`` is inferred from its first input.

    >>> import jaxgrad
    >>> jaxgrad.nn.LazyBatchNorm3d()(jaxgrad.ones(2, 3, 1, 1, 1)).shape
    jaxgrad.Size([2, 3, 1, 1, 1])
    """

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An :class:`InstanceNorm1d` whose ``num_features`` is inferred from its first input.

    >>> import jaxgrad
    >>> jaxgrad.nn.LazyInstanceNorm1d(affine=True)(jaxgrad.ones(2, 3, 4)).shape
    jaxgrad.Size([2, 3, 4])
    """

    cls_to_become = InstanceNorm1d
    _dims = InstanceNorm1d._dims


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """An :class:`InstanceNorm2d` whose ``num_features`` is inferred from its first input.

    >>> import jaxgrad
    >>> jaxgrad.nn.LazyInstanceNorm2d()(jaxgrad.ones(2, 3, 4, 4)).shape
    jaxgrad.Size([2, 3, 4, 4])
    """

    cls_to_become = InstanceNorm2d
    _dims = InstanceNorm2d._dims


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """An :class:`InstanceNorm3d` whose ``num_features`` is inferred from its first input.

    >>> import jaxgrad
    >>> jaxgrad.nn.LazyInstanceNorm3d()(jaxgrad.ones(1, 2, 3, 3, 3)).shape
    jaxgrad.Size([1, 2, 3, 3, 3])
    """

    cls_to_become = InstanceNorm3d
    _dims = InstanceNorm3d._dims
