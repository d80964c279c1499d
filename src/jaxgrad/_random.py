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

from . import _dtypes
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

    def __init__(self, device: Any = "cpu") -> None:
        self._lock = threading.Lock()
        self._seed = 67280421310721
        self._key = jax.random.key(self._seed)
        self.device = device

    def manual_seed(self, seed: int) -> Generator:
        with self._lock:
            self._seed = int(seed)
            self._key = jax.random.key(self._seed % (2**63))
        return self

    def seed(self) -> int:
        import secrets

        s = secrets.randbits(63)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        return Tensor._make(jax.random.key_data(self._key))

    def set_state(self, state: Tensor) -> Generator:
        self._key = jax.random.wrap_key_data(state._value)
        return self

    def next_key(self) -> jax.Array:
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


def manual_seed(seed: int) -> Generator:
    """Seed jaxgrad's default generator; returns it.

    >>> import jaxgrad
    >>> _ = jaxgrad.manual_seed(0); a = jaxgrad.randn(3)
    >>> _ = jaxgrad.manual_seed(0); bool((a == jaxgrad.randn(3)).all())
    True
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def _key(generator: Generator | None) -> jax.Array:
    return (generator or default_generator).next_key()


def rand(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Uniform samples on [0, 1)."""
    d = _float_or(dtype)
    return _finish(jax.random.uniform(_key(generator), _size(size), d), device, requires_grad)


def randn(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal samples."""
    d = _float_or(dtype)
    return _finish(jax.random.normal(_key(generator), _size(size), d), device, requires_grad)


def randint(low: int, high: int | None = None, size: Any = None, *,
            generator: Generator | None = None, dtype: Any = None, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    """Integers uniform on [low, high) (int64 by default)."""
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    d = _dtypes.to_dtype(dtype).np if dtype is not None else jnp.int64
    values = jax.random.randint(_key(generator), _size((size,)), low, high, jnp.int64).astype(d)
    return _finish(values, device, requires_grad)


def rand_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    return rand(*input.shape, dtype=dtype or input.dtype, device=device,
                requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    return randn(*input.shape, dtype=dtype or input.dtype, device=device,
                 requires_grad=requires_grad)


def randint_like(input: Tensor, low: int, high: int | None = None, *,
                 dtype: Any = None, device: Any = None) -> Tensor:
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device)


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None,
             device: Any = None) -> Tensor:
    d = _dtypes.to_dtype(dtype).np if dtype is not None else jnp.int64
    return _finish(jax.random.permutation(_key(generator), n).astype(d), device, False)


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None):
    """Fill ``t`` in place with normal samples (no autograd, like torch's init functions)."""
    values = mean + std * jax.random.normal(_key(generator), tuple(t.shape), t._value.dtype)
    return _fill_random(t, values)


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None):
    """Fill ``t`` in place with uniform samples on [a, b)."""
    values = jax.random.uniform(_key(generator), tuple(t.shape), t._value.dtype, a, b)
    return _fill_random(t, values)


def _fill_random(t: Tensor, values: jax.Array) -> Tensor:
    from . import _api

    return _api.copy_(t, Tensor._make(values))
