"""The deprecated ``jaxgrad.cpu.amp.GradScaler``."""

from __future__ import annotations

import warnings

from ...amp import grad_scaler

__all__ = ["GradScaler"]


class GradScaler(grad_scaler.GradScaler):
    """Deprecated: ``jaxgrad.amp.GradScaler("cpu", ...)``.

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings(action="ignore"):
    ...     jaxgrad.cpu.amp.GradScaler().get_scale()
    65536.0
    """

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`jaxgrad.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`jaxgrad.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
