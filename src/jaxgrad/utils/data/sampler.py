"""Samplers: which dataset indices a DataLoader fetches, and in which order
(torch.utils.data.sampler). Random orders come from jaxgrad's generators, so a seed gives the same
order in jaxgrad every time, never torch's order."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Generic, TypeVar

import jax
import jax.numpy as jnp
import numpy as np

from ..._core.dtypes import float64
from ..._core.jax_setup import x64_scope
from ..._core.tensor import Tensor
from ..._functions import random as _random
from ..._functions.creation import as_tensor
from ..._functions.random import Generator

T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """Base class of samplers: subclasses define ``__iter__`` (indices, or lists of indices for a
    batch sampler) and, where they can, ``__len__``.

    >>> import jaxgrad
    >>> class Backwards(jaxgrad.utils.data.Sampler):
    ...     def __init__(self, n): self.n = n
    ...     def __iter__(self): return iter(range(self.n - 1, -1, -1))
    >>> list(Backwards(3))
    [2, 1, 0]
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``.

    >>> import jaxgrad
    >>> list(jaxgrad.utils.data.SequentialSampler("abc"))
    [0, 1, 2]
    """

    data_source: Sized

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _fresh_generator() -> Generator:
    """A generator seeded from the default one (torch's samplers' fallback without a generator:
    each pass draws one seed from the default generator)."""
    seed = _random.randint(0, 2**63 - 1, ()).item()
    return Generator().manual_seed(seed)


class RandomSampler(Sampler[int]):
    """A random order of the indices (a fresh permutation per pass, and per ``len`` indices
    when ``num_samples`` is larger), or with ``replacement=True`` ``num_samples`` uniform draws.

    >>> import jaxgrad
    >>> s = jaxgrad.utils.data.RandomSampler(range(5), generator=jaxgrad.Generator())
    >>> sorted(s), len(s)
    ([0, 1, 2, 3, 4], 5)
    """

    data_source: Sized
    replacement: bool

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator: Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        """How many indices a pass yields (the dataset's current length by default)."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from _random.randint(n, size=(32,), generator=generator).tolist()
            yield from _random.randint(n, size=(self.num_samples % 32,),
                                       generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _random.randperm(n, generator=generator).tolist()
            yield from _random.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order (without replacement).

    >>> import jaxgrad
    >>> sorted(jaxgrad.utils.data.SubsetRandomSampler([7, 3, 5]))
    [3, 5, 7]
    """

    indices: Sequence[int]

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _random.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


def _multinomial(weights: Tensor, num_samples: int, replacement: bool,
                 generator: Generator | None) -> list[int]:
    """``num_samples`` category indices drawn in proportion to ``weights``, with torch.multinomial's
    checks and messages."""
    n = weights.size(0)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > n:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    w = np.asarray(weights._value)
    if num_samples == 1 or not replacement:  # torch's exponential-race kernel checks this
        if not (np.isfinite(w) & (w >= 0)).all():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    elif not (w >= 0).all():  # NaN fails this comparison too
        raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
    elif not np.isfinite(w).all():
        raise RuntimeError(
            "invalid multinomial distribution (encountering probability entry = infinity or NaN)")
    if w.sum() <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    key = (generator or _random.default_generator).next_key()
    with x64_scope():
        p = jnp.asarray(w / w.sum(), dtype=np.float64)
        return jax.random.choice(key, n, (num_samples,), replace=replacement, p=p).tolist()


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices of ``[0, len(weights))`` drawn with probabilities proportional
    to ``weights`` (with replacement by default), as ``torch.multinomial`` draws them.

    >>> import jaxgrad
    >>> s = jaxgrad.utils.data.WeightedRandomSampler([0.0, 1.0, 0.0], 4)
    >>> list(s), len(s)
    ([1, 1, 1, 1], 4)
    """

    weights: Tensor
    num_samples: int
    replacement: bool

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        weights_tensor = as_tensor(weights, dtype=float64)
        if weights_tensor.dim() != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        yield from _multinomial(self.weights, self.num_samples, self.replacement, self.generator)

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups another sampler's indices into lists of ``batch_size`` (the last one shorter,
    unless ``drop_last``).

    >>> import jaxgrad
    >>> from jaxgrad.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    >>> len(BatchSampler(range(5), batch_size=2, drop_last=True))
    2
    """

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int,
                 drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        while batch := list(itertools.islice(indices, self.batch_size)):
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
