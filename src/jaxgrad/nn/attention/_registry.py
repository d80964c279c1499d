"""The registry of flash attention implementations (torch's ``nn.attention._registry``): names
mapped to the callables that activate them, one active at a time.

torch registers its CUDA flash kernels ``"FA3"`` and ``"FA4"`` here; jaxgrad lists them too, and
activating one imports its module as torch does (so a machine without it raises torch's
``ModuleNotFoundError``), but jaxgrad's attention runs through XLA and cannot call those kernels:
with the module present, activation raises ``NotImplementedError``.

>>> from jaxgrad.nn.attention import _registry
>>> _registry.list_flash_attention_impls()
['FA3', 'FA4']
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from typing import Any, Literal

logger = logging.getLogger(__name__)

_RegisterFn = Callable[..., Any]
_FlashAttentionImpl = Literal["FA3", "FA4"]

_impls: dict[str, _RegisterFn] = {}
_active: list[tuple[str, Any]] = []  # at most one (name, handle)


def register_flash_attention_impl(impl: str, *, register_fn: _RegisterFn) -> None:
    """Register the callable that activates the flash attention implementation ``impl``.

    >>> from jaxgrad.nn.attention import register_flash_attention_impl
    >>> register_flash_attention_impl("Mine", register_fn=lambda: None)
    """
    _impls[impl] = register_fn


def activate_flash_attention_impl(impl: str) -> None:
    """Activate a registered implementation (restoring the default first); its handle, if the
    register function returns one, is kept until the next restore.

    >>> from jaxgrad.nn.attention import (activate_flash_attention_impl,
    ...     current_flash_attention_impl, register_flash_attention_impl)
    >>> class Handle:
    ...     def remove(self): pass
    >>> register_flash_attention_impl("Mine", register_fn=Handle)
    >>> activate_flash_attention_impl("Mine"); current_flash_attention_impl()
    'Mine'
    """
    restore_flash_attention_impl(_raise_warn=False)
    register_fn = _impls.get(impl)
    if register_fn is None:
        raise ValueError(f"Unknown flash attention impl '{impl}'. Available implementations: "
                         f"{list_flash_attention_impls()}")
    handle = register_fn()
    if handle is not None:
        _active.append((impl, handle))


def list_flash_attention_impls() -> list[str]:
    """The names of the registered implementations, sorted.

    >>> from jaxgrad.nn.attention import list_flash_attention_impls
    >>> "FA4" in list_flash_attention_impls()
    True
    """
    return sorted(_impls)


def current_flash_attention_impl() -> str | None:
    """The active implementation's name, or None for the default.

    >>> from jaxgrad.nn.attention import current_flash_attention_impl, restore_flash_attention_impl
    >>> restore_flash_attention_impl(_raise_warn=False); current_flash_attention_impl() is None
    True
    """
    return _active[0][0] if _active else None


def restore_flash_attention_impl(_raise_warn: bool = True) -> None:
    """Go back to the default implementation (removing the active one's handle); with nothing
    active, log torch's warning.

    >>> from jaxgrad.nn.attention import restore_flash_attention_impl
    >>> restore_flash_attention_impl(_raise_warn=False)
    """
    if _active:
        _active.pop()[1].remove()
    elif _raise_warn:
        logger.warning("Trying to restore default FA2 impl when no custom impl was activated")


def _cuda_kernels(name: str, module_path: str) -> _RegisterFn:
    def register() -> Any:
        importlib.import_module(module_path)
        raise NotImplementedError(f"{name} registers CUDA kernels with torch's dispatcher; "
                                  "jaxgrad's attention runs through XLA and cannot call them")
    return register


register_flash_attention_impl("FA3", register_fn=_cuda_kernels("FA3", "flash_attn_interface"))
register_flash_attention_impl("FA4", register_fn=_cuda_kernels("FA4", "flash_attn.cute.interface"))
