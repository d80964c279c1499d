"""torch's process-wide settings and build facts: thread counts, float32 matmul precision,
deterministic algorithms, flush-denormal, and the ``has_*`` flags of a CPU build.

They are recorded and reported as torch reports them. None changes how jaxgrad computes, and none
touches JAX's configuration (XLA owns its thread pools; jaxgrad's float32 matmuls always run at
full precision on CPU, which is torch's "highest"; its CPU kernels are deterministic already).

>>> import jaxgrad
>>> jaxgrad.get_float32_matmul_precision(), jaxgrad.are_deterministic_algorithms_enabled()
('highest', False)
"""

from __future__ import annotations

import builtins
import os
import warnings

has_lapack = True
has_mkl = True
has_openmp = True
has_spectral = True


class _Settings:
    threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)
    interop_threads = threads
    interop_set = False
    matmul_precision = "highest"
    deterministic = False
    warn_only = False


def get_num_threads() -> int:
    """The number of threads torch's intra-op parallelism uses (as set).

    >>> import jaxgrad
    >>> jaxgrad.get_num_threads() >= 1
    True
    """
    return _Settings.threads


def set_num_threads(int: int) -> None:
    """Set the intra-op thread count (recorded; XLA keeps its own pool).

    >>> import jaxgrad
    >>> n = jaxgrad.get_num_threads(); jaxgrad.set_num_threads(1); jaxgrad.get_num_threads()
    1
    >>> jaxgrad.set_num_threads(n)
    """
    if not isinstance(int, builtins.int) or isinstance(int, bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(int).__name__}")
    if int <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _Settings.threads = int


def get_num_interop_threads() -> int:
    """The inter-op thread count.

    >>> import jaxgrad
    >>> jaxgrad.get_num_interop_threads() >= 1
    True
    """
    return _Settings.interop_threads


def set_num_interop_threads(int: int) -> None:
    """Set the inter-op thread count: once per process, as torch allows.

    >>> import jaxgrad
    >>> jaxgrad.set_num_interop_threads(0)
    Traceback (most recent call last):
    RuntimeError: set_num_interop_threads expects a positive integer
    """
    if not isinstance(int, builtins.int) or isinstance(int, bool):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got "
                           f"{type(int).__name__}")
    if int <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _Settings.interop_set:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _Settings.interop_threads, _Settings.interop_set = int, True


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision set: ``"highest"``, ``"high"`` or ``"medium"``.

    >>> import jaxgrad
    >>> jaxgrad.get_float32_matmul_precision()
    'highest'
    """
    return _Settings.matmul_precision


def set_float32_matmul_precision(precision: str) -> None:
    """Record the float32 matmul precision (jaxgrad's CPU matmuls are always full precision);
    another value warns and changes nothing, as torch's.

    >>> import jaxgrad
    >>> jaxgrad.set_float32_matmul_precision("high"); jaxgrad.get_float32_matmul_precision()
    'high'
    >>> jaxgrad.set_float32_matmul_precision("highest")
    """
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _Settings.matmul_precision = precision


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record whether only deterministic algorithms may run (jaxgrad's CPU kernels are).

    >>> import jaxgrad
    >>> jaxgrad.use_deterministic_algorithms(True)
    >>> jaxgrad.are_deterministic_algorithms_enabled()
    True
    >>> jaxgrad.use_deterministic_algorithms(False)
    """
    for name, value, where in (("mode", mode, " (position 1)"), ("warn_only", warn_only, "")):
        if not isinstance(value, bool):
            raise TypeError(f"_set_deterministic_algorithms(): argument '{name}'{where} must be "
                            f"bool, not {type(value).__name__}")
    _Settings.deterministic, _Settings.warn_only = mode, mode and warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """Whether :func:`use_deterministic_algorithms` is on.

    >>> import jaxgrad
    >>> jaxgrad.are_deterministic_algorithms_enabled()
    False
    """
    return _Settings.deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether :func:`use_deterministic_algorithms` is on with ``warn_only``.

    >>> import jaxgrad
    >>> jaxgrad.is_deterministic_algorithms_warn_only_enabled()
    False
    """
    return _Settings.warn_only


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (warn) or 2 (error): the deterministic setting as one number.

    >>> import jaxgrad
    >>> jaxgrad.get_deterministic_debug_mode()
    0
    """
    if not _Settings.deterministic:
        return 0
    return 1 if _Settings.warn_only else 2


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """:func:`use_deterministic_algorithms` by one value: ``"default"``/0, ``"warn"``/1,
    ``"error"``/2.

    >>> import jaxgrad
    >>> jaxgrad.set_deterministic_debug_mode("warn"); jaxgrad.get_deterministic_debug_mode()
    1
    >>> jaxgrad.set_deterministic_debug_mode(0)
    """
    if not isinstance(debug_mode, (builtins.int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        modes = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def set_flush_denormal(mode: bool) -> bool:
    """Whether flushing denormal floats to zero could be switched: jaxgrad cannot (XLA decides),
    so this returns False and nothing changes (torch's answer on a CPU without the feature).

    >>> import jaxgrad
    >>> jaxgrad.set_flush_denormal(False)
    False
    """
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return False


def compiled_with_cxx11_abi() -> bool:
    """True, as torch's wheels answer.

    >>> import jaxgrad
    >>> jaxgrad.compiled_with_cxx11_abi()
    True
    """
    return True
