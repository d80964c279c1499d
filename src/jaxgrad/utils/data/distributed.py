"""``DistributedSampler``: each rank's share of a dataset's indices
(torch.utils.data.distributed)."""

from __future__ import annotations

import math
from collections.abc import Iterator

from ... import distributed as dist
from ..._functions import random as _random
from ..._functions.random import Generator
from .dataset import Dataset
from .sampler import Sampler, T_co

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler[T_co]):
    """The indices of ``dataset`` that rank ``rank`` of ``num_replicas`` loads, as torch's.

    Every rank builds the same order (``0 .. len-1``, or with ``shuffle=True`` a permutation
    drawn from a :class:`jaxgrad.Generator` seeded with ``seed + epoch``), makes its length a
    multiple of ``num_replicas`` (repeating indices from its start, or with ``drop_last=True``
    cutting its tail), and keeps every ``num_replicas``-th index from position ``rank``: the
    ranks' shares are disjoint and equally long. ``num_replicas`` and ``rank`` default to the
    default process group's (``jaxgrad.distributed``). Call :meth:`set_epoch` before each epoch
    for a new order; permutations are jaxgrad's, never torch's, for the same seed.

    >>> import jaxgrad
    >>> from jaxgrad.utils.data import DataLoader, DistributedSampler
    >>> [list(DistributedSampler(range(10), num_replicas=3, rank=r, shuffle=False))
    ...  for r in range(3)]
    [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    >>> len(DistributedSampler(range(10), num_replicas=3, rank=0, drop_last=True))
    3
    >>> sampler = DistributedSampler(range(10), num_replicas=2, rank=1, seed=7)
    >>> sampler.set_epoch(1)
    >>> list(sampler) == list(DistributedSampler(range(10), 2, 1, seed=8))  # seed + epoch
    True
    >>> loader = DataLoader(jaxgrad.arange(10), batch_size=2, sampler=DistributedSampler(
    ...     range(10), num_replicas=2, rank=0, shuffle=False))
    >>> [batch.tolist() for batch in loader]
    [[0, 2], [4, 6], [8]]
    """

    def __init__(self, dataset: Dataset, num_replicas: int | None = None,
                 rank: int | None = None, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False) -> None:
        if num_replicas is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size()
        if rank is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)  # type: ignore[arg-type]
        if drop_last and n % num_replicas != 0:
            # the largest multiple of num_replicas below n (torch's formula)
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[T_co]:
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = _random.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            # pad with the order's first indices (cycling when fewer than the padding)
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(f"Number of indices ({len(indices)}) does not match total_size "
                                 f"({self.total_size})")
        indices = indices[self.rank:self.total_size:self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(f"Number of subsampled indices ({len(indices)}) does not match "
                                 f"num_samples ({self.num_samples})")
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch that seeds the next pass's shuffle (``seed + epoch``); every rank must
        use the same one, or their shares overlap.

        >>> from jaxgrad.utils.data import DistributedSampler
        >>> s = DistributedSampler(range(4), num_replicas=1, rank=0)
        >>> s.set_epoch(3)
        >>> s.epoch
        3
        """
        self.epoch = epoch
