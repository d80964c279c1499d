"""JAX configuration jaxgrad needs: explicitly requested 64-bit dtypes, without global x64.

jaxgrad names the dtype of every array it creates, so it does not need ``jax_enable_x64``:
JAX's defaults (``jnp.array(1.0)`` is float32, ``jnp.arange(3)`` int32) stay what the user
configured. What it does need is that an explicitly requested ``float64``/``int64``/
``complex128`` is honoured rather than truncated, which is JAX's ``jax_explicit_x64_dtypes``
setting. That setting only changes code that explicitly asks for a 64-bit dtype (JAX's default
answers it with a warning and a 32-bit array). A value the user chose (the
``JAX_EXPLICIT_X64_DTYPES`` environment variable) is left alone; with ``JAX_ENABLE_X64=1``
everything is 64-bit and the setting does not matter.

Explicit mode alone is not enough for exact float64: some JAX library code builds internal
constants at JAX's default width (``jnp.argmax`` of float64 fails, ``lax.erf_inv`` of float64
is float32-accurate). So every kernel jaxgrad compiles goes through :func:`jit`, and eager
samplers through :func:`in_x64_scope`: they trace, compile and run inside :func:`x64_scope`,
JAX's thread-local ``enable_x64`` (about 0.6 us per call), where JAX behaves as under global
x64 while the user's code outside keeps its defaults.
"""

import functools
import os

import jax
import numpy as np

if "JAX_EXPLICIT_X64_DTYPES" not in os.environ:
    jax.config.update("jax_explicit_x64_dtypes", "allow")


def x64_scope():
    """The context every jaxgrad computation runs in: 64-bit types on, for this thread only
    (JAX's ``jax.enable_x64(True)``), so JAX traces float64 code as under global x64.

    >>> import jax.numpy as jnp
    >>> from jaxgrad._core.jax_setup import x64_scope
    >>> with x64_scope():
    ...     jnp.argmax(jnp.arange(3.0, dtype=jnp.float64)).dtype
    dtype('int64')
    """
    return jax.enable_x64(True)


def host_to_device(host, dtype, device=None) -> jax.Array:
    """A numpy array (or anything numpy takes) as a JAX array of ``dtype`` on ``device``, its
    values exact (``jnp.asarray(..., device=...)`` rounds float64 through float32 when x64 is
    off; ``jax.device_put`` of a numpy float64 array makes it float32).

    >>> import numpy as np
    >>> from jaxgrad._core.jax_setup import host_to_device
    >>> host_to_device(np.array([0.1]), np.float64).tolist()
    [0.1]
    """
    with x64_scope():
        return jax.device_put(np.asarray(host, dtype), device)


def in_x64_scope(fn):
    """Decorate an eager function that calls JAX library code (``jax.random`` samplers) so it
    runs inside :func:`x64_scope`.

    >>> import jax, jax.numpy as jnp
    >>> from jaxgrad._core.jax_setup import in_x64_scope
    >>> draw = in_x64_scope(lambda: jax.random.normal(jax.random.key(0), (2,), jnp.float64))
    >>> draw().dtype
    dtype('float64')
    """

    @functools.wraps(fn)
    def call(*args, **kwargs):
        with x64_scope():
            return fn(*args, **kwargs)

    return call


def jit(fn=None, **options):
    """``jax.jit`` whose calls trace, compile and run with 64-bit types enabled, locally.

    Every kernel jaxgrad compiles goes through here, so a float64 kernel is traced exactly as
    under global x64 (JAX's explicit-x64 mode alone builds some internal constants at 32 bits:
    ``jnp.argmax`` of float64 fails, ``erf_inv`` loses precision), while the user's own JAX code
    keeps its 32-bit defaults. Usable as ``jit(fn)``, ``@jit`` or ``@partial(jit, **options)``.

    >>> import jax.numpy as jnp
    >>> from jaxgrad._core.jax_setup import jit
    >>> jit(lambda x: jnp.argmax(x))(jnp.arange(3.0, dtype=jnp.float64)).dtype
    dtype('int64')
    """
    if fn is None:
        return lambda f: jit(f, **options)
    compiled = jax.jit(fn, **options)

    def call(*args, **kwargs):
        with x64_scope():
            return compiled(*args, **kwargs)

    return call
