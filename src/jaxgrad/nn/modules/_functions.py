"""torch's ``torch.nn.modules._functions``: ``CrossMapLRN2d``, an autograd ``Function`` with
its own (approximate) backward, which ``nn.CrossMapLRN2d`` applies."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._autograd.function import Function
from ..._core.grad_mode import is_grad_enabled
from ..._core.tensor import Tensor
from ..._functions import creation, pointwise
from ..._functions.einsum import einsum


def _matrix(rows: np.ndarray, like: Tensor) -> Tensor:
    return creation.tensor(rows.astype(np.float64), dtype=like.dtype, device=like.device)


def _scale_window(channels: int, size: int) -> np.ndarray:
    """Which squared channels torch's running sum adds into each channel's scale: the window
    ``[c - pre_pad + 1, c + pre_pad - 1]``, and channel 0 always (its loop never subtracts it).
    """
    pre_pad = int((size - 1) / 2 + 1)
    c, j = np.arange(channels)[:, None], np.arange(channels)[None, :]
    return (j <= c + pre_pad - 1) & ((j == 0) | (j >= c - pre_pad + 1))


def _ratio_window(channels: int, size: int) -> np.ndarray:
    """The channels whose ratios torch's backward accumulates into each channel's gradient."""
    inverse_pre_pad = int(size - (size - 1) / 2)
    c, j = np.arange(channels)[:, None], np.arange(channels)[None, :]
    return (j >= c - inverse_pre_pad) & (j <= c + size - 1 - inverse_pre_pad)


class CrossMapLRN2d(Function):
    """Local response normalisation across channels of a 4-D input, computed as torch's
    running-sum kernel does (``CrossMapLRN2dBackward``).

    >>> import jaxgrad
    >>> from jaxgrad.nn.modules._functions import CrossMapLRN2d
    >>> CrossMapLRN2d.apply(jaxgrad.ones(1, 2, 1, 1), 3, 1.0, 1.0, 1.0).flatten()
    tensor([0.6000, 0.6000])
    """

    @staticmethod
    def forward(ctx: Any, input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                k: float = 1) -> Tensor:
        """The input scaled by ``(k + alpha / size * windowed sum of squares) ** -beta``."""
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        window = _matrix(_scale_window(input.size(1), size), input)
        # torch's kernel writes its output buffer four times (resize_as_, the squares, the
        # powers of the scale, the product): its ``_version`` ends at 4, as here
        output = creation.empty_like(input)
        output.zero_()
        input_square = pointwise.pow(input, 2, out=output)
        summed = einsum("cj,njhw->nchw", window, input_square)
        ctx.scale = pointwise.add(pointwise.mul(summed, alpha / size), k)
        pointwise.pow(ctx.scale, -beta, out=output)
        output.mul_(input)
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple:
        """torch's backward: ``scale ** -beta * grad`` less the accumulated ratios."""
        if grad_output.requires_grad and is_grad_enabled():
            raise RuntimeError("mul(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        input, output = ctx.saved_tensors
        ratio = pointwise.div(pointwise.mul(grad_output, output), ctx.scale)
        window = _matrix(_ratio_window(input.size(1), ctx.size), input)
        accum = einsum("cj,njhw->nchw", window, ratio)
        coefficient = 2 * ctx.alpha * ctx.beta / ctx.size
        grad_input = pointwise.sub(pointwise.mul(pointwise.pow(ctx.scale, -ctx.beta), grad_output),
                                   pointwise.mul(pointwise.mul(input, accum), coefficient))
        return grad_input, None, None, None, None
