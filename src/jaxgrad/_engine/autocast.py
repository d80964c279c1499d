"""Autocast (automatic mixed precision): its per-thread state, its casting policy, its cast cache.

torch keeps autocast's switches per thread, per device type: whether it is on, the lower
precision dtype, whether casts of leaf weights are cached, and how deeply ``autocast`` regions
nest (the cache is cleared when the outermost one exits). ``cast_inputs`` is what the dispatcher
(``dispatch._apply``) calls for every op while any thread has autocast on (``active``): it casts
the op's floating-point tensor arguments as torch's autocast kernel for that op does. The policy
is data: ``POLICIES`` maps a device type to ``{op name: kind}``, taken from torch 2.13's
behaviour (on CPU, checked by running torch: see tests/ops/test_autocast.py).

Kinds (torch's ``CastPolicy``):

- ``LOWER``: floating-point arguments (not float64) are cast to the autocast dtype;
- ``FP32``: floating-point arguments (not float64) are cast to float32;
- ``PROMOTE``: floating-point arguments (not float64) are cast to the widest of them.

A cast is ``Tensor.to(dtype)`` recorded as such (``ToCopyBackward0``); a float32 leaf that
requires grad and is cast to the autocast dtype is cast once per autocast region (torch's weight
cache), unless ``cache_enabled=False``.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

import jax

from .._core import dtypes as _dtypes
from .._core.grad_mode import is_grad_enabled
from .._core.tensor import Tensor
from .._ops.elementwise import CAST

LOWER, FP32, PROMOTE = "lower_precision_fp", "fp32", "promote"

# the device types torch's parser knows, in its message's order
TORCH_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                      "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                      "privateuseone")
# torch's default autocast dtype of each device type that has autocast (``tpu``: jaxgrad's own
# device type, bfloat16 as XLA's autocast on TPU); the available ones have a dispatch key
DEFAULT_DTYPES = {"cpu": _dtypes.bfloat16, "cuda": _dtypes.float16, "ipu": _dtypes.float16,
                  "xpu": _dtypes.float16, "hip": _dtypes.float16, "maia": _dtypes.bfloat16,
                  "xla": _dtypes.bfloat16, "mps": _dtypes.float16, "hpu": _dtypes.bfloat16,
                  "mtia": _dtypes.float16, "privateuseone": _dtypes.float16,
                  "tpu": _dtypes.bfloat16}
AVAILABLE = frozenset(DEFAULT_DTYPES) - {"hip"}


def _policy(**kinds: str) -> dict[str, str]:
    """``{op name: kind}`` from ``kind="name name ..."`` lists."""
    return {name: kind for kind, names in kinds.items() for name in names.split()}


# torch 2.13's AutocastCPU kernels (aten op names, overloads dropped). jaxgrad rows that only
# listed ops reach are listed with them: ``convolution`` (conv1d/2d/3d, conv_transpose*),
# ``_prelu_kernel`` (prelu), ``_scaled_dot_product_flash_attention_for_cpu`` (sdpa); and
# ``cross_entropy``, jaxgrad's name of aten's ``cross_entropy_loss``.
CPU_POLICY = _policy(
    lower_precision_fp=(
        "conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm addbmm linear _convolution "
        "matmul conv_tbc mkldnn_rnn_layer conv_transpose1d conv_transpose2d conv_transpose3d "
        "prelu scaled_dot_product_attention _native_multi_head_attention _addmm_activation "
        "convolution _prelu_kernel _scaled_dot_product_flash_attention_for_cpu"),
    fp32=(
        "avg_pool3d binary_cross_entropy grid_sampler polar prod quantile nanquantile stft cdist "
        "trace view_as_complex cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr "
        "ormqr pinverse max_pool3d max_unpool2d max_unpool3d adaptive_avg_pool3d "
        "reflection_pad1d reflection_pad2d replication_pad1d replication_pad2d replication_pad3d "
        "mse_loss cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss "
        "poisson_nll_loss smooth_l1_loss cross_entropy_loss cross_entropy l1_loss huber_loss "
        "margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss ctc_loss "
        "kl_div multilabel_margin_loss multilabel_margin_loss_forward "
        "binary_cross_entropy_with_logits fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn "
        "fft_ifftn fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn fft_hfft "
        "fft_ihfft linalg_cond linalg_matrix_rank linalg_solve linalg_cholesky "
        "linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product "
        "linalg_tensorinv linalg_tensorsolve fake_quantize_per_tensor_affine geqrf "
        "_lu_with_info qr svd triangular_solve fractional_max_pool2d fractional_max_pool3d "
        "adaptive_max_pool3d linalg_qr linalg_cholesky_ex linalg_svd linalg_eig linalg_eigh "
        "linalg_lstsq linalg_inv_ex grid_sampler_2d grid_sampler_3d "
        "_grid_sampler_2d_cpu_fallback"),
    promote="stack cat index_copy",
)

# torch 2.13's AutocastCUDA kernels that cast their arguments (from aten's autocast_mode.cpp;
# the oracle here is CPU-only, so these are not checked against a run). They apply to tensors on
# a JAX GPU (device type ``cuda``) and on a TPU (``tpu``), where XLA's autocast follows them.
# torch's ``fp32_set_opt_dtype`` ops (softmax, sum, cumsum...), which pass ``dtype=float32``
# instead of casting, are not listed: under autocast they run in their inputs' dtype here.
CUDA_POLICY = _policy(
    lower_precision_fp=(
        "_convolution conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d "
        "conv_transpose3d convolution prelu addmm addmv addr matmul einsum mm mv linalg_vecdot "
        "linear addbmm baddbmm bmm chain_matmul linalg_multi_dot _thnn_fused_lstm_cell "
        "_thnn_fused_gru_cell lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell "
        "_scaled_dot_product_flash_attention scaled_dot_product_attention _prelu_kernel"),
    fp32=(
        "acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow "
        "softplus layer_norm native_layer_norm group_norm native_group_norm frobenius_norm "
        "nuclear_norm cosine_similarity poisson_nll_loss cosine_embedding_loss nll_loss "
        "nll_loss2d hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss "
        "margin_ranking_loss multilabel_margin_loss soft_margin_loss triplet_margin_loss "
        "multi_margin_loss binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp "
        "upsample_nearest1d upsample_nearest2d upsample_nearest3d upsample_linear1d "
        "upsample_bilinear2d upsample_trilinear3d upsample_bicubic2d"),
    promote="addcdiv addcmul atan2 bilinear cross dot grid_sampler index_put scatter_add tensordot",
)

POLICIES = {"cpu": CPU_POLICY, "cuda": CUDA_POLICY, "tpu": CUDA_POLICY}
_LISTED = frozenset(name for policy in POLICIES.values() for name in policy)


class _ThreadState(threading.local):
    """One thread's autocast switches (a new thread starts with autocast off, as torch's)."""

    def __init__(self) -> None:
        self.enabled: dict[str, bool] = {}
        self.dtype: dict[str, _dtypes.dtype] = {}
        self.cache_enabled = True
        self.nesting = 0
        self.cache: dict[int, tuple[weakref.ref, Tensor]] = {}
        # inside a listed public op: its own ops are not cast again (torch's
        # ExcludeDispatchKeyGuard around the op's autocast kernel)
        self.excluded = False


_state = _ThreadState()
_count_lock = threading.Lock()
# how many (thread, device type) pairs have autocast on: the dispatcher's one cheap check
active = 0


def device_type_error(device_type: str) -> RuntimeError:
    """torch's error for a device type it does not know."""
    return RuntimeError(f"Expected one of {', '.join(TORCH_DEVICE_TYPES)} device type at start "
                        f"of device string: {device_type}")


def check_device_type(device_type: str) -> None:
    """Raise torch's error unless ``device_type`` names a device type (``"cpu"``, ``"cuda"``...)."""
    if device_type not in TORCH_DEVICE_TYPES and device_type != "tpu":
        raise device_type_error(device_type)


def is_enabled(device_type: str) -> bool:
    """Whether this thread has autocast on for ``device_type``."""
    return _state.enabled.get(device_type, False)


def set_enabled(device_type: str, enabled: bool) -> None:
    """Turn this thread's autocast for ``device_type`` on or off."""
    global active
    if device_type not in AVAILABLE:
        raise RuntimeError("unknown device type for autocast in "
                           "get_autocast_dispatch_key_from_device_type")
    was = _state.enabled.get(device_type, False)
    _state.enabled[device_type] = enabled
    if was != enabled:
        with _count_lock:
            active += 1 if enabled else -1


def get_dtype(device_type: str) -> _dtypes.dtype:
    """This thread's autocast dtype for ``device_type``."""
    found = _state.dtype.get(device_type)
    if found is not None:
        return found
    default = DEFAULT_DTYPES.get(device_type)
    if default is None:
        raise RuntimeError("unsupported scalarType")
    return default


def set_dtype(device_type: str, dtype: _dtypes.dtype) -> None:
    """Set this thread's autocast dtype for ``device_type``."""
    if device_type not in DEFAULT_DTYPES:
        raise RuntimeError("unknown device type for autocast in "
                           "get_autocast_dispatch_key_from_device_type")
    _state.dtype[device_type] = dtype


def is_cache_enabled() -> bool:
    """Whether this thread caches casts of leaf weights."""
    return _state.cache_enabled


def set_cache_enabled(enabled: bool) -> None:
    """Turn this thread's cast cache on or off."""
    _state.cache_enabled = enabled


def clear_cache() -> None:
    """Forget this thread's cached casts."""
    _state.cache.clear()


def increment_nesting() -> int:
    """One more autocast region entered; the new depth."""
    _state.nesting += 1
    return _state.nesting


def decrement_nesting() -> int:
    """One autocast region left; the new depth (torch lets it go below zero)."""
    _state.nesting -= 1
    return _state.nesting


def mode_key() -> tuple:
    """What a trace of jaxgrad ops depends on in this thread's autocast state: a part of the key
    of a cache of traces (``jaxgrad.compile``'s)."""
    return tuple(sorted((d, get_dtype(d).name) for d, on in _state.enabled.items() if on))


# --- casting -----------------------------------------------------------------------------------

def cast_inputs(name: str, args: tuple, apply: Callable) -> tuple:
    """``args`` of op-table row ``name`` as autocast hands them to it (the dispatcher's hook):
    cast per the op's policy on the device of its first tensor argument, when this thread has
    autocast on for that device. ``apply`` is the dispatcher's, which records each cast
    (``ToCopyBackward0``)."""
    if name not in _LISTED or _state.excluded:
        return args
    target = _target(name, args)
    if target is None:
        return args
    return tuple(_cast(a, *target, apply) for a in args)


def autocast_call(name: str, fn: Callable, args: tuple, kwargs: dict, apply: Callable) -> Any:
    """Public op ``name`` (``matmul``, ``linear``, ``conv2d``...) called with ``args`` and
    ``kwargs`` under autocast, as torch's autocast kernel runs it: its tensor arguments (also
    inside lists: ``cat``) cast per its policy, then ``fn`` with the ops it is made of left
    alone. The hook for the layer where public ops are called (``opgen``'s forms)."""
    if name not in _LISTED or _state.excluded:
        return fn(*args, **kwargs)
    target = _target(name, (*args, *kwargs.values()))
    if target is None:
        return fn(*args, **kwargs)
    args = tuple(_cast_nested(a, target, apply) for a in args)
    kwargs = {k: _cast_nested(v, target, apply) for k, v in kwargs.items()}
    _state.excluded = True
    try:
        return fn(*args, **kwargs)
    finally:
        _state.excluded = False


def _flat_tensors(values: tuple) -> list:
    return [t for v in values for t in (v if isinstance(v, (list, tuple)) else (v,))
            if isinstance(t, Tensor)]


def _target(name: str, values: tuple) -> tuple | None:
    """(dtype to cast to, device type, autocast dtype) for op ``name`` on ``values``, or None
    where autocast leaves the call alone."""
    tensors = _flat_tensors(values)
    if not tensors:
        return None
    device_type = tensors[0].device.type
    if not _state.enabled.get(device_type, False):
        return None
    kind = POLICIES.get(device_type, {}).get(name)
    if kind is None:
        return None
    lower = get_dtype(device_type)
    if kind == LOWER:
        return lower, device_type, lower
    if kind == FP32:
        return _dtypes.float32, device_type, lower
    return _widest(tensors, device_type, lower), device_type, lower


def _cast_nested(value: Any, target: tuple, apply: Callable) -> Any:
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return type(value)(_cast(v, *target, apply) for v in value)
    return _cast(value, *target, apply)


def _eligible(a: Any, device_type: str) -> bool:
    """A floating-point tensor on ``device_type`` that is not float64 (torch's is_eligible)."""
    return (isinstance(a, Tensor) and a.dtype.is_floating_point and a.dtype is not _dtypes.float64
            and a.device.type == device_type)


def _widest(args: tuple, device_type: str, lower: _dtypes.dtype) -> _dtypes.dtype:
    """torch's promote_type: float32 if any eligible argument is float32, else ``lower``."""
    for a in args:
        if _eligible(a, device_type):
            if a.dtype is _dtypes.float32:
                return _dtypes.float32
            if a.dtype is not lower:
                raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return lower


def _cast(a: Any, target: _dtypes.dtype, device_type: str, lower: _dtypes.dtype,
          apply: Callable) -> Any:
    """torch's cached_cast: ``a`` cast to ``target`` if eligible and of another dtype."""
    if not _eligible(a, device_type) or a.dtype is target:
        return a
    cacheable = (target is lower and a.dtype is _dtypes.float32 and a._requires_grad
                 and a._grad_node is None and a._base is None and _state.cache_enabled
                 and is_grad_enabled() and not isinstance(a._cell.array, jax.core.Tracer))
    if not cacheable:
        return apply(CAST, a, dtype=target.np)
    hit = _state.cache.get(id(a))
    if hit is not None and hit[0]() is a:
        return hit[1]
    cast = apply(CAST, a, dtype=target.np)
    _state.cache[id(a)] = (weakref.ref(a), cast)
    return cast
