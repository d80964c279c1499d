"""The deprecated ``jaxgrad.cpu.amp.autocast``."""

from __future__ import annotations

import warnings

from ..._core import dtypes as _dtypes
from ...amp import autocast_mode

__all__ = ["autocast"]


class autocast(autocast_mode.autocast):
    """Deprecated: ``jaxgrad.amp.autocast("cpu", ...)``.

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings(action="ignore"):
    ...     jaxgrad.cpu.amp.autocast().device
    'cpu'
    """

    def __init__(self, enabled: bool = True, dtype: _dtypes.dtype = _dtypes.bfloat16,
                 cache_enabled: bool = True) -> None:
        warnings.warn("`jaxgrad.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`jaxgrad.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
