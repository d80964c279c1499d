"""``jaxgrad.backends.mkldnn``: torch's oneDNN (MKL-DNN) switches.

jaxgrad's CPU kernels are XLA's: ``enabled``, ``deterministic`` and ``allow_tf32`` are stored
and read back only, and take only a ``bool``, as torch's do. ``is_available()`` answers True, as
torch's x86 CPU build does.

>>> import jaxgrad
>>> jaxgrad.backends.mkldnn.enabled, jaxgrad.backends.mkldnn.is_available()
(True, True)
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator

from ._flags import BoolFlag, install

__all__ = ["is_available", "flags", "set_flags", "MkldnnModule"]

# the module's flags (stored on the module by its class; these names are for type checkers)
enabled: bool
deterministic: bool
allow_tf32: bool


def is_available() -> bool:
    """Whether oneDNN is available: True, as in torch's CPU build (the flags it answers for
    are stored only: XLA compiles jaxgrad's kernels).

    >>> import jaxgrad
    >>> jaxgrad.backends.mkldnn.is_available()
    True
    """
    return True


def set_flags(_enabled: bool | None = None, _deterministic: bool | None = None,
              _allow_tf32: bool | None = None) -> tuple:
    """Set the flags given (None leaves one as it is) and return the previous ones.

    >>> import jaxgrad
    >>> mkldnn = jaxgrad.backends.mkldnn
    >>> old = mkldnn.set_flags(False); mkldnn.enabled
    False
    >>> _ = mkldnn.set_flags(*old); mkldnn.enabled
    True
    """
    module = _MODULE
    orig = (module.enabled, module.deterministic, module.allow_tf32)
    if _enabled is not None:
        module.enabled = _enabled
    if _deterministic is not None:
        module.deterministic = _deterministic
    if _allow_tf32 is not None:
        module.allow_tf32 = _allow_tf32
    return orig


@contextlib.contextmanager
def flags(enabled: bool = False, deterministic: bool = False,
          allow_tf32: bool = True) -> Iterator[None]:
    """Set the flags inside a ``with`` block (torch's defaults: oneDNN disabled) and restore
    them after it.

    >>> import jaxgrad
    >>> with jaxgrad.backends.mkldnn.flags(enabled=False):
    ...     print(jaxgrad.backends.mkldnn.enabled)
    False
    """
    orig = set_flags(enabled, deterministic, allow_tf32)
    try:
        yield
    finally:
        set_flags(*orig)


class MkldnnModule(types.ModuleType):
    """The class of ``jaxgrad.backends.mkldnn``: its flags take only a ``bool``.

    >>> import jaxgrad
    >>> jaxgrad.backends.mkldnn.enabled = 1
    Traceback (most recent call last):
    RuntimeError: set_enabled_mkldnn expects a bool, but got int
    """

    enabled = BoolFlag(True, "set_enabled_mkldnn")
    deterministic = BoolFlag(False, "set_deterministic_mkldnn")
    allow_tf32 = BoolFlag(False, "set_onednn_allow_tf32")


_MODULE = install(__name__, MkldnnModule)
