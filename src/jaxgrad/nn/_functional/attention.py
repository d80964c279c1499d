"""Attention: scaled_dot_product_attention and multi_head_attention_forward.
"""

from __future__ import annotations

import builtins
import math
import warnings
from typing import Any

import jax.numpy as jnp
import numpy as np

from ..._core import dtypes as _dtypes
from ..._core.tensor import Tensor
from ..._engine.dispatch import apply as _apply
from ..._functions import creation as _creation
from ..._functions import indexing, joins, pointwise, reductions
from ..._functions import linalg as _linalg
from ..._functions import shapes as _shapes
from ..._functions.opgen import tensor_args
from ..._ops import nn as N
from ..._ops import scalar_overloads as SO
from ...backends import _sdp
from .activations import softmax
from .convolution import linear, pad
from .dropout import dropout


def _c_type_name(t: Tensor) -> str:
    return _dtypes.c_type_name(t.dtype)


def _validate_sdpa_input(query: Tensor, key: Tensor, value: Tensor,
                         attn_mask: Tensor | None) -> None:
    """torch's validate_sdpa_input, with its messages."""
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_c_type_name(query)} key.dtype: {_c_type_name(key)} and value.dtype: "
            f"{_c_type_name(value)} instead.")
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if attn_mask is not None and attn_mask.dtype.name not in ("bool", "float32") and (
            attn_mask.dtype != query.dtype):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_c_type_name(attn_mask)} and  query.dtype: "
            f"{_c_type_name(query)} instead.")


_FLASH_CPU_DTYPES = ("float32", "float64", "bfloat16", "float16")


def _flash_cpu_refusal(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
                       dropout_p: float, enable_gqa: bool) -> str | None:
    """Why torch's fused CPU flash kernel cannot run these inputs (torch's debug message; ""
    for a silent refusal), or None when it can: its checks, in its order."""
    if dropout_p > 0.0:
        return "Both fused kernels do not support non-zero dropout."
    if not query.ndim == key.ndim == value.ndim == 4:
        return ("All fused kernels requires query, key and value to be 4 dimensional, but got "
                f"Query dim: {query.ndim}, Key dim: {key.ndim}, Value dim: {value.ndim} instead.")
    for refusal in (_batch_and_heads_refusal(query, key, value, enable_gqa),
                    _mask_shape_refusal(query, key, attn_mask), _dense_refusal(query, key, value)):
        if refusal is not None:
            return refusal
    return None


def _batch_and_heads_refusal(query: Tensor, key: Tensor, value: Tensor,
                             enable_gqa: bool) -> str | None:
    sizes = f"Query.sizes(): {list(query.shape)}, Key"
    broadcast = (" instead. To broadcast dense inputs, try using unsqueeze and expand_to before "
                 "passing them into the kernel.")
    if not query.shape[0] == key.shape[0] == value.shape[0]:
        return ("For dense inputs, both fused kernels require query, key and value to have the "
                f"same batch_size. {sizes}.sizes(): {list(key.shape)}, Value.sizes(): "
                f"{list(value.shape)}{broadcast}")
    heads = (query.shape[1], key.shape[1], value.shape[1])
    if enable_gqa:
        if heads[1] != heads[2]:
            return ("Both fused kernels require key and value to have the same num_heads and "
                    f"batch_size but got: Key sizes: {list(key.shape)}, Value sizes: "
                    f"{list(value.shape)}, Query sizes: {list(query.shape)} instead.")
        if heads[0] % heads[1]:
            return ("The number of heads in key/value must divide number of heads in query.Got "
                    f"input Key sizes(): {heads[1]}, Value sizes(): {heads[2]}, Query sizes(): "
                    f"{heads[0]} instead.")
    elif not heads[0] == heads[1] == heads[2]:
        return ("For dense input, both fused kernels require query, key and value to have the "
                f"same num_heads. {sizes} sizes(): {list(key.shape)}, Value sizes(): "
                f"{list(value.shape)}{broadcast}")
    return None


def _mask_shape_refusal(query: Tensor, key: Tensor, attn_mask: Tensor | None) -> str | None:
    if attn_mask is None:
        return None
    if attn_mask.requires_grad:
        return ""
    if attn_mask.ndim < 2:  # torch reads the mask's size(-2)
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    if attn_mask.shape[-2] not in (query.shape[2], 1) or attn_mask.shape[-1] not in (
            key.shape[2], 1):
        return ""
    if attn_mask.ndim == 2 or (attn_mask.ndim == 4 and attn_mask.shape[0] in (1, query.shape[0])
                               and attn_mask.shape[1] in (1, query.shape[1])):
        return None
    return ("Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x {KV_seq_len, 1});"
            " 4d - ({Batch, 1} x {Num_heads, 1} x {Q_seq_len, 1}  x {KV_seq_len, 1})")


def _dense_refusal(query: Tensor, key: Tensor, value: Tensor) -> str | None:
    sizes = (query.shape[-1], key.shape[-1], value.shape[-1])
    if not sizes[0] == sizes[1] == sizes[2]:
        return ("Flash attention requires q,k,v to have the same last dimension. Got "
                f"Query.size(-1): {sizes[0]}, Key.size(-1): {sizes[1]}, Value.size(-1): "
                f"{sizes[2]} instead.")
    if 0 in (query.shape[-2], key.shape[-2]):
        return "All fused kernels do not support zero seq_len_q or seq_len_kv."
    strides = (query.stride(-1), key.stride(-1), value.stride(-1))
    if strides != (1, 1, 1):
        return ("All fused kernels require the last dimension of the input to have stride 1. Got "
                f"Query.stride(-1): {strides[0]}, Key.stride(-1): {strides[1]}, "
                f"Value.stride(-1): {strides[2]}")
    if query.dtype.name not in _FLASH_CPU_DTYPES:
        return ("Expected query, key and value to all be of dtype: {Float, Double, BFloat16, "
                f"Half}}. Got Query dtype: {_c_type_name(query)}, Key dtype: {_c_type_name(key)}"
                f", and Value dtype: {_c_type_name(value)} instead.")
    return None


def _uses_flash_cpu(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
                    dropout_p: float, enable_gqa: bool) -> bool:
    """torch's CPU kernel choice (select_sdp_backend_cpp): the fused flash kernel where it is
    enabled and takes the inputs, else the math composition where that is enabled; with neither,
    torch's warnings (why flash was refused) and errors."""
    flash, math_ = _sdp.is_enabled("flash"), _sdp.is_enabled("math")
    if not (flash or math_):
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is "
                           "likely due to turning off both the math kernel and the fused kernels.")
    refusal = _flash_cpu_refusal(query, key, value, attn_mask, dropout_p, enable_gqa)
    if flash and refusal is None:
        return True
    if math_:
        return False
    warnings.warn("Flash attention kernel not used because:", stacklevel=4)
    if refusal:
        warnings.warn(refusal, stacklevel=4)
    raise RuntimeError("No available kernel.  Aborting execution.")


def _sdpa_empty(query: Tensor, key: Tensor, value: Tensor) -> Tensor:
    """torch's answer for an empty query or key sequence: zeros of the output's shape that
    still connect to every input (``zeros + (q.sum() + k.sum() + v.sum()) * 0``)."""
    zeros = _creation.zeros((*query.shape[:-1], value.shape[-1]), dtype=query.dtype)
    total = pointwise.add(pointwise.add(reductions.sum(query), reductions.sum(key)),
                          reductions.sum(value))
    return pointwise.add(zeros, pointwise.with_scalar(SO.MUL_SCALAR, total, 0))


def _repeat_heads(t: Tensor, repeats: int) -> Tensor:
    """``t.repeat_interleave(repeats, -3)``: each head ``repeats`` times in a row."""
    expanded = _shapes.expand(_shapes.unsqueeze(t, -3), (*t.shape[:-2], repeats, *t.shape[-2:]))
    return _shapes.reshape(expanded, (*t.shape[:-3], t.shape[-3] * repeats, *t.shape[-2:]))


def _share_heads(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
    """torch's pre_process_group_query_attention_input: key and value heads each repeated to
    the query's count."""
    heads = (query.shape[-3], key.shape[-3], value.shape[-3])
    if heads[0] == heads[1] == heads[2]:
        return key, value
    if heads[0] % heads[1] or heads[0] % heads[2]:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    return _repeat_heads(key, heads[0] // heads[1]), _repeat_heads(value, heads[0] // heads[2])


def _sdpa_math(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
               dropout_p: float, is_causal: bool, scale: float | None,
               enable_gqa: bool) -> Tensor:
    """torch's _scaled_dot_product_attention_math, op for op: both operands scaled by the
    square root of the scale, a bool mask turned into -inf, ``_safe_softmax``, dropout."""
    if attn_mask is not None and attn_mask.dtype.name == "bool":
        bias = _creation.zeros_like(attn_mask, dtype=query.dtype)
        indexing.masked_fill_(bias, pointwise.logical_not(attn_mask), float("-inf"))
        attn_mask = bias
    negative = scale is not None and scale < 0
    factor = math.sqrt(builtins.abs(scale) if scale is not None
                       else 1 / math.sqrt(query.shape[-1]))
    query = pointwise.with_scalar(SO.MUL_SCALAR, query, -factor if negative else factor)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        causal = np.tril(np.ones((query.shape[-2], key.shape[-2]), bool))
        attn_mask = Tensor._make(jnp.where(causal, 0.0, -jnp.inf).astype(query._value.dtype))
    if enable_gqa:
        key, value = _share_heads(query, key, value)
    attn = _linalg.matmul(query, pointwise.with_scalar(SO.MUL_SCALAR,
                                                       _shapes.transpose(key, -2, -1), factor))
    if attn_mask is not None:
        attn = pointwise.add(attn, attn_mask) if attn_mask.requires_grad else pointwise.add_(attn,
                                                                                             attn_mask)
    attn = _apply(N.SAFE_SOFTMAX, attn, dim=attn.ndim - 1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return _linalg.matmul(attn, value)


@tensor_args
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dims. A bool
    ``attn_mask`` marks the positions that take part, a float one is added; ``is_causal``
    masks the upper triangle; ``enable_gqa`` shares each key/value head among a group of
    query heads. As torch on CPU, 4-D inputs without dropout run as one fused node
    (``ScaledDotProductFlashAttentionForCpuBackward0``), other inputs as torch's math
    composition.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> q = k = v = jaxgrad.ones(1, 2, 3, 4, requires_grad=True)
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).grad_fn.name()
    'ScaledDotProductFlashAttentionForCpuBackward0'
    """
    override = getattr(type(attn_mask), "__torch_function__", None)
    if override is not None:  # a bias subclass (nn.attention.bias.CausalBias) decides, as in torch
        return override(scaled_dot_product_attention, (type(attn_mask),),
                        (query, key, value, attn_mask),
                        {"dropout_p": dropout_p, "is_causal": is_causal, "scale": scale,
                         "enable_gqa": enable_gqa})
    _validate_sdpa_input(query, key, value, attn_mask)
    if 0 in (query.shape[-2], key.shape[-2]):
        return _sdpa_empty(query, key, value)
    if _uses_flash_cpu(query, key, value, attn_mask, dropout_p, enable_gqa):
        mask = attn_mask
        if mask is not None and mask.dtype.name != "bool" and mask.dtype != query.dtype:
            mask = mask.to(query.dtype)
        out, _ = _apply(N.SDPA_FLASH_CPU, query, key, value, aux=(mask,),
                        is_causal=bool(is_causal), scale=None if scale is None else float(scale))
        return out
    return _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type: Any, other_name: str,
                    target_type: Any, check_other: bool = True) -> Tensor | None:
    """torch's _canonical_mask: a bool mask becomes an additive float mask (-inf where True)."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype.name != "bool" and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      "same type for both instead.", stacklevel=3)
    if not is_float:
        mask = indexing.masked_fill_(_creation.zeros_like(mask, dtype=target_type), mask,
                                     float("-inf"))
    return mask


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor,
                     key_padding_mask: Tensor | None, attn_mask: Tensor | None,
                     num_heads: int) -> bool:
    """torch's _mha_shape_check: whether the input is batched, with its assertions."""
    if query.ndim not in (2, 3):
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.ndim}-D query tensor")
    batched = query.ndim == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be "
                             f"{query.ndim}-D but found {key.ndim}-D and {value.ndim}-D tensors "
                             "respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{query.ndim - 1}-D but found {key_padding_mask.ndim}-D tensor "
                             "instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or "
                                 f"3-D but found {attn_mask.ndim}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                 f"{attn_mask.shape}")
    return batched


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor,
                          b: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """torch's _in_projection_packed: one linear for self-attention, two for a shared
    key/value, three otherwise."""
    e = q.shape[-1]

    def unpack(proj: Tensor, n: int) -> Tensor:
        proj = _shapes.view(proj, (*proj.shape[:-1], n, e))
        return _shapes.contiguous(_shapes.squeeze(_shapes.transpose(_shapes.unsqueeze(proj, 0), 0,
                                                                    -2), -2))

    if k is v:
        if q is k:
            proj = unpack(linear(q, w, b), 3)
            return _shapes.select(proj, 0, 0), _shapes.select(proj, 0, 1), _shapes.select(proj, 0,
                                                                                          2)
        w_q, w_kv = joins.split(w, [e, 2 * e])
        b_q, b_kv = (None, None) if b is None else joins.split(b, [e, 2 * e])
        kv = unpack(linear(k, w_kv, b_kv), 2)
        return linear(q, w_q, b_q), _shapes.select(kv, 0, 0), _shapes.select(kv, 0, 1)
    w_q, w_k, w_v = joins.chunk(w, 3)
    b_q, b_k, b_v = (None, None, None) if b is None else joins.chunk(b, 3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention of (L, N, E) or (L, E) ``query`` over ``key``/``value``, step for
    step as torch's: input projections, masks merged into one additive mask, explicit
    softmax attention when ``need_weights`` (returning the weights, averaged over heads with
    ``average_attn_weights``), ``scaled_dot_product_attention`` otherwise, output projection.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> x = jaxgrad.ones(3, 1, 4)
    >>> out, w = F.multi_head_attention_forward(
    ...     x, x, x, 4, 2, jaxgrad.ones(12, 4), None, None, None, False, 0.0,
    ...     jaxgrad.eye(4), None)
    >>> out.shape, w.shape
    (jaxgrad.Size([3, 1, 4]), jaxgrad.Size([1, 3, 3]))
    """
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = (_shapes.unsqueeze(query, 1), _shapes.unsqueeze(key, 1),
                             _shapes.unsqueeze(value, 1))
        if key_padding_mask is not None:
            key_padding_mask = _shapes.unsqueeze(key_padding_mask, 0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask.dtype,
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else joins.chunk(in_proj_bias, 3)
        q, k, v = (linear(query, q_proj_weight, b_q), linear(key, k_proj_weight, b_k),
                   linear(value, v_proj_weight, b_v))
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, key.shape[0]):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, key.shape[0])}.")
            attn_mask = _shapes.unsqueeze(attn_mask, 0)
        elif tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, key.shape[0]):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(bsz * num_heads, tgt_len, key.shape[0])}.")
    if bias_k is not None and bias_v is not None:
        k = joins.cat([k, _shapes.expand(bias_k, (1, bsz, embed_dim))])
        v = joins.cat([v, _shapes.expand(bias_v, (1, bsz, embed_dim))])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    q = _shapes.transpose(_shapes.view(q, (tgt_len, bsz * num_heads, head_dim)), 0, 1)
    k = static_k if static_k is not None else _shapes.transpose(
        _shapes.view(k, (k.shape[0], bsz * num_heads, head_dim)), 0, 1)
    v = static_v if static_v is not None else _shapes.transpose(
        _shapes.view(v, (v.shape[0], bsz * num_heads, head_dim)), 0, 1)
    if add_zero_attn:
        zeros = (bsz * num_heads, 1, head_dim)
        k = joins.cat([k, _creation.zeros(zeros, dtype=k.dtype)], 1)
        v = joins.cat([v, _creation.zeros(zeros, dtype=v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = _shapes.expand(_shapes.view(key_padding_mask, (bsz, 1, 1, src_len)),
                                          (-1, num_heads, -1, -1))
        key_padding_mask = _shapes.reshape(key_padding_mask, (bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else pointwise.add(attn_mask,
                                                                             key_padding_mask)
    if not training:
        dropout_p = 0.0
    if need_weights:
        q_scaled = pointwise.with_scalar(SO.MUL_SCALAR, q, math.sqrt(1.0 / float(q.shape[-1])))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        k_t = _shapes.transpose(k, -2, -1)
        weights = (_linalg.bmm(q_scaled, k_t) if attn_mask is None
                   else _linalg.baddbmm(attn_mask, q_scaled, k_t))
        weights = softmax(weights, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = _shapes.reshape(_shapes.transpose(_linalg.bmm(weights, v), 0, 1), (tgt_len * bsz,
                                                                                 embed_dim))
        out = linear(out, out_proj_weight, out_proj_bias)
        out = _shapes.view(out, (tgt_len, bsz, out.shape[1]))
        weights = _shapes.view(weights, (bsz, num_heads, tgt_len, src_len))
        if average_attn_weights:
            weights = reductions.mean(weights, 1)
        if not batched:
            out, weights = _shapes.squeeze(out, 1), _shapes.squeeze(weights, 0)
        return out, weights
    if attn_mask is not None:
        attn_mask = (_shapes.unsqueeze(attn_mask,
                                       0) if attn_mask.shape[0] == 1 and attn_mask.ndim == 3
                     else _shapes.view(attn_mask, (bsz, num_heads, -1, src_len)))
    q = _shapes.view(q, (bsz, num_heads, tgt_len, head_dim))
    k = _shapes.view(k, (bsz, num_heads, src_len, head_dim))
    v = _shapes.view(v, (bsz, num_heads, src_len, head_dim))
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = _shapes.reshape(_shapes.permute(out, (2, 0, 1, 3)), (bsz * tgt_len, embed_dim))
    out = linear(out, out_proj_weight, out_proj_bias)
    out = _shapes.view(out, (tgt_len, bsz, out.shape[1]))
    return (out if batched else _shapes.squeeze(out, 1)), None


def _native_self_attention(x: Tensor, num_heads: int, in_proj_weight: Tensor,
                           in_proj_bias: Tensor | None, out_proj_weight: Tensor,
                           out_proj_bias: Tensor | None, mask: Tensor | None,
                           mask_type: int | None, need_weights: bool = False,
                           average_attn_weights: bool = True) -> tuple[Tensor, Tensor | None]:
    """torch's fused self-attention (``_native_multi_head_attention``), the eval-mode fast path
    of MultiheadAttention and TransformerEncoderLayer, on (N, L, E) ``x``. What it changes for
    a user: ``mask`` is read as boolean (any nonzero entry masks its key out: an (L, L) mask,
    mask_type 1's (N, L) key padding mask or mask_type 2's (N, heads, L, L) one), and a query
    whose keys are all masked gets NaN where the ordinary path's safe softmax gives zeros."""
    n, length, embed = x.shape
    head_dim = embed // num_heads
    qkv = linear(x, in_proj_weight, in_proj_bias).view(n, length, 3, num_heads, head_dim)
    q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
    scores = (q * (1.0 / math.sqrt(head_dim))).matmul(k.transpose(-2, -1))
    if mask is not None:
        masked = mask if mask.dtype.name == "bool" else mask.ne(0)
        if mask_type == 1:
            masked = masked.view(n, 1, 1, length)
        scores = scores.masked_fill(masked, float("-inf"))
    weights = softmax(scores, dim=-1)
    out = weights.matmul(v).transpose(1, 2).reshape(n, length, embed)
    out = linear(out, out_proj_weight, out_proj_bias)
    if not need_weights:
        return out, None
    return out, (weights.sum(1) / num_heads if average_attn_weights else weights)
