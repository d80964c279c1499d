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
from .._core.jax_setup import in_x64_scope
from .._core.layout import check_strided
from .._core.tensor import Tensor
from .._core.typename import public_path
from .._engine.dispatch import apply, apply_inplace, check_overlap, dispatches
from .._engine.profiling import composite
from .._ops._table import Op
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

    def __init__(self, device: Any = "cpu") -> None:
        self._lock = threading.Lock()
        self._seed = 67280421310721
        self._key = _key_of(self._seed)
        self.device = device

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
            self._key = _key_of(self._seed % (2**63))
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
        return self._key

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
        key = jax.lax.bitcast_convert_type(jax.random.key_data(self._key), jnp.uint8)
        return Tensor._make(jnp.concatenate([jnp.asarray(seed), key.reshape(-1)]))

    def set_state(self, state: Tensor) -> Generator:
        """Restore a state from :meth:`get_state`; returns the generator."""
        if not isinstance(state, Tensor) or state.dtype.np != np.uint8:
            raise TypeError("RNG state must be a jaxgrad.ByteTensor")
        key_shape = jax.random.key_data(self._key).shape
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
            new, sub = jax.random.split(self._key)
            self._keep(new)
        return sub

    def draw(self, sample: Callable[[jax.Array], tuple[jax.Array, Any]]) -> Any:
        """``sample(key) -> (next key, values)`` under the lock: a jitted sampler that splits
        the key itself (as :meth:`next_key` does) draws in one XLA call instead of two."""
        source = getattr(_key_source, "next", None)
        if source is not None:
            return sample(source())[1]
        with self._lock:
            new, values = sample(self._key)
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
    it JAX drops a seed's high 32 bits): threefry's key data is the seed's two 32-bit words."""
    key = jax.random.key(seed & 0xFFFFFFFF)
    if seed >> 32 and jax.random.key_data(key).shape == (2,):
        key = jax.random.wrap_key_data(np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32))
    return key


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


default_generator = Generator()
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


def _key(generator: Generator | None, device: Any = None) -> jax.Array:
    return (generator or generator_for(device)).next_key()


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
    values = jax.random.normal(_key(generator, device), shape, d)
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
    values = jax.random.randint(_key(generator, device), _size((size,)), low, high,
                                jnp.int64).astype(d)
    return _finish(values, device, requires_grad)


@composite("aten::rand_like")
@dispatches("rand_like")
def rand_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              layout: Any = None, requires_grad: bool = False) -> Tensor:
    """``rand`` with the shape (and, by default, dtype) of ``input``, from the default generator.

    >>> import jaxgrad
    >>> g = jaxgrad._functions.random.default_generator; state = g.get_state()
    >>> x = jaxgrad.rand_like(jaxgrad.zeros(2, 2, dtype=jaxgrad.float64))
    >>> x.shape, x.dtype
    (jaxgrad.Size([2, 2]), jaxgrad.float64)
    >>> _ = g.set_state(state)  # leave the default generator as it was
    """
    check_strided(layout)
    return rand(*input.shape, dtype=dtype or input.dtype, device=_device.like(input, device),
                requires_grad=requires_grad)


@composite("aten::randn_like")
@dispatches("randn_like")
def randn_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               layout: Any = None, requires_grad: bool = False) -> Tensor:
    """``randn`` with the shape (and, by default, dtype) of ``input``, from the default generator.

    >>> import jaxgrad
    >>> g = jaxgrad._functions.random.default_generator; state = g.get_state()
    >>> jaxgrad.randn_like(jaxgrad.zeros(3)).shape
    jaxgrad.Size([3])
    >>> _ = g.set_state(state)  # leave the default generator as it was
    """
    check_strided(layout)
    return randn(*input.shape, dtype=dtype or input.dtype, device=_device.like(input, device),
                 requires_grad=requires_grad)


@composite("aten::randint_like")
def randint_like(input: Tensor, low: int, high: int | None = None, *,
                 dtype: Any = None, device: Any = None, layout: Any = None,
                 requires_grad: bool = False,
                 memory_format: Any = None) -> Tensor:
    """``randint`` with the shape and (by default) dtype of ``input``, from the default generator.

    >>> import jaxgrad
    >>> g = jaxgrad._functions.random.default_generator; state = g.get_state()
    >>> x = jaxgrad.randint_like(jaxgrad.zeros(2, 2), 0, 10)
    >>> x.shape, x.dtype
    (jaxgrad.Size([2, 2]), jaxgrad.float32)
    >>> _ = g.set_state(state)  # leave the default generator as it was
    """
    check_strided(layout)
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype,
                   device=_device.like(input, device), requires_grad=requires_grad)


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
    noise = jax.random.normal(_key(generator, t.device), tuple(t.shape), t._value.dtype)
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
    values = _uniform_values(_key(generator, t.device), tuple(t.shape), t._value.dtype, a, b)
    return _sampled_(_UNIFORM_, t, values)


# --- sampling ops: torch's in-place samplers, bernoulli, normal, multinomial ----------------------
# A sampler draws its values from a generator outside the kernel; the row only writes them (a
# traced operand, so a new draw never compiles a new kernel) and records torch's node, whose
# gradient is zero (derivatives.yaml: ``self: zeros_like(grad)``).

def _zero_grad(grad):
    return jnp.zeros_like(grad)


def _sampler_row(name: str, node: str, inputs: tuple[str, ...] = ("self",)) -> Op:
    return Op(name, node, lambda *arrays: arrays[-1].astype(arrays[0].dtype), inputs=inputs,
              aux=("values",), grads={i: _zero_grad for i in inputs})


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
_NORMAL_TENSOR_FLOAT = _sampler_row("normal", "NormalBackward1", ("mean",))
_NORMAL_FLOAT_TENSOR = _sampler_row("normal", "NormalBackward2", ("std",))
_NORMAL_TENSOR_TENSOR = _sampler_row("normal", "NormalBackward3", ("mean", "std"))


def _not_implemented(grad):
    raise RuntimeError("derivative for aten::bernoulli is not implemented")


# torch records ``bernoulli(p_tensor, p_float)`` under its NotImplemented node
_BERNOULLI_P = Op("bernoulli", "NotImplemented", lambda x, values: values.astype(x.dtype),
                  aux=("values",), grads={"self": _not_implemented})


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


def _uniform_values(key: jax.Array, shape: tuple, d: Any, low: float, high: float) -> jax.Array:
    """Uniform samples on [low, high); a complex dtype samples both parts so."""
    if not jnp.issubdtype(d, jnp.complexfloating):
        return jax.random.uniform(key, shape, d, low, high)
    parts = jax.random.uniform(key, (*shape, 2), jnp.finfo(d).dtype, low, high)
    return jax.lax.complex(parts[..., 0], parts[..., 1])


@in_x64_scope
def _uniform01(t: Tensor, generator: Generator | None) -> jax.Array:
    dtype = t._value.dtype if t.dtype.is_floating_point else jnp.float64
    return jax.random.uniform(_key(generator, t.device), tuple(t.shape), dtype)


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
    key = _key(generator, t.device)
    if high - low > 2**62:  # a 64-bit range: combine two draws
        values = jax.random.bits(key, tuple(t.shape), jnp.uint64).astype(jnp.int64)
    else:
        values = jax.random.randint(key, tuple(t.shape), low, high, jnp.int64)
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
    return _sampled_(_EXPONENTIAL_, t, -jnp.log1p(-_uniform01(t, generator)) / lambd)


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
    u = jax.random.uniform(_key(generator, t.device), tuple(t.shape), jnp.float64,
                           minval=np.finfo(np.float64).tiny)
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
    u = _uniform01(t, generator)
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
    noise = jax.random.normal(_key(generator, t.device), tuple(t.shape), t._value.dtype)
    return _sampled_(_LOG_NORMAL_, t, jnp.exp(mean + std * noise))


@in_x64_scope
def _bernoulli_values(p: jax.Array, shape: tuple, generator: Generator | None,
                      device: Any) -> jax.Array:
    # uniforms at p's width: float32 ones for float32 probabilities (no 64-bit values inside a
    # user's jax.jit that runs with x64 off)
    width = jnp.float64 if jnp.result_type(p) == jnp.float64 else jnp.float32
    u = jax.random.uniform(_key(generator, device), shape, width)
    return u < p


_BERNOULLI_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this "
                    "error message be improved?  If so, please report an enhancement request to "
                    "PyTorch.)")


def _check_probabilities(p: Tensor) -> None:
    values = np.asarray(p._value)
    if values.size and not ((values >= 0) & (values <= 1)).all():
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
        probs = jnp.broadcast_to(p._value.astype(jnp.float64), tuple(t.shape))
        return _sampled_(_BERNOULLI_TENSOR_, t,
                         _bernoulli_values(probs, tuple(t.shape), generator, t.device), p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
    check_overlap(_BERNOULLI_FLOAT_, t)
    return _sampled_(_BERNOULLI_FLOAT_, t,
                     _bernoulli_values(p, tuple(t.shape), generator, t.device))


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
    if p is not None:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
        values = _bernoulli_values(p, tuple(input.shape), generator, input.device)
        return apply(_BERNOULLI_P, input, aux=(Tensor._make(values),))
    _check_kernel(input, "bernoulli_tensor_cpu_p_")
    _check_probabilities(input)
    values = _bernoulli_values(input._value.astype(jnp.float64), tuple(input.shape), generator,
                               input.device)
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
    if not (mean_t or std_t):
        if size is None:
            raise TypeError(f"normal() received an invalid combination of arguments - got "
                            f"({type(mean).__name__}, {type(std).__name__}), but expected a "
                            f"tensor mean or std, or a size")
        return _normal_of_size(mean, std, size, generator, dtype, device, requires_grad)
    like = mean if mean_t else std
    if not like.dtype.is_floating_point:
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                  f"'{_dtypes.scalar_type_name(like.dtype)}'")
    if std_t:
        if std.numel() and not bool((np.asarray(std._value) >= 0).all()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    shape = jnp.broadcast_shapes(tuple(mean.shape) if mean_t else (),
                                 tuple(std.shape) if std_t else ())
    noise = jax.random.normal(_key(generator, like.device), shape, like._value.dtype)
    values = Tensor._make((mean._value if mean_t else mean)
                          + (std._value if std_t else std) * noise)
    if mean_t and std_t:
        return apply(_NORMAL_TENSOR_TENSOR, mean, std, aux=(values,))
    if mean_t:
        return apply(_NORMAL_TENSOR_FLOAT, mean, aux=(values,))
    return apply(_NORMAL_FLOAT_TENSOR, std, aux=(values,))


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
    probs = np.asarray(input._value, dtype=np.float64).reshape(-1, categories)
    if not (np.isfinite(probs) & (probs >= 0)).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (probs.sum(-1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    logits = jnp.log(jnp.asarray(probs))
    key = _key(generator, input.device)
    if replacement:
        picks = jax.random.categorical(key, logits, axis=-1,
                                       shape=(num_samples, probs.shape[0])).T
    else:  # Gumbel top-k: the order of the keys is a draw without replacement
        keys = logits + jax.random.gumbel(key, logits.shape, jnp.float64)
        picks = jnp.argsort(-keys, axis=-1, stable=True)[:, :num_samples]
    picks = picks.astype(jnp.int64)
    return _finish(picks.reshape(num_samples) if input.ndim == 1 else picks, input.device, False)
