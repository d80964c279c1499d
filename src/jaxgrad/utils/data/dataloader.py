"""``DataLoader``: batches from a dataset through a sampler and a collate function
(torch.utils.data.dataloader).

Workers (``num_workers > 0``) run in this process, not in subprocesses: each worker is a record
holding its own copy of the dataset (``copy.deepcopy``; tensors share their immutable JAX
arrays, so the copy costs no array memory; a dataset that cannot be deep-copied, such as one
holding a non-leaf tensor, is shared with the main process instead), its own seeds and its own
states of jaxgrad's default generator, Python's ``random`` and NumPy's global RNG, which are
swapped in while it fetches. What a worker answers is pickled and unpickled, as torch's worker
queue does (tensors arrive as new leaves sharing the worker's array, with version 1).
Index batches are dealt to workers round-robin exactly as torch's main process deals them, and
a worker fetches a batch as soon as it is dealt (prefetching ``prefetch_factor`` batches per
worker ahead), so batches come out in torch's order, and a dataset sees ``get_worker_info()``,
``worker_init_fn`` and per-worker copies as in torch. What workers buy in torch (loading in
parallel with training) is not had: the work is done on this thread.
"""

from __future__ import annotations

import collections
import copy
import io
import itertools
import math
import os
import pickle
import random
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

import numpy as np

from ... import accelerator
from ..._core.tensor import Tensor
from ..._engine.profiling import record_function
from ..._functions import random as _random
from ..._functions.random import Generator
from ._utils.collate import default_collate, default_convert
from ._utils.worker import WorkerInfo, get_worker_info, set_worker_info
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

T_co = TypeVar("T_co", covariant=True)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

_MAP, _ITERABLE = 0, 1


class _InfiniteConstantSampler(Sampler):
    """The sampler of an iterable dataset: ``None`` forever (the dataset decides when to end)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


def _cpu_count() -> int | None:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


class DataLoader(Generic[T_co]):
    """Iterate over ``dataset`` in batches, as ``torch.utils.data.DataLoader``.

    ``batch_size`` samples per batch (``None``: no batching, samples one by one through
    ``default_convert``), in order or ``shuffle``-d by a :class:`RandomSampler` drawing from
    ``generator``, or in the order of a custom ``sampler``/``batch_sampler``; ``collate_fn``
    (default :func:`default_collate`) makes a batch of a list of samples; ``drop_last`` drops a
    short last batch. torch's argument checks and errors apply.

    ``num_workers > 0`` runs its workers in this process, one after another (see the module's
    notes): batches come in torch's order, each worker has its own dataset copy,
    ``get_worker_info()`` and seeds, but nothing is loaded in parallel. ``pin_memory`` moves
    nothing (JAX copies host arrays to the device itself); without an accelerator it warns as
    torch does. Random orders come from jaxgrad's generators: the same seed gives the same order
    in jaxgrad, never torch's order.

    >>> import jaxgrad
    >>> from jaxgrad.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(jaxgrad.arange(5), jaxgrad.arange(5) * 10)
    >>> loader = DataLoader(ds, batch_size=2)
    >>> len(loader), [x.tolist() for x, y in loader]
    (3, [[0, 1], [2, 3], [4]])
    >>> g = jaxgrad.Generator().manual_seed(0)
    >>> sorted(i for (x, _) in DataLoader(ds, batch_size=2, shuffle=True, generator=g)
    ...        for i in x.tolist())
    [0, 1, 2, 3, 4]
    """

    dataset: Any
    batch_size: int | None
    num_workers: int
    pin_memory: bool
    drop_last: bool
    timeout: float
    sampler: Any
    prefetch_factor: int | None
    _initialized = False

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Iterable | None = None,
                 batch_sampler: Sampler[list] | Iterable[list] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[list], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor "
                "to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None and num_workers == 0:
            raise ValueError("multiprocessing_context can only be used with multi-process "
                             f"loading (num_workers > 0), but got num_workers={num_workers}")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _ITERABLE
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _MAP

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _ITERABLE:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._initialized = True
        self._IterableDataset_len_called: int | None = None
        self._iterator: _BaseDataLoaderIter | None = None
        self.check_worker_number_rationality()

    def __setattr__(self, attr: str, val: Any) -> None:
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                          "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    def _get_iterator(self) -> _BaseDataLoaderIter:
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _InProcessWorkersDataLoaderIter(self)

    def __iter__(self) -> _BaseDataLoaderIter:
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._dataset_kind == _ITERABLE:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = (length // self.batch_size if self.drop_last
                          else math.ceil(length / self.batch_size))
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """Warn, as torch, when ``num_workers`` exceeds the CPUs this process may use.

        >>> import jaxgrad
        >>> jaxgrad.utils.data.DataLoader([1, 2]).check_worker_number_rationality()
        """
        if not self.num_workers:
            return
        suggested = _cpu_count()
        if suggested is not None and self.num_workers <= suggested:
            return
        checked = hasattr(os, "sched_getaffinity")
        suggestion = (
            f"Our suggested max number of worker in current system is {suggested}"
            f"{'' if checked else ' (`cpuset` is not taken into account)'}, which is smaller "
            "than what this DataLoader is going to create." if suggested is not None else
            "DataLoader is not able to compute a suggested max number of worker in current "
            "system.")
        warnings.warn(
            f"This DataLoader will create {self.num_workers} worker processes in total. "
            f"{suggestion} Please be aware that excessive worker creation might get DataLoader "
            "running slow or even freeze, lower the worker number to avoid potential "
            "slowness/freeze if necessary.", stacklevel=2)


class _Fetcher:
    """Fetches one (possibly batched) index from a dataset and collates it."""

    def __init__(self, kind: int, dataset: Any, auto_collation: bool, collate_fn: Callable,
                 drop_last: bool) -> None:
        self.kind, self.dataset = kind, dataset
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.dataset_iter = iter(dataset) if kind == _ITERABLE else None
        self.ended = False

    def fetch(self, index: Any) -> Any:
        if self.kind == _MAP:
            if not self.auto_collation:
                return self.collate_fn(self.dataset[index])
            many = getattr(self.dataset, "__getitems__", None)
            data = many(index) if many else [self.dataset[i] for i in index]
            return self.collate_fn(data)
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used "
                          f"as the device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                          stacklevel=3)
        if loader.pin_memory and not accelerator.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _random.randint(0, 2**63 - 1, (), generator=loader.generator).item()
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0
        self._profile_name = f"enumerate(DataLoader)#{type(self).__name__}.__next__"

    def __iter__(self) -> _BaseDataLoaderIter:
        return self

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self) -> Any:
        return next(self._sampler_iter)

    def _next_data(self) -> Any:
        raise NotImplementedError

    def __next__(self) -> Any:
        with record_function(self._profile_name):
            data = self._next_data()
            self._num_yielded += 1
            if (self._dataset_kind == _ITERABLE and self._IterableDataset_len_called is not None
                    and self._num_yielded > self._IterableDataset_len_called):
                message = (f"Length of IterableDataset {self._dataset} was reported to be "
                           f"{self._IterableDataset_len_called}(when accessing len(dataloader)), "
                           f"but {self._num_yielded} samples have been fetched. ")
                if self._num_workers > 0:
                    message += (
                        "For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data."
                        "IterableDataset for examples.")
                warnings.warn(message, stacklevel=2)
            return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self) -> Any:
        raise NotImplementedError("{} cannot be pickled", type(self).__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._dataset_fetcher = _Fetcher(self._dataset_kind, self._dataset, self._auto_collation,
                                         self._collate_fn, self._drop_last)

    def _next_data(self) -> Any:
        return self._dataset_fetcher.fetch(self._next_index())


class _WorkerFailure:
    """An exception a worker raised, re-raised in the main loop as torch's ExceptionWrapper does:
    the same class, its message naming the worker and holding the original traceback."""

    def __init__(self, exc: BaseException, worker_id: int) -> None:
        self.exc_type = type(exc)
        self.message = (f"Caught {self.exc_type.__name__} in DataLoader worker process "
                        f"{worker_id}.\nOriginal " + "".join(traceback.format_exception(exc)))

    def reraise(self) -> None:
        message: str = self.message
        if self.exc_type is KeyError:
            message = _KeyErrorMessage(message)
        try:
            exception = self.exc_type(message)
        except Exception:
            raise RuntimeError(message) from None
        raise exception


class _KeyErrorMessage(str):
    """A KeyError's message shown as written, not as the repr KeyError would show."""

    __slots__ = ()

    def __repr__(self) -> str:
        return self


class _WorkerEnded:
    """A worker's answer when its copy of an iterable dataset is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


_NON_LEAF = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
             "does not support crossing process boundaries.  If you just want to transfer the "
             "data, call detach() on the tensor before serializing (e.g., putting it on the "
             "queue).")


class _Sender(pickle.Pickler):
    """Pickles a worker's answer as torch's worker queue does, tensors aside: those are kept
    (by reference, no copy) and rebuilt on the receiving side."""

    def __init__(self, stream: io.BytesIO) -> None:
        super().__init__(stream, pickle.HIGHEST_PROTOCOL)
        self.tensors: list[Tensor] = []

    def persistent_id(self, obj: Any) -> int | None:
        if not isinstance(obj, Tensor):
            return None
        if obj.requires_grad and not obj.is_leaf:
            raise RuntimeError(_NON_LEAF)
        self.tensors.append(obj)
        return len(self.tensors) - 1


class _Receiver(pickle.Unpickler):
    def __init__(self, stream: io.BytesIO, tensors: list[Tensor]) -> None:
        super().__init__(stream)
        self.tensors = tensors
        self.rebuilt: dict[int, Tensor] = {}

    def persistent_load(self, pid: int) -> Tensor:
        if pid not in self.rebuilt:  # a tensor in shared memory, rebuilt with set_ (version 1)
            self.rebuilt[pid] = self.tensors[pid].__deepcopy__({})
        return self.rebuilt[pid]


def _across_processes(data: Any) -> Any:
    """``data`` as the main process receives it from a worker: pickled and unpickled (so it must
    be picklable), each tensor a new leaf sharing the worker's array, with version 1."""
    stream = io.BytesIO()
    sender = _Sender(stream)
    sender.dump(data)
    stream.seek(0)
    return _Receiver(stream, sender.tensors).load()


class _Worker:
    """One DataLoader worker, in this process: its dataset copy, WorkerInfo, fetcher and the
    states of the random generators it was seeded with (swapped in while it runs)."""

    def __init__(self, loader: DataLoader, worker_id: int, base_seed: int,
                 auto_collation: bool) -> None:
        self.id = worker_id
        self.seed = base_seed + worker_id
        try:
            self.dataset = copy.deepcopy(loader.dataset)
        except Exception:  # e.g. a non-leaf tensor: nothing but a fork can copy it
            self.dataset = loader.dataset
        self.info = WorkerInfo(id=worker_id, num_workers=loader.num_workers, seed=self.seed,
                               dataset=self.dataset)
        self.args = (loader._dataset_kind, self.dataset, auto_collation, loader.collate_fn,
                     loader.drop_last)
        self.jax_state = Generator().manual_seed(self.seed).get_state()
        self.python_state = random.Random(self.seed).getstate()
        np_seed = np.random.SeedSequence(base_seed, spawn_key=(worker_id,)).generate_state(4)
        self.numpy_state = np.random.RandomState(np_seed).get_state()
        self.pending: _WorkerFailure | None = None
        self.fetcher: _Fetcher | None = None
        self.ended = False
        if loader.worker_init_fn is not None:
            self.start(lambda: loader.worker_init_fn(worker_id))
        self.start(self.resume)

    def start(self, step: Callable[[], Any]) -> None:
        """Run a start-up step (``worker_init_fn``, opening the dataset): torch's worker reports
        a failure there as the answer to its first task."""
        if self.pending is None:
            try:
                self.run(step)
            except Exception as exc:
                self.pending = _WorkerFailure(exc, self.id)

    def resume(self) -> None:
        """Start a new pass over the dataset copy (a new epoch with persistent workers)."""
        self.ended = False
        self.fetcher = _Fetcher(*self.args)

    def run(self, task: Callable[[], Any]) -> Any:
        """Run ``task`` as this worker: its WorkerInfo and random states in place while it runs,
        the main process's restored after."""
        main = _random.default_generator
        saved = (main.initial_seed(), main.get_state(), random.getstate(),
                 np.random.get_state(), get_worker_info())
        main.manual_seed(self.seed).set_state(self.jax_state)
        random.setstate(self.python_state)
        np.random.set_state(self.numpy_state)
        set_worker_info(self.info)
        try:
            return task()
        finally:
            self.jax_state = main.get_state()
            self.python_state = random.getstate()
            self.numpy_state = np.random.get_state()
            main.manual_seed(saved[0]).set_state(saved[1])
            random.setstate(saved[2])
            np.random.set_state(saved[3])
            set_worker_info(saved[4])

    def fetch(self, index: Any) -> tuple[bool, Any]:
        """Answer one task: ``(answered, data)``; a worker whose iterable ended answers none."""
        if self.ended:
            return False, None
        if self.pending is not None:
            failure, self.pending = self.pending, None
            return True, failure
        try:
            return True, _across_processes(self.run(lambda: self.fetcher.fetch(index)))
        except StopIteration as exc:
            if self.fetcher.kind != _ITERABLE:
                return True, _WorkerFailure(exc, self.id)
            self.ended = True
            return True, _WorkerEnded(self.id)
        except Exception as exc:
            return True, _WorkerFailure(exc, self.id)


class _InProcessWorkersDataLoaderIter(_BaseDataLoaderIter):
    """torch's multi-process iterator's bookkeeping, with workers that answer a task as soon as
    it is dealt: tasks are dealt round-robin, answers queue in the order given, and batches are
    returned in task order (``in_order=True``) or as answered."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._workers = [_Worker(loader, i, self._base_seed, self._auto_collation)
                         for i in range(self._num_workers)]
        self._reset(loader, first_iter=True)

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict[int, tuple] = {}
        self._tasks_outstanding = 0
        self._answers: collections.deque = collections.deque()
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for worker in self._workers:
                worker.start(worker.resume)
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self) -> None:
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_cycle)
            if self._workers_status[worker_id] and (
                    self._in_order or self._workers_num_tasks[worker_id]
                    < max_tasks // sum(self._workers_status)):
                break
        else:
            return
        task = self._send_idx
        self._task_info[task] = (worker_id,)
        self._workers_num_tasks[worker_id] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1
        answered, data = self._workers[worker_id].fetch(index)
        if answered:
            self._answers.append((task, data))

    def _next_data(self) -> Any:
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            task, data = self._answers.popleft()
            self._tasks_outstanding -= 1
            if isinstance(data, _WorkerEnded):
                self._workers_status[data.worker_id] = False
                self._try_put_index()
                continue
            if task != self._rcvd_idx:
                if not self._in_order:
                    return self._process_data(data, self._task_info.pop(task)[0])
                self._task_info[task] += (data,)
            else:
                worker_id = self._task_info.pop(task)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _process_data(self, data: Any, worker_id: int) -> Any:
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, _WorkerFailure):
            data.reraise()
        return data
