"""``jaxgrad.kernel_cache``: where jaxgrad keeps the XLA kernels it compiles, across processes.

A new shape of an eager op compiles an XLA kernel; jaxgrad stores each one on disk, so the next
run of a script (or another pytest-xdist worker) loads it instead of compiling it again. On by
default in ``$XDG_CACHE_HOME/jaxgrad/kernels`` (else ``~/.cache/jaxgrad/kernels``); set
``JAXGRAD_KERNEL_CACHE_DIR`` to move it (``0`` or ``off`` turns it off) and
``JAXGRAD_KERNEL_CACHE_MAX_BYTES`` to bound it (1 GiB by default; least recently used entries
go first), or call :func:`set_dir`. Only jaxgrad's own compilations use it; no JAX setting is
changed, and a user's own ``jax.jit`` programs are compiled by JAX as before.

>>> import jaxgrad
>>> info = jaxgrad.kernel_cache.info()
>>> info.directory == jaxgrad.kernel_cache.get_dir()
True
"""

from ._core.kernel_cache import ENV_DIR as ENV_DIR
from ._core.kernel_cache import ENV_MAX_BYTES as ENV_MAX_BYTES
from ._core.kernel_cache import KernelCacheInfo as KernelCacheInfo
from ._core.kernel_cache import clear as clear
from ._core.kernel_cache import get_dir as get_dir
from ._core.kernel_cache import info as info
from ._core.kernel_cache import set_dir as set_dir

__all__ = ["ENV_DIR", "ENV_MAX_BYTES", "KernelCacheInfo", "clear", "get_dir", "info", "set_dir"]
