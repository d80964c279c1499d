"""Batch normalisation: ``BatchNorm1d`` and ``BatchNorm2d`` on torch's ``_NormBase`` and
``_BatchNorm`` bases, with its running-statistics buffers."""

from __future__ import annotations

from typing import Any

from ..._core.dtypes import int64
from ..._core.grad_mode import no_grad
from ..._core.tensor import Tensor
from ..._functions.creation import empty, ones, tensor, zeros
from .. import functional, init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module


class _NormBase(Module):
    """Affine parameters (ones/zeros) and the ``running_mean``/``running_var``/
    ``num_batches_tracked`` buffers of the normalisation layers with running statistics.

    State dicts carry version 2; loading a version-1 checkpoint without
    ``num_batches_tracked`` keeps the current count, as torch does.
    """

    _version = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches tracked."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics, the weight to ones and the bias to zeros."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        """The feature count, eps, momentum and flags, as shown in the repr."""
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        version = local_metadata.get("version")
        if (version is None or version < 2) and self.track_running_stats:
            state_dict.setdefault(prefix + "num_batches_tracked",
                                  self.num_batches_tracked if self.num_batches_tracked
                                  is not None else tensor(0, dtype=int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    """Batch statistics in training mode (updating the tracked running statistics with
    ``momentum``, or their cumulative average when ``momentum`` is None), running
    statistics in eval mode."""

    def forward(self, input: Tensor) -> Tensor:
        """Normalise ``input`` per channel, updating the running statistics in training mode."""
        self._check_input_dim(input)
        average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                average_factor = 1.0 / float(self.num_batches_tracked)
        use_batch_stats = self.training or (self.running_mean is None
                                            and self.running_var is None)
        pass_buffers = not self.training or self.track_running_stats
        return functional.batch_norm(
            input, self.running_mean if pass_buffers else None,
            self.running_var if pass_buffers else None, self.weight, self.bias,
            use_batch_stats, average_factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over (N, C) or (N, C, L) input, per channel C.

    >>> import jaxgrad
    >>> bn = jaxgrad.nn.BatchNorm1d(2)
    >>> bn
    BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> _ = bn(jaxgrad.tensor([[1.0, 0.0], [3.0, 0.0]]))
    >>> bn.running_mean, bn.num_batches_tracked
    (tensor([0.2000, 0.0000]), tensor(1))
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over (N, C, H, W) input, per channel C.

    >>> import jaxgrad
    >>> bn = jaxgrad.nn.BatchNorm2d(3).eval()
    >>> bn(jaxgrad.ones(1, 3, 2, 2)).shape
    jaxgrad.Size([1, 3, 2, 2])
    >>> list(bn.state_dict())
    ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over (N, C, D, H, W) input, per channel C.

    >>> import jaxgrad
    >>> jaxgrad.nn.BatchNorm3d(2)(jaxgrad.randn(2, 2, 2, 2, 2)).shape
    jaxgrad.Size([2, 2, 2, 2, 2])
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation over (N, C, *) input whose statistics a multi-process job would
    share across ``process_group``; within one process (no synchronisation needed) it is
    ``functional.batch_norm``, as torch's falls back to.

    >>> import jaxgrad
    >>> bn = jaxgrad.nn.SyncBatchNorm(2)
    >>> _ = bn(jaxgrad.tensor([[1.0, 0.0], [3.0, 0.0]]))
    >>> bn.running_mean
    tensor([0.2000, 0.0000])
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        """Normalise ``input`` per channel (torch's single-process path)."""
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            factor = (1.0 / self.num_batches_tracked.item() if self.momentum is None
                      else self.momentum)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return functional.batch_norm(input, self.running_mean if keep else None,
                                     self.running_var if keep else None, self.weight,
                                     self.bias, bn_training, factor, self.eps)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every batch-norm layer below it replaced by a ``SyncBatchNorm``
        sharing its parameters and buffers.

        >>> import jaxgrad
        >>> net = jaxgrad.nn.Sequential(jaxgrad.nn.BatchNorm1d(2))
        >>> jaxgrad.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        Sequential(
          (0): SyncBatchNorm(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
        )
        """  # noqa: E501
        output = module
        if isinstance(module, _BatchNorm):
            output = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                   module.affine, module.track_running_stats, process_group,
                                   bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    output.weight = module.weight
                    output.bias = module.bias
            output.running_mean = module.running_mean
            output.running_var = module.running_var
            output.num_batches_tracked = module.num_batches_tracked
            output.training = module.training
            if hasattr(module, "qconfig"):
                output.qconfig = module.qconfig
        for name, child in module.named_children():
            output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return output


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
