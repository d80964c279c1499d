"""``jaxgrad.backends.cuda``: torch's CUDA switches: ``is_built()`` and ``matmul``'s cuBLAS
flags.

XLA chooses how its GPU matmuls round: ``matmul.allow_tf32`` and the reduced-precision flags are
stored and read back only.

>>> import jaxgrad
>>> jaxgrad.backends.cuda.matmul.allow_tf32 = True
>>> jaxgrad.backends.cuda.matmul.allow_tf32
True
>>> jaxgrad.backends.cuda.matmul.allow_tf32 = False
"""

from __future__ import annotations

from typing import Any

from .. import cuda as _cuda

__all__ = ["is_built", "cuBLASModule", "matmul"]

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
