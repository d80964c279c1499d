"""``jaxgrad.backends.cudnn``: torch's cuDNN switches.

jaxgrad's kernels are XLA's, which choose their own convolution algorithms: ``enabled``,
``benchmark``, ``deterministic`` and ``allow_tf32`` are stored and read back only (programs set
them, as ``torch.backends.cudnn.benchmark = True``, and may read them), and only take a ``bool``,
as torch's do. ``is_available()`` and ``version()`` answer as torch's CPU build does where JAX has
no GPU.

>>> import jaxgrad
>>> jaxgrad.backends.cudnn.benchmark = True
>>> jaxgrad.backends.cudnn.benchmark, jaxgrad.backends.cudnn.enabled
(True, True)
>>> jaxgrad.backends.cudnn.benchmark = False
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator

from .. import cuda as _cuda
from ._flags import BoolFlag, install

try:  # jaxlib's CUDA build reports the cuDNN it loaded; its CPU build has none
    from jax._src.lib import cuda_versions as _cuda_versions
except ImportError:  # pragma: no cover (jaxlib without the module)
    _cuda_versions = None

__all__ = ["is_available", "version", "flags", "set_flags", "CudnnModule"]

# the module's flags (stored on the module by its class; these names are for type checkers)
enabled: bool
benchmark: bool
deterministic: bool
allow_tf32: bool
benchmark_limit: int | None = None


def is_available() -> bool:
    """Whether cuDNN can be used: JAX has a GPU (jaxlib's CUDA build bundles cuDNN); False on
    a CPU-only machine, as torch's CPU build answers.

    >>> import jaxgrad
    >>> jaxgrad.backends.cudnn.is_available() == jaxgrad.cuda.is_available()
    True
    """
    return _cuda.is_available()


def version() -> int | None:
    """The version of cuDNN JAX loaded (as torch's integer, e.g. ``90100``); None where it is
    not available.

    >>> import jaxgrad
    >>> jaxgrad.backends.cudnn.version() is None or jaxgrad.backends.cudnn.is_available()
    True
    """
    if not is_available() or _cuda_versions is None:
        return None
    return int(_cuda_versions.cudnn_get_version())


def set_flags(_enabled: bool | None = None, _benchmark: bool | None = None,
              _benchmark_limit: int | None = None, _deterministic: bool | None = None,
              _allow_tf32: bool | None = None) -> tuple:
    """Set the flags given (None leaves one as it is) and return the previous ones, in
    :func:`flags`' order.

    >>> import jaxgrad
    >>> cudnn = jaxgrad.backends.cudnn
    >>> old = cudnn.set_flags(_deterministic=True); cudnn.deterministic
    True
    >>> _ = cudnn.set_flags(*old); cudnn.deterministic
    False
    """
    module = _MODULE
    orig = (module.enabled, module.benchmark, module.benchmark_limit, module.deterministic,
            module.allow_tf32)
    if _enabled is not None:
        module.enabled = _enabled
    if _benchmark is not None:
        module.benchmark = _benchmark
    if _benchmark_limit is not None and is_available():
        module.benchmark_limit = _benchmark_limit
    if _deterministic is not None:
        module.deterministic = _deterministic
    if _allow_tf32 is not None:
        module.allow_tf32 = _allow_tf32
    return orig


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True) -> Iterator[None]:
    """Set all the flags inside a ``with`` block (torch's defaults: cuDNN disabled) and restore
    them after it.

    >>> import jaxgrad
    >>> with jaxgrad.backends.cudnn.flags(enabled=False):
    ...     print(jaxgrad.backends.cudnn.enabled)
    False
    >>> jaxgrad.backends.cudnn.enabled
    True
    """
    orig = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32)
    try:
        yield
    finally:
        set_flags(*orig)


class CudnnModule(types.ModuleType):
    """The class of ``jaxgrad.backends.cudnn``: its flags take only a ``bool``.

    >>> import jaxgrad
    >>> type(jaxgrad.backends.cudnn).__name__
    'CudnnModule'
    >>> jaxgrad.backends.cudnn.deterministic = 1
    Traceback (most recent call last):
    RuntimeError: set_deterministic_cudnn expects a bool, but got int
    """

    enabled = BoolFlag(True, "set_enabled_cudnn")
    benchmark = BoolFlag(False, "set_benchmark_cudnn")
    deterministic = BoolFlag(False, "set_deterministic_cudnn")
    # torch 2.13 names cuBLAS's setter in this message too
    allow_tf32 = BoolFlag(True, "set_allow_tf32_cublas")


_MODULE = install(__name__, CudnnModule)
