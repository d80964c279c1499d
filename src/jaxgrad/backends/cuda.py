"""``jaxgrad.backends.cuda``: torch's CUDA switches: ``is_built()``, ``matmul``'s cuBLAS
flags and scaled dot product attention's kernel flags.

XLA chooses how its GPU matmuls round: ``matmul.allow_tf32`` and the reduced-precision flags are
stored and read back only. Of the attention kernels jaxgrad has torch's CPU pair (flash and math):
``enable_flash_sdp``/``enable_math_sdp`` decide between them as in torch; the GPU kernels' flags
are stored and read back.

>>> import jaxgrad
>>> jaxgrad.backends.cuda.matmul.allow_tf32 = True
>>> jaxgrad.backends.cuda.matmul.allow_tf32
True
>>> jaxgrad.backends.cuda.matmul.allow_tf32 = False
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

from .. import cuda as _cuda
from ._sdp import SDPBackend, is_enabled, only_backends, set_enabled

__all__ = ["is_built", "cuBLASModule", "matmul", "SDPBackend", "SDPAParams",
           "flash_sdp_enabled", "enable_flash_sdp", "mem_efficient_sdp_enabled",
           "enable_mem_efficient_sdp", "math_sdp_enabled", "enable_math_sdp", "cudnn_sdp_enabled",
           "enable_cudnn_sdp", "fp16_bf16_reduction_math_sdp_allowed",
           "allow_fp16_bf16_reduction_math_sdp", "is_flash_attention_available",
           "can_use_flash_attention", "can_use_efficient_attention", "can_use_cudnn_attention",
           "sdp_kernel"]

_SETTERS = {"allow_tf32": "set_allow_tf32_cublas",
            "allow_fp16_reduced_precision_reduction": "set_allow_fp16_reduced_precision_reduction",
            "allow_bf16_reduced_precision_reduction": "set_allow_bf16_reduced_precision_reduction",
            "allow_fp16_accumulation": "set_allow_fp16_accumulation"}
_DEFAULTS = {"allow_tf32": False, "allow_fp16_reduced_precision_reduction": True,
             "allow_bf16_reduced_precision_reduction": True, "allow_fp16_accumulation": False}


def is_built() -> bool:
    """Whether jaxgrad can use CUDA: JAX has a GPU (False on a CPU-only machine, as torch's CPU
    build answers).

    >>> import jaxgrad
    >>> jaxgrad.backends.cuda.is_built() == jaxgrad.cuda.is_available()
    True
    """
    return _cuda.is_available()


class cuBLASModule:
    """``jaxgrad.backends.cuda.matmul``: cuBLAS's flags, stored and read back only; other
    names raise ``AttributeError``, as torch's do.

    >>> import jaxgrad
    >>> matmul = jaxgrad.backends.cuda.matmul
    >>> matmul.allow_tf32, matmul.allow_fp16_reduced_precision_reduction
    (False, True)
    >>> matmul.allow_tf32 = 1
    Traceback (most recent call last):
    RuntimeError: set_allow_tf32_cublas expects a bool, but got int
    >>> matmul.tf32
    Traceback (most recent call last):
    AttributeError: Unknown attribute tf32
    """

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", dict(_DEFAULTS))

    def __getattr__(self, name: str) -> Any:
        flags = object.__getattribute__(self, "_flags")
        if name in flags:
            return flags[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _SETTERS:
            raise AttributeError("Unknown attribute " + name)
        if not isinstance(value, bool):
            raise RuntimeError(f"{_SETTERS[name]} expects a bool, but got {type(value).__name__}")
        self._flags[name] = value


matmul = cuBLASModule()


def flash_sdp_enabled() -> bool:
    """Whether scaled dot product attention may use the fused flash kernel.

    >>> import jaxgrad
    >>> jaxgrad.backends.cuda.flash_sdp_enabled()
    True
    """
    return is_enabled("flash")


def enable_flash_sdp(enabled: bool) -> None:
    """Allow or forbid the fused flash kernel (on the CPU too, as torch).

    >>> import jaxgrad
    >>> jaxgrad.backends.cuda.enable_flash_sdp(False); jaxgrad.backends.cuda.flash_sdp_enabled()
    False
    >>> jaxgrad.backends.cuda.enable_flash_sdp(True)
    """
    set_enabled("flash", enabled)


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient kernel (GPU only in torch; stored here) is allowed.

    >>> import jaxgrad
    >>> jaxgrad.backends.cuda.mem_efficient_sdp_enabled()
    True
    """
    return is_enabled("mem_efficient")


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allow or forbid the memory-efficient kernel (a GPU kernel: stored and read back).

    >>> import jaxgrad
    >>> jaxgrad.backends.cuda.enable_mem_efficient_sdp(True)
    """
    set_enabled("mem_efficient", enabled)


def math_sdp_enabled() -> bool:
    """Whether scaled dot product attention may use the math composition.

    >>> import jaxgrad
    >>> jaxgrad.backends.cuda.math_sdp_enabled()
    True
    """
    return is_enabled("math")


def enable_math_sdp(enabled: bool) -> None:
    """Allow or forbid the math composition.

    >>> import jaxgrad
    >>> jaxgrad.backends.cuda.enable_math_sdp(True)
    """
    set_enabled("math", enabled)


def cudnn_sdp_enabled() -> bool:
    """Whether the cuDNN kernel (GPU only in torch; stored here) is allowed.

    >>> import jaxgrad
    >>> jaxgrad.backends.cuda.cudnn_sdp_enabled()
    True
    """
    return is_enabled("cudnn")


def enable_cudnn_sdp(enabled: bool) -> None:
    """Allow or forbid the cuDNN kernel (a GPU kernel: stored and read back).

    >>> import jaxgrad
    >>> jaxgrad.backends.cuda.enable_cudnn_sdp(True)
    """
    set_enabled("cudnn", enabled)


def fp16_bf16_reduction_math_sdp_allowed() -> bool:
    """Whether the math kernel may reduce in half precision (stored and read back).

    >>> import jaxgrad
    >>> jaxgrad.backends.cuda.fp16_bf16_reduction_math_sdp_allowed()
    False
    """
    return is_enabled("fp16_bf16_reduction_math")


def allow_fp16_bf16_reduction_math_sdp(enabled: bool) -> None:
    """Allow half-precision reductions in the math kernel (stored and read back).

    >>> import jaxgrad
    >>> jaxgrad.backends.cuda.allow_fp16_bf16_reduction_math_sdp(False)
    """
    set_enabled("fp16_bf16_reduction_math", enabled)


def is_flash_attention_available() -> bool:
    """Whether the CUDA flash kernel was built: jaxgrad has no CUDA kernels of its own (False,
    as torch's CPU build answers).

    >>> import jaxgrad
    >>> jaxgrad.backends.cuda.is_flash_attention_available()
    False
    """
    return False


class _SDPAParams:
    """The arguments of one scaled dot product attention call, for the ``can_use_*`` checks
    (torch's ``_SDPAParams``: positional only, read-only).

    >>> import jaxgrad
    >>> q = jaxgrad.ones(1, 2, 3, 4)
    >>> jaxgrad.backends.cuda.SDPAParams(q, q, q, None, 0.0, False, False).dropout
    0.0
    """

    __slots__ = ("_fields",)

    def __init__(self, query: Any, key: Any, value: Any, attn_mask: Any, dropout: float,
                 is_causal: bool, enable_gqa: bool, /) -> None:
        object.__setattr__(self, "_fields", {
            "query": query, "key": key, "value": value, "attn_mask": attn_mask,
            "dropout": float(dropout), "is_causal": is_causal, "enable_gqa": enable_gqa})

    def __getattr__(self, name: str) -> Any:
        fields = object.__getattribute__(self, "_fields")
        if name in fields:
            return fields[name]
        raise AttributeError(f"'_SDPAParams' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("property of '_SDPAParams' object has no setter")


SDPAParams = _SDPAParams


def can_use_flash_attention(params: _SDPAParams, debug: bool = False) -> bool:
    """Whether the CUDA flash kernel could run ``params``: never in jaxgrad, which has no CUDA
    kernels (torch's CPU build answers False too).

    >>> import jaxgrad
    >>> q = jaxgrad.ones(1, 2, 3, 4)
    >>> params = jaxgrad.backends.cuda.SDPAParams(q, q, q, None, 0.0, False, False)
    >>> jaxgrad.backends.cuda.can_use_flash_attention(params)
    False
    """
    return False


def can_use_efficient_attention(params: _SDPAParams, debug: bool = False) -> bool:
    """Whether the CUDA memory-efficient kernel could run ``params``: never in jaxgrad.

    >>> import jaxgrad
    >>> q = jaxgrad.ones(1, 2, 3, 4)
    >>> params = jaxgrad.backends.cuda.SDPAParams(q, q, q, None, 0.0, False, False)
    >>> jaxgrad.backends.cuda.can_use_efficient_attention(params)
    False
    """
    return False


def can_use_cudnn_attention(params: _SDPAParams, debug: bool = False) -> bool:
    """Whether the cuDNN kernel could run ``params``: never in jaxgrad.

    >>> import jaxgrad
    >>> q = jaxgrad.ones(1, 2, 3, 4)
    >>> params = jaxgrad.backends.cuda.SDPAParams(q, q, q, None, 0.0, False, False)
    >>> jaxgrad.backends.cuda.can_use_cudnn_attention(params)
    False
    """
    return False


def sdp_kernel(enable_flash: bool = True, enable_math: bool = True,
               enable_mem_efficient: bool = True,
               enable_cudnn: bool = True) -> contextlib.AbstractContextManager[dict]:
    """torch's deprecated context manager: switch the four kernels for its body (calling it
    warns, as torch does, pointing at ``jaxgrad.nn.attention.sdpa_kernel``).

    >>> import warnings, jaxgrad
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with jaxgrad.backends.cuda.sdp_kernel(enable_math=False):
    ...         jaxgrad.backends.cuda.math_sdp_enabled()
    False
    """
    warnings.warn("`jaxgrad.backends.cuda.sdp_kernel()` is deprecated. In the future, this "
                  "context manager will be removed. Please see "
                  "`jaxgrad.nn.attention.sdpa_kernel()` for the new context manager, with updated "
                  "signature.", FutureWarning,
                  stacklevel=2)
    wanted = [(enable_flash, SDPBackend.FLASH_ATTENTION),
              (enable_mem_efficient, SDPBackend.EFFICIENT_ATTENTION),
              (enable_math, SDPBackend.MATH), (enable_cudnn, SDPBackend.CUDNN_ATTENTION)]
    return only_backends([backend for on, backend in wanted if on])
