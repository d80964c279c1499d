"""64-bit types for jaxgrad's own computations, without touching the user's JAX configuration.

jaxgrad changes no JAX setting, at import or later: JAX's defaults (``jnp.array(1.0)`` is
float32, ``jnp.arange(3)`` int32, an explicit request for ``float64`` outside ``jax_enable_x64``
answered with a warning and a 32-bit array) stay what the user configured. jaxgrad still needs
float64/int64/complex128 as torch has them, so every JAX computation jaxgrad runs - its compiled
kernels (:func:`jit`), its declared ops called eagerly (the function and method forms), creation
and host transfers (:func:`host_to_device`), samplers (:func:`in_x64_scope`) - runs inside
:func:`x64_scope`: JAX's thread-local ``enable_x64``, where JAX behaves as under global x64
(also inside JAX library code that builds internal constants: ``jnp.argmax`` of float64,
``lax.erf_inv``). It is entered around jaxgrad's own code: not around the user's hooks, a
Module's forward or a custom Function's backward, but around the function a ``jaxgrad.func``
transform or ``jaxgrad.compile`` traces (its float64 tensors trace as float64). One entry costs
about 0.1 us (JAX's thread-local state switched directly), a nested one a thread-local read.
"""

import functools
import threading

import jax
import numpy as np
from jax._src import config as _jax_config  # (its thread-local x64 state; not public)


def x64_scope():
    """The context every jaxgrad computation runs in: 64-bit types on, for this thread only
    (JAX's ``jax.enable_x64(True)``), so JAX traces float64 code as under global x64.

    >>> import jax.numpy as jnp
    >>> from jaxgrad._core.jax_setup import x64_scope
    >>> with x64_scope():
    ...     jnp.argmax(jnp.arange(3.0, dtype=jnp.float64)).dtype
    dtype('int64')
    """
    return _X64Scope()


class _ScopeState(threading.local):
    on = False  # (a class default: reading it is one attribute lookup, in every thread)


# whether jaxgrad's own code runs on this thread: ``SCOPE.on`` (the hot paths read it directly
# and skip entering a nested scope)
SCOPE = _ScopeState()
# JAX's thread-local x64 state, switched directly (0.1 us) where this JAX has the methods its own
# ``enable_x64`` context manager uses (0.6 us through the context manager)
_X64_STATE = getattr(_jax_config, "enable_x64", None)
_SWAP = all(hasattr(_X64_STATE, m) for m in ("swap_local", "set_local"))


class _X64Scope:
    """64-bit types on for this thread, entered by the outermost scope only (nested ones cost a
    thread-local read)."""

    __slots__ = ("_previous",)

    def __enter__(self) -> None:
        if SCOPE.on:
            self._previous = _NESTED
            return
        if _SWAP:
            self._previous = _X64_STATE.swap_local(True)
        else:
            self._previous = jax.enable_x64(True)
            self._previous.__enter__()
        SCOPE.on = True

    def __exit__(self, *exc: object) -> None:
        previous = self._previous
        if previous is _NESTED:
            return
        SCOPE.on = False
        if _SWAP:
            _X64_STATE.set_local(previous)
        else:
            previous.__exit__(*exc)


_NESTED = object()


def host_to_device(host, dtype, device=None) -> jax.Array:
    """A numpy array (or anything numpy takes) as a JAX array of ``dtype`` on ``device``, its
    values exact (``jnp.asarray(..., device=...)`` rounds float64 through float32 when x64 is
    off; ``jax.device_put`` of a numpy float64 array makes it float32).

    >>> import numpy as np
    >>> from jaxgrad._core.jax_setup import host_to_device
    >>> host_to_device(np.array([0.1]), np.float64).tolist()
    [0.1]
    """
    # (a caller's numpy array is copied first: on the CPU ``device_put`` may alias its memory,
    # asynchronously, so later writes to the array would show in the tensor)
    values = np.array(host, dtype) if isinstance(host, np.ndarray) else np.asarray(host, dtype)
    with x64_scope():
        return jax.device_put(values, device)


def in_scope() -> bool:
    """Whether jaxgrad's own code is running on this thread (inside :func:`x64_scope`).

    >>> from jaxgrad._core.jax_setup import in_scope, x64_scope
    >>> with x64_scope():
    ...     in_scope()
    True
    """
    return SCOPE.on


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
        if SCOPE.on:
            return fn(*args, **kwargs)
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
    >>> from jaxgrad._core.jax_setup import host_to_device, jit
    >>> import numpy as np
    >>> jit(lambda x: jnp.argmax(x))(host_to_device(np.arange(3.0), np.float64)).dtype
    dtype('int64')
    """
    if fn is None:
        return lambda f: jit(f, **options)
    compiled = jax.jit(fn, **options)

    def call(*args, **kwargs):
        if SCOPE.on:  # (the common case: called from jaxgrad's code, already in the scope)
            return compiled(*args, **kwargs)
        with x64_scope():
            return compiled(*args, **kwargs)

    call.in_scope = compiled  # (what a hot caller that checked ``SCOPE.on`` itself may call)
    return call
