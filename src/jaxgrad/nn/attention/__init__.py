"""``jaxgrad.nn.attention``: what alters ``nn.functional.scaled_dot_product_attention``, at
torch's names: ``SDPBackend``, ``sdpa_kernel`` (pick the kernels for a block) and the flash
implementation registry.

On the CPU torch and jaxgrad have the same two kernels, the fused flash kernel and the math
composition (their gradient nodes differ: ``ScaledDotProductFlashAttentionForCpuBackward0`` and
the math ops' own), and pick between them by the same rules; with neither allowed, attention
raises torch's errors.

>>> import jaxgrad, jaxgrad.nn.functional as F
>>> from jaxgrad.nn.attention import SDPBackend, sdpa_kernel
>>> q = jaxgrad.ones(1, 2, 3, 4, requires_grad=True)
>>> with sdpa_kernel(SDPBackend.MATH):
...     F.scaled_dot_product_attention(q, q, q).grad_fn.name()
'UnsafeViewBackward0'
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

from ...backends._sdp import BACKEND_OF_FLAG, SDPBackend, enabled_backends, only_backends
from ...backends.cuda import SDPAParams as SDPAParams
from ...backends.cuda import can_use_efficient_attention as can_use_efficient_attention
from ...backends.cuda import can_use_flash_attention as can_use_flash_attention
from . import _registry as _registry
from ._registry import _FlashAttentionImpl as _FlashAttentionImpl
from ._registry import _RegisterFn as _RegisterFn
from ._registry import activate_flash_attention_impl as activate_flash_attention_impl
from ._registry import current_flash_attention_impl as current_flash_attention_impl
from ._registry import list_flash_attention_impls as list_flash_attention_impls
from ._registry import register_flash_attention_impl as register_flash_attention_impl
from ._registry import restore_flash_attention_impl as restore_flash_attention_impl

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS",
           "register_flash_attention_impl", "activate_flash_attention_impl",
           "list_flash_attention_impls", "current_flash_attention_impl",
           "restore_flash_attention_impl"]

_SDPBackend = SDPBackend  # the class's qualified name, as torch's

WARN_FOR_UNFUSED_KERNELS = False
"""torch's switch for warning why the fused kernels were not used by tensor-subclass masks."""

def _raise_kernel_warnings(params: SDPAParams) -> None:
    """With ``WARN_FOR_UNFUSED_KERNELS`` on, warn that the fused kernels were not used (a bias
    subclass's attention; jaxgrad has no CUDA kernels to say more about)."""
    if WARN_FOR_UNFUSED_KERNELS:
        if not can_use_efficient_attention(params):
            warnings.warn("Efficient attention can't be used because:", stacklevel=2)
            can_use_efficient_attention(params, True)
        if not can_use_flash_attention(params):
            warnings.warn("Flash attention can't be used because:", stacklevel=2)
            can_use_flash_attention(params, True)


_backend_names = {flag: backend.name for flag, backend in BACKEND_OF_FLAG.items()}


def _backend_from_string(name: str) -> SDPBackend:
    return getattr(SDPBackend, name)


def _cur_sdpa_kernel_backends(with_priority: bool = False) -> list[SDPBackend]:
    return enabled_backends(with_priority)


def _get_flash_version() -> str:
    return "2.5.7"


@contextlib.contextmanager
def sdpa_kernel(backends: list[SDPBackend] | SDPBackend,
                set_priority: bool = False) -> Iterator[dict]:
    """Allow only ``backends`` in scaled dot product attention for the body of a ``with``; the
    previous switches come back after it. With ``set_priority`` the list's order is the
    kernels' priority order.

    >>> import jaxgrad, jaxgrad.nn.functional as F
    >>> from jaxgrad.nn.attention import SDPBackend, sdpa_kernel
    >>> q = jaxgrad.ones(1, 2, 3, 4, requires_grad=True)
    >>> with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
    ...     F.scaled_dot_product_attention(q, q, q).grad_fn.name()
    'ScaledDotProductFlashAttentionForCpuBackward0'
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    with only_backends([backends] if isinstance(backends, SDPBackend) else backends,
                       set_priority) as context:
        yield context


@contextlib.contextmanager
def _sdpa_kernel_variadic(*backends: SDPBackend) -> Iterator[None]:
    with sdpa_kernel(list(backends)):
        yield
