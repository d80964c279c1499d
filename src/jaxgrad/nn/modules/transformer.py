"""Transformer, its encoder and decoder stacks and their layers, as torch.nn's: the architecture
of "Attention Is All You Need" with torch's parameters, masks, causal hints and the observable
side of its eval-mode fast paths.

Note [Transformer fast paths]: in eval mode, when no gradient is to be recorded, torch runs an
encoder layer as one fused kernel (``_transformer_encoder_layer_fwd``) and lets
``TransformerEncoder`` pack a left-aligned padded batch into a nested tensor. Neither changes
the values where the padding mask lets a position through, but a user sees three things, which
jaxgrad reproduces with ordinary ops: the fused attention reads every mask as boolean (a nonzero
entry masks its key out) and ignores the causal hint; a query with every key masked gives NaN
(the ordinary path's safe softmax gives zeros); and the nested route returns zeros at the padded
positions (before the stack's final norm). The conditions are torch's, checked in torch's order.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

from ..._compile.compiler import is_compiling
from ..._core.grad_mode import is_grad_enabled
from ..._core.tensor import Tensor
from ..._core.tensor_repr import concrete_here
from ..._core.warn_once import warn_once
from ..._engine import autocast as _autocast
from ..._functions.creation import arange, full
from ...backends import mha as _mha
from .. import functional as F
from .._functional.attention import _native_self_attention
from ..init import xavier_uniform_
from .activation import GELU, MultiheadAttention, ReLU
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]

_NESTED_PROTOTYPE = (
    "The PyTorch API of nested tensors is in prototype stage and will change in the near "
    "future. We recommend specifying layout=jaxgrad.jagged when constructing a nested tensor, "
    "as this layout receives active development, has better operator coverage, and works with "
    "jaxgrad.compile.")


def _generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
    """An (sz, sz) causal mask: -inf above the diagonal, 0 on and below it."""
    return full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    if src.ndim == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None = None,
                           size: int | None = None) -> bool:
    """``is_causal`` when given; otherwise whether ``mask`` equals the causal mask of ``size``
    (default: its own size) in its own dtype, as torch compares (a batched mask never does).
    A traced mask (inside ``jaxgrad.compile`` or a JAX transform) has no values to compare: it
    counts as not causal and is applied as given, which gives the same values."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None and concrete_here(mask._value):
        sz = size if size is not None else mask.shape[-2]
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        make_causal = mask.shape == causal.shape and bool((mask == causal).all())
    return make_causal


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _dtype_or_none(mask: Tensor | None) -> Any:
    return None if mask is None else mask.dtype


def _first_refusal(checks: tuple[tuple[bool, str], ...]) -> str:
    return next((reason for failed, reason in checks if failed), "")


def _grad_refusal(tensors: tuple[Tensor | None, ...]) -> str:
    if is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors):
        return ("grad is enabled and at least one of query or the input/output projection "
                "weights or biases requires_grad")
    return ""


class Transformer(Module):
    """The encoder-decoder Transformer: a ``TransformerEncoder`` of ``num_encoder_layers``
    layers and a ``TransformerDecoder`` of ``num_decoder_layers``, each closed by a LayerNorm
    (or ``custom_encoder``/``custom_decoder``), every matrix drawn Xavier-uniform. Inputs are
    (S, N, E) and (T, N, E), (N, S, E) with ``batch_first``, or unbatched (S, E).

    >>> import jaxgrad
    >>> from jaxgrad import nn
    >>> model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
    ...                        dim_feedforward=16, batch_first=True)
    >>> src, tgt = jaxgrad.rand(2, 5, 8), jaxgrad.rand(2, 3, 8)
    >>> out = model(src, tgt, tgt_mask=nn.Transformer.generate_square_subsequent_mask(3))
    >>> out.shape, out.grad_fn.name()
    (jaxgrad.Size([2, 3, 8]), 'NativeLayerNormBackward0')
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu,
                 custom_encoder: Any | None = None, custom_decoder: Any | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*layer_args, **factory), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*layer_args, **factory), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        """The decoder's output for ``tgt`` attending to the encoded ``src``. A bool mask marks
        the positions that may *not* attend (True), a float one is added to the scores;
        ``*_is_causal`` hint that the matching mask is causal (None: detect it)."""
        batched = src.ndim == 3
        if not self.batch_first and src.size(1) != tgt.size(1) and batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if self.batch_first and src.size(0) != tgt.size(0) and batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None,
                                        dtype: Any = None) -> Tensor:
        """The (sz, sz) causal mask: ``-inf`` above the diagonal, 0 elsewhere.

        >>> import jaxgrad
        >>> jaxgrad.nn.Transformer.generate_square_subsequent_mask(3)
        tensor([[0., -inf, -inf],
                [0., 0., -inf],
                [0., 0., 0.]])
        """
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)


class TransformerEncoder(Module):
    """A stack of ``num_layers`` deep copies of ``encoder_layer`` (all starting from its
    values), then ``norm`` if given. In eval mode without grad, a batch_first stack given a
    left-aligned ``src_key_padding_mask`` takes torch's nested-tensor route (see Note
    [Transformer fast paths]): its output is zero at the padded positions before ``norm``,
    and the first such call warns, as torch does, that nested tensors are a prototype.
    ``enable_nested_tensor`` asks for that route; ``use_nested_tensor`` says whether the layer
    allows it (torch warns why not).

    >>> import warnings
    >>> import jaxgrad
    >>> from jaxgrad import nn
    >>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16,
    ...                                    batch_first=True)
    >>> encoder = nn.TransformerEncoder(layer, num_layers=2).eval()
    >>> pad = jaxgrad.tensor([[False, False, True]])
    >>> with jaxgrad.no_grad(), warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # the nested-tensor prototype warning
    ...     out = encoder(jaxgrad.rand(1, 3, 8), src_key_padding_mask=pad)
    >>> out[0, 2]
    tensor([0., 0., 0., 0., 0., 0., 0., 0.])
    """

    __constants__ = ["norm"]

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = self._nested_refusal(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why_not}", stacklevel=2)
            self.use_nested_tensor = False

    @staticmethod
    def _nested_refusal(layer: Any) -> str:
        name = "encoder_layer"
        if not isinstance(layer, TransformerEncoderLayer):
            return f"{name} was not TransformerEncoderLayer"
        attn = layer.self_attn
        return _first_refusal((
            (layer.norm_first, f"{name}.norm_first was True"),
            (not attn.batch_first, f"{name}.self_attn.batch_first was not True(use batch_first "
                                   "for better inference performance)"),
            (not attn._qkv_same_embed_dim, f"{name}.self_attn._qkv_same_embed_dim was not True"),
            (attn.in_proj_bias is None, f"{name}.self_attn was passed bias=False"),
            (not layer.activation_relu_or_gelu, f"{name}.activation_relu_or_gelu was not True"),
            (layer.norm1.eps != layer.norm2.eps,
             f"{name}.norm1.eps was not equal to {name}.norm2.eps"),
            (attn.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd")))

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        """``src`` through every layer, then ``norm``. ``mask`` is the (S, S) or
        (N * heads, S, S) attention mask, ``src_key_padding_mask`` the (N, S) one (True or
        nonzero-float entries mask keys out), ``is_causal`` the hint that ``mask`` is causal
        (None: compare it with the causal mask)."""
        src_key_padding_mask = F._canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                 _dtype_or_none(mask), "mask", src.dtype)
        mask = F._canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        first = self.layers[0]
        batch_first = first.self_attn.batch_first
        padded = None
        if not self._fast_path_refusal(src, mask, src_key_padding_mask, first):
            padded = self._padded_positions(src, src_key_padding_mask)
            warn_once(_NESTED_PROTOTYPE, stacklevel=1)
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, batch_first))
        output = src
        if padded is not None:  # the nested route: padded positions never reach a real token
            output = src.masked_fill(padded.unsqueeze(-1), 0.0)
            src_key_padding_mask = padded
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal,
                           src_key_padding_mask=src_key_padding_mask)
        if padded is not None:
            output = output.masked_fill(padded.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _fast_path_refusal(self, src: Tensor, mask: Tensor | None,
                           key_padding_mask: Tensor | None, first: Any) -> str:
        """Why torch does not pack ``src`` into a nested tensor ("" when it does)."""
        mask_check = getattr(self, "mask_check", True)
        why_not = _first_refusal((
            (not _mha.get_fastpath_enabled(),
             "jaxgrad.backends.mha.get_fastpath_enabled() was not True"),
            (not hasattr(self, "use_nested_tensor"), "use_nested_tensor attribute not present"),
            (not getattr(self, "use_nested_tensor", False),
             "self.use_nested_tensor (set in init) was not True"),
            (first.training, "self.layers[0] was in training mode"),
            (src.ndim != 3, f"input not batched; expected src.dim() of 3 but got {src.ndim}"),
            (key_padding_mask is None, "src_key_padding_mask was None")))
        if why_not:
            return why_not
        if mask_check and is_compiling():
            return "mask_check enabled with torch.compile or torch.export"
        if mask_check and not concrete_here(key_padding_mask._value):
            return "mask_check enabled with a traced src_key_padding_mask"
        if mask_check and not _left_aligned(key_padding_mask.logical_not()):
            return ("mask_check enabled, and src and src_key_padding_mask was not left "
                    "aligned")
        if mask is not None:
            return "src_key_padding_mask and mask were both supplied"
        if _autocast.is_enabled("cuda"):
            return "autocast is enabled"
        attn = first.self_attn
        return _grad_refusal((src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight,
                              attn.out_proj.bias, first.norm1.weight, first.norm1.bias,
                              first.norm2.weight, first.norm2.bias, first.linear1.weight,
                              first.linear1.bias, first.linear2.weight, first.linear2.bias))

    @staticmethod
    def _padded_positions(src: Tensor, key_padding_mask: Tensor) -> Tensor:
        """The (N, S) positions the nested tensor leaves out: each sequence keeps as many
        leading positions as its mask lets through (torch packs by count, not by place)."""
        lengths = key_padding_mask.logical_not().sum(1)
        return arange(src.shape[1], device=src.device).unsqueeze(0) >= lengths.unsqueeze(1)


def _left_aligned(valid: Tensor) -> bool:
    """Whether every row of the (N, S) bool ``valid`` is a run of True then a run of False."""
    return not bool((valid[:, 1:] & valid[:, :-1].logical_not()).any())


class TransformerDecoder(Module):
    """A stack of ``num_layers`` deep copies of ``decoder_layer`` (all starting from its
    values), then ``norm`` if given; ``tgt_is_causal=None`` compares ``tgt_mask`` with the
    causal mask.

    >>> import jaxgrad
    >>> from jaxgrad import nn
    >>> layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> decoder = nn.TransformerDecoder(layer, num_layers=2, norm=nn.LayerNorm(8))
    >>> memory, tgt = jaxgrad.rand(5, 2, 8), jaxgrad.rand(3, 2, 8)
    >>> decoder(tgt, memory).shape
    jaxgrad.Size([3, 2, 8])
    """

    __constants__ = ["norm"]

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        """``tgt`` through every layer (each attending to ``memory``), then ``norm``."""
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block (``linear2(dropout(activation(linear1(x))))``),
    each added to its input and layer-normalised after (or, with ``norm_first``, normalised
    before). ``activation`` is "relu", "gelu" or a callable; ``activation_relu_or_gelu`` records
    1 for relu, 2 for gelu (functions or modules), 0 otherwise. In eval mode without grad,
    batch_first inputs take torch's fused path (see Note [Transformer fast paths]).

    >>> import jaxgrad
    >>> from jaxgrad import nn
    >>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> out = layer(jaxgrad.rand(5, 2, 8))
    >>> out.shape, out.grad_fn.name(), layer.activation_relu_or_gelu
    (jaxgrad.Size([5, 2, 8]), 'NativeLayerNormBackward0', 1)
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        """The layer's output for ``src``; ``src_mask`` is the (S, S) or (N * heads, S, S)
        attention mask, ``src_key_padding_mask`` the (N, S) one, ``is_causal`` the hint that
        ``src_mask`` is causal."""
        src_key_padding_mask = F._canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                 _dtype_or_none(src_mask), "src_mask",
                                                 src.dtype)
        src_mask = F._canonical_mask(src_mask, "src_mask", None, "", src.dtype,
                                     check_other=False)
        if not self._fast_path_refusal(src):
            return self._fused_forward(src, src_mask, src_key_padding_mask)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _fast_path_refusal(self, src: Tensor) -> str:
        """Why torch does not run this layer as its fused kernel ("" when it does)."""
        attn = self.self_attn
        why_not = _first_refusal((
            (not _mha.get_fastpath_enabled(),
             "jaxgrad.backends.mha.get_fastpath_enabled() was not True"),
            (src.ndim != 3, f"input not batched; expected src.dim() of 3 but got {src.ndim}"),
            (self.training, "training is enabled"),
            (not attn.batch_first, "self_attn.batch_first was not True"),
            (attn.in_proj_bias is None, "self_attn was passed bias=False"),
            (not attn._qkv_same_embed_dim, "self_attn._qkv_same_embed_dim was not True"),
            (not self.activation_relu_or_gelu, "activation_relu_or_gelu was not True"),
            (self.norm1.eps != self.norm2.eps, "norm1.eps is not equal to norm2.eps"),
            (attn.num_heads % 2 == 1, "num_head is odd"),
            (_autocast.is_enabled("cuda"), "autocast is enabled"),
            (any(len(getattr(m, "_forward_hooks", {})) + len(getattr(m, "_forward_pre_hooks", {}))
                 for m in self.modules()), "forward pre-/hooks are attached to the module")))
        return why_not or _grad_refusal((
            src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight,
            attn.out_proj.bias, self.norm1.weight, self.norm1.bias, self.norm2.weight,
            self.norm2.bias, self.linear1.weight, self.linear1.bias, self.linear2.weight,
            self.linear2.bias))

    def _fused_forward(self, src: Tensor, src_mask: Tensor | None,
                       src_key_padding_mask: Tensor | None) -> Tensor:
        """torch's ``_transformer_encoder_layer_fwd``: the layer's arithmetic with the fused
        self-attention, relu or gelu as ``activation_relu_or_gelu`` says, ``norm1.eps`` for
        both norms, no module calls (so no hooks, no dropout)."""
        attn = self.self_attn
        merged, mask_type = attn.merge_masks(src_mask, src_key_padding_mask, src)
        act = F.gelu if self.activation_relu_or_gelu == 2 else F.relu
        shape, eps = (src.shape[-1],), self.norm1.eps

        def attend(x: Tensor) -> Tensor:
            return _native_self_attention(x, attn.num_heads, attn.in_proj_weight,
                                          attn.in_proj_bias, attn.out_proj.weight,
                                          attn.out_proj.bias, merged, mask_type)[0]

        def feed_forward(x: Tensor) -> Tensor:
            hidden = act(F.linear(x, self.linear1.weight, self.linear1.bias))
            return F.linear(hidden, self.linear2.weight, self.linear2.bias)

        def norm(x: Tensor, which: LayerNorm) -> Tensor:
            return F.layer_norm(x, shape, which.weight, which.bias, eps)

        if self.norm_first:
            x = src + attend(norm(src, self.norm1))
            return x + feed_forward(norm(x, self.norm2))
        x = norm(src + attend(src), self.norm1)
        return norm(x + feed_forward(x), self.norm2)

    def _sa_block(self, x: Tensor, attn_mask: Tensor | None,
                  key_padding_mask: Tensor | None, is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention over ``tgt``, attention to ``memory``, then a feed-forward block, each
    added to its input and layer-normalised after (or, with ``norm_first``, before).
    ``activation`` is "relu", "gelu" or a callable.

    >>> import jaxgrad
    >>> from jaxgrad import nn
    >>> layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16,
    ...                                    batch_first=True, norm_first=True)
    >>> memory, tgt = jaxgrad.rand(2, 5, 8), jaxgrad.rand(2, 3, 8)
    >>> out = layer(tgt, memory, tgt_is_causal=True,
    ...             tgt_mask=nn.Transformer.generate_square_subsequent_mask(3))
    >>> out.shape, out.grad_fn.name()
    (jaxgrad.Size([2, 3, 8]), 'AddBackward0')
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = (_get_activation_fn(activation) if isinstance(activation, str)
                           else activation)

    def __setstate__(self, state: dict) -> None:
        if "activation" not in state:
            state["activation"] = F.relu
        super().__setstate__(state)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        """The layer's output for ``tgt`` attending to ``memory``; masks as in
        ``Transformer.forward``."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                                    memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Tensor, attn_mask: Tensor | None,
                  key_padding_mask: Tensor | None, is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x: Tensor, mem: Tensor, attn_mask: Tensor | None,
                   key_padding_mask: Tensor | None, is_causal: bool = False) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)
