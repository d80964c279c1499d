"""The switches of scaled dot product attention's kernels (torch's ``SDPBackend`` and the
``torch.backends.cuda.*_sdp`` flags): which of them ``scaled_dot_product_attention`` may pick.

On the CPU torch has two kernels, the fused flash kernel and the math composition; jaxgrad has
the same two, and picks between them as torch does (``nn.functional.scaled_dot_product_attention``
reads these flags). The GPU-only kernels' flags are stored and read back.

>>> from jaxgrad.backends._sdp import SDPBackend, enabled_backends
>>> SDPBackend.MATH in enabled_backends()
True
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator


class _BackendEnum(enum.EnumMeta):
    """Prints the class as torch's pybind enum prints (``<class '..._SDPBackend'>``)."""

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__qualname__}'>"


class SDPBackend(enum.Enum, metaclass=_BackendEnum):
    """The kernels of scaled dot product attention, as torch numbers them (``int()`` gives the
    number; a backend is not equal to its number, as torch's is not).

    >>> from jaxgrad.backends._sdp import SDPBackend
    >>> SDPBackend.MATH, int(SDPBackend.FLASH_ATTENTION)
    (<SDPBackend.MATH: 0>, 1)
    """

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value


SDPBackend.__module__ = "jaxgrad.nn.attention"
SDPBackend.__qualname__ = "_SDPBackend"

# the setters' names torch's bool checks print (its flash/mem-efficient setters name math's)
_SETTER_NAMES = {"flash": "set_sdp_use_math", "mem_efficient": "set_sdp_use_math",
                 "math": "set_sdp_use_math", "cudnn": "set_sdp_use_cudnn",
                 "overrideable": "set_sdp_use_overrideable",
                 "fp16_bf16_reduction_math": "set_sdp_use_math"}
BACKEND_OF_FLAG = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
                   "mem_efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH,
                   "overrideable": SDPBackend.OVERRIDEABLE}

_enabled = {name: True for name in BACKEND_OF_FLAG}
_enabled["fp16_bf16_reduction_math"] = False
_priority = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH,
             SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]  # torch's default order


def is_enabled(flag: str) -> bool:
    """Whether the kernel named ``flag`` (``"flash"``, ``"math"``, ...) may be picked.

    >>> from jaxgrad.backends._sdp import is_enabled
    >>> is_enabled("math")
    True
    """
    return _enabled[flag]


def set_enabled(flag: str, enabled: bool) -> None:
    """Switch the kernel named ``flag``; anything but a ``bool`` raises torch's error.

    >>> from jaxgrad.backends._sdp import is_enabled, set_enabled
    >>> set_enabled("cudnn", False); is_enabled("cudnn")
    False
    >>> set_enabled("cudnn", True)
    """
    if not isinstance(enabled, bool):
        suffix = "%s" if flag == "cudnn" else ""  # torch's cudnn message prints a stray %s
        raise RuntimeError(f"{_SETTER_NAMES[flag]} expects a bool, but got "
                           f"{suffix}{type(enabled).__name__}")
    _enabled[flag] = enabled


def enabled_backends(with_priority: bool = False) -> list[SDPBackend]:
    """The enabled kernels, in torch's flag order or (``with_priority``) in priority order.

    >>> from jaxgrad.backends._sdp import enabled_backends
    >>> enabled_backends()[0]
    <SDPBackend.CUDNN_ATTENTION: 3>
    """
    backends = [backend for flag, backend in BACKEND_OF_FLAG.items() if _enabled[flag]]
    if with_priority:
        backends.sort(key=_priority.index)
    return backends


def set_backends(backends: list[SDPBackend], set_priority: bool = False) -> None:
    """Enable exactly ``backends``; with ``set_priority`` their order becomes the priority order
    (the others keep theirs, after them).

    >>> from jaxgrad.backends._sdp import SDPBackend, enabled_backends, set_backends
    >>> before = enabled_backends()
    >>> set_backends([SDPBackend.MATH]); enabled_backends()
    [<SDPBackend.MATH: 0>]
    >>> set_backends(before)
    """
    for flag, backend in BACKEND_OF_FLAG.items():
        _enabled[flag] = backend in backends
    if set_priority:
        order = list(dict.fromkeys(backends))
        _priority[:] = order + [backend for backend in _priority if backend not in order]


@contextlib.contextmanager
def only_backends(backends: list[SDPBackend], set_priority: bool = False) -> Iterator[dict]:
    """Enable exactly ``backends`` for the body; the previous switches come back after it
    (torch's ``sdpa_kernel`` without its argument checks).

    >>> from jaxgrad.backends._sdp import SDPBackend, is_enabled, only_backends
    >>> with only_backends([SDPBackend.MATH]):
    ...     is_enabled("flash")
    False
    >>> is_enabled("flash")
    True
    """
    backends = list(dict.fromkeys(backends))
    previous = enabled_backends(with_priority=set_priority)
    try:
        set_backends(backends, set_priority)
        yield {}
    finally:
        set_backends(previous, set_priority)
