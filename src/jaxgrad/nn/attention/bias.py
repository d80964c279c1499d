"""Causal attention biases (torch's ``nn.attention.bias``): ``causal_upper_left`` and
``causal_lower_right`` give a ``CausalBias`` that ``scaled_dot_product_attention`` takes as its
``attn_mask`` and turns into the cheapest equivalent call, as torch's ``__torch_function__`` does.

As in torch a ``CausalBias`` is a tensor subclass built with the legacy ``Tensor(*sizes)``
constructor (its own shape is ``(variant, seq_len_q, seq_len_kv)``); it prints as the mask it
stands for.

>>> import jaxgrad, jaxgrad.nn.functional as F
>>> from jaxgrad.nn.attention.bias import causal_lower_right
>>> bias = causal_lower_right(2, 3)
>>> bias
tensor([[ True,  True, False],
        [ True,  True,  True]])
>>> q, kv = jaxgrad.ones(1, 1, 2, 4), jaxgrad.ones(1, 1, 3, 4)
>>> F.scaled_dot_product_attention(q, kv, kv, bias).shape
jaxgrad.Size([1, 1, 2, 4])
"""

from __future__ import annotations

import warnings
from enum import IntEnum, auto
from typing import Any

from ..._core import dtypes
from ..._core.tensor import Tensor
from ..._functions import creation
from ...backends.cuda import SDPAParams
from .. import functional as F
from . import _raise_kernel_warnings
from ._utils import _validate_sdpa_input

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(IntEnum):
    """Where a causal mask's triangle is anchored: ``UPPER_LEFT`` (``is_causal=True``'s mask)
    or ``LOWER_RIGHT`` (aligned to the bottom-right corner; the same when the lengths agree).

    >>> from jaxgrad.nn.attention.bias import CausalVariant
    >>> int(CausalVariant.LOWER_RIGHT)
    2
    """

    UPPER_LEFT = auto()
    LOWER_RIGHT = auto()


class CausalBias(Tensor):
    """A causal attention mask held as its variant and sequence lengths; attention with it runs
    as ``is_causal=True`` where that is the same mask, else with the materialized mask.

    >>> from jaxgrad.nn.attention.bias import CausalBias, CausalVariant
    >>> CausalBias(CausalVariant.UPPER_LEFT, 2, 2)._materialize()
    tensor([[ True, False],
            [ True,  True]])
    """

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        super().__init__()
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warnings.warn("Lower right causal bias will produce NaNs in the output when "
                          "seq_len_q > seq_len_kv!", stacklevel=2)

    def _upper_left(self, device: Any) -> Tensor:
        ones = creation.ones(self.seq_len_q, self.seq_len_kv, device=device, dtype=dtypes.bool_)
        return ones.tril()

    def _lower_right(self, device: Any) -> Tensor:
        ones = creation.ones(self.seq_len_q, self.seq_len_kv, device=device, dtype=dtypes.bool_)
        return ones.tril(diagonal=self.seq_len_kv - self.seq_len_q)

    def _materialize(self, device: Any = None) -> Tensor:
        """The boolean mask: True where a query position may attend to a key position."""
        if device is None:
            device = "cpu"
        if self.variant == CausalVariant.UPPER_LEFT:
            return self._upper_left(device)
        if self.variant == CausalVariant.LOWER_RIGHT:
            return self._lower_right(device)
        return None

    @staticmethod
    def _dispatch(query: Tensor, key: Tensor, value: Tensor, attn_mask: CausalBias,
                  dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                  enable_gqa: bool = False) -> Tensor:
        """Attention with this bias, as torch computes it without its CUDA kernels (jaxgrad's
        ``can_use_*`` checks answer False): ``is_causal=True`` where the triangle is the
        upper-left one, else the materialized mask."""
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if (attn_mask.seq_len_q == attn_mask.seq_len_kv
                or attn_mask.variant == CausalVariant.UPPER_LEFT):
            return F.scaled_dot_product_attention(query, key, value, attn_mask=None,
                                                  dropout_p=dropout_p, is_causal=True,
                                                  scale=scale, enable_gqa=enable_gqa)
        if attn_mask.variant == CausalVariant.LOWER_RIGHT:
            _validate_sdpa_input(query, key, value, None, dropout_p, is_causal, scale)
            params = SDPAParams(query, key, value, None, dropout_p, is_causal, enable_gqa)
            _raise_kernel_warnings(params)
            return F.scaled_dot_product_attention(
                query, key, value, attn_mask=attn_mask._materialize(query.device),
                dropout_p=dropout_p, is_causal=False, scale=scale, enable_gqa=enable_gqa)
        raise ValueError("CausalBias.variant must be a CausalVariant type, but found: "
                         f"{attn_mask.variant}")

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        """``scaled_dot_product_attention`` with this bias runs :meth:`_dispatch`."""
        if func is F.scaled_dot_product_attention:
            return cls._dispatch(*args, **(kwargs or {}))
        return NotImplemented

    def __repr__(self) -> str:
        return self._materialize().__repr__()


def causal_upper_left(*size: int) -> CausalBias:
    """The upper-left causal bias of a ``(seq_len_q, seq_len_kv)`` attention (``is_causal``'s).

    >>> from jaxgrad.nn.attention.bias import causal_upper_left
    >>> causal_upper_left(2, 3)
    tensor([[ True, False, False],
            [ True,  True, False]])
    """
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.UPPER_LEFT, seq_len_q, seq_len_kv)


def causal_lower_right(*size: int) -> CausalBias:
    """The lower-right causal bias of a ``(seq_len_q, seq_len_kv)`` attention (its triangle
    aligned to the last query and key positions).

    >>> from jaxgrad.nn.attention.bias import causal_lower_right
    >>> causal_lower_right(2, 3)._materialize()
    tensor([[ True,  True, False],
            [ True,  True,  True]])
    """
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.LOWER_RIGHT, seq_len_q, seq_len_kv)

