"""torch's legacy ``Resize`` and ``Type`` Functions, written on jaxgrad's ``Function``."""

from __future__ import annotations

import math
import warnings
from typing import Any

from ..._autograd.function import Function


class Resize(Function):
    """Reshape to ``sizes`` (same number of elements) as a custom Function; the gradient is
    reshaped back.

    >>> import jaxgrad
    >>> from jaxgrad.autograd._functions import Resize
    >>> x = jaxgrad.arange(4.0, requires_grad=True)
    >>> y = Resize.apply(x, (2, 2))
    >>> y.shape, type(y.grad_fn).__name__
    (jaxgrad.Size([2, 2]), 'ResizeBackward')
    """

    @staticmethod
    def forward(ctx: Any, tensor: Any, sizes: tuple) -> Any:
        ctx.sizes = sizes
        ctx.numel = math.prod(sizes)
        if tensor.numel() != ctx.numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({ctx.numel} elements in "
                f"total), but the given tensor has a size of "
                f"{'x'.join(map(str, tensor.size()))} ({tensor.numel()} elements). autograd's "
                "resize can only change the shape of a given tensor, while preserving the "
                "number of elements. ")
        ctx.input_sizes = tensor.size()
        if tensor.is_contiguous():  # torch aliases the input's storage in a new tensor first
            return tensor.detach().view(*sizes)
        return tensor.contiguous().view(*sizes)

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> Any:
        if grad_output.numel() != ctx.numel:
            raise AssertionError(f"Expected grad_output to have {ctx.numel} elements, but got "
                                 f"{grad_output.numel()}")
        return grad_output.contiguous().view(ctx.input_sizes), None


class Type(Function):
    """Deprecated: convert to ``dest_type`` (a tensor type name); the gradient goes back to the
    input's type.

    >>> import warnings, jaxgrad
    >>> from jaxgrad.autograd._functions import Type
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     Type.apply(jaxgrad.ones(2, requires_grad=True), "torch.DoubleTensor").dtype
    jaxgrad.float64
    """

    @staticmethod
    def forward(ctx: Any, i: Any, dest_type: Any) -> Any:
        warnings.warn("`torch.autograd._functions.Type` is deprecated as of PyTorch 2.1, please "
                      "use `torch.tensor.to(dtype=dtype)` instead.", FutureWarning, stacklevel=2)
        ctx.input_type = i.type()
        return i.type(dest_type)

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> Any:
        return grad_output.type(ctx.input_type), None
