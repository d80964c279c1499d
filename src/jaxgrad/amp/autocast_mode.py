"""``jaxgrad.autocast``: regions where ops run in the precision torch's autocast picks for them
(``mm``/``linear``/``conv*`` in bfloat16 on CPU, losses and reductions in float32...), and the
helpers for custom autograd Functions (``custom_fwd``/``custom_bwd``).

The casting itself happens in the dispatcher (see ``jaxgrad._engine.autocast`` for the policy); this
module manages the per-thread switches as torch's context manager does."""

from __future__ import annotations

import collections.abc
import functools
import warnings
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from .. import cuda as _cuda
from .._core.dtypes import bfloat16, float16, float64
from .._core.dtypes import dtype as _dtype
from .._core.tensor import Tensor
from .._engine import autocast as _autocast
from . import _switches

__all__ = ["autocast", "autocast_decorator", "custom_bwd", "custom_fwd", "is_autocast_available"]


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can be used on ``device_type`` (``"cpu"``, ``"cuda"``, ``"tpu"``...).

    >>> import jaxgrad
    >>> jaxgrad.amp.is_autocast_available("cpu")
    True
    """
    _autocast.check_device_type(device_type)
    return device_type in _autocast.AVAILABLE


def autocast_decorator(autocast_instance: autocast, func: Callable) -> Callable:
    """``func`` run inside ``autocast_instance`` at every call.

    >>> import jaxgrad
    >>> from jaxgrad.amp.autocast_mode import autocast_decorator
    >>> f = autocast_decorator(jaxgrad.autocast("cpu"), jaxgrad.mm)
    >>> f(jaxgrad.ones(2, 2), jaxgrad.ones(2, 2)).dtype
    jaxgrad.bfloat16
    """

    @functools.wraps(func)
    def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
        with autocast_instance:
            return func(*args, **kwargs)

    return decorate_autocast


def _platform_missing(device_type: str) -> str | None:
    """The warning for an autocast region on a device type JAX has none of (then it is off)."""
    if device_type == "cuda" and not _cuda.is_available():
        return "CUDA is not available or torch_xla is imported. Disabling autocast."
    if device_type == "tpu" and not _has_tpu():
        return "TPU is not available. Disabling autocast."
    return None


def _has_tpu() -> bool:
    try:
        return bool(jax.devices("tpu"))
    except RuntimeError:
        return False


class autocast:
    """A region (context manager or decorator) where ops run in mixed precision.

    ``device_type`` is the type of the devices whose tensors are cast (``"cpu"``; ``"cuda"`` for
    tensors on a JAX GPU; ``"tpu"`` for tensors on a TPU); ``dtype`` the lower precision
    (``get_autocast_dtype(device_type)`` by default: bfloat16 on CPU); ``cache_enabled``
    whether float32 leaf weights are cast once per region.

    >>> import jaxgrad
    >>> a = jaxgrad.ones(2, 2, requires_grad=True)
    >>> with jaxgrad.autocast("cpu"):
    ...     y = jaxgrad.mm(a, a)
    >>> y.dtype, y.grad_fn.next_functions[0][0].name()
    (jaxgrad.bfloat16, 'ToCopyBackward0')
    """

    def __init__(self, device_type: str, dtype: _dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = _switches.get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'")
        self._cache_enabled = (_autocast.is_cache_enabled() if cache_enabled is None
                               else cache_enabled)
        if enabled:
            enabled = self._check_dtype(device_type)
        self._enabled = enabled

    def _check_dtype(self, device_type: str) -> bool:
        """torch's refusals: warn and turn the region off, or raise."""
        missing = _platform_missing(device_type)
        if missing is not None:
            warnings.warn(missing, stacklevel=3)
            return False
        if device_type == "cuda":
            if self.fast_dtype is bfloat16 and not _cuda.is_bf16_supported():
                raise RuntimeError("Current CUDA Device does not support bfloat16. Please "
                                   "switch dtype to float16.")
            return True
        supported = (bfloat16, float16)
        if self.fast_dtype not in supported:
            name = device_type.upper()
            warnings.warn(
                f"In {name} autocast, but the target dtype is not supported. Disabling "
                f"autocast.\n{name} Autocast only supports dtypes of "
                + ", ".join(map(str, supported)) + " currently.", stacklevel=3)
            return False
        return True

    def __enter__(self) -> autocast:
        self.prev_cache_enabled = _autocast.is_cache_enabled()
        self.prev = _autocast.is_enabled(self.device)
        self.prev_fastdtype = _autocast.get_dtype(self.device)
        _autocast.set_enabled(self.device, bool(self._enabled))
        _autocast.set_dtype(self.device, self.fast_dtype)
        _autocast.increment_nesting()
        _autocast.set_cache_enabled(bool(self._cache_enabled))
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> bool:
        if _autocast.decrement_nesting() == 0:
            _autocast.clear_cache()
        _autocast.set_enabled(self.device, self.prev)
        _autocast.set_dtype(self.device, self.prev_fastdtype)
        _autocast.set_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func: Callable) -> Callable:
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. Did you "
                "mean to use autocast as a context manager? For example:\n"
                "    with jaxgrad.autocast(device_type=...):\n"
                "        output = model(input)")
        return autocast_decorator(self, func)


def _cast(value: Any, device_type: str, dtype: _dtype) -> Any:
    """Floating-point tensors (not float64) on ``device_type`` in ``value`` (and its containers)
    cast to ``dtype``."""
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype is not float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        cast = (_cast(v, device_type, dtype) for v in value)
        return type(value)(cast) if isinstance(value, (list, tuple)) else cast
    return value


def _device_type_keyword(device_type: object) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd: Callable | None = None, *, device_type: str,
               cast_inputs: _dtype | None = None) -> Callable:
    """Decorator for a custom Function's ``forward``: remembers the autocast state for
    ``custom_bwd``; with ``cast_inputs``, inside an autocast region, casts floating-point tensor
    arguments to it and runs ``forward`` with autocast off.

    >>> import jaxgrad
    >>> class Double(jaxgrad.autograd.Function):
    ...     @staticmethod
    ...     @jaxgrad.amp.custom_fwd(device_type="cpu", cast_inputs=jaxgrad.float32)
    ...     def forward(ctx, x):
    ...         return x * 2
    ...     @staticmethod
    ...     @jaxgrad.amp.custom_bwd(device_type="cpu")
    ...     def backward(ctx, g):
    ...         return g * 2
    >>> with jaxgrad.autocast("cpu"):
    ...     Double.apply(jaxgrad.ones(2, dtype=jaxgrad.bfloat16)).dtype
    jaxgrad.float32
    """
    _device_type_keyword(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        args[0]._dtype = _autocast.get_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _autocast.is_enabled(device_type)
            return fwd(*args, **kwargs)
        args[0]._fwd_used_autocast = False
        if not _autocast.is_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs),
                       **_cast(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str) -> Callable:
    """Decorator for a custom Function's ``backward``: runs it with the autocast state its
    ``forward`` (decorated with ``custom_fwd``) ran with.

    >>> import jaxgrad
    >>> jaxgrad.amp.custom_bwd(device_type="cpu")(lambda ctx, g: g).__name__
    '<lambda>'
    """
    _device_type_keyword(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
