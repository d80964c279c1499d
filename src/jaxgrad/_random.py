"""jaxgrad's own seeded random numbers: a ``Generator`` holding a JAX PRNG key.

``manual_seed(s)`` makes every following ``rand``/``randn``/``randint`` reproducible. The values
come from JAX's threefry generator, so they differ from torch's (torch's Mersenne twister is not
reproduced); the distributions are the same.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from . import _api, _device, _dtypes
from ._creation import _finish, _float_or, _size
from ._tensor import Tensor


class Generator:
    """A source of random numbers; split a fresh key for every draw.

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> a = jaxgrad.rand(2, generator=g); _ = g.manual_seed(0)
    >>> bool((a == jaxgrad.rand(2, generator=g)).all())
    True
    """

    __module__ = "jaxgrad"  # its public path, as torch prints it

    def __init__(self, device: Any = "cpu") -> None:
        self._lock = threading.Lock()
        self._seed = 67280421310721
        self._key = jax.random.key(self._seed)
        self.device = device

    def manual_seed(self, seed: int) -> Generator:
        """Reseed this generator with ``seed``; returns the generator.

        >>> import jaxgrad
        >>> jaxgrad.Generator().manual_seed(3).initial_seed()
        3
        """
        with self._lock:
            self._seed = int(seed)
            self._key = jax.random.key(self._seed % (2**63))
        return self

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
        """The generator's current key data as a tensor, for :meth:`set_state`.

        >>> import jaxgrad
        >>> g = jaxgrad.Generator()
        >>> state = g.get_state(); a = jaxgrad.rand(2, generator=g)
        >>> _ = g.set_state(state); bool((a == jaxgrad.rand(2, generator=g)).all())
        True
        """
        return Tensor._make(jax.random.key_data(self._key))

    def set_state(self, state: Tensor) -> Generator:
        """Restore a state from :meth:`get_state`; returns the generator."""
        self._key = jax.random.wrap_key_data(state._value)
        return self

    def next_key(self) -> jax.Array:
        """Split the key: keep one half for later draws, return the other for this one.

        >>> import jaxgrad
        >>> g = jaxgrad.Generator()
        >>> bool((jaxgrad.tensor(0).new_tensor(0) == 0))  # doctest: +SKIP
        True
        """
        with self._lock:
            self._key, sub = jax.random.split(self._key)
        return sub

    def draw(self, sample: Callable[[jax.Array], tuple[jax.Array, Any]]) -> Any:
        """``sample(key) -> (next key, values)`` under the lock: a jitted sampler that splits
        the key itself (as :meth:`next_key` does) draws in one XLA call instead of two."""
        with self._lock:
            self._key, values = sample(self._key)
        return values


default_generator = Generator()
# torch keeps one default generator per GPU besides the CPU one; made on first use, seeded with
# the last ``manual_seed``/``cuda.manual_seed_all`` seed
_cuda_generators: dict[int, Generator] = {}
_cuda_seed: list[int] = []


def cuda_generator(index: int) -> Generator:
    """The default generator of GPU ``index`` (``torch.cuda.default_generators[index]``)."""
    if index not in _cuda_generators:
        g = _cuda_generators[index] = Generator(device=_device.device("cuda", index))
        if _cuda_seed:
            g.manual_seed(_cuda_seed[-1])
    return _cuda_generators[index]


def seed_cuda_generators(seed: int) -> None:
    """Seed every GPU's default generator (``torch.cuda.manual_seed_all``)."""
    _cuda_seed[:] = [int(seed)]
    for g in _cuda_generators.values():
        g.manual_seed(seed)


def generator_for(device: Any) -> Generator:
    """The default generator that draws for tensors made on ``device`` (None: the default
    device): the GPU's own for a GPU, else the CPU one."""
    target = _device.to_jax(device)
    if target is None or target.platform != "gpu":
        return default_generator
    return cuda_generator(_device.of_jax(target).index or 0)


def manual_seed(seed: int) -> Generator:
    """Seed jaxgrad's default generators (the CPU one and each GPU's); returns the CPU one.

    >>> import jaxgrad
    >>> old = jaxgrad.initial_seed(); state = jaxgrad._random.default_generator.get_state()
    >>> _ = jaxgrad.manual_seed(0); a = jaxgrad.randn(3)
    >>> _ = jaxgrad.manual_seed(0); bool((a == jaxgrad.randn(3)).all())
    True
    >>> _ = jaxgrad.manual_seed(old).set_state(state)  # restore the default generator
    """
    seed_cuda_generators(seed)
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator non-deterministically; returns the seed, as ``torch.seed``.

    >>> import jaxgrad
    >>> old = jaxgrad.initial_seed(); state = jaxgrad._random.default_generator.get_state()
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


def _key(generator: Generator | None, device: Any = None) -> jax.Array:
    return (generator or generator_for(device)).next_key()


def rand(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Uniform samples on [0, 1), as ``torch.rand``.

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> x = jaxgrad.rand(2, 3, generator=g)
    >>> x.shape, 0 <= x.min().item() and x.max().item() < 1
    (jaxgrad.Size([2, 3]), True)
    """
    d = _float_or(dtype)
    values = jax.random.uniform(_key(generator, device), _size(size), d)
    return _finish(values, device, requires_grad)


def randn(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal samples, as ``torch.randn``.

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> x = jaxgrad.randn(4, dtype=jaxgrad.float64, generator=g)
    >>> x.shape, x.dtype
    (jaxgrad.Size([4]), jaxgrad.float64)
    """
    d = _float_or(dtype)
    values = jax.random.normal(_key(generator, device), _size(size), d)
    return _finish(values, device, requires_grad)


def randint(low: int, high: int | None = None, size: Any = None, *,
            generator: Generator | None = None, dtype: Any = None, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    """Integers uniform on [low, high) (int64 by default), as ``torch.randint``.

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> x = jaxgrad.randint(3, 5, (10,), generator=g)
    >>> x.dtype, sorted(set(x.tolist()) - {3, 4})
    (jaxgrad.int64, [])
    """
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    d = _dtypes.to_dtype(dtype).np if dtype is not None else jnp.int64
    values = jax.random.randint(_key(generator, device), _size((size,)), low, high,
                                jnp.int64).astype(d)
    return _finish(values, device, requires_grad)


def rand_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    """``rand`` with the shape (and, by default, dtype) of ``input``, from the default generator.

    >>> import jaxgrad
    >>> g = jaxgrad._random.default_generator; state = g.get_state()
    >>> x = jaxgrad.rand_like(jaxgrad.zeros(2, 2, dtype=jaxgrad.float64))
    >>> x.shape, x.dtype
    (jaxgrad.Size([2, 2]), jaxgrad.float64)
    >>> _ = g.set_state(state)  # leave the default generator as it was
    """
    return rand(*input.shape, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    """``randn`` with the shape (and, by default, dtype) of ``input``, from the default generator.

    >>> import jaxgrad
    >>> g = jaxgrad._random.default_generator; state = g.get_state()
    >>> jaxgrad.randn_like(jaxgrad.zeros(3)).shape
    jaxgrad.Size([3])
    >>> _ = g.set_state(state)  # leave the default generator as it was
    """
    return randn(*input.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


def randint_like(input: Tensor, low: int, high: int | None = None, *,
                 dtype: Any = None, device: Any = None) -> Tensor:
    """``randint`` with the shape and (by default) dtype of ``input``, from the default generator.

    >>> import jaxgrad
    >>> g = jaxgrad._random.default_generator; state = g.get_state()
    >>> x = jaxgrad.randint_like(jaxgrad.zeros(2, 2), 0, 10)
    >>> x.shape, x.dtype
    (jaxgrad.Size([2, 2]), jaxgrad.float32)
    >>> _ = g.set_state(state)  # leave the default generator as it was
    """
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype,
                   device=device or input.device)


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None,
             device: Any = None) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 by default), as ``torch.randperm``.

    >>> import jaxgrad
    >>> p = jaxgrad.randperm(5, generator=jaxgrad.Generator().manual_seed(0))
    >>> sorted(p.tolist())
    [0, 1, 2, 3, 4]
    """
    d = _dtypes.to_dtype(dtype).np if dtype is not None else jnp.int64
    return _finish(jax.random.permutation(_key(generator, device), n).astype(d), device, False)


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None):
    """Fill ``t`` in place with normal samples (no autograd, like torch's init functions).

    >>> import jaxgrad
    >>> from jaxgrad._random import normal_
    >>> normal_(jaxgrad.zeros(3), 5.0, 0.0, generator=jaxgrad.Generator())
    tensor([5., 5., 5.])
    """
    noise = jax.random.normal(_key(generator, t.device), tuple(t.shape), t._value.dtype)
    values = mean + std * noise
    return _fill_random(t, values)


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None):
    """Fill ``t`` in place with uniform samples on [a, b).

    >>> import jaxgrad
    >>> from jaxgrad._random import uniform_
    >>> t = uniform_(jaxgrad.zeros(100), 2.0, 3.0, generator=jaxgrad.Generator())
    >>> 2 <= t.min().item() and t.max().item() < 3
    True
    """
    values = jax.random.uniform(_key(generator, t.device), tuple(t.shape), t._value.dtype, a, b)
    return _fill_random(t, values)


def _fill_random(t: Tensor, values: jax.Array) -> Tensor:
    return _api.copy_(t, Tensor._make(values))
