"""Helpers of the attention biases (torch's ``nn.attention._utils``): the Python-side input
checks, with torch's ``ValueError`` messages, and the scale of a head size.

>>> from jaxgrad.nn.attention._utils import _calculate_scale
>>> _calculate_scale(4, None)
0.5
"""

from __future__ import annotations

import math

from ..._core.tensor import Tensor

__all__: list[str] = []


def _input_requires_grad(*tensors: Tensor) -> bool:
    return any(t.requires_grad for t in tensors)


def _postprocess_flash_output(inpt_tensor: Tensor, og_size: int) -> Tensor:
    return inpt_tensor[..., :og_size] if inpt_tensor.size(-1) != og_size else inpt_tensor


def _calculate_scale(head_dim_size: int, scale: float | None) -> float:
    return scale if scale is not None else 1.0 / math.sqrt(head_dim_size)


def _validate_sdpa_input(query: Tensor, key: Tensor, value: Tensor,
                         attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                         is_causal: bool = False, scale: float | None = None,
                         allow_lowp_kv: bool = False) -> None:
    if not allow_lowp_kv and (query.dtype != key.dtype or query.dtype != value.dtype):
        raise ValueError("Expected query, key, and value to have the same dtype, but got "
                         f"query.dtype: {query.dtype}, key.dtype: {key.dtype}, and value.dtype: "
                         f"{value.dtype} instead.")
    if query.device != key.device or query.device != value.device:
        raise ValueError("Expected query, key, and value to have the same device type, but got "
                         f"query.device: {query.device}, key.device: {key.device}, and "
                         f"value.device: {value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError("Expected query, key, and value to all be  at least 2 dimensional, but "
                         f"got query.dim: {query.dim()}, key.dim: {key.dim()} and value.dim: "
                         f"{value.dim()} instead.")
