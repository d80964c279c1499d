"""torch's top-level autocast switches (``torch.is_autocast_enabled``, ``set_autocast_dtype``...)
over this thread's state in ``jaxgrad._engine.autocast``, with torch's argument errors and the
deprecation warnings of the legacy per-device names."""

from __future__ import annotations

import warnings

from .._core.dtypes import dtype as _dtype
from .._engine import autocast as _autocast

_UNSET = object()


def _device_type_arg(fn: str, value: object, keyword: bool = False) -> str:
    if not isinstance(value, str):
        where = "" if keyword else " (position 1)"
        raise TypeError(f"{fn}(): argument 'device_type'{where} must be str, not "
                        f"{type(value).__name__}")
    _autocast.check_device_type(value)
    return value


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"jaxgrad.{old} is deprecated. Please use jaxgrad.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_enabled(*args: str, **kwargs: str) -> bool:
    """Whether autocast is on in this thread for ``device_type`` (no argument: ``"cuda"``).

    >>> import jaxgrad
    >>> with jaxgrad.autocast("cpu"):
    ...     print(jaxgrad.is_autocast_enabled("cpu"), jaxgrad.is_autocast_enabled())
    True False
    """
    if len(args) + len(kwargs) > 1 or set(kwargs) - {"device_type"}:
        got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}"
                                                            for k, v in kwargs.items()])
        raise TypeError(f"is_autocast_enabled() received an invalid combination of arguments - "
                        f"got ({got}), but expected one of:\n * (str device_type)\n * ()\n")
    if not args and not kwargs:
        return _autocast.is_enabled("cuda")
    value = args[0] if args else kwargs["device_type"]
    return _autocast.is_enabled(_device_type_arg("is_autocast_enabled", value, bool(kwargs)))


def set_autocast_enabled(device_type: object, enabled: object = _UNSET) -> None:
    """Turn autocast on or off in this thread for ``device_type`` (one bool argument: ``"cuda"``).

    >>> import jaxgrad
    >>> jaxgrad.set_autocast_enabled("cpu", True); jaxgrad.is_autocast_enabled("cpu")
    True
    >>> jaxgrad.set_autocast_enabled("cpu", False)
    """
    if enabled is _UNSET:
        device_type, enabled = "cuda", device_type
        if not isinstance(enabled, bool):
            raise TypeError("set_autocast_enabled(): argument 'enabled' (position 1) must be "
                            f"bool, not {type(enabled).__name__}")
    device_type = _device_type_arg("set_autocast_enabled", device_type)
    if not isinstance(enabled, bool):
        raise TypeError("set_autocast_enabled(): argument 'enabled' (position 2) must be bool, "
                        f"not {type(enabled).__name__}")
    _autocast.set_enabled(device_type, enabled)


def get_autocast_dtype(device_type: str) -> _dtype:
    """This thread's autocast dtype for ``device_type`` (bfloat16 for ``"cpu"`` by default).

    >>> import jaxgrad
    >>> jaxgrad.get_autocast_dtype("cpu")
    jaxgrad.bfloat16
    """
    return _autocast.get_dtype(_device_type_arg("get_autocast_dtype", device_type))


def set_autocast_dtype(device_type: str, dtype: _dtype) -> None:
    """Set this thread's autocast dtype for ``device_type``.

    >>> import jaxgrad
    >>> jaxgrad.set_autocast_dtype("cpu", jaxgrad.float16); jaxgrad.get_autocast_dtype("cpu")
    jaxgrad.float16
    >>> jaxgrad.set_autocast_dtype("cpu", jaxgrad.bfloat16)
    """
    device_type = _device_type_arg("set_autocast_dtype", device_type)
    if not isinstance(dtype, _dtype):
        raise TypeError("set_autocast_dtype(): argument 'dtype' (position 2) must be "
                        f"torch.dtype, not {type(dtype).__name__}")
    _autocast.set_dtype(device_type, dtype)


def is_autocast_cache_enabled() -> bool:
    """Whether autocast caches the casts of leaf weights in this thread (default True).

    >>> import jaxgrad
    >>> jaxgrad.is_autocast_cache_enabled()
    True
    """
    return _autocast.is_cache_enabled()


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Turn this thread's autocast cast cache on or off.

    >>> import jaxgrad
    >>> jaxgrad.set_autocast_cache_enabled(True)
    """
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    _autocast.set_cache_enabled(enabled)


def clear_autocast_cache() -> None:
    """Forget this thread's cached casts (``autocast`` does it when its outermost region exits).

    >>> import jaxgrad
    >>> jaxgrad.clear_autocast_cache()
    """
    _autocast.clear_cache()


def autocast_increment_nesting() -> int:
    """Count one more autocast region in this thread; returns the new depth.

    >>> import jaxgrad
    >>> jaxgrad.autocast_increment_nesting(), jaxgrad.autocast_decrement_nesting()
    (1, 0)
    """
    return _autocast.increment_nesting()


def autocast_decrement_nesting() -> int:
    """Count one autocast region less in this thread; returns the new depth.

    >>> import jaxgrad
    >>> jaxgrad.autocast_increment_nesting(), jaxgrad.autocast_decrement_nesting()
    (1, 0)
    """
    return _autocast.decrement_nesting()


def is_autocast_cpu_enabled() -> bool:
    """Deprecated: ``is_autocast_enabled("cpu")``.

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings(action="ignore"):
    ...     jaxgrad.is_autocast_cpu_enabled()
    False
    """
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _autocast.is_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated: ``set_autocast_enabled("cpu", enabled)``.

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings(action="ignore"):
    ...     jaxgrad.set_autocast_cpu_enabled(False)
    """
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> _dtype:
    """Deprecated: ``get_autocast_dtype("cpu")``.

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings(action="ignore"):
    ...     jaxgrad.get_autocast_cpu_dtype()
    jaxgrad.bfloat16
    """
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _autocast.get_dtype("cpu")


def set_autocast_cpu_dtype(dtype: _dtype) -> None:
    """Deprecated: ``set_autocast_dtype("cpu", dtype)``.

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings(action="ignore"):
    ...     jaxgrad.set_autocast_cpu_dtype(jaxgrad.bfloat16)
    """
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype() -> _dtype:
    """Deprecated: ``get_autocast_dtype("cuda")``.

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings(action="ignore"):
    ...     jaxgrad.get_autocast_gpu_dtype()
    jaxgrad.float16
    """
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _autocast.get_dtype("cuda")


def set_autocast_gpu_dtype(dtype: _dtype) -> None:
    """Deprecated: ``set_autocast_dtype("cuda", dtype)``.

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings(action="ignore"):
    ...     jaxgrad.set_autocast_gpu_dtype(jaxgrad.float16)
    """
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)
