"""``InstanceNorm1d``/``2d``/``3d``: per-sample, per-channel normalisation over the spatial
dims (no affine parameters and no running statistics by default)."""

from __future__ import annotations

import warnings

from ..._core.tensor import Tensor
from .. import functional
from .batchnorm import _LazyNormBase, _NormBase


class _InstanceNorm(_NormBase):
    """The instance-norm forward: shape checks, unbatched input, torch's num_features
    warning."""

    _dims = 0  # the dims of an unbatched input

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: object = None,
                 dtype: object = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (self._dims, self._dims + 1):
            raise ValueError(f"expected {self._dims}D or {self._dims + 1}D input (got "
                             f"{input.dim()}D input)")

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return functional.instance_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input: Tensor) -> Tensor:
        """``functional.instance_norm`` of ``input`` (a batch dim added when unbatched)."""
        self._check_input_dim(input)
        feature_dim = input.dim() - self._dims
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is "
                          "not used because affine=False", stacklevel=2)
        if input.dim() == self._dims:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) input.

    >>> import jaxgrad
    >>> norm = jaxgrad.nn.InstanceNorm1d(1)
    >>> norm
    InstanceNorm1d(1, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    >>> norm(jaxgrad.tensor([[[1.0, 3.0]]]))
    tensor([[[-1.0000,  1.0000]]])
    """

    _dims = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W) input.

    >>> import jaxgrad
    >>> jaxgrad.nn.InstanceNorm2d(3, affine=True)(jaxgrad.randn(2, 3, 4, 4)).shape
    jaxgrad.Size([2, 3, 4, 4])
    """

    _dims = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import jaxgrad
    >>> jaxgrad.nn.InstanceNorm3d(2)(jaxgrad.randn(2, 2, 2, 2)).shape
    jaxgrad.Size([2, 2, 2, 2])
    """

    _dims = 4


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
