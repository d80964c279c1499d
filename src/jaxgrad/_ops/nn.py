"""Neural-network ops (``jaxgrad.nn.functional``): linear algebra, activations, losses,
convolution, pooling, normalisation and embedding rows.

What each formula names is what torch saves (derivatives.yaml): ``addmm`` saves mat1/mat2,
``gelu``/``silu`` save self, losses save self and target (and weights), convolution saves input
and weight, max pooling saves self and the indices, the native norms save input, weight and the
mean/rstd outputs. Reductions are torch's enum: 0 none, 1 mean, 2 sum.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from .._core import jax_compat as compat
from ._table import Op
from .half_precision import HALF_DTYPES, in_float32, times_scalar
from .reductions import UNSAFE_SPLIT, _vector_norm, _vector_norm_grad

NONE, MEAN, SUM = 0, 1, 2


def _vjp(fn, argnum, grad, *args, **static):
    """Gradient of ``fn(*args, **static)`` w.r.t. ``args[argnum]`` at cotangent ``grad``."""

    def partial(x):
        return fn(*args[:argnum], x, *args[argnum + 1:], **static)

    return jax.vjp(partial, args[argnum])[1](grad)[0]


def _reduce(loss, reduction):
    if reduction == MEAN:
        return jnp.mean(loss)
    if reduction == SUM:
        return jnp.sum(loss)
    return loss


def _reduced_grad(grad, shape, reduction):
    """The incoming gradient of a reduced loss, spread back over the elementwise losses."""
    if reduction == MEAN:
        return jnp.broadcast_to(grad / max(math.prod(shape), 1), shape)
    return jnp.broadcast_to(grad, shape)


# --- linear ---------------------------------------------------------------------------------

_TRILINEAR = "bi,oij,bj->bo"
TRILINEAR = Op(
    "_trilinear", "TrilinearBackward0",
    lambda i1, i2, i3: jnp.einsum(_TRILINEAR, i1, i2, i3), inputs=("i1", "i2", "i3"),
    grads={"i1": lambda grad, i2, i3: jnp.einsum("bo,oij,bj->bi", grad, i2, i3),
           "i2": lambda grad, i1, i3: jnp.einsum("bo,bi,bj->oij", grad, i1, i3),
           "i3": lambda grad, i1, i2: jnp.einsum("bo,bi,oij->bj", grad, i1, i2)},
    grad_nodes={"i1": "TrilinearBackward0", "i2": "TrilinearBackward0",
                "i3": "TrilinearBackward0"})

# --- activations ----------------------------------------------------------------------------


def _gelu(x, approximate):
    """ATen's GELU kernel's expression (``x * 0.5 * (1 + erf(x / sqrt(2)))``, or its tanh
    approximation), so that half precision rounds as torch's does."""
    if approximate == "tanh":
        inner = np.sqrt(2 / np.pi) * (x + 0.044715 * (x * x * x))
        return 0.5 * x * (1 + jnp.tanh(inner.astype(x.dtype)))
    return x * 0.5 * (1 + jax.lax.erf(x * np.asarray(np.sqrt(0.5), x.dtype)))


# activations compute half-precision inputs in float32 and round once (``in_float32``), as
# torch's CPU kernels do
GELU = Op("gelu", "GeluBackward0", in_float32(_gelu), promote="float",
          grads={"self": in_float32(lambda grad, self, approximate: _vjp(
              _gelu, 0, grad, self, approximate=approximate))},
          grad_nodes={"self": "GeluBackwardBackward0"})
SILU = Op("silu", "SiluBackward0", in_float32(jax.nn.silu), promote="float",
          grads={"self": in_float32(lambda grad, self: grad * jax.nn.sigmoid(self) * (
              1 + self * (1 - jax.nn.sigmoid(self))))}, grad_nodes={"self": "MulBackward0"})



def _leaky_relu_grad(grad, x, negative_slope):
    """leaky_relu_backward: ``grad`` where ``x > 0``, else ``grad * negative_slope``."""
    return jnp.where(x > 0, grad, times_scalar(grad, negative_slope))


LEAKY_RELU = Op("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
                "LeakyReluBackward0",
                in_float32(lambda x, negative_slope: jnp.where(x > 0, x, x * negative_slope)),
                grads={"self": lambda grad, self, negative_slope: _leaky_relu_grad(
                    grad, self, negative_slope)}, grad_nodes={"self": "LeakyReluBackwardBackward0"})


def refuse_negative_inplace_slope(negative_slope) -> None:
    """torch's leaky_relu_backward with is_result=true (the in-place forms of leaky_relu and
    eval-mode rrelu): a negative slope cannot be undone from the result."""
    if negative_slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is "
            "not supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead. File an issue at "
            "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
            "backward calculation with negative slope")


def _inplace_leaky_relu_grad(grad, result, negative_slope):
    refuse_negative_inplace_slope(negative_slope)
    return _leaky_relu_grad(grad, result, negative_slope)


# leaky_relu_ saves its result (derivatives.yaml); the slope is static so that the backward can
# refuse a negative one as torch's does
LEAKY_RELU_ = Op("leaky_relu_", "LeakyReluBackward1",
                 in_float32(lambda x, negative_slope: jnp.where(x > 0, x, x * negative_slope)),
                 aux=(), grads={"self": _inplace_leaky_relu_grad})


def _elu(x, alpha, scale, input_scale):
    neg = alpha * scale * jnp.expm1(jnp.minimum(x, 0) * input_scale)
    return jnp.where(x > 0, x * scale, neg).astype(x.dtype)


def _elu_grad(grad, self, alpha, scale, input_scale):
    """elu_backward with is_result=false."""
    neg = grad * input_scale * alpha * scale * jnp.exp(jnp.minimum(self, 0) * input_scale)
    return jnp.where(self > 0, grad * scale, neg)


ELU = Op("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
         "EluBackward0", in_float32(_elu), grads={"self": in_float32(_elu_grad)},
         grad_nodes={"self": "EluBackwardBackward0"})


def _inplace_elu_grad(grad, result, alpha, scale, input_scale):
    """elu_backward with is_result=true: the negative branch from the result."""
    if alpha < 0:
        raise RuntimeError(
            "In-place elu backward calculation is triggered with a negative slope which is not "
            "supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead.")
    return jnp.where(result > 0, grad * scale, grad * input_scale * (result + alpha * scale))


ELU_ = Op("elu_", "EluBackward1", _elu, aux=(), grads={"self": _inplace_elu_grad})


def _softplus(x, beta, threshold):
    scaled = x * beta
    soft = jnp.log1p(jnp.exp(jnp.minimum(scaled, threshold))) / beta
    return jnp.where(scaled > threshold, x, soft).astype(x.dtype)


def _softplus_grad(grad, self, beta, threshold):
    """softplus_backward: ``grad * sigmoid(beta * x)``, ``grad`` past the threshold."""
    scaled = self * beta
    z = jnp.exp(jnp.minimum(scaled, threshold))
    return jnp.where(scaled > threshold, grad, grad * z / (z + 1))


SOFTPLUS = Op("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
              "SoftplusBackward0", in_float32(_softplus),
              grads={"self": in_float32(_softplus_grad)},
              grad_nodes={"self": "SoftplusBackwardBackward0"})


def _hardtanh_grad(grad, self, min_val, max_val):
    """hardtanh_backward: zero where ``x <= min_val`` or ``x >= max_val``."""
    return jnp.where((self <= min_val) | (self >= max_val), jnp.zeros((), grad.dtype), grad)


# hardtanh_ has the same node: autograd saves a copy of the input for it (see apply_inplace)
HARDTANH = Op("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
              "HardtanhBackward0",
              lambda x, min_val, max_val: jnp.clip(x, min_val, max_val).astype(x.dtype),
              grads={"self": _hardtanh_grad}, grad_nodes={"self": "HardtanhBackwardBackward0"})


def _safe_softmax(x, dim):
    """softmax that gives 0 (not NaN) on a slice that is entirely -inf (torch's _safe_softmax)."""
    out = jax.nn.softmax(x, axis=dim)
    masked = jnp.all(x == -jnp.inf, axis=dim, keepdims=True)
    return jnp.where(masked, jnp.zeros((), out.dtype), out)


SAFE_SOFTMAX = Op("_safe_softmax", "SafeSoftmaxBackward0", _safe_softmax,
                  grads={"self": lambda grad, result, dim: result * (
                      grad - jnp.sum(grad * result, axis=dim, keepdims=True))})

# --- losses ---------------------------------------------------------------------------------

MSE_LOSS = Op(
    "mse_loss", "MseLossBackward0",
    lambda x, target, reduction: _reduce((x - target) ** 2, reduction),
    inputs=("self", "target"), promote="common",
    grads={"self": lambda grad, self, target, reduction: 2 * (self - target) * _reduced_grad(
        grad, self.shape, reduction),
        "target": lambda grad, self, target, reduction: -2 * (self - target) * _reduced_grad(
            grad, self.shape, reduction)},
    grad_nodes={"self": "MseLossBackwardBackward0", "target": "MseLossBackwardBackward0"})


def _class_weights(target, weight, ignore_index, dtype):
    """Per-element weights of nll_loss: weight[target], zero where target == ignore_index."""
    keep = target != ignore_index
    safe = jnp.where(keep, target, 0)
    w = jnp.ones((), dtype) if weight is None else weight[safe]
    return jnp.where(keep, w, jnp.zeros((), dtype)), safe


def _nll_loss(x, target, weight, reduction, ignore_index):
    class_dim = 0 if x.ndim == 1 else 1
    w, safe = _class_weights(target, weight, ignore_index, x.dtype)
    picked = jnp.take_along_axis(x, jnp.expand_dims(safe, class_dim), class_dim)
    loss = -jnp.squeeze(picked, class_dim) * w
    total_weight = jnp.sum(w)
    if reduction == MEAN:
        return jnp.sum(loss) / total_weight, total_weight
    if reduction == SUM:
        return jnp.sum(loss), total_weight
    return loss, total_weight


def _nll_loss_grad(grad, self, target, weight, total_weight, reduction, ignore_index):
    class_dim = 0 if self.ndim == 1 else 1
    w, safe = _class_weights(target, weight, ignore_index, self.dtype)
    scale = -w * grad
    if reduction == MEAN:
        scale = scale / total_weight
    # torch's kernel skips ignored targets: their gradient is 0, even when all are (0 / 0)
    scale = jnp.where(target != ignore_index, scale, jnp.zeros((), self.dtype))
    one_hot = jnp.expand_dims(safe, class_dim) == jnp.arange(self.shape[class_dim]).reshape(
        (-1,) + (1,) * (self.ndim - class_dim - 1))
    return jnp.where(one_hot, jnp.expand_dims(scale, class_dim), jnp.zeros((), self.dtype))


def _nll_op(node):
    return Op("nll_loss", node, _nll_loss, aux=("target", "weight"),
              outputs=("result", "total_weight"), nondiff_outputs=(1,), saves=("self",),
              grads={"self": _nll_loss_grad},
              grad_nodes={"self": node.replace("Backward0", "BackwardBackward0")})


NLL_LOSS = _nll_op("NllLossBackward0")
NLL_LOSS2D = _nll_op("NllLoss2DBackward0")

_EPSILON = 1e-12


def _bce(x, target, weight, reduction):
    log_x = jnp.maximum(jnp.log(x), -100)
    log_1mx = jnp.maximum(jnp.log1p(-x), -100)
    loss = -(target * log_x + (1 - target) * log_1mx)
    return _reduce(_times_in_place(loss, weight), reduction)


def _times_in_place(x, factor):
    """``x.mul_(factor)`` as torch's loss kernels apply a weight: in ``x``'s dtype."""
    return x if factor is None else x * factor.astype(x.dtype)


def _bce_self_grad(grad, self, target, weight, reduction):
    g = _reduced_grad(grad, self.shape, reduction)
    out = g * (self - target) / jnp.maximum((1 - self) * self, _EPSILON)
    return _times_in_place(out, weight)


def _bce_target_grad(grad, self, target, weight, reduction):
    g = _reduced_grad(grad, self.shape, reduction)
    out = -(jnp.log(self) - jnp.log1p(-self)) * g
    return _times_in_place(out, weight)


def _mean_divides(reduction):
    """The node of torch's loss formulas that end ``* grad``, then ``/ numel`` for a mean."""
    return "DivBackward1" if reduction == MEAN else "MulBackward0"


BINARY_CROSS_ENTROPY = Op(
    "binary_cross_entropy", "BinaryCrossEntropyBackward0", _bce, inputs=("self", "target"),
    aux=("weight",), grads={"self": _bce_self_grad, "target": _bce_target_grad},
    grad_nodes={"self": "BinaryCrossEntropyBackwardBackward0", "target": _mean_divides})


def _bce_logits(x, target, weight, pos_weight, reduction):
    log_sigmoid = jax.nn.log_sigmoid(x)
    if pos_weight is not None:
        log_sigmoid = _times_in_place(log_sigmoid, (pos_weight - 1) * target + 1)
    loss = (1 - target) * x - log_sigmoid
    return _reduce(_times_in_place(loss, weight), reduction)


def _bce_logits_grad(argnum):
    def formula(grad, self, target, weight, pos_weight, reduction):
        return _vjp(_bce_logits, argnum, grad, self, target, weight, pos_weight,
                    reduction=reduction)

    return formula


BINARY_CROSS_ENTROPY_WITH_LOGITS = Op(
    "binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0", _bce_logits,
    inputs=("self", "target"), aux=("weight", "pos_weight"),
    grads={"self": _bce_logits_grad(0), "target": _bce_logits_grad(1)},
    grad_nodes={"self": _mean_divides, "target": _mean_divides})

def _smooth_l1(x, target, reduction, beta):
    diff = jnp.abs(x - target)
    return _reduce(jnp.where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta), reduction)


def _smooth_l1_grad(sign):
    def formula(grad, self, target, reduction, beta):
        x = (self - target) * sign
        g = _reduced_grad(grad, self.shape, reduction)
        return jnp.where(x < -beta, -g, jnp.where(x > beta, g, x * g / beta))

    return formula


SMOOTH_L1_LOSS = Op("smooth_l1_loss", "SmoothL1LossBackward0", _smooth_l1,
                    inputs=("self", "target"), promote="common",
                    grads={"self": _smooth_l1_grad(1), "target": _smooth_l1_grad(-1)},
                    grad_nodes={"self": "SmoothL1LossBackwardBackward0",
                                "target": "SmoothL1LossBackwardBackward0"})


def _huber(x, target, reduction, delta):
    diff = jnp.abs(x - target)
    return _reduce(jnp.where(diff < delta, 0.5 * diff * diff, delta * (diff - 0.5 * delta)),
                   reduction)


def _huber_grad(sign):
    def formula(grad, self, target, reduction, delta):
        x = (self - target) * sign
        g = _reduced_grad(grad, self.shape, reduction)
        return jnp.where(x < -delta, -delta * g, jnp.where(x > delta, delta * g, x * g))

    return formula


HUBER_LOSS = Op("huber_loss", "HuberLossBackward0", _huber, inputs=("self", "target"),
                promote="common", grads={"self": _huber_grad(1), "target": _huber_grad(-1)},
                grad_nodes={"self": "HuberLossBackwardBackward0",
                            "target": "HuberLossBackwardBackward0"})


# --- convolution ----------------------------------------------------------------------------

_CONV_DIMS = {1: ("NCH", "OIH", "NCH"), 2: ("NCHW", "OIHW", "NCHW"),
              3: ("NCDHW", "OIDHW", "NCDHW")}


def _conv(x, weight, bias, stride, padding, dilation, groups):
    out = jax.lax.conv_general_dilated(
        x, weight, window_strides=stride, padding=padding, rhs_dilation=dilation,
        feature_group_count=groups, dimension_numbers=_CONV_DIMS[x.ndim - 2],
        precision=jax.lax.Precision.HIGHEST)
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * (x.ndim - 2))
    return out


def _conv_grad(argnum):
    def formula(grad, input, weight, stride, padding, dilation, groups):
        return _vjp(_conv, argnum, grad, input, weight, None, stride=stride, padding=padding,
                    dilation=dilation, groups=groups)

    return formula


CONVOLUTION = Op(
    "convolution", "ConvolutionBackward0", _conv, inputs=("input", "weight", "bias"),
    promote="common",
    grads={"input": _conv_grad(0), "weight": _conv_grad(1),
           "bias": lambda grad: jnp.sum(grad, axis=(0, *range(2, grad.ndim)))},
    grad_nodes={"*": "ConvolutionBackwardBackward0"})



def _conv_transpose(x, weight, bias, stride, padding, output_padding, dilation, groups):
    """The gradient of a convolution w.r.t. its input: ``x`` dilated by ``stride`` and
    convolved with the flipped kernel, in/out channels swapped per group (the weight is
    (in, out / groups, k...))."""
    n = x.ndim - 2
    c_in, c_out_g = weight.shape[:2]
    kernel = weight.shape[2:]
    w = weight.reshape((groups, c_in // groups, c_out_g) + kernel)
    w = jnp.swapaxes(w, 1, 2).reshape((groups * c_out_g, c_in // groups) + kernel)
    w = jnp.flip(w, axis=tuple(range(2, 2 + n)))
    pads = [(d * (k - 1) - p, d * (k - 1) - p + op)
            for k, p, op, d in zip(kernel, padding, output_padding, dilation)]
    out = jax.lax.conv_general_dilated(
        x, w, window_strides=(1,) * n, padding=pads, lhs_dilation=stride, rhs_dilation=dilation,
        feature_group_count=groups, dimension_numbers=_CONV_DIMS[n],
        precision=jax.lax.Precision.HIGHEST)
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * n)
    return out


def _conv_transpose_grad(argnum):
    def formula(grad, input, weight, stride, padding, output_padding, dilation, groups):
        return _vjp(_conv_transpose, argnum, grad, input, weight, None, stride=stride,
                    padding=padding, output_padding=output_padding, dilation=dilation,
                    groups=groups)

    return formula


# torch's ``convolution(..., transposed=True, ...)``: the same node as the forward convolution
CONVOLUTION_TRANSPOSE = Op(
    "convolution", "ConvolutionBackward0", _conv_transpose, inputs=("input", "weight", "bias"),
    promote="common",
    grads={"input": _conv_transpose_grad(0), "weight": _conv_transpose_grad(1),
           "bias": lambda grad: jnp.sum(grad, axis=(0, *range(2, grad.ndim)))},
    grad_nodes={"*": "ConvolutionBackwardBackward0"})

# --- attention ------------------------------------------------------------------------------


def _attention(query, key, value, attn_mask, is_causal, scale):
    """Softmax attention of (..., L, E) queries over (..., S, E) keys, with (..., S, Ev) values;
    key/value heads are repeated to the query's (grouped-query attention). A bool mask keeps
    True positions, a float mask is added; a row with nothing to attend to gives 0, as torch's
    CPU kernel does. Returns the output and the log-sum-exp of each row."""
    if key.shape[-3] != query.shape[-3]:
        repeats = query.shape[-3] // key.shape[-3]
        key = jnp.repeat(key, repeats, axis=-3)
        value = jnp.repeat(value, repeats, axis=-3)
    factor = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = jnp.einsum("...le,...se->...ls", query, key,
                        precision=jax.lax.Precision.HIGHEST) * factor
    neg_inf = jnp.asarray(-jnp.inf, scores.dtype)
    if is_causal:
        scores = jnp.where(np.tril(np.ones(scores.shape[-2:], bool)), scores, neg_inf)
    if attn_mask is not None:
        if attn_mask.dtype == jnp.bool_:
            scores = jnp.where(attn_mask, scores, neg_inf)
        else:
            scores = scores + attn_mask.astype(scores.dtype)
    top = jax.lax.stop_gradient(jnp.max(scores, axis=-1, keepdims=True))
    top = jnp.where(jnp.isfinite(top), top, jnp.zeros((), scores.dtype))
    weights = jnp.exp(scores - top)
    total = jnp.sum(weights, axis=-1, keepdims=True)
    safe_total = jnp.where(total == 0, jnp.ones((), total.dtype), total)
    out = jnp.einsum("...ls,...sv->...lv", weights / safe_total, value,
                     precision=jax.lax.Precision.HIGHEST)
    return out, (top + jnp.log(total))[..., 0]


def _attention_grad(argnum):
    def formula(grad, query, key, value, attn_mask, is_causal, scale):
        def output(*qkv):
            return _attention(*qkv, attn_mask, is_causal, scale)[0]

        qkv = [query, key, value]
        return jax.vjp(lambda x: output(*qkv[:argnum], x, *qkv[argnum + 1:]), qkv[argnum])[1](
            grad)[0]

    return formula


# torch's fused CPU kernel ``_scaled_dot_product_flash_attention_for_cpu``: the mask is not
# differentiable; the backward saves the inputs, the mask and both outputs
SDPA_FLASH_CPU = Op(
    "_scaled_dot_product_flash_attention_for_cpu",
    "ScaledDotProductFlashAttentionForCpuBackward0", _attention,
    inputs=("query", "key", "value"), aux=("attn_mask",), outputs=("output", "logsumexp"),
    nondiff_outputs=(1,), saves=("output", "logsumexp"),
    grads={"query": _attention_grad(0), "key": _attention_grad(1),
           "value": _attention_grad(2)}, grad_nodes={"*": "NotImplemented"})

# --- padding --------------------------------------------------------------------------------
# ``pad`` / ``padding`` is torch's flat list, last dim first: (left, right, top, bottom, ...).


def _pairs(pad, ndim):
    """torch's flat pad list as one (before, after) pair per dim of an ``ndim``-D array."""
    pairs = [(0, 0)] * (ndim - len(pad) // 2)
    pairs += [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(len(pad) // 2))]
    return pairs


def _constant_pad_nd(x, value, pad):
    config = [(lo, hi, 0) for lo, hi in _pairs(pad, x.ndim)]
    return jax.lax.pad(x, jnp.asarray(value, x.dtype), config)


def _constant_pad_nd_grad(grad, pad):
    """constant_pad_nd_backward: the gradient cropped back (or zero-padded where the forward
    cropped), i.e. constant_pad_nd with the pads negated."""
    config = [(-lo, -hi, 0) for lo, hi in _pairs(pad, grad.ndim)]
    return jax.lax.pad(grad, jnp.zeros((), grad.dtype), config)


CONSTANT_PAD_ND = Op("constant_pad_nd", "ConstantPadNdBackward0", _constant_pad_nd,
                     aux=("value",), grads={"self": _constant_pad_nd_grad},
                     grad_nodes={"self": "ConstantPadNdBackward0"})


def _reflect_index(size, lo, hi):
    """Input position read by each output position of torch's reflection_pad kernels."""
    j = np.arange(size + lo + hi)
    i = np.where(j < lo, 2 * lo - j, np.where(j < size + lo, j, 2 * (size + lo - 1) - j))
    return i - max(lo, 0) + max(-lo, 0)


def _replicate_index(size, lo, hi):
    """Input position read by each output position of torch's replication_pad kernels."""
    j = np.arange(size + lo + hi)
    i = np.clip(j, lo, size + lo - 1)
    return i - max(lo, 0) + max(-lo, 0)


def _gather_pad(index_fn):
    def forward(x, padding):
        for axis, (lo, hi) in enumerate(_pairs(padding, x.ndim)):
            if (lo, hi) != (0, 0):
                x = jnp.take(x, index_fn(x.shape[axis], lo, hi), axis=axis)
        return x

    return forward


_reflection_pad = _gather_pad(_reflect_index)
_replication_pad = _gather_pad(_replicate_index)


def _pad_op(forward, name, n):
    """A reflection/replication row: both save ``self`` (derivatives.yaml) and scatter-add the
    gradient back to the positions each output read."""
    return Op(f"{name}_pad{n}d", f"{name.capitalize()}Pad{n}DBackward0", forward,
              grads={"self": lambda grad, self, padding: _vjp(forward, 0, grad, self,
                                                              padding=padding)},
              grad_nodes={"self": f"{name.capitalize()}Pad{n}DBackwardBackward0"})


REFLECTION_PAD = {n: _pad_op(_reflection_pad, "reflection", n) for n in (1, 2, 3)}
REPLICATION_PAD = {n: _pad_op(_replication_pad, "replication", n) for n in (1, 2, 3)}

# --- pooling --------------------------------------------------------------------------------


def pooled_size(size, kernel, stride, pad, dilation, ceil_mode):
    """torch's pooling_output_shape."""
    numerator = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = numerator // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _window_positions(size, kernel, stride, pad, dilation, ceil_mode):
    """(out, kernel) input coordinates each window reads (may fall outside [0, size))."""
    out = pooled_size(size, kernel, stride, pad, dilation, ceil_mode)
    return np.arange(out)[:, None] * stride - pad + np.arange(kernel)[None, :] * dilation


def _windows(x, kernel_size, stride, padding, dilation, ceil_mode, fill):
    """Windows of the last ``len(kernel_size)`` dims: (..., *out, prod(kernel)) values, flat
    indices into those dims, validity."""
    n = len(kernel_size)
    sizes = x.shape[x.ndim - n:]
    valid, flat = np.ones((), bool), np.zeros((), np.int64)
    for d, args in enumerate(zip(sizes, kernel_size, stride, padding, dilation)):
        pos = _window_positions(*args, ceil_mode)
        shape = [1] * (2 * n)
        shape[d], shape[n + d] = pos.shape
        c = pos.reshape(shape)
        valid = valid & (c >= 0) & (c < args[0])
        flat = flat * args[0] + np.clip(c, 0, args[0] - 1)
    flat = np.where(valid, flat, 0)
    shape = flat.shape[:n] + (-1,)
    gathered = x.reshape(x.shape[:x.ndim - n] + (math.prod(sizes),))[..., flat.reshape(-1)]
    gathered = gathered.reshape(x.shape[:x.ndim - n] + shape)
    valid = valid.reshape(shape)
    return jnp.where(valid, gathered, jnp.asarray(fill, x.dtype)), flat.reshape(shape), valid


def max_pool(x, kernel_size, stride, padding, dilation, ceil_mode):
    """Max pooling over the last ``len(kernel_size)`` dims: values and flat indices."""
    values, flat, _ = _windows(x, kernel_size, stride, padding, dilation, ceil_mode, -jnp.inf)
    best = compat.argmax(values, -1)
    indices = jnp.take_along_axis(jnp.broadcast_to(flat, values.shape), best[..., None], -1)
    return jnp.max(values, axis=-1), indices[..., 0].astype(jnp.int64)


def max_pool_grad(n):
    """The gradient of an n-d max pooling: ``grad`` scattered to the saved flat indices."""

    def formula(grad, self, result1):
        sizes = self.shape[self.ndim - n:]
        flat_grad = grad.reshape((-1, math.prod(grad.shape[grad.ndim - n:])))
        flat_idx = result1.reshape(flat_grad.shape)
        rows = jnp.arange(flat_grad.shape[0])[:, None]
        out = jnp.zeros((flat_grad.shape[0], math.prod(sizes)), grad.dtype)
        return out.at[rows, flat_idx].add(flat_grad).reshape(self.shape)

    return formula


_max_pool2d, _max_pool2d_grad = max_pool, max_pool_grad(2)


MAX_POOL2D = Op("max_pool2d_with_indices", "MaxPool2DWithIndicesBackward0", _max_pool2d,
                outputs=("result0", "result1"), nondiff_outputs=(1,), saves=("self",),
                grads={"self": _max_pool2d_grad},
                grad_nodes={"self": "MaxPool2DWithIndicesBackwardBackward0"})


def avg_pool(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
             divisor_override):
    """Average pooling over the last ``len(kernel_size)`` dims (torch's divisors)."""
    n = len(kernel_size)
    values, _, valid = _windows(x, kernel_size, stride, padding, (1,) * n, ceil_mode, 0)
    total = jnp.sum(values, axis=-1)
    if divisor_override is not None:
        return total / divisor_override
    if count_include_pad:
        divisor = _padded_window_sizes(x.shape[x.ndim - n:], kernel_size, stride, padding,
                                       ceil_mode)
    else:
        divisor = valid.sum(-1)
    return total / jnp.asarray(divisor, x.dtype)


def _padded_window_sizes(sizes, kernel_size, stride, padding, ceil_mode):
    """Window volumes counting padding but not the overhang beyond it (torch's pool_size)."""
    extents = []
    for size, k, s, p in zip(sizes, kernel_size, stride, padding):
        start = _window_positions(size, k, s, p, 1, ceil_mode)[:, 0]
        extents.append(np.minimum(start + k, size + p) - start)
    return functools.reduce(np.multiply.outer, extents)


_avg_pool2d = avg_pool


AVG_POOL2D = Op(
    "avg_pool2d", "AvgPool2DBackward0", _avg_pool2d,
    grads={"self": lambda grad, self, kernel_size, stride, padding, ceil_mode,
           count_include_pad, divisor_override: _vjp(
               _avg_pool2d, 0, grad, self, kernel_size=kernel_size, stride=stride,
               padding=padding, ceil_mode=ceil_mode, count_include_pad=count_include_pad,
               divisor_override=divisor_override)},
    grad_nodes={"self": "AvgPool2DBackwardBackward0"})


def _adaptive_matrix(size, out):
    """(out, size) averaging matrix: row i averages [floor(i*size/out), ceil((i+1)*size/out))."""
    m = np.zeros((out, size))
    for i in range(out):
        start, end = (i * size) // out, -((-(i + 1) * size) // out)
        m[i, start:end] = 1.0 / (end - start)
    return m


def adaptive_avg_pool(x, output_size):
    """Adaptive average pooling of the last ``len(output_size)`` dims."""
    n = len(output_size)
    letters = "abc"[:n]
    spec = "..." + letters + "," + ",".join(f"{o}{i}" for o, i in zip("xyz", letters))
    mats = [jnp.asarray(_adaptive_matrix(size, out), x.dtype)
            for size, out in zip(x.shape[x.ndim - n:], output_size)]
    return jnp.einsum(f"{spec}->...{'xyz'[:n]}", x, *mats, precision=jax.lax.Precision.HIGHEST)


_adaptive_avg_pool2d = adaptive_avg_pool


ADAPTIVE_AVG_POOL2D = Op(
    "adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", _adaptive_avg_pool2d,
    grads={"self": lambda grad, self, output_size: _vjp(
        _adaptive_avg_pool2d, 0, grad, self, output_size=output_size)},
    grad_nodes={"self": "AdaptiveAvgPool2DBackwardBackward0"})

# --- normalisation --------------------------------------------------------------------------


def _channel_shape(ndim):
    return (1, -1) + (1,) * (ndim - 2)


def _batch_norm(x, weight, bias, running_mean, running_var, training, eps):
    axes = (0, *range(2, x.ndim))
    shape = _channel_shape(x.ndim)
    if training:
        mean = jnp.mean(x, axis=axes)
        invstd = jax.lax.rsqrt(jnp.var(x, axis=axes) + eps)
        save_mean, save_invstd = mean, invstd
    else:
        mean, invstd = running_mean, jax.lax.rsqrt(running_var + eps)
        save_mean = save_invstd = jnp.zeros((0,), x.dtype)
    out = (x - mean.reshape(shape)) * invstd.reshape(shape)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out, save_mean, save_invstd


def _batch_stats(input, running_mean, running_var, training, eps):
    """Mean and 1/std the forward normalised with, recomputed from ``input`` in training so
    that the double backward sees them as functions of it (torch's batchnorm_double_backward).
    """
    if training:
        axes = (0, *range(2, input.ndim))
        return jnp.mean(input, axis=axes), jax.lax.rsqrt(jnp.var(input, axis=axes) + eps)
    return running_mean, jax.lax.rsqrt(running_var + eps)


def _batch_norm_input_grad(grad, input, weight, running_mean, running_var, training, eps):
    axes = (0, *range(2, input.ndim))
    shape = _channel_shape(input.ndim)
    mean, invstd = _batch_stats(input, running_mean, running_var, training, eps)
    g = grad if weight is None else grad * weight.reshape(shape)
    invstd = invstd.reshape(shape)
    if not training:
        return g * invstd
    xhat = (input - mean.reshape(shape)) * invstd
    n = math.prod(input.shape[a] for a in axes)
    return invstd / n * (n * g - jnp.sum(g, axes, keepdims=True)
                         - xhat * jnp.sum(g * xhat, axes, keepdims=True))


def _batch_norm_weight_grad(grad, input, running_mean, running_var, training, eps):
    shape = _channel_shape(input.ndim)
    mean, invstd = _batch_stats(input, running_mean, running_var, training, eps)
    xhat = (input - mean.reshape(shape)) * invstd.reshape(shape)
    return jnp.sum(grad * xhat, (0, *range(2, input.ndim)))


NATIVE_BATCH_NORM = Op(
    "native_batch_norm", "NativeBatchNormBackward0", _batch_norm,
    inputs=("input", "weight", "bias"), aux=("running_mean", "running_var"),
    outputs=("result0", "result1", "result2"), nondiff_outputs=(1, 2),
    saves=("input", "weight", "running_mean", "running_var", "result1", "result2"),
    grads={"input": _batch_norm_input_grad, "weight": _batch_norm_weight_grad,
           "bias": lambda grad: jnp.sum(grad, (0, *range(2, grad.ndim)))},
    grad_nodes={"*": "NativeBatchNormBackwardBackward0"})


def _norm_axes(x, normalized_shape):
    return tuple(range(x.ndim - len(normalized_shape), x.ndim))


def _layer_norm(x, weight, bias, normalized_shape, eps):
    axes = _norm_axes(x, normalized_shape)
    mean = jnp.mean(x, axis=axes, keepdims=True)
    rstd = jax.lax.rsqrt(jnp.var(x, axis=axes, keepdims=True) + eps)
    out = (x - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


def _layer_stats(input, normalized_shape, eps):
    """Mean and rstd recomputed from ``input`` (see ``_batch_stats``)."""
    axes = _norm_axes(input, normalized_shape)
    mean = jnp.mean(input, axis=axes, keepdims=True)
    return mean, jax.lax.rsqrt(jnp.var(input, axis=axes, keepdims=True) + eps)


def _half_saved_stats(grad, result1, result2):
    """The saved mean and rstd for half precision, where torch's backward reads them rounded as
    saved (else None: recomputed from the input, so that the formula differentiates again)."""
    return (result1, result2) if grad.dtype in HALF_DTYPES else (None, None)


def _layer_stats_or(mean, rstd, input, normalized_shape, eps):
    return (mean, rstd) if mean is not None else _layer_stats(input, normalized_shape, eps)


@in_float32
def _layer_norm_input_grad_of(grad, input, weight, mean, rstd, normalized_shape, eps):
    axes = _norm_axes(input, normalized_shape)
    mean, rstd = _layer_stats_or(mean, rstd, input, normalized_shape, eps)
    xhat = (input - mean) * rstd
    g = grad if weight is None else grad * weight
    n = math.prod(normalized_shape)
    return rstd / n * (n * g - jnp.sum(g, axes, keepdims=True)
                       - xhat * jnp.sum(g * xhat, axes, keepdims=True))


@in_float32
def _layer_norm_weight_grad_of(grad, input, mean, rstd, normalized_shape, eps):
    mean, rstd = _layer_stats_or(mean, rstd, input, normalized_shape, eps)
    lead = tuple(range(input.ndim - len(normalized_shape)))
    return jnp.sum(grad * (input - mean) * rstd, lead)


def _layer_norm_input_grad(grad, input, weight, result1, result2, normalized_shape, eps):
    return _layer_norm_input_grad_of(grad, input, weight,
                                     *_half_saved_stats(grad, result1, result2),
                                     normalized_shape, eps)


def _layer_norm_weight_grad(grad, input, result1, result2, normalized_shape, eps):
    return _layer_norm_weight_grad_of(grad, input, *_half_saved_stats(grad, result1, result2),
                                      normalized_shape, eps)


NATIVE_LAYER_NORM = Op(
    "native_layer_norm", "NativeLayerNormBackward0", in_float32(_layer_norm),
    inputs=("input", "weight", "bias"), outputs=("result0", "result1", "result2"),
    nondiff_outputs=(1, 2), saves=("input", "weight", "bias", "result1", "result2"),
    grads={"input": _layer_norm_input_grad, "weight": _layer_norm_weight_grad,
           "bias": in_float32(lambda grad, input, normalized_shape: jnp.sum(
               grad, tuple(range(input.ndim - len(normalized_shape)))))},
    grad_nodes={"*": "NativeLayerNormBackwardBackward0"})

# --- embedding ------------------------------------------------------------------------------


def _embedding_grad(grad, indices, weight_sym_argsize_0, padding_idx):
    dim = grad.shape[-1]
    flat_idx = indices.reshape(-1)
    flat = grad.reshape((-1, dim))
    if padding_idx >= 0:
        flat = jnp.where((flat_idx == padding_idx)[:, None], jnp.zeros((), grad.dtype), flat)
    return jnp.zeros((weight_sym_argsize_0, dim), grad.dtype).at[flat_idx].add(flat)


EMBEDDING = Op("embedding", "EmbeddingBackward0",
               lambda weight, indices, weight_sym_argsize_0, padding_idx: weight[indices],
               inputs=("weight",), aux=("indices",), grads={"weight": _embedding_grad},
               grad_nodes={"weight": "EmbeddingDenseBackwardBackward0"})

# --- recurrent cells, group/instance/rms norms, more activations, 1-D pooling, resampling ----


# unsafe_split: split's outputs, not views for autograd, so that the RNN cells can apply
# torch's in-place gate activations to them (the row sits with split's)
UNSAFE_SPLIT = UNSAFE_SPLIT


def _group_norm_out(x, weight, bias, N, C, HxW, group, eps):
    return _group_norm(x, weight, bias, N, C, HxW, group, eps)[0]


def _group_norm(x, weight, bias, N, C, HxW, group, eps):
    xg = x.reshape((N, group, -1))
    mean = jnp.mean(xg, axis=-1)
    rstd = jax.lax.rsqrt(jnp.var(xg, axis=-1) + eps)
    out = ((xg - mean[..., None]) * rstd[..., None]).reshape(x.shape)
    shape = _channel_shape(x.ndim)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out, mean, rstd


# native_group_norm saves input, weight and the (N, group) mean / rstd outputs
NATIVE_GROUP_NORM = Op(
    "native_group_norm", "NativeGroupNormBackward0", _group_norm,
    inputs=("input", "weight", "bias"), outputs=("result0", "result1", "result2"),
    nondiff_outputs=(1, 2), saves=("input", "weight", "result1", "result2"),
    grads={"input": lambda grad, input, weight, N, C, HxW, group, eps: _vjp(
        _group_norm_out, 0, grad, input, weight, None, N=N, C=C, HxW=HxW, group=group,
        eps=eps),
        "weight": lambda grad, input, N, C, HxW, group, eps: jnp.sum(
            grad * _group_norm_out(input, None, None, N, C, HxW, group, eps),
            (0, *range(2, input.ndim))),
        "bias": lambda grad: jnp.sum(grad, (0, *range(2, grad.ndim)))},
                        grad_nodes={"weight": "ViewBackward0", "bias": "ViewBackward0"})

PRELU_KERNEL = Op(
    "_prelu_kernel", "PreluKernelBackward0",
    lambda x, weight: jnp.where(x > 0, x, weight * x).astype(x.dtype),
    inputs=("self", "weight"),
    grads={"self": lambda grad, self, weight: jnp.where(self > 0, grad, weight * grad),
           "weight": lambda grad, self: jnp.where(self > 0, jnp.zeros((), grad.dtype),
                                                  self * grad)},
    grad_nodes={"*": "PreluKernelBackwardBackward0"},  # (one op for both, as torch's)
    # torch's forward formula counts 0 as positive (its backward does not)
    tangent=lambda self_t, weight_t, self, weight: jnp.where(
        self >= 0, self_t, weight * self_t + weight_t * self))

LOG_SIGMOID = Op("log_sigmoid", "LogSigmoidBackward0", in_float32(jax.nn.log_sigmoid),
                 grads={"self": in_float32(lambda grad, self: grad * jax.nn.sigmoid(-self))},
                 grad_nodes={"self": "LogSigmoidBackwardBackward0"})

def _celu_grad_scale(alpha, dtype):
    """derivatives.yaml's ``1.0 / alpha.toFloat()``: alpha rounded to float first."""
    return 1.0 / jnp.asarray(alpha, jnp.float32).astype(dtype)


CELU = Op("celu(Tensor self, Scalar alpha=1.0) -> Tensor", "CeluBackward0",
          lambda x, alpha: _elu(x, alpha, 1.0, 1.0 / alpha),
          grads={"self": lambda grad, self, alpha: _elu_grad(
              grad, self, alpha, 1.0, _celu_grad_scale(alpha, grad.dtype))},
          grad_nodes={"self": "EluBackwardBackward0"})
CELU_ = Op("celu_", "CeluBackward1", lambda x, alpha: _elu(x, alpha, 1.0, 1.0 / alpha),
           aux=(), grads={"self": lambda grad, result, alpha: _inplace_elu_grad(
               grad, result, alpha, 1.0, _celu_grad_scale(alpha, grad.dtype))})


def _mish_grad(grad, self):
    """mish_backward: ``grad * (t + x * sigmoid(x) * (1 - t**2))``, t = tanh(softplus(x))."""
    t = jnp.tanh(jax.nn.softplus(self))
    return grad * (t + self * jax.nn.sigmoid(self) * (1 - t * t))


# the in-place forms share the node: autograd saves a copy of the input for them
MISH = Op("mish", "MishBackward0", in_float32(lambda x: x * jnp.tanh(jax.nn.softplus(x))),
          grads={"self": in_float32(_mish_grad)}, grad_nodes={"self": "MulBackward0"})
HARDSWISH = Op(
    "hardswish", "HardswishBackward0", in_float32(lambda x: x * jnp.clip(x + 3, 0, 6) / 6),
    grads={"self": in_float32(lambda grad, self: jnp.where(  # torch: 0 at -3, grad at 3
        self <= -3, jnp.zeros((), grad.dtype), jnp.where(self < 3, grad * ((self + 1.5) / 3),
                                                        grad)))},
    grad_nodes={"self": "HardswishBackwardBackward0"})
HARDSIGMOID = Op(
    "hardsigmoid", "HardsigmoidBackward0", lambda x: jnp.clip(x + 3, 0, 6) / 6,
    grads={"self": lambda grad, self: jnp.where(
        (self > -3) & (self < 3), grad * jnp.asarray(np.float32(1 / 6), grad.dtype),
        jnp.zeros((), grad.dtype))},  # torch's kernel takes 1/6 as a float
    grad_nodes={"self": "NotImplemented"})  # (hardsigmoid_backward has no formula)
SOFTSHRINK = Op(
    "softshrink(Tensor self, Scalar lambd=0.5) -> Tensor", "SoftshrinkBackward0",
    lambda x, lambd: jnp.where(x > lambd, x - lambd, jnp.where(
        x < -lambd, x + lambd, jnp.zeros((), x.dtype))).astype(x.dtype),
    grads={"self": lambda grad, self, lambd: jnp.where(
        (self >= -lambd) & (self <= lambd), jnp.zeros((), grad.dtype), grad)},
    grad_nodes={"self": "SoftshrinkBackwardBackward0"})
HARDSHRINK = Op(
    "hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor", "HardshrinkBackward0",
    lambda x, lambd: jnp.where((x >= -lambd) & (x <= lambd), jnp.zeros((), x.dtype), x),
    grads={"self": lambda grad, self, lambd: jnp.where(
        (self >= -lambd) & (self <= lambd), jnp.zeros((), grad.dtype), grad)},
    grad_nodes={"self": "HardshrinkBackwardBackward0"})


def _threshold(x, threshold, value):
    return jnp.where(x <= threshold, jnp.asarray(value, x.dtype), x)


THRESHOLD = Op("threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor",
               "ThresholdBackward0", _threshold,
               grads={"self": lambda grad, self, threshold: jnp.where(
                   self <= threshold, jnp.zeros((), grad.dtype), grad)},
               grad_nodes={"self": "ThresholdBackwardBackward0"})
# threshold_: its own node, which saves a copy of the input
THRESHOLD_ = Op("threshold_", "ThresholdBackward1", _threshold, aux=(),
                grads={"self": lambda grad, self, threshold: jnp.where(
                    self <= threshold, jnp.zeros((), grad.dtype), grad)})


def _glu(x, dim):
    a, b = jnp.split(x, 2, axis=dim)
    return a * jax.nn.sigmoid(b)


GLU = Op("glu", "GluBackward0", _glu,
         grads={"self": lambda grad, self, dim: _vjp(_glu, 0, grad, self, dim=dim)},
         grad_nodes={"self": "GluBackwardBackward0"})

# at::norm(input, p, dim, keepdim) as C++ callers use it (pairwise_distance): norm.ScalarOpt_dim,
# NormBackward1, with the vector norm's backward (torch.norm in Python is linalg's)
NORM_DIM = Op("norm", "NormBackward1", _vector_norm, promote="float",
              grads={"self": _vector_norm_grad}, grad_nodes={"self": "MulBackward0"})


def _soft_margin(x, target, reduction):
    return _reduce(jnp.log1p(jnp.exp(-x * target)), reduction)


SOFT_MARGIN_LOSS = Op(
    "soft_margin_loss", "SoftMarginLossBackward0", _soft_margin, aux=("target",),
    grads={"self": lambda grad, self, target, reduction: _vjp(
        _soft_margin, 0, grad, self, target, reduction=reduction)},
                       grad_nodes={"self": "SoftMarginLossBackwardBackward0"})


def _adaptive_windows(size, out):
    """(out, size) membership of torch's adaptive windows [floor(i*size/out), ceil(...))."""
    m = np.zeros((out, size), bool)
    for i in range(out):
        m[i, (i * size) // out:-((-(i + 1) * size) // out)] = True
    return m


def adaptive_max_pool(x, output_size):
    """Adaptive max pooling of the last ``len(output_size)`` dims: values, flat indices."""
    n = len(output_size)
    sizes = x.shape[x.ndim - n:]
    inside = np.ones((), bool)
    for d, (size, out) in enumerate(zip(sizes, output_size)):
        shape = [1] * (2 * n)
        shape[d], shape[n + d] = out, size
        inside = inside & _adaptive_windows(size, out).reshape(shape)
    inside = inside.reshape(tuple(output_size) + (math.prod(sizes),))
    flat = x.reshape(x.shape[:x.ndim - n] + (1,) * n + (math.prod(sizes),))
    values = jnp.where(inside, flat, jnp.asarray(-jnp.inf, x.dtype))
    # NaN wins, as in torch's kernel
    values = jnp.where(jnp.isnan(flat), jnp.asarray(jnp.inf, x.dtype), values)
    best = compat.argmax(values, -1)
    out = jnp.take_along_axis(flat * jnp.ones(values.shape, x.dtype), best[..., None], -1)
    return out[..., 0], best.astype(jnp.int64)


_adaptive_max_pool2d = adaptive_max_pool


ADAPTIVE_MAX_POOL2D = Op("adaptive_max_pool2d", "AdaptiveMaxPool2DBackward0",
                         _adaptive_max_pool2d, outputs=("result0", "result1"),
                         nondiff_outputs=(1,), saves=("self",),
                         grads={"self": _max_pool2d_grad},
                         grad_nodes={"self": "AdaptiveMaxPool2DBackwardBackward0"})


def _pixel_shuffle(x, upscale_factor):
    r = upscale_factor
    *lead, c, h, w = x.shape
    y = x.reshape((*lead, c // (r * r), r, r, h, w))
    n = len(lead)
    y = jnp.transpose(y, (*range(n), n, n + 3, n + 1, n + 4, n + 2))
    return y.reshape((*lead, c // (r * r), h * r, w * r))


def _pixel_unshuffle(x, downscale_factor):
    r = downscale_factor
    *lead, c, h, w = x.shape
    y = x.reshape((*lead, c, h // r, r, w // r, r))
    n = len(lead)
    y = jnp.transpose(y, (*range(n), n, n + 2, n + 4, n + 1, n + 3))
    return y.reshape((*lead, c * r * r, h // r, w // r))


PIXEL_SHUFFLE = Op("pixel_shuffle", "PixelShuffleBackward0", _pixel_shuffle,
                   grads={"self": lambda grad, upscale_factor: _pixel_unshuffle(
                       grad, upscale_factor)}, grad_nodes={"self": "PixelUnshuffleBackward0"})
PIXEL_UNSHUFFLE = Op("pixel_unshuffle", "PixelUnshuffleBackward0", _pixel_unshuffle,
                     grads={"self": lambda grad, downscale_factor: _pixel_shuffle(
                         grad, downscale_factor)}, grad_nodes={"self": "PixelShuffleBackward0"})

