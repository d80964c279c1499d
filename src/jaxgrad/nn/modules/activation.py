"""Element-wise and softmax activations: ``ReLU``, ``Sigmoid``, ``Tanh``, ``GELU``, ``SiLU``,
``LeakyReLU``, ``ELU``, ``Softplus``, ``Hardtanh``, ``ReLU6``, ``Softmax``, ``LogSoftmax``,
``MultiheadAttention``, ``PReLU``, ``LogSigmoid``, ``SELU``, ``CELU``, ``Mish``, ``Hardswish``,
``Hardsigmoid``, ``Softsign``, ``Softshrink``, ``Hardshrink``, ``Tanhshrink``, ``Threshold``,
``GLU`` and ``Softmin``."""

from __future__ import annotations

import warnings
from typing import Any

from ..._core.grad_mode import is_grad_enabled
from ..._core.tensor import Tensor
from ..._engine import autocast as _autocast
from ..._functions.creation import empty
from ...backends import mha as _mha
from .. import functional, init
from .._functional.attention import _native_self_attention
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module


class _InplaceActivation(Module):
    """The ``inplace`` flag and repr of the activations that can write into their input."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        """The ``inplace=True`` shown in the repr, or nothing.

        >>> import jaxgrad
        >>> jaxgrad.nn.ReLU(inplace=True)
        ReLU(inplace=True)
        """
        return "inplace=True" if self.inplace else ""


class ReLU(_InplaceActivation):
    """``max(x, 0)`` element-wise (``inplace=True`` writes into the input).

    >>> import jaxgrad
    >>> jaxgrad.nn.ReLU()(jaxgrad.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``relu`` of ``input`` (written into it when ``inplace``)."""
        return input.relu_() if self.inplace else input.relu()


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Sigmoid()(jaxgrad.zeros(1))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``sigmoid`` of ``input``."""
        return input.sigmoid()


class Tanh(Module):
    """``tanh(x)`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Tanh()(jaxgrad.zeros(1))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``tanh`` of ``input``."""
        return input.tanh()


class GELU(Module):
    """Gaussian error linear unit, exact (``approximate='none'``) or with the tanh
    approximation (``approximate='tanh'``).

    >>> import jaxgrad
    >>> jaxgrad.nn.GELU(approximate="tanh")
    GELU(approximate='tanh')
    >>> jaxgrad.nn.GELU()(jaxgrad.zeros(1))
    tensor([0.])
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        """``functional.gelu`` of ``input`` with this module's ``approximate``."""
        return functional.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        """The ``approximate`` argument, as shown in the repr.

        >>> import jaxgrad
        >>> jaxgrad.nn.GELU().extra_repr()
        "approximate='none'"
        """
        return f"approximate={self.approximate!r}"


class SiLU(_InplaceActivation):
    """``x * sigmoid(x)`` element-wise (``inplace=True`` writes into the input).

    >>> import jaxgrad
    >>> jaxgrad.nn.SiLU()(jaxgrad.zeros(1))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.silu`` of ``input`` (written into it when ``inplace``)."""
        return functional.silu(input, inplace=self.inplace)


class Softmax(Module):
    """Softmax along ``dim`` (without ``dim``, torch's deprecated implicit choice: dim 0 for
    0-, 1- and 3-d inputs, else 1, with its warning).

    >>> import jaxgrad
    >>> jaxgrad.nn.Softmax(dim=0)(jaxgrad.zeros(2))
    tensor([0.5000, 0.5000])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input: Tensor) -> Tensor:
        """Softmax of ``input`` along ``dim``."""
        return functional.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        """The ``dim`` argument, as shown in the repr.

        >>> import jaxgrad
        >>> jaxgrad.nn.Softmax(dim=-1).extra_repr()
        'dim=-1'
        """
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """Log of the softmax along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.nn.LogSoftmax(dim=1)
    LogSoftmax(dim=1)
    """

    def forward(self, input: Tensor) -> Tensor:
        """Log-softmax of ``input`` along ``dim``.

        >>> import jaxgrad
        >>> jaxgrad.nn.LogSoftmax(dim=0)(jaxgrad.zeros(2)).exp()
        tensor([0.5000, 0.5000])
        """
        return functional.log_softmax(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    """Softmax over the channels of each location: dim -3 of a 3-d (C, H, W) or 4-d
    (N, C, H, W) input.

    >>> import jaxgrad
    >>> jaxgrad.nn.Softmax2d()(jaxgrad.zeros(1, 2, 1, 1)).flatten()
    tensor([0.5000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Softmax of ``input`` along its channel dim."""
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return functional.softmax(input, -3, _stacklevel=5)


class LeakyReLU(Module):
    """``x`` where positive, ``negative_slope * x`` elsewhere (``inplace=True`` writes into the
    input).

    >>> import jaxgrad
    >>> act = jaxgrad.nn.LeakyReLU(0.2, inplace=True)
    >>> act
    LeakyReLU(negative_slope=0.2, inplace=True)
    >>> act(jaxgrad.tensor([-1.0, 2.0]))
    tensor([-0.2000,  2.0000])
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """``functional.leaky_relu`` of ``input``."""
        return functional.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        """The slope (and ``inplace=True``), as shown in the repr."""
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace_str}"


class RReLU(Module):
    """Randomized leaky ReLU: ``x`` where positive; elsewhere ``x`` times a slope drawn
    uniformly from ``[lower, upper]`` per element in training, ``(lower + upper) / 2`` in eval
    (``inplace=True`` writes into the input).

    >>> import jaxgrad
    >>> act = jaxgrad.nn.RReLU(0.1, 0.3)
    >>> act
    RReLU(lower=0.1, upper=0.3)
    >>> act.eval()(jaxgrad.tensor([-2.0, 3.0]))
    tensor([-0.4000,  3.0000])
    """

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """``functional.rrelu`` of ``input``, drawing the slopes in training mode."""
        return functional.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        """The bounds (and ``inplace=True``), as shown in the repr."""
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace_str}"


class ELU(Module):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere.

    >>> import jaxgrad
    >>> jaxgrad.nn.ELU(alpha=0.5)
    ELU(alpha=0.5)
    >>> jaxgrad.nn.ELU()(jaxgrad.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """``functional.elu`` of ``input``."""
        return functional.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        """``alpha`` (and ``inplace=True``), as shown in the repr."""
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace_str}"


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``.

    >>> import jaxgrad
    >>> jaxgrad.nn.Softplus(beta=2.0)
    Softplus(beta=2.0, threshold=20.0)
    >>> jaxgrad.nn.Softplus()(jaxgrad.zeros(1))
    tensor([0.6931])
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        """``functional.softplus`` of ``input``."""
        return functional.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        """``beta`` and ``threshold``, as shown in the repr."""
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """``x`` clamped to ``[min_val, max_val]`` (the deprecated ``min_value``/``max_value``
    keywords still work, with torch's FutureWarning).

    >>> import jaxgrad
    >>> jaxgrad.nn.Hardtanh(-2, 2)
    Hardtanh(min_val=-2, max_val=2)
    >>> jaxgrad.nn.Hardtanh()(jaxgrad.tensor([-3.0, 0.5]))
    tensor([-1.0000,  0.5000])
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val "
                                 f"({self.min_val})")

    def forward(self, input: Tensor) -> Tensor:
        """``functional.hardtanh`` of ``input``."""
        return functional.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        """The bounds (and ``inplace=True``), as shown in the repr."""
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace_str}"


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``: ``Hardtanh(0.0, 6.0)``.

    >>> import jaxgrad
    >>> jaxgrad.nn.ReLU6()(jaxgrad.tensor([-1.0, 7.0]))
    tensor([0., 6.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        """``inplace=True``, or nothing.

        >>> import jaxgrad
        >>> jaxgrad.nn.ReLU6(inplace=True)
        ReLU6(inplace=True)
        """
        return "inplace=True" if self.inplace else ""


class MultiheadAttention(Module):
    """Attention of ``num_heads`` heads over ``embed_dim`` features, with torch's parameters
    (``in_proj_weight``/``in_proj_bias`` packed for q, k, v, or ``q_proj_weight``,
    ``k_proj_weight``, ``v_proj_weight`` when ``kdim``/``vdim`` differ; ``out_proj``), their
    initialisation (Xavier-uniform projections, zero biases) and ``forward``'s masks. Inputs are
    (L, N, E), or (N, L, E) with ``batch_first``.

    >>> import jaxgrad
    >>> mha = jaxgrad.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> [name for name, _ in mha.named_parameters()]
    ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
    >>> x = jaxgrad.ones(3, 5, 8)
    >>> out, weights = mha(x, x, x)
    >>> out.shape, weights.shape
    (jaxgrad.Size([3, 5, 8]), jaxgrad.Size([3, 5, 5]))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError("embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **factory)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """The attention output and (with ``need_weights``) the attention weights, averaged
        over the heads unless ``average_attn_weights=False``. Self-attention in eval mode without
        grad takes torch's fast path (see ``_fast_path_refusal``): boolean reading of the masks,
        no causal hint, NaN for a query whose keys are all masked."""
        batched = query.ndim == 3
        float_masks = (attn_mask is not None and attn_mask.is_floating_point()) or (
            key_padding_mask is not None and key_padding_mask.is_floating_point())
        key_padding_mask = functional._canonical_mask(
            key_padding_mask, "key_padding_mask",
            None if attn_mask is None else attn_mask.dtype, "attn_mask", query.dtype)
        attn_mask = functional._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                               check_other=False)
        if not self._fast_path_refusal(query, key, value, float_masks) and (
                self.in_proj_bias is not None and self.in_proj_weight is not None):
            merged, mask_type = self.merge_masks(attn_mask, key_padding_mask, query)
            return _native_self_attention(
                query, self.num_heads, self.in_proj_weight, self.in_proj_bias,
                self.out_proj.weight, self.out_proj.bias, merged, mask_type, need_weights,
                average_attn_weights)
        if self.batch_first and batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = {} if self._qkv_same_embed_dim else {
            "use_separate_proj_weight": True, "q_proj_weight": self.q_proj_weight,
            "k_proj_weight": self.k_proj_weight, "v_proj_weight": self.v_proj_weight}
        out, weights = functional.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            average_attn_weights=average_attn_weights, is_causal=is_causal, **separate)
        if self.batch_first and batched:
            return out.transpose(1, 0), weights
        return out, weights

    def _fast_path_refusal(self, query: Tensor, key: Tensor, value: Tensor,
                           float_masks: bool) -> str:
        """Why torch's fused self-attention is not taken ("" when it is): it needs the switch
        of ``jaxgrad.backends.mha`` on, batched (N, L, E) self-attention (one tensor as query,
        key and value) in eval mode, packed projections of the input's dtype, an even number of
        heads, no bias_k/bias_v/zero attention, boolean masks, no autocast, and no gradient to
        record (grad mode off, or nothing requiring grad)."""
        bias, weight = self.in_proj_bias, self.in_proj_weight
        checks = (
            (not _mha.get_fastpath_enabled(), "jaxgrad.backends.mha.get_fastpath_enabled() "
                                              "was not True"),
            (query.ndim != 3, "input not batched"),
            (query is not key or key is not value, "non-self attention was used"),
            (bias is not None and query.dtype != bias.dtype, "in_proj_bias dtype differs"),
            (weight is None, "in_proj_weight was None"),
            (weight is not None and query.dtype != weight.dtype, "in_proj_weight dtype differs"),
            (self.training, "training is enabled"),
            (self.num_heads % 2 != 0, "self.num_heads is not even"),
            (not self.batch_first, "batch_first was not True"),
            (self.bias_k is not None or self.bias_v is not None, "self.bias_k was not None"),
            (self.add_zero_attn, "add_zero_attn was enabled"),
            (not self._qkv_same_embed_dim, "_qkv_same_embed_dim was not True"),
            (_autocast.is_enabled("cuda"), "autocast is enabled"),
            (float_masks, "floating-point masks are not supported for fast path."))
        for failed, reason in checks:
            if failed:
                return reason
        tensors = (query, weight, bias, self.out_proj.weight, self.out_proj.bias)
        if is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors):
            return ("grad is enabled and at least one of query or the input/output projection "
                    "weights or biases requires_grad")
        return ""

    def merge_masks(self, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                    query: Tensor) -> tuple[Tensor | None, int | None]:
        """The fast path's one mask and its type: the (N, L) ``key_padding_mask`` alone (type
        1), or the (L, L) or (N * heads, L, L) ``attn_mask`` as (N, heads, L, L), with the key
        padding mask added when both are given (type 2); (None, None) without masks.

        >>> import jaxgrad
        >>> mha = jaxgrad.nn.MultiheadAttention(4, 2, batch_first=True)
        >>> mask, kind = mha.merge_masks(jaxgrad.zeros(3, 3), jaxgrad.zeros(2, 3),
        ...                              jaxgrad.ones(2, 3, 4))
        >>> mask.shape, kind
        (jaxgrad.Size([2, 2, 3, 3]), 2)
        """
        mask_type, merged = None, None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.ndim == 3:
                merged = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                merged = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.view(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged, mask_type


class PReLU(Module):
    """``x`` where positive, ``weight * x`` elsewhere; ``weight`` holds ``num_parameters``
    learned slopes (one, or one per channel), initialised to ``init``.

    >>> import jaxgrad
    >>> m = jaxgrad.nn.PReLU()
    >>> m
    PReLU(num_parameters=1)
    >>> m(jaxgrad.tensor([-4.0, 2.0]))
    tensor([-1.,  2.], grad_fn=<PreluKernelBackward0>)
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every slope to ``init``."""
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        """``functional.prelu`` of ``input`` with the learned slopes."""
        return functional.prelu(input, self.weight)

    def extra_repr(self) -> str:
        """The ``num_parameters``, as shown in the repr."""
        return f"num_parameters={self.num_parameters}"


class LogSigmoid(Module):
    """``log(sigmoid(x))`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.LogSigmoid()(jaxgrad.zeros(1))
    tensor([-0.6931])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.logsigmoid`` of ``input``."""
        return functional.logsigmoid(input)


class SELU(_InplaceActivation):
    """Scaled ELU with the self-normalising constants.

    >>> import jaxgrad
    >>> jaxgrad.nn.SELU(inplace=True)
    SELU(inplace=True)
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.selu`` of ``input``."""
        return functional.selu(input, self.inplace)


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.CELU(0.5)
    CELU(alpha=0.5)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """``functional.celu`` of ``input``."""
        return functional.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        """``alpha`` (and ``inplace=True``), as shown in the repr."""
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Mish(_InplaceActivation):
    """``x * tanh(softplus(x))`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Mish()(jaxgrad.zeros(1))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.mish`` of ``input``."""
        return functional.mish(input, self.inplace)


class Hardswish(Module):
    """``x * relu6(x + 3) / 6`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Hardswish()(jaxgrad.tensor([4.0]))
    tensor([4.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """``functional.hardswish`` of ``input``."""
        return functional.hardswish(input, self.inplace)


class Hardsigmoid(Hardswish):
    """``relu6(x + 3) / 6`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Hardsigmoid()(jaxgrad.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.hardsigmoid`` of ``input``."""
        return functional.hardsigmoid(input, self.inplace)


class Softsign(Module):
    """``x / (1 + |x|)`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Softsign()(jaxgrad.tensor([1.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.softsign`` of ``input``."""
        return functional.softsign(input)


class Softshrink(Module):
    """Shrink towards 0 by ``lambd``, zeroing ``[-lambd, lambd]``.

    >>> import jaxgrad
    >>> jaxgrad.nn.Softshrink()
    Softshrink(0.5)
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        """``functional.softshrink`` of ``input``."""
        return functional.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        """``lambd``, as shown in the repr."""
        return str(self.lambd)


class Hardshrink(Softshrink):
    """Zero ``[-lambd, lambd]``, keep the rest.

    >>> import jaxgrad
    >>> jaxgrad.nn.Hardshrink(0.3)(jaxgrad.tensor([0.2, 1.0]))
    tensor([0., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.hardshrink`` of ``input``."""
        return functional.hardshrink(input, self.lambd)


class Tanhshrink(Module):
    """``x - tanh(x)`` element-wise.

    >>> import jaxgrad
    >>> jaxgrad.nn.Tanhshrink()(jaxgrad.zeros(1))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """``functional.tanhshrink`` of ``input``."""
        return functional.tanhshrink(input)


class Threshold(Module):
    """``value`` where ``x <= threshold``, ``x`` elsewhere.

    >>> import jaxgrad
    >>> jaxgrad.nn.Threshold(0.1, 20)
    Threshold(threshold=0.1, value=20)
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """``functional.threshold`` of ``input``."""
        return functional.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        """The threshold, value (and ``inplace=True``), as shown in the repr."""
        inplace = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace}"


class GLU(Module):
    """Gated linear unit along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.nn.GLU()
    GLU(dim=-1)
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        """``functional.glu`` of ``input``."""
        return functional.glu(input, self.dim)

    def extra_repr(self) -> str:
        """``dim``, as shown in the repr."""
        return f"dim={self.dim}"


class Softmin(Module):
    """Softmax of ``-x`` along ``dim``.

    >>> import jaxgrad
    >>> jaxgrad.nn.Softmin(dim=1)
    Softmin(dim=1)
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        """``functional.softmin`` of ``input`` along ``dim``."""
        return functional.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        """``dim``, as shown in the repr."""
        return f"dim={self.dim}"
