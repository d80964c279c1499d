"""Datasets: map-style (``__getitem__``/``__len__``) and iterable-style (``__iter__``), their
combinations, and ``random_split`` (torch.utils.data.dataset)."""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from ..._core.tensor import Tensor
from ..._functions.random import Generator, default_generator, randperm

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map from keys to samples: subclasses define ``__getitem__`` (and usually ``__len__``;
    ``__getitems__(indices)`` too, to fetch a whole batch at once). ``a + b`` concatenates.

    >>> import jaxgrad
    >>> class Squares(jaxgrad.utils.data.Dataset):
    ...     def __getitem__(self, i): return i * i
    ...     def __len__(self): return 4
    >>> both = Squares() + Squares()
    >>> len(both), both[5]
    (8, 1)
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A stream of samples: subclasses define ``__iter__``. A DataLoader with workers gives each
    worker its own copy; :func:`get_worker_info` tells the copy which one it is.
    ``a + b`` chains.

    >>> import jaxgrad
    >>> class Count(jaxgrad.utils.data.IterableDataset):
    ...     def __init__(self, n): self.n = n
    ...     def __iter__(self): return iter(range(self.n))
    >>> list(Count(2) + Count(3))
    [0, 1, 0, 1, 2]
    """

    def __add__(self, other: Dataset[T_co]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Samples are the rows of tensors that share their first dimension.

    >>> import jaxgrad
    >>> ds = jaxgrad.utils.data.TensorDataset(jaxgrad.arange(3), jaxgrad.ones(3))
    >>> len(ds), ds[1]
    (3, (tensor(1), tensor(1.)))
    """

    tensors: tuple[Tensor, ...]

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset[Any]):
    """Datasets of one length side by side: a sample is the tuple (positional datasets) or the
    dict (keyword datasets) of their samples.

    >>> import jaxgrad
    >>> ds = jaxgrad.utils.data.StackDataset(x=[1, 2], y=["a", "b"])
    >>> ds[1]
    {'x': 2, 'y': 'b'}
    """

    datasets: tuple | dict

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or"
                "``dict``- (via ``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args or kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args or kwargs

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        named = self.datasets if isinstance(self.datasets, dict) else dict(
            enumerate(self.datasets))
        columns = {k: _fetch_many(d, indices) for k, d in named.items()}
        if isinstance(self.datasets, dict):
            return [{k: columns[k][i] for k in named} for i in range(len(indices))]
        return [tuple(columns[k][i] for k in named) for i in range(len(indices))]

    def __len__(self) -> int:
        return self._length


def _fetch_many(dataset: Any, indices: list) -> list:
    """A nested dataset's samples at ``indices``, through its ``__getitems__`` when it has one."""
    if not callable(getattr(dataset, "__getitems__", None)):
        return [dataset[i] for i in indices]
    items = dataset.__getitems__(indices)
    if len(items) != len(indices):
        raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, "
                         f"got {len(items)}")
    return items


class ConcatDataset(Dataset[T_co]):
    """Map-style datasets one after another; ``cumulative_sizes`` holds the running lengths.

    >>> import jaxgrad
    >>> ds = jaxgrad.utils.data.ConcatDataset([[1, 2], [3, 4, 5]])
    >>> len(ds), ds[2], ds[-1], ds.cumulative_sizes
    (5, 3, 5, [2, 5])
    """

    datasets: list
    cumulative_sizes: list[int]

    @staticmethod
    def cumsum(sequence: Iterable[Any]) -> list[int]:
        """The running total of the lengths of ``sequence``'s items.

        >>> import jaxgrad
        >>> jaxgrad.utils.data.ConcatDataset.cumsum([[1], [2, 3]])
        [1, 3]
        """
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets: Iterable[Any]) -> None:
        super().__init__()
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]

    @property
    def cummulative_sizes(self) -> list[int]:
        """The old, misspelled name of ``cumulative_sizes`` (FutureWarning, as torch)."""
        warnings.warn("`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
                      FutureWarning, stacklevel=2)
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    """Iterable datasets one after another, chained lazily.

    >>> import jaxgrad
    >>> class Count(jaxgrad.utils.data.IterableDataset):
    ...     def __init__(self, n): self.n = n
    ...     def __iter__(self): return iter(range(self.n))
    ...     def __len__(self): return self.n
    >>> ds = jaxgrad.utils.data.ChainDataset([Count(1), Count(2)])
    >>> list(ds), len(ds)
    ([0, 0, 1], 3)
    """

    def __init__(self, datasets: Iterable[Any]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            _check_iterable(d)
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            _check_iterable(d)
            total += len(d)
        return total


def _check_iterable(d: Any) -> None:
    if not isinstance(d, IterableDataset):
        raise AssertionError("ChainDataset only supports IterableDataset")


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``. A subclass that overrides ``__getitem__``
    must override ``__getitems__`` too (the DataLoader fetches batches through it).

    >>> import jaxgrad
    >>> s = jaxgrad.utils.data.Subset([10, 11, 12, 13], [3, 0])
    >>> len(s), s[0], s.__getitems__([1, 0])
    (2, 13, [10, 13])
    """

    dataset: Any
    indices: Sequence[int]

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        cls = type(self)
        if cls.__getitem__ is not Subset.__getitem__ and cls.__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{cls.__name__} overrides __getitem__ but not __getitems__. "
                "When subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. "
                "A simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx: Any) -> T_co:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        picked = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(picked)
        return [self.dataset[i] for i in picked]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Any, lengths: Sequence[int | float],
                 generator: Generator | None = default_generator) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random subsets of the given lengths, or of the
    given fractions of its length (floors, then the remainder dealt out one by one from the
    first split). The permutation comes from ``generator`` (jaxgrad's RNG: the same seed gives
    the same split in jaxgrad, not torch's split).

    >>> import jaxgrad
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> a, b = jaxgrad.utils.data.random_split(range(10), [0.75, 0.25], generator=g)
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (8, 2, True)
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(math.floor(len(dataset) * frac))
        for i in range(len(dataset) - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(f"Length of split at index {i} is 0. "
                              "This might result in an empty dataset.", stacklevel=2)
        lengths = sizes
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = randperm(sum(lengths), generator=generator).tolist()
    ends = list(itertools.accumulate(lengths))
    return [Subset(dataset, order[end - n:end]) for end, n in zip(ends, lengths)]
