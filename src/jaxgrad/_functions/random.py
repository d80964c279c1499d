"""jaxgrad's own seeded random numbers: a ``Generator`` holding a JAX PRNG key.

``manual_seed(s)`` makes every following ``rand``/``randn``/``randint`` reproducible. The values
come from JAX's threefry generator, so they differ from torch's (torch's Mersenne twister is not
reproduced); the distributions are the same. ``manual_seed`` also takes a ``jax.random`` key,
and ``Generator.key()`` hands the current one out.

Inside a JAX trace (``jax.jit``, ``jax.vmap``...) a generator holding a concrete key refuses to
draw: its next key would be a tracer stored into (global) state, or a constant baked into the
compiled program. Thread the key instead: pass it as an argument of the traced function and
draw from ``Generator().manual_seed(key)`` made inside it.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
import math
import threading
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import device as _device
from .._core import dtypes as _dtypes
from .._core.epoch import changed as structure_changed
from .._core.jax_setup import host_to_device, in_x64_scope, jit
from .._core.layout import check_strided
from .._core.tensor import Tensor
from .._core.typename import public_path, type_name
from .._core.warn_once import warn_at_user_line
from .._engine.dispatch import RESIZE_WARNING, apply, apply_inplace, check_overlap, dispatches
from .._engine.profiling import composite
from .._ops import random_ops as R
from .._ops._table import Op
from .arguments import broadcast_shapes, concrete_values
from .creation import _finish, _float_or, _size, requested_size


@public_path("jaxgrad")
class Generator:
    """A source of random numbers; split a fresh key for every draw.

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> a = jaxgrad.rand(2, generator=g); _ = g.manual_seed(0)
    >>> bool((a == jaxgrad.rand(2, generator=g)).all())
    True
    """

    _jaxgrad_managed_attrs = True  # jaxgrad.compile: seeding records the change (_epoch)

    def __init__(self, device: Any = "cpu", *, _lazy: bool = False) -> None:
        self._lock = threading.Lock()
        self._seed = 67280421310721
        # the default generator makes its key at its first use: ``import jaxgrad`` starts no
        # JAX computation (``jax.distributed.initialize`` must come before any)
        self._key = None if _lazy else _key_of(self._seed)
        self.device = device

    def _current_key(self) -> jax.Array:
        key = self._key
        if key is None:
            with jax.ensure_compile_time_eval():  # (a concrete key, even inside a JAX trace)
                key = self._key = _key_of(self._seed % (2**63))
        return key

    def manual_seed(self, seed: int | jax.Array) -> Generator:
        """Reseed this generator with ``seed``, an int or a ``jax.random`` key (typed, or raw
        ``uint32`` key data); returns the generator. ``manual_seed(jax.random.key(s))`` draws as
        ``manual_seed(s)`` does, and ``initial_seed()`` then reads ``s`` back.

        >>> import jax, jaxgrad
        >>> jaxgrad.Generator().manual_seed(3).initial_seed()
        3
        >>> jaxgrad.Generator().manual_seed(jax.random.key(3)).initial_seed()
        3
        """
        structure_changed()
        if isinstance(seed, (jax.Array, np.ndarray)):
            key = _as_key(seed)
            if isinstance(key, jax.core.Tracer) and self is default_generator:
                raise RuntimeError(TRACED_SEED_MESSAGE)
            with self._lock:
                self._key = key
                self._seed = _seed_of(key)
            return self
        with self._lock:
            self._seed = int(seed)
            # (a key not made yet stays lazy: seeding starts no JAX computation either)
            self._key = None if self._key is None else _key_of(self._seed % (2**63))
        return self

    def key(self) -> jax.Array:
        """The generator's current ``jax.random`` key (a typed key array); drawing does not
        consume it, so ``Generator().manual_seed(g.key())`` continues as ``g`` would.

        >>> import jax, jaxgrad
        >>> g = jaxgrad.Generator().manual_seed(0)
        >>> h = jaxgrad.Generator().manual_seed(g.key())
        >>> bool((jaxgrad.rand(3, generator=g) == jaxgrad.rand(3, generator=h)).all())
        True
        """
        return self._current_key()

    def seed(self) -> int:
        """Reseed from a non-deterministic random number; returns that seed.

        >>> import jaxgrad
        >>> g = jaxgrad.Generator()
        >>> g.seed() == g.initial_seed()
        True
        """
        import secrets

        s = secrets.randbits(63)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with.

        >>> import jaxgrad
        >>> jaxgrad.Generator().manual_seed(42).initial_seed()
        42
        """
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state as a ``uint8`` tensor (torch's ByteTensor): its seed's 8 bytes,
        then its key's data, for :meth:`set_state`.

        >>> import jaxgrad
        >>> g = jaxgrad.Generator()
        >>> state = g.get_state(); a = jaxgrad.rand(2, generator=g)
        >>> _ = g.set_state(state); bool((a == jaxgrad.rand(2, generator=g)).all())
        True
        >>> state.dtype
        jaxgrad.uint8
        """
        seed = np.frombuffer(np.uint64(self._seed % 2**64).tobytes(), np.uint8)
        key = jax.lax.bitcast_convert_type(jax.random.key_data(self._current_key()), jnp.uint8)
        return Tensor._make(jnp.concatenate([jnp.asarray(seed), key.reshape(-1)]))

    def set_state(self, state: Tensor) -> Generator:
        """Restore a state from :meth:`get_state`; returns the generator."""
        if not isinstance(state, Tensor) or state.dtype.np != np.uint8:
            raise TypeError("RNG state must be a jaxgrad.ByteTensor")
        key_shape = jax.random.key_data(self._current_key()).shape
        if state.numel() != 8 + 4 * math.prod(key_shape):
            raise RuntimeError("RNG state is wrong size")
        data = state.detach()._value.reshape(-1)
        structure_changed()
        if not isinstance(data, jax.core.Tracer):  # a traced state (compile) keeps its seed
            self._seed = int(np.frombuffer(np.asarray(data[:8]).tobytes(), np.uint64)[0])
        key = jax.lax.bitcast_convert_type(data[8:].reshape(*key_shape, 4), jnp.uint32)
        self._key = jax.random.wrap_key_data(key)
        return self

    def next_key(self) -> jax.Array:
        """Split the key: keep one half for later draws, return the other for this one.

        >>> import jax, jaxgrad
        >>> g = jaxgrad.Generator()
        >>> jax.dtypes.issubdtype(g.next_key().dtype, jax.dtypes.prng_key)
        True
        """
        source = getattr(_key_source, "next", None)
        if source is not None:
            return source()
        with self._lock:
            new, sub = _split_in_two(self._current_key())
            self._keep(new)
        return sub

    def draw(self, sample: Callable[[jax.Array], tuple[jax.Array, Any]]) -> Any:
        """``sample(key) -> (next key, values)`` under the lock: a jitted sampler that splits
        the key itself (as :meth:`next_key` does) draws in one XLA call instead of two."""
        source = getattr(_key_source, "next", None)
        if source is not None:
            return sample(source())[1]
        with self._lock:
            new, values = sample(self._current_key())
            self._keep(new)
        return values

    def _keep(self, new: jax.Array) -> None:
        """Store the next key, unless it is a tracer made from a concrete key (a JAX trace
        drawing from this generator)."""
        if isinstance(new, jax.core.Tracer) and not isinstance(self._key, jax.core.Tracer):
            raise RuntimeError(TRACED_DRAW_MESSAGE)
        self._key = new


TRACED_DRAW_MESSAGE = (
    "jaxgrad's random functions cannot draw from a generator seeded outside a JAX trace (jax.jit, "
    "jax.vmap, ...): its next key would be a tracer. Thread the key: pass a jax.random key into "
    "the traced function and draw with generator=jaxgrad.Generator().manual_seed(key).")
TRACED_SEED_MESSAGE = (
    "jaxgrad.manual_seed() cannot store a traced key into the default generator; seed a local "
    "jaxgrad.Generator().manual_seed(key) inside the traced function instead.")


def _key_of(seed: int) -> jax.Array:
    """``jax.random.key(seed)`` as with 64-bit types on, whatever JAX's x64 flag says (without
    it JAX drops a seed's high 32 bits): threefry's key data is the seed's two 32-bit words,
    wrapped from the host (no XLA kernel to compile)."""
    if jax.config.jax_default_prng_impl == "threefry2x32":
        return jax.random.wrap_key_data(np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32))
    key = jax.random.key(seed & 0xFFFFFFFF)
    if seed >> 32 and jax.random.key_data(key).shape == (2,):
        key = jax.random.wrap_key_data(np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32))
    return key


@jit
def _split_in_two(key: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``jax.random.split(key)`` as two keys, in one XLA kernel (unpacking the split's array
    eagerly would compile a second one)."""
    new, sub = jax.random.split(key)
    return new, sub


def _as_key(seed: Any) -> jax.Array:
    """A typed key from a typed key or raw ``uint32`` key data."""
    if jax.dtypes.issubdtype(seed.dtype, jax.dtypes.prng_key):
        return seed
    if seed.dtype != np.uint32:
        raise TypeError(f"manual_seed() expected an int or a jax.random key, got an array of "
                        f"dtype {seed.dtype}")
    return jax.random.wrap_key_data(seed)


def _seed_of(key: jax.Array) -> int:
    """The integer whose ``jax.random.key`` is ``key`` (its key data words, most significant
    first); -1 for a traced key."""
    if isinstance(key, jax.core.Tracer):
        return -1
    value = 0
    for word in np.asarray(jax.random.key_data(key)).ravel():
        value = (value << 32) | int(word)
    return value


default_generator = Generator(_lazy=True)
# torch keeps one default generator per GPU besides the CPU one; made on first use, seeded with
# the last ``manual_seed``/``cuda.manual_seed_all`` seed
_cuda_generators: dict[int, Generator] = {}
_cuda_seed: list[Any] = []


def cuda_generator(index: int) -> Generator:
    """The default generator of GPU ``index`` (``torch.cuda.default_generators[index]``)."""
    if index not in _cuda_generators:
        g = _cuda_generators[index] = Generator(device=_device.device("cuda", index))
        if _cuda_seed:
            g.manual_seed(_cuda_seed[-1])
    return _cuda_generators[index]


def seed_cuda_generators(seed: int | jax.Array) -> None:
    """Seed every GPU's default generator (``torch.cuda.manual_seed_all``)."""
    _cuda_seed[:] = [seed if isinstance(seed, (jax.Array, np.ndarray)) else int(seed)]
    for g in _cuda_generators.values():
        g.manual_seed(seed)


def generator_for(device: Any) -> Generator:
    """The default generator that draws for tensors made on ``device`` (None: the default
    device): the GPU's own for a GPU, else the CPU one."""
    target = _device.placement(device)
    if not isinstance(target, jax.Device) or target.platform != "gpu":
        return default_generator
    return cuda_generator(_device.of_jax(target).index or 0)


def manual_seed(seed: int | jax.Array) -> Generator:
    """Seed jaxgrad's default generators (the CPU one and each GPU's) with an int or a
    ``jax.random`` key; returns the CPU one.

    >>> import jaxgrad
    >>> old = jaxgrad.initial_seed()
    >>> state = jaxgrad._functions.random.default_generator.get_state()
    >>> _ = jaxgrad.manual_seed(0); a = jaxgrad.randn(3)
    >>> _ = jaxgrad.manual_seed(0); bool((a == jaxgrad.randn(3)).all())
    True
    >>> _ = jaxgrad.manual_seed(old).set_state(state)  # restore the default generator
    """
    default_generator.manual_seed(seed)
    seed_cuda_generators(seed)
    return default_generator


def seed() -> int:
    """Seed the default generator non-deterministically; returns the seed, as ``torch.seed``.

    >>> import jaxgrad
    >>> old = jaxgrad.initial_seed()
    >>> state = jaxgrad._functions.random.default_generator.get_state()
    >>> jaxgrad.seed() == jaxgrad.initial_seed()
    True
    >>> _ = jaxgrad.manual_seed(old).set_state(state)  # restore the default generator
    """
    s = default_generator.seed()
    seed_cuda_generators(s)
    return s


def initial_seed() -> int:
    """The default generator's seed, as ``torch.initial_seed``.

    >>> import jaxgrad
    >>> isinstance(jaxgrad.initial_seed(), int)
    True
    """
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default CPU generator's state as a ``uint8`` tensor, as ``torch.get_rng_state``.

    >>> import jaxgrad
    >>> state = jaxgrad.get_rng_state(); a = jaxgrad.rand(2)
    >>> jaxgrad.set_rng_state(state); bool((a == jaxgrad.rand(2)).all())
    True
    """
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default CPU generator's state from ``get_rng_state``.

    >>> import jaxgrad
    >>> state = jaxgrad.get_rng_state(); a = jaxgrad.randn(2)
    >>> jaxgrad.set_rng_state(state); bool((jaxgrad.randn(2) == a).all())
    True
    """
    default_generator.set_state(new_state)


_key_source = threading.local()


@contextlib.contextmanager
def keys_from(next_key: Callable[[], jax.Array]) -> Iterator[None]:
    """In this thread, every generator's draws take their keys from ``next_key()`` instead of
    its own state (``jaxgrad.func.vmap``'s ``randomness``: one key per batch element, or an
    error); generators' states are left as they were."""
    previous = getattr(_key_source, "next", None)
    _key_source.next = next_key
    try:
        yield
    finally:
        _key_source.next = previous


@contextlib.contextmanager
def keys_split_from(rng_key: jax.Array) -> Iterator[None]:
    """:func:`keys_from` a ``jax.random`` key (typed, or raw uint32 key data), folded in with
    0, 1, 2, ... for the block's successive draws (``jaxgrad.random.key``)."""
    if not jax.dtypes.issubdtype(rng_key.dtype, jax.dtypes.prng_key):
        rng_key = jax.random.wrap_key_data(rng_key)  # raw uint32 key data (jax.random.PRNGKey)
    draws = itertools.count()
    with keys_from(lambda: jax.random.fold_in(rng_key, next(draws))):
        yield


def _key(generator: Generator | None, device: Any = None, op: str = "") -> jax.Array:
    """The key for one draw: from ``generator``, else the default generator of ``device``
    (inside :func:`keys_from`, from its source). ``op`` names the function in torch's error for
    a ``generator`` that is not one."""
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"{op + '(): ' if op else ''}argument 'generator' must be "
                        f"jaxgrad.Generator, not {type_name(generator)}")
    return (generator or generator_for(device)).next_key()


def _integers(key: jax.Array, shape: tuple, low: int, high: int) -> jax.Array:
    """int64 integers uniform on ``[low, high)``: drawn as int32 where the range fits, else
    from 63 random bits made of two 32-bit words (so that the draw also runs in a user's
    ``jax.jit`` with 64-bit types off), as torch's ``random64() % range + from``; a range past
    2**63 (int64's ``random_(from, None)`` with ``from < 0``) takes 64 bits."""
    span = high - low
    if low >= -2**31 and high <= 2**31:
        return _drawn(jax.random.randint, key, shape, low, high, jnp.int32, cast=jnp.int64)
    if span <= 2**63:
        words = jax.random.bits(key, (2, *shape), jnp.uint32)
        bits = (words[0] >> 1).astype(jnp.int64) * 2**32 + words[1].astype(jnp.int64)
        return low + (bits if span == 2**63 else bits % span)
    bits = jax.random.bits(key, shape, jnp.uint64)
    if span < 2**64:
        bits = bits % np.uint64(span)
    return (bits + np.uint64(low % 2**64)).astype(jnp.int64)


def _width(d: Any) -> Any:
    """The float dtype a sampler draws at for a tensor of dtype ``d``: float64 for 64-bit
    dtypes, else float32 (no 64-bit values inside a user's ``jax.jit`` with x64 off)."""
    d = np.dtype(d)
    return jnp.float64 if d.itemsize == (16 if d.kind == "c" else 8) else jnp.float32


_NUMBER_TYPES = (bool, int, float, np.number, np.bool_)
_KIND_CHECKS: dict[str, Callable[[Any], bool]] = {
    "Tensor": lambda v: isinstance(v, Tensor),
    "Number": lambda v: isinstance(v, _NUMBER_TYPES) or (
        isinstance(v, Tensor) and v.ndim == 0 and not v.requires_grad),
    "bool": lambda v: isinstance(v, (bool, np.bool_)),
    "Generator": lambda v: v is None or isinstance(v, Generator),
}


def _parsed(name: str, **kinds: str) -> Callable[[Callable], Callable]:
    """torch's argument errors for a function with one signature (``poisson``, ``rrelu``):
    ``poisson(): argument 'generator' (position 2) must be torch.Generator, not int``, the
    position given where the argument was passed by position. ``kinds``: parameter -> Tensor,
    Number, bool or Generator."""

    def decorate(fn: Callable) -> Callable:
        params = list(inspect.signature(fn).parameters)

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            given = [(params[i], i + 1, v) for i, v in enumerate(args) if i < len(params)]
            for param, position, value in [*given, *((k, None, v) for k, v in kwargs.items())]:
                kind = kinds.get(param)
                if kind is not None and not _KIND_CHECKS[kind](value):
                    where = "" if position is None else f" (position {position})"
                    expected = "jaxgrad.Generator" if kind == "Generator" else kind
                    raise TypeError(f"{name}(): argument '{param}'{where} must be {expected}, "
                                    f"not {type_name(value)}")
            return fn(*args, **kwargs)

        return call

    return decorate


@in_x64_scope
@composite("aten::rand")
def rand(*sizes: Any, size: Any = None,
         generator: Generator | None = None, dtype: Any = None, device: Any = None,
         layout: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform samples on [0, 1), as ``torch.rand``.

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> x = jaxgrad.rand(2, 3, generator=g)
    >>> x.shape, 0 <= x.min().item() and x.max().item() < 1
    (jaxgrad.Size([2, 3]), True)
    """
    check_strided(layout)
    d = _float_or(dtype)
    _check_sampled_dtype(d, "check_uniform_bounds")
    shape = _size(requested_size("rand", sizes, size, required=False))
    values = _uniform_values(_key(generator, device), shape, d, 0.0, 1.0)
    return _finish(values, device, requires_grad)


@in_x64_scope
@composite("aten::randn")
def randn(*sizes: Any, size: Any = None,
          generator: Generator | None = None, dtype: Any = None, device: Any = None,
          layout: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples, as ``torch.randn``.

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> x = jaxgrad.randn(4, dtype=jaxgrad.float64, generator=g)
    >>> x.shape, x.dtype
    (jaxgrad.Size([4]), jaxgrad.float64)
    """
    check_strided(layout)
    d = _float_or(dtype)
    _check_sampled_dtype(d, "normal_kernel_cpu")
    shape = _size(requested_size("randn", sizes, size, required=False))
    values = _normal_values(_key(generator, device), shape, d)
    return _finish(values, device, requires_grad)


@in_x64_scope
@composite("aten::randint")
def randint(low: int, high: int | None = None, size: Any = None, *,
            generator: Generator | None = None, dtype: Any = None, device: Any = None,
            layout: Any = None, requires_grad: bool = False) -> Tensor:
    """Integers uniform on [low, high) (int64 by default), as ``torch.randint``.

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> x = jaxgrad.randint(3, 5, (10,), generator=g)
    >>> x.dtype, sorted(set(x.tolist()) - {3, 4})
    (jaxgrad.int64, [])
    """
    check_strided(layout)
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    d = _dtypes.to_dtype(dtype).np if dtype is not None else jnp.int64
    values = _integers(_key(generator, device), _size((size,)), int(low), int(high)).astype(d)
    return _finish(values, device, requires_grad)


@composite("aten::rand_like")
@dispatches("rand_like")
def rand_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None,
              device: Any = None, layout: Any = None, requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    """``rand`` with the shape (and, by default, dtype) of ``input``, from ``generator`` (by
    default the device's default generator).

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> x = jaxgrad.rand_like(jaxgrad.zeros(2, 2, dtype=jaxgrad.float64), generator=g)
    >>> x.shape, x.dtype
    (jaxgrad.Size([2, 2]), jaxgrad.float64)
    """
    check_strided(layout)
    return rand(*input.shape, generator=generator, dtype=dtype or input.dtype,
                device=_device.like(input, device), requires_grad=requires_grad)


@composite("aten::randn_like")
@dispatches("randn_like")
def randn_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None,
               device: Any = None, layout: Any = None, requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    """``randn`` with the shape (and, by default, dtype) of ``input``, from ``generator`` (by
    default the device's default generator).

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> jaxgrad.randn_like(jaxgrad.zeros(3), generator=g).shape
    jaxgrad.Size([3])
    """
    check_strided(layout)
    return randn(*input.shape, generator=generator, dtype=dtype or input.dtype,
                 device=_device.like(input, device), requires_grad=requires_grad)


@composite("aten::randint_like")
def randint_like(input: Tensor, low: int, high: int | None = None, *,
                 generator: Generator | None = None, dtype: Any = None, device: Any = None,
                 layout: Any = None, requires_grad: bool = False,
                 memory_format: Any = None) -> Tensor:
    """``randint`` with the shape and (by default) dtype of ``input``, from ``generator`` (by
    default the device's default generator); ``randint_like(input, high)`` draws from 0.

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> x = jaxgrad.randint_like(jaxgrad.zeros(2, 2), 0, 10, generator=g)
    >>> x.shape, x.dtype
    (jaxgrad.Size([2, 2]), jaxgrad.float32)
    """
    check_strided(layout)
    return randint(low, high, tuple(input.shape), generator=generator,
                   dtype=dtype or input.dtype, device=_device.like(input, device),
                   requires_grad=requires_grad)


@in_x64_scope
@composite("aten::randperm")
def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None,
             device: Any = None, layout: Any = None, requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 by default), as ``torch.randperm``.

    >>> import jaxgrad
    >>> p = jaxgrad.randperm(5, generator=jaxgrad.Generator().manual_seed(0))
    >>> sorted(p.tolist())
    [0, 1, 2, 3, 4]
    """
    check_strided(layout)
    d = _dtypes.to_dtype(dtype).np if dtype is not None else jnp.int64
    return _finish(jax.random.permutation(_key(generator, device), n).astype(d), device,
                   requires_grad)


@in_x64_scope
def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None):
    """Fill ``t`` in place with normal samples (``Tensor.normal_``; a tensor that requires grad
    gets torch's NormalBackward0, whose gradient is zero).

    >>> import jaxgrad
    >>> from jaxgrad._functions.random import normal_
    >>> normal_(jaxgrad.zeros(3), 5.0, 0.0, generator=jaxgrad.Generator())
    tensor([5., 5., 5.])
    """
    _check_kernel(t, "normal_kernel_cpu", complex_ok=True)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    check_overlap(_NORMAL_, t)
    noise = _normal_values(_key(generator, t.device, "normal_"), tuple(t.shape), t._value.dtype)
    return _sampled_(_NORMAL_, t, mean + std * noise)


@in_x64_scope
def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None):
    """Fill ``t`` in place with uniform samples on [a, b).

    >>> import jaxgrad
    >>> from jaxgrad._functions.random import uniform_
    >>> t = uniform_(jaxgrad.zeros(100), 2.0, 3.0, generator=jaxgrad.Generator())
    >>> 2 <= t.min().item() and t.max().item() < 3
    True
    """
    _check_kernel(t, "check_uniform_bounds", complex_ok=True)
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_num(a)} > to={_num(b)}")
    check_overlap(_UNIFORM_, t)
    values = _uniform_values(_key(generator, t.device, "uniform_"), tuple(t.shape),
                             t._value.dtype, a, b)
    return _sampled_(_UNIFORM_, t, values)


# --- sampling ops: torch's in-place samplers, bernoulli, normal, multinomial ----------------------
# A sampler draws its values from a generator outside the kernel; the row only writes them (a
# traced operand, so a new draw never compiles a new kernel) and records torch's node, whose
# gradient is zero (derivatives.yaml: ``self: zeros_like(grad)``).

def _zero_grad(grad):
    return jnp.zeros_like(grad)


def _sampler_row(name: str, node: str, inputs: tuple[str, ...] = ("self",),
                 grad_version: int = 0) -> Op:
    """``grad_version`` 1: torch's formula is ``at::zeros_like``, whose ``zero_`` bumps the
    gradient's version (normal's overloads, poisson)."""
    return Op(name, node, lambda *arrays: arrays[-1].astype(arrays[0].dtype), inputs=inputs,
              aux=("values",), grads={i: _zero_grad for i in inputs}, grad_version=grad_version)


_NORMAL_ = _sampler_row("normal_", "NormalBackward0")
_UNIFORM_ = _sampler_row("uniform_", "UniformBackward0")
_RANDOM_FROM_ = _sampler_row("random_", "RandomBackward0")
_RANDOM_TO_ = _sampler_row("random_", "RandomBackward1")
_RANDOM_ = _sampler_row("random_", "RandomBackward2")
_EXPONENTIAL_ = _sampler_row("exponential_", "ExponentialBackward0")
_GEOMETRIC_ = _sampler_row("geometric_", "GeometricBackward0")
_CAUCHY_ = _sampler_row("cauchy_", "CauchyBackward0")
_LOG_NORMAL_ = _sampler_row("log_normal_", "LogNormalBackward0")
_BERNOULLI_TENSOR_ = _sampler_row("bernoulli_", "BernoulliBackward1", ("self", "p"))
_BERNOULLI_FLOAT_ = _sampler_row("bernoulli_", "BernoulliBackward2")
_BERNOULLI = _sampler_row("bernoulli", "BernoulliBackward0")
_NORMAL_TENSOR_FLOAT = _sampler_row("normal", "NormalBackward1", ("mean",), 1)
_NORMAL_FLOAT_TENSOR = _sampler_row("normal", "NormalBackward2", ("std",), 1)
_NORMAL_TENSOR_TENSOR = _sampler_row("normal", "NormalBackward3", ("mean", "std"), 1)
_POISSON = _sampler_row("poisson", "PoissonBackward0", grad_version=1)


def _not_implemented(grad):
    raise RuntimeError("derivative for aten::bernoulli is not implemented")


# torch records ``bernoulli(p_tensor, p_float)`` under its NotImplemented node
_BERNOULLI_P = Op("bernoulli", "NotImplemented", lambda x, values: values.astype(x.dtype),
                  aux=("values",), grads={"self": _not_implemented})


def _binomial_not_implemented(grad):
    raise RuntimeError("derivative for aten::binomial is not implemented")


_BINOMIAL = Op("binomial", "NotImplemented",
               lambda count, prob, values: values.astype(count.dtype), inputs=("count", "prob"),
               aux=("values",), grads={"count": _binomial_not_implemented,
                                       "prob": _binomial_not_implemented})


def _sampled_(row: Op, t: Tensor, values: jax.Array, *others: Tensor) -> Tensor:
    """Write drawn ``values`` into ``t`` (whose overlap the sampler checked before drawing:
    torch's kernels refuse an expanded ``t`` before the generator moves on)."""
    return apply_inplace(row, t, *others, aux=(Tensor._make(values),))


def _num(x: Any) -> str:
    """A number as torch's messages print a C++ double (``-1``, ``0.5``)."""
    return f"{float(x):g}"


def _check_continuous(t: Tensor, name: str, long_name: bool = False) -> None:
    if not t.dtype.is_floating_point:
        spelt = _C_NAMES.get(t.dtype.name, t.dtype.name) if long_name else (
            _dtypes.scalar_type_name(t.dtype))
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {spelt}")


_C_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool"}


def _check_kernel(t: Tensor, kernel: str, complex_ok: bool = False) -> None:
    """torch's refusal of a dtype its CPU kernel is not compiled for (a float-only sampler;
    ``complex_ok``: one that samples a complex tensor as its real and imaginary parts)."""
    if not (t.dtype.is_floating_point or (complex_ok and t.dtype.is_complex)):
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dtypes.scalar_type_name(t.dtype)}'")


def _check_sampled_dtype(d: np.dtype, kernel: str) -> None:
    """:func:`_check_kernel` for a factory's dtype (rand, randn: float or complex)."""
    if not jnp.issubdtype(d, jnp.inexact):
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dtypes.scalar_type_name(_dtypes.to_dtype(d))}'")


# eager draws of up to this many elements are made for a size class (see ``_drawn``)
SIZE_CLASS_LIMIT = 1 << 22
_SMALLEST_CLASS = 1 << 10
_HOST_CUT_LIMIT = 1 << 16


def _drawn(sample: Callable[..., jax.Array], key: jax.Array, shape: tuple, *args: Any,
           cast: Any = None) -> jax.Array:
    """``sample(key, shape, *args)``, a ``jax.random`` sampler whose values are elementwise in
    the bits drawn (uniform, normal, randint). Eagerly it draws for a power-of-two number of
    elements (at least 1024) and keeps the first ``prod(shape)``: JAX's partitionable threefry
    gives each element the bits of its flat index, so the values are the same, and a program
    drawing many shapes (a model's weights and biases) compiles one sampler per size class
    instead of one per shape (100-300 ms each on CPU). ``cast``: a dtype to convert them to."""
    n = math.prod(shape)
    if (isinstance(key, jax.core.Tracer) or not 0 < n <= SIZE_CLASS_LIMIT
            or not jax.config.jax_threefry_partitionable
            or str(jax.random.key_impl(key)) != "threefry2x32"):
        values = sample(key, shape, *args)
        return values if cast is None else values.astype(cast)
    flat = sample(key, (max(_SMALLEST_CLASS, 1 << (n - 1).bit_length()),), *args)
    if n <= _HOST_CUT_LIMIT:  # cut (and cast) on the host: no kernel compiled per shape
        host = np.asarray(flat)[:n].reshape(shape)  # (placed as the draw was: committed or not)
        return host_to_device(host, host.dtype if cast is None else cast,
                              flat.sharding if flat.committed else None)
    return _cut(flat, n, shape, cast)


@functools.partial(jit, static_argnames=("n", "shape", "cast"))
def _cut(flat: jax.Array, n: int, shape: tuple, cast: Any) -> jax.Array:
    values = flat[:n].reshape(shape)
    return values if cast is None else values.astype(cast)


def _normal_values(key: jax.Array, shape: tuple, d: Any) -> jax.Array:
    """Standard normal samples (a complex dtype draws its two parts as JAX does)."""
    if jnp.issubdtype(d, jnp.complexfloating):
        return jax.random.normal(key, shape, d)
    return _drawn(jax.random.normal, key, shape, d)


def _uniform_values(key: jax.Array, shape: tuple, d: Any, low: float, high: float) -> jax.Array:
    """Uniform samples on [low, high); a complex dtype samples both parts so."""
    if not jnp.issubdtype(d, jnp.complexfloating):
        return _drawn(jax.random.uniform, key, shape, d, low, high)
    parts = jax.random.uniform(key, (*shape, 2), jnp.finfo(d).dtype, low, high)
    return jax.lax.complex(parts[..., 0], parts[..., 1])


@in_x64_scope
def _uniform01(t: Tensor, generator: Generator | None, op: str = "") -> jax.Array:
    dtype = t._value.dtype if t.dtype.is_floating_point else jnp.float64
    return _drawn(jax.random.uniform, _key(generator, t.device, op), tuple(t.shape), dtype)


def _random_bounds(t: Tensor, low: int, high: int | None) -> tuple[int, int]:
    """torch's [from, to) of ``random_``; ``to=None``: up to the dtype's largest value (for a
    float dtype, the largest integer it represents exactly)."""
    d = t.dtype
    if d.is_floating_point:
        top = 2 ** {"float16": 11, "bfloat16": 8, "float32": 24}.get(d.name, 53)
        lo, hi = -top, top
    elif d.name == "bool":
        lo, hi = 0, 1
    else:
        info = np.iinfo(d.np)
        lo, hi = int(info.min), int(info.max)
    if high is None:
        return low, hi + 1
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    if not d.is_floating_point:
        if not lo <= low <= hi:
            raise RuntimeError(f"from is out of bounds for {_C_NAMES.get(d.name, d.name)}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {_C_NAMES.get(d.name, d.name)}")
    return low, high


_UNSET: Any = object()


@in_x64_scope
def random_(t: Tensor, from_: int | None = None, to: Any = _UNSET, *,
            generator: Generator | None = None) -> Tensor:
    """Fill ``t`` in place with integers uniform on ``[from, to)`` (``random_(to)``: ``[0, to)``;
    ``random_()``: from 0 up to the largest integer the dtype holds exactly).

    >>> import jaxgrad
    >>> t = jaxgrad.empty(100).random_(2, 5, generator=jaxgrad.Generator().manual_seed(0))
    >>> sorted(set(t.tolist()))
    [2.0, 3.0, 4.0]
    """
    check_overlap(_RANDOM_, t)  # (before the bounds checks, as torch's)
    if from_ is None and to in (None, _UNSET):
        row, (low, high) = _RANDOM_, _random_bounds(t, 0, None)
    elif from_ is None or to is _UNSET:  # random_(to)
        row, (low, high) = _RANDOM_TO_, _random_bounds(t, 0, int(to if from_ is None else from_))
    else:  # random_(from, to); to=None: up to the dtype's largest value
        row, (low, high) = _RANDOM_FROM_, _random_bounds(t, int(from_), to)
    values = _integers(_key(generator, t.device, "random_"), tuple(t.shape), low, high)
    return _sampled_(row, t, values)


def exponential_(t: Tensor, lambd: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    """Fill ``t`` in place with samples of the exponential distribution of rate ``lambd``.

    >>> import jaxgrad
    >>> t = jaxgrad.empty(4).exponential_(2.0, generator=jaxgrad.Generator())
    >>> bool((t >= 0).all())
    True
    """
    if not lambd > 0:  # (torch's order: lambda, overlap, dtype)
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    check_overlap(_EXPONENTIAL_, t)
    _check_continuous(t, "Exponential")
    u = _uniform01(t, generator, "exponential_")
    return _sampled_(_EXPONENTIAL_, t, -jnp.log1p(-u) / lambd)


@in_x64_scope
def geometric_(t: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Fill ``t`` in place with the number of Bernoulli(``p``) trials up to the first success.

    >>> import jaxgrad
    >>> t = jaxgrad.empty(4).geometric_(0.5, generator=jaxgrad.Generator())
    >>> bool((t >= 1).all())
    True
    """
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    check_overlap(_GEOMETRIC_, t)
    width = _width(t._value.dtype)
    u = jax.random.uniform(_key(generator, t.device, "geometric_"), tuple(t.shape), width,
                           minval=np.finfo(width).tiny)
    return _sampled_(_GEOMETRIC_, t, jnp.ceil(jnp.log(u) / jnp.log1p(-p)))


def cauchy_(t: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    """Fill ``t`` in place with Cauchy samples of location ``median`` and scale ``sigma``.

    >>> import jaxgrad
    >>> jaxgrad.empty(2, 3).cauchy_(generator=jaxgrad.Generator()).shape
    jaxgrad.Size([2, 3])
    """
    _check_continuous(t, "Cauchy", long_name=True)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    check_overlap(_CAUCHY_, t)
    u = _uniform01(t, generator, "cauchy_")
    return _sampled_(_CAUCHY_, t, median + sigma * jnp.tan(np.pi * (u - 0.5)))


@in_x64_scope
def log_normal_(t: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Generator | None = None) -> Tensor:
    """Fill ``t`` in place with ``exp(N(mean, std))`` samples.

    >>> import jaxgrad
    >>> t = jaxgrad.empty(4).log_normal_(generator=jaxgrad.Generator())
    >>> bool((t > 0).all())
    True
    """
    if not std > 0:  # (torch's order: std, overlap, dtype)
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    check_overlap(_LOG_NORMAL_, t)
    _check_kernel(t, "log_normal_cpu")
    noise = jax.random.normal(_key(generator, t.device, "log_normal_"), tuple(t.shape),
                              t._value.dtype)
    return _sampled_(_LOG_NORMAL_, t, jnp.exp(mean + std * noise))


@in_x64_scope
def _bernoulli_values(p: Any, shape: tuple, generator: Generator | None, device: Any,
                      like: Any, op: str = "") -> jax.Array:
    # uniforms at the width of ``like`` (the probabilities' dtype, or the tensor's for a number
    # p): float32 ones for float32 tensors (no 64-bit values inside a user's jax.jit that runs
    # with x64 off)
    width = _width(like)
    u = jax.random.uniform(_key(generator, device, op), shape, width)
    return u < (p.astype(width) if isinstance(p, jax.Array) else p)


_BERNOULLI_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this "
                    "error message be improved?  If so, please report an enhancement request to "
                    "PyTorch.)")


def _check_probabilities(p: Tensor) -> None:
    values = concrete_values(p)  # (not checked on traced values)
    if values is not None and values.size and not ((values >= 0) & (values <= 1)).all():
        raise RuntimeError(_BERNOULLI_RANGE)


def bernoulli_(t: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    """Fill ``t`` in place with 1 with probability ``p`` (a number, or a tensor broadcastable to
    ``t``), else 0.

    >>> import jaxgrad
    >>> jaxgrad.zeros(3).bernoulli_(1.0, generator=jaxgrad.Generator())
    tensor([1., 1., 1.])
    """
    if isinstance(p, Tensor):
        check_overlap(_BERNOULLI_TENSOR_, t, (p,))
        _check_kernel(t, "bernoulli_tensor_cpu_p_")
        _check_probabilities(p)
        probs = jnp.broadcast_to(p._value, tuple(t.shape))
        return _sampled_(_BERNOULLI_TENSOR_, t, _bernoulli_values(
            probs, tuple(t.shape), generator, t.device, p._value.dtype, "bernoulli_"), p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
    check_overlap(_BERNOULLI_FLOAT_, t)
    return _sampled_(_BERNOULLI_FLOAT_, t, _bernoulli_values(
        p, tuple(t.shape), generator, t.device, t._value.dtype, "bernoulli_"))


@in_x64_scope
def bernoulli(input: Tensor, p: float | None = None, *,
              generator: Generator | None = None) -> Tensor:
    """1 with the probability in each element of ``input`` (or with probability ``p``), else 0;
    the result has ``input``'s dtype.

    >>> import jaxgrad
    >>> jaxgrad.bernoulli(jaxgrad.tensor([0.0, 1.0]), generator=jaxgrad.Generator())
    tensor([0., 1.])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if isinstance(p, Generator):  # (torch's generator is keyword-only)
        raise TypeError(f"bernoulli() received an invalid combination of arguments - got "
                        f"(Tensor, {type_name(p)}), but expected one of:\n * (Tensor input, *, "
                        f"jaxgrad.Generator generator = None, Tensor out = None)\n * (Tensor "
                        f"input, float p, *, jaxgrad.Generator generator = None)\n")
    if p is not None:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
        values = _bernoulli_values(p, tuple(input.shape), generator, input.device,
                                   input._value.dtype)
        return apply(_BERNOULLI_P, input, aux=(Tensor._make(values),))
    _check_kernel(input, "bernoulli_tensor_cpu_p_")
    _check_probabilities(input)
    values = _bernoulli_values(input._value, tuple(input.shape), generator, input.device,
                               input._value.dtype)
    return apply(_BERNOULLI, input, aux=(Tensor._make(values),))


@in_x64_scope
def normal(mean: Any, std: Any = 1.0, size: Any = None, *, generator: Generator | None = None,
           dtype: Any = None, device: Any = None, layout: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Normal samples: ``normal(mean_tensor, std)``, ``normal(mean, std_tensor)`` and
    ``normal(mean_tensor, std_tensor)`` take the (broadcast) shape of the tensors;
    ``normal(mean, std, size)`` draws a new tensor of ``size``.

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> jaxgrad.normal(2.0, 0.0, (3,), generator=g)
    tensor([2., 2., 2.])
    >>> jaxgrad.normal(jaxgrad.zeros(2, 1), jaxgrad.zeros(3), generator=g).shape
    jaxgrad.Size([2, 3])
    """
    check_strided(layout)
    mean_t, std_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if (mean_t or std_t) == (size is not None):  # a size goes with two numbers only
        given = ", ".join(type_name(a) for a in (mean, std, size) if a is not None)
        raise TypeError(f"normal() received an invalid combination of arguments - got ({given}), "
                        f"but expected one of:\n{_NORMAL_OVERLOADS}")
    if not (mean_t or std_t):
        return _normal_of_size(mean, std, size, generator, dtype, device, requires_grad)
    like = mean if mean_t else std
    if not like.dtype.is_floating_point:
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                  f"'{_dtypes.scalar_type_name(like.dtype)}'")
    if std_t:
        stds = concrete_values(std)  # (not checked on traced values)
        if stds is not None and stds.size and not (stds >= 0).all():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    shape = jnp.broadcast_shapes(tuple(mean.shape) if mean_t else (),
                                 tuple(std.shape) if std_t else ())
    noise = jax.random.normal(_key(generator, like.device), shape, like._value.dtype)
    # (the values carry no derivative under a JAX transform: the rows' formulas say zero)
    values = Tensor._make(jax.lax.stop_gradient((mean._value if mean_t else mean)
                                                + (std._value if std_t else std) * noise))
    if mean_t and std_t:
        return apply(_NORMAL_TENSOR_TENSOR, mean, std, aux=(values,))
    if mean_t:
        return apply(_NORMAL_TENSOR_FLOAT, mean, aux=(values,))
    return apply(_NORMAL_FLOAT_TENSOR, std, aux=(values,))


_NORMAL_OVERLOADS = "".join(f" * ({o})\n" for o in (
    "Tensor mean, Tensor std, *, jaxgrad.Generator generator = None, Tensor out = None",
    "Tensor mean, float std = 1, *, jaxgrad.Generator generator = None, Tensor out = None",
    "float mean, Tensor std, *, jaxgrad.Generator generator = None, Tensor out = None",
    "float mean, float std, tuple of ints size, *, jaxgrad.Generator generator = None, Tensor "
    "out = None, jaxgrad.dtype dtype = None, jaxgrad.layout layout = None, jaxgrad.device device "
    "= None, bool pin_memory = False, bool requires_grad = False"))


@composite("aten::normal")
def _normal_of_size(mean: float, std: float, size: Any, generator: Generator | None, dtype: Any,
                    device: Any, requires_grad: bool) -> Tensor:
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    noise = jax.random.normal(_key(generator, device), _size((size,)), _float_or(dtype))
    return _finish(mean + std * noise, device, requires_grad)


@in_x64_scope
@composite("aten::multinomial")
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """``num_samples`` category indices per row of ``input`` (unnormalised probabilities, 1-d
    or 2-d), with or without replacement; int64.

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> jaxgrad.multinomial(jaxgrad.tensor([0.0, 1.0, 0.0]), 1, generator=g)
    tensor([1])
    >>> sorted(jaxgrad.multinomial(jaxgrad.ones(4), 4, generator=g).tolist())
    [0, 1, 2, 3]
    """
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_dtypes.scalar_type_name(input.dtype)}")
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = input.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if categories > 2**24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    values = concrete_values(input)  # (traced probabilities are not checked)
    if values is not None:
        probs = values.astype(np.float64).reshape(-1, categories)
        if not (np.isfinite(probs) & (probs >= 0)).all():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (probs.sum(-1) <= 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    # at the input's width, indices as int32 (all of it runs in a user's jax.jit with x64 off)
    width = _width(input._value.dtype)
    logits = jnp.log(input._value.astype(width).reshape(-1, categories))
    key = _key(generator, input.device, "multinomial")
    if replacement:  # Gumbel-max, one draw per sample
        noise = jax.random.gumbel(key, (num_samples, *logits.shape), width)
        picks = jax.lax.argmax(logits + noise, 2, jnp.int32).T
    else:  # Gumbel top-k: the order of the keys is a draw without replacement
        keys = logits + jax.random.gumbel(key, logits.shape, width)
        order = jax.lax.broadcasted_iota(jnp.int32, keys.shape, 1)
        picks = jax.lax.sort((-keys, order), dimension=1, is_stable=True, num_keys=1)[1]
        picks = picks[:, :num_samples]
    picks = picks.astype(jnp.int64)
    return _finish(picks.reshape(num_samples) if input.ndim == 1 else picks, input.device, False)


# --- poisson, binomial, rrelu -----------------------------------------------------------------

@_parsed("poisson", input="Tensor", generator="Generator")
@in_x64_scope
def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Poisson samples, one per element of ``input`` (the rates, >= 0), in ``input``'s dtype;
    a tensor that requires grad gets torch's PoissonBackward0, whose gradient is zero.

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> jaxgrad.poisson(jaxgrad.tensor([0.0, 0.0]), generator=g)
    tensor([0., 0.])
    >>> jaxgrad.poisson(jaxgrad.full((1000,), 4.0), generator=g).mean().round()
    tensor(4.)
    """
    _check_kernel(input, "poisson_cpu")
    rates = concrete_values(input)  # (traced rates are not checked)
    if rates is not None and rates.size and not (rates >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    lam = jax.lax.stop_gradient(input._value)
    # JAX samples at float32 rates; an infinite rate gives what torch's kernel gives (its
    # float -> int64 conversion overflows)
    counts = jax.random.poisson(_key(generator, input.device, "poisson"), lam,
                                tuple(input.shape), jnp.int64)
    values = jnp.where(jnp.isinf(lam), jnp.asarray(-2.0**63, _width(lam.dtype)),
                       counts.astype(_width(lam.dtype)))
    return apply(_POISSON, input, aux=(Tensor._make(values),))


@_parsed("binomial", count="Tensor", prob="Tensor", generator="Generator")
@in_x64_scope
def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    """Binomial samples: successes in ``count`` trials of probability ``prob`` (floating
    tensors of one dtype, broadcast together); torch's NotImplemented node, whose backward
    raises.

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> jaxgrad.binomial(jaxgrad.tensor([5.0, 5.0]), jaxgrad.tensor([0.0, 1.0]), generator=g)
    tensor([0., 5.])
    """
    for name, t in (("count", count), ("prob", prob)):
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{_dtypes.scalar_type_name(t.dtype)}")
    shape = broadcast_shapes(tuple(count.shape), tuple(prob.shape))
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {_dtypes.scalar_type_name(prob.dtype)} but expected "
                           f"{_dtypes.scalar_type_name(count.dtype)}")
    if count.dtype.name in ("float16", "bfloat16"):
        raise NotImplementedError(f'"binomial_cpu" not implemented for '
                                  f"'{_dtypes.scalar_type_name(count.dtype)}'")
    if shape != tuple(count.shape) and count.numel():  # torch resizes count-shaped output
        warn_at_user_line(RESIZE_WARNING.format(list(count.shape), list(shape)))
    values = _binomial_values(_key(generator, count.device, "binomial"),
                              jnp.broadcast_to(jax.lax.stop_gradient(count._value), shape),
                              jnp.broadcast_to(jax.lax.stop_gradient(prob._value), shape))
    return apply(_BINOMIAL, count, prob, aux=(Tensor._make(values),))


def _binomial_values(key: jax.Array, n: jax.Array, p: jax.Array) -> jax.Array:
    """torch's ``sample_binomial`` cases around JAX's sampler: 0 for ``n <= 0`` or ``p <= 0``,
    ``n`` for ``p >= 1``, NaN for a NaN ``p`` (and for a NaN or infinite ``n``, where torch's
    sampler returns NaN or never returns); a fractional count samples ``floor(n)`` trials."""
    # (strongly typed: a weakly typed float32 from the user's JAX code would meet float64
    # constants inside JAX's sampler)
    n, p = (jax.lax.convert_element_type(a, np.dtype(a.dtype)) for a in (n, p))
    finite = jnp.isfinite(n) & (n > 0)
    trials = jnp.where(finite, jnp.floor(n), 0)
    chance = jnp.where((p > 0) & (p < 1), p, 0)
    draws = jax.random.binomial(key, trials, chance, n.shape, n.dtype)
    out = jnp.where((n <= 0) | (p <= 0), 0, jnp.where(p >= 1, n, draws))
    undefined = jnp.isnan(p) | ((p > 0) & (p < 1) & ~jnp.isfinite(n))
    return jnp.where(undefined, jnp.nan, out).astype(n.dtype)


@functools.partial(jit, static_argnames=("width",))
def _rrelu_noise(key, x, lower, upper, width):
    """(next key, noise): a slope uniform on [lower, upper) where ``x <= 0``, 1 elsewhere, in
    ``x``'s dtype (torch's ``_rrelu_with_noise_train``); one jitted call per draw."""
    key, sub = jax.random.split(key)
    slopes = jax.random.uniform(sub, x.shape, width, lower, upper)
    return key, jnp.where(x <= 0, slopes.astype(x.dtype), jnp.ones((), x.dtype))


@in_x64_scope
def _rrelu(input: Tensor, lower: Any, upper: Any, training: bool,
           generator: Generator | None, inplace: bool) -> Tensor:
    lower, upper = (float(b.item() if isinstance(b, Tensor) else b) for b in (lower, upper))
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    d = input.dtype
    if not d.is_floating_point or (training and d.name == "float16"):
        kernel = "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dtypes.scalar_type_name(d)}'")
    row = R.RRELU_WITH_NOISE_ if inplace else R.RRELU_WITH_NOISE
    if inplace:
        check_overlap(row, input)
    slope = (lower + upper) / 2
    use_noise = bool(training and upper - lower > 1e-6)
    if training:
        width = np.dtype(_width(input._value.dtype))
        noise = (generator or generator_for(input.device)).draw(functools.partial(
            _rrelu_noise, x=input._value, lower=np.asarray(lower, width),
            upper=np.asarray(upper, width), width=width))
    else:  # (torch's noise is left unwritten in eval; its backward does not read it)
        noise = jnp.zeros((), input._value.dtype)
    noise = Tensor._make(noise)
    if inplace:
        return apply_inplace(row, input, aux=(noise,), slope=slope, training=bool(training),
                             use_noise=use_noise)
    return apply(row, input, aux=(noise, slope), training=bool(training), use_noise=use_noise)


@_parsed("rrelu", input="Tensor", lower="Number", upper="Number", training="bool",
         generator="Generator")
def rrelu(input: Tensor, lower: float = 0.125, upper: float = 0.3333333333333333,
          training: bool = False, generator: Generator | None = None) -> Tensor:
    """Randomized leaky ReLU (torch's ``rrelu``, ``RreluWithNoiseBackward0``): ``x`` where
    positive; elsewhere ``x`` times a slope drawn uniformly from ``[lower, upper]`` per element
    in training (from ``generator``), or ``(lower + upper) / 2`` in eval (the default).

    >>> import jaxgrad
    >>> jaxgrad.rrelu(jaxgrad.tensor([-2.0, 3.0]), 0.1, 0.3)
    tensor([-0.4000,  3.0000])
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> y = jaxgrad.rrelu(jaxgrad.tensor([-2.0]), 0.1, 0.3, True, g)
    >>> -0.6 <= y.item() <= -0.2
    True
    """
    return _rrelu(input, lower, upper, training, generator, inplace=False)


@_parsed("rrelu_", input="Tensor", lower="Number", upper="Number", training="bool",
         generator="Generator")
def rrelu_(input: Tensor, lower: float = 0.125, upper: float = 0.3333333333333333,
           training: bool = False, generator: Generator | None = None) -> Tensor:
    """:func:`rrelu` written into ``input`` (``RreluWithNoiseBackward1``, which saves the
    result).

    >>> import jaxgrad
    >>> x = jaxgrad.tensor([-2.0, 3.0])
    >>> jaxgrad.rrelu_(x, 0.1, 0.3) is x, x
    (True, tensor([-0.4000,  3.0000]))
    """
    return _rrelu(input, lower, upper, training, generator, inplace=True)
