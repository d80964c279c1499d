"""``jaxgrad.utils.data`` against ``torch.utils.data``: datasets, samplers, DataLoader, collation.

Random orders come from each library's own generator, so shuffled results are compared as
sorted multisets (with the batch sizes), and jaxgrad's own reproducibility is checked by
running one seed twice; everything that is not random is compared exactly.
"""

from __future__ import annotations

import collections
import random
import re
import warnings

import numpy as np
import pytest

import jaxgrad
from differential import Raised, attempt, captured_warnings, ok, raises, same, torch

Point = collections.namedtuple("Point", ["x", "y"])


class Opaque:
    """A sample type default_collate does not know."""


def _rows(T, n=7):
    return T.utils.data.TensorDataset(T.arange(n * 2.0).reshape(n, 2), T.arange(n) * 10)


def _numbers(T, name, *args, **kwargs):
    """The indices a sampler yields and its length."""
    sampler = getattr(T.utils.data, name)(*args, **kwargs)
    return list(sampler), len(sampler)


class Count:
    """An IterableDataset class per library: yields ``start .. stop-1``, optionally with the
    worker id it ran in, optionally with a length."""

    @staticmethod
    def make(T, stop, start=0, with_worker=False, length=None):
        class Counting(T.utils.data.IterableDataset):
            def __iter__(self):
                info = T.utils.data.get_worker_info()
                worker = -1 if info is None else info.id
                for i in range(start, stop):
                    yield (worker, i) if with_worker else i

        if length is not None:
            Counting.__len__ = lambda self: length
        return Counting()


# --- datasets ------------------------------------------------------------------------------


def test_tensor_dataset():
    ok(lambda T: [len(_rows(T)), _rows(T)[3], _rows(T)[1:3], _rows(T)[-1]])
    ok(lambda T: T.utils.data.TensorDataset(T.ones(2, requires_grad=True))[0])
    raises(lambda T: T.utils.data.TensorDataset(T.ones(3), T.ones(4)))


def test_stack_dataset():
    def program(T):
        a, b = _rows(T), list(range(100, 107))
        by_position = T.utils.data.StackDataset(a, b)
        by_name = T.utils.data.StackDataset(x=a, y=b)
        return [len(by_position), by_position[2], by_name[4], by_position.__getitems__([0, 5]),
                by_name.__getitems__([6, 1])]

    ok(program)
    raises(lambda T: T.utils.data.StackDataset([1], y=[2]))
    raises(lambda T: T.utils.data.StackDataset())
    raises(lambda T: T.utils.data.StackDataset([1, 2], [3]))
    raises(lambda T: T.utils.data.StackDataset(x=[1, 2], y=[3]))


def test_stack_dataset_uses_nested_getitems():
    def program(T):
        class Batched(T.utils.data.Dataset):
            def __getitem__(self, i):
                return -i

            def __getitems__(self, indices):
                return [("batched", i) for i in indices]

            def __len__(self):
                return 3

        class Short(Batched):
            def __getitems__(self, indices):
                return indices[:1]

        stacked = T.utils.data.StackDataset(Batched(), [7, 8, 9])
        return [stacked.__getitems__([2, 0]), stacked[1],
                attempt(lambda: T.utils.data.StackDataset(Short(), [1, 2, 3]).__getitems__(
                    [0, 1]))]

    ok(program)


def test_concat_dataset():
    def program(T):
        both = T.utils.data.ConcatDataset([_rows(T, 3), _rows(T, 4)])
        added = _rows(T, 2) + _rows(T, 3)
        return [len(both), both.cumulative_sizes, both[2], both[3], both[-1], both[-7],
                type(added).__name__, len(added), added[4],
                attempt(lambda: both[-8]), attempt(lambda: both[7])]

    ok(program)
    raises(lambda T: T.utils.data.ConcatDataset([]))
    raises(lambda T: T.utils.data.ConcatDataset([[1], Count.make(T, 2)]))
    ok(lambda T: T.utils.data.ConcatDataset.cumsum([[1, 2], [], [3]]))
    assert captured_warnings(lambda T: T.utils.data.ConcatDataset([[1]]).cummulative_sizes,
                             torch) == captured_warnings(
        lambda T: T.utils.data.ConcatDataset([[1]]).cummulative_sizes, jaxgrad)


def test_chain_dataset():
    def program(T):
        chained = T.utils.data.ChainDataset([Count.make(T, 2, length=2),
                                             Count.make(T, 5, 3, length=2)])
        plus = Count.make(T, 1) + Count.make(T, 2)
        return [list(chained), len(chained), type(plus).__name__, list(plus)]

    ok(program)
    raises(lambda T: list(T.utils.data.ChainDataset([Count.make(T, 1), [1, 2]])))
    raises(lambda T: len(T.utils.data.ChainDataset([[1, 2]])))


def test_subset():
    def program(T):
        s = T.utils.data.Subset(_rows(T), [5, 0, 3])
        lists = T.utils.data.Subset(list(range(10, 20)), [9, 1])
        return [len(s), s[0], s[-1], s.__getitems__([2, 1]), lists[1], lists.__getitems__([0])]

    ok(program)

    def overrides_getitem_only(T):
        class Mine(T.utils.data.Subset):
            def __getitem__(self, i):
                return 0

        return Mine([1, 2], [0])

    raises(overrides_getitem_only)

    def overrides_both(T):
        class Mine(T.utils.data.Subset):
            def __getitem__(self, i):
                return "item"

            def __getitems__(self, indices):
                return ["items"] * len(indices)

        return list(T.utils.data.DataLoader(Mine([1, 2, 3], [0, 1]), batch_size=2))

    ok(overrides_both)


def test_subset_passes_list_indices_through():
    def program(T):
        class Lists(T.utils.data.Dataset):
            def __getitem__(self, i):
                return ("got", i)

        return T.utils.data.Subset(Lists(), [4, 5, 6])[[2, 0]]

    ok(program)


@pytest.mark.parametrize("lengths", [[3, 7], [0, 10], [0.3, 0.7], [0.25, 0.25, 0.5],
                                     [0.5, 0.5], [1.0], [0.33, 0.33, 0.34]])
def test_random_split_sizes_and_contents(lengths):
    def program(T):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parts = T.utils.data.random_split(range(10), lengths,
                                              generator=T.Generator().manual_seed(0))
        return [type(p).__name__ for p in parts], [len(p) for p in parts], sorted(
            i for p in parts for i in p)

    ok(program)


@pytest.mark.parametrize("lengths", [[3, 6], [3, 8], [1.5, -0.5], [0.4, 0.4], [-1, 11],
                                     [11], [0.5, 0.6, -0.1]])
def test_random_split_bad_lengths(lengths):
    same(lambda T: [len(p) for p in T.utils.data.random_split(range(10), lengths)])


def test_random_split_warns_about_an_empty_split():
    program = lambda T: T.utils.data.random_split(range(2), [0.25, 0.25, 0.5],
                                                          generator=T.Generator())
    assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)
    assert captured_warnings(program, torch)


def test_random_split_is_reproducible_in_jaxgrad():
    def split(seed):
        g = jaxgrad.Generator().manual_seed(seed)
        return [list(p) for p in jaxgrad.utils.data.random_split(range(20), [0.5, 0.5],
                                                                 generator=g)]

    assert split(3) == split(3)
    assert split(3) != split(4)
    jaxgrad.manual_seed(5)
    first = [list(p) for p in jaxgrad.utils.data.random_split(range(20), [10, 10])]
    jaxgrad.manual_seed(5)
    assert first == [list(p) for p in jaxgrad.utils.data.random_split(range(20), [10, 10])]


def test_dataset_base_classes():
    raises(lambda T: T.utils.data.Dataset()[0])
    ok(lambda T: isinstance(Count.make(T, 1), T.utils.data.Dataset))
    raises(lambda T: len(Count.make(T, 1)))


# --- samplers ------------------------------------------------------------------------------


def test_sequential_and_batch_samplers():
    ok(lambda T: _numbers(T, "SequentialSampler", "abcd"))
    for size in (1, 3, 4, 5):
        for drop in (False, True):
            ok(lambda T, size=size, drop=drop: _numbers(T, "BatchSampler", range(9), size, drop))
            ok(lambda T, size=size, drop=drop: _numbers(
                T, "BatchSampler", T.utils.data.SequentialSampler(range(8)), size, drop))
    for bad in (0, -1, 2.0, True, None):
        raises(lambda T, bad=bad: T.utils.data.BatchSampler(range(3), bad, False))
    raises(lambda T: T.utils.data.BatchSampler(range(3), 2, 1))
    raises(lambda T: T.utils.data.Sampler().__iter__())


@pytest.mark.parametrize("num_samples", [None, 1, 4, 10, 23])
def test_random_sampler_without_replacement(num_samples):
    def program(T):
        sampler = T.utils.data.RandomSampler(range(10), num_samples=num_samples,
                                             generator=T.Generator().manual_seed(0))
        drawn = list(sampler)
        whole_passes = len(drawn) // 10 * list(range(10))
        return [len(sampler), len(drawn), sampler.num_samples,
                len(drawn) < 10 or sorted(drawn[:len(whole_passes)]) == sorted(whole_passes),
                set(drawn) <= set(range(10)), len(set(drawn[-(len(drawn) % 10 or 10):]))]

    ok(program)


@pytest.mark.parametrize("num_samples", [None, 5, 32, 70])
def test_random_sampler_with_replacement(num_samples):
    def program(T):
        sampler = T.utils.data.RandomSampler(range(6), replacement=True, num_samples=num_samples)
        drawn = list(sampler)
        return [len(sampler), len(drawn), set(drawn) <= set(range(6)), sampler.replacement]

    ok(program)


def test_random_sampler_errors():
    raises(lambda T: T.utils.data.RandomSampler(range(3), replacement=1))
    for bad in (0, -2, 2.5):
        raises(lambda T, bad=bad: T.utils.data.RandomSampler(range(3), num_samples=bad))
    raises(lambda T: T.utils.data.RandomSampler([]))


def test_random_sampler_sees_the_dataset_grow():
    def program(T):
        data = [1, 2]
        sampler = T.utils.data.RandomSampler(data)
        data.append(3)
        return len(sampler), sorted(sampler)

    ok(program)


def test_subset_random_sampler():
    ok(lambda T: [sorted(T.utils.data.SubsetRandomSampler([9, 4, 7])),
                  len(T.utils.data.SubsetRandomSampler([9, 4, 7])),
                  sorted(T.utils.data.SubsetRandomSampler(
                      range(5), generator=T.Generator().manual_seed(1)))])


def test_weighted_random_sampler():
    ok(lambda T: _numbers(T, "WeightedRandomSampler", [0.0, 0.0, 2.0], 5))
    ok(lambda T: _numbers(T, "WeightedRandomSampler", T.tensor([0.0, 3.0]), 1, False))
    ok(lambda T: sorted(T.utils.data.WeightedRandomSampler([1.0, 2.0, 3.0], 3, False)))
    ok(lambda T: T.utils.data.WeightedRandomSampler([1, 2], 2).weights)

    def counts(T):
        drawn = list(T.utils.data.WeightedRandomSampler([1.0, 0.0, 3.0, 1.0], 4000,
                                                        generator=T.Generator().manual_seed(0)))
        freq = np.bincount(drawn, minlength=4) / len(drawn)
        return [len(drawn), float(freq[1]), bool(abs(freq[2] - 0.6) < 0.05),
                bool(abs(freq[0] - 0.2) < 0.05)]

    ok(counts)


@pytest.mark.parametrize("weights, n, replacement", [
    ([1.0, 2.0], 0, True), ([1.0, 2.0], -1, True), ([1.0, 2.0], 2.0, True),
    ([1.0, 2.0], True, True), ([1.0, 2.0], 1, 1), ([[1.0, 2.0]], 1, True), (3.0, 1, True),
    ([1.0, 2.0], 3, False), ([0.0, 0.0], 1, True), ([1.0, -1.0], 1, True),
    ([1.0, float("nan")], 1, True), ([float("inf"), 1.0], 1, True), ([], 1, True),
    ([1.0, -1.0], 2, True), ([1.0, -1.0], 2, False), ([1.0, -1.0, 0.0], 1, False),
    ([-1.0, float("nan")], 2, True), ([0.0, 0.0], 2, False), ([1.0, float("nan")], 2, True),
    ([float("inf"), 1.0], 2, True), ([-1.0, float("inf")], 2, True), ([0.0, 0.0], 2, True),
])
def test_weighted_random_sampler_errors(weights, n, replacement):
    raises(lambda T: list(T.utils.data.WeightedRandomSampler(weights, n, replacement)))


def test_samplers_are_reproducible_in_jaxgrad():
    data = jaxgrad.utils.data

    def draw(seed):
        g = jaxgrad.Generator().manual_seed(seed)
        return [list(data.RandomSampler(range(30), generator=g)),
                list(data.RandomSampler(range(30), True, 40, generator=g)),
                list(data.SubsetRandomSampler(list(range(30)), generator=g)),
                list(data.WeightedRandomSampler([1.0] * 30, 30, generator=g)),
                list(data.WeightedRandomSampler([1.0] * 30, 30, False, generator=g))]

    assert draw(1) == draw(1)
    assert all(a != b for a, b in zip(draw(1), draw(2)))
    jaxgrad.manual_seed(7)
    first = list(data.RandomSampler(range(30)))
    jaxgrad.manual_seed(7)
    assert list(data.RandomSampler(range(30))) == first


def test_random_sampler_without_a_generator_draws_a_new_order_each_pass():
    """torch seeds a fresh generator from the default one at each pass (so two passes differ,
    and the default generator moves on)."""
    sampler = jaxgrad.utils.data.RandomSampler(range(50))
    before = jaxgrad.initial_seed(), jaxgrad._functions.random.default_generator.get_state().tolist()
    assert list(sampler) != list(sampler)
    assert jaxgrad._functions.random.default_generator.get_state().tolist() != before[1]


# --- collation -----------------------------------------------------------------------------


COLLATABLE = {
    "tensors": lambda T: [T.ones(2, 3), T.zeros(2, 3)],
    "int_tensors": lambda T: [T.tensor(1), T.tensor(2)],
    "floats": lambda T: [0.5, 1.5, -2.0],
    "ints": lambda T: [1, 2, 3],
    "bools": lambda T: [True, False],
    "strings": lambda T: ["a", "bc"],
    "bytes": lambda T: [b"a", b"b"],
    "numpy_arrays": lambda T: [np.arange(3, dtype=np.float32), np.ones(3, np.float32)],
    "numpy_int_arrays": lambda T: [np.arange(3), np.arange(3)],
    "numpy_scalars": lambda T: [np.float64(1.5), np.float64(2.5)],
    "numpy_int32": lambda T: [np.int32(1), np.int32(2)],
    "numpy_bools": lambda T: [np.bool_(True), np.bool_(False)],
    "dicts": lambda T: [{"x": T.ones(2), "y": 1, "name": "a"},
                        {"x": T.zeros(2), "y": 2, "name": "b"}],
    "ordered_dicts": lambda T: [collections.OrderedDict(b=1.0, a=2),
                                collections.OrderedDict(b=3.0, a=4)],
    "namedtuples": lambda T: [Point(1, T.ones(2)), Point(2, T.zeros(2))],
    "tuples": lambda T: [(T.ones(1), 1, "a"), (T.zeros(1), 2, "b")],
    "lists": lambda T: [[1, 2.0], [3, 4.0]],
    "nested": lambda T: [{"p": [Point(1, 2.0)], "q": (np.zeros(2),)},
                         {"p": [Point(3, 4.0)], "q": (np.ones(2),)}],
    "grad_tensors": lambda T: [T.ones(2, requires_grad=True) * 2, T.ones(2) * 3],
    "ragged_tensors": lambda T: [T.ones(2), T.ones(3)],
    "mixed_dtypes": lambda T: [T.ones(2), T.ones(2, dtype=T.float64)],
    "ragged_lists": lambda T: [[1, 2], [3]],
    "opaque": lambda T: [Opaque(), Opaque()],
    "none": lambda T: [None, None],
    "numpy_strings": lambda T: [np.array(["a"]), np.array(["b"])],
    "numpy_objects": lambda T: [np.array([Opaque()]), np.array([Opaque()])],
    "ragged_numpy": lambda T: [np.zeros(2), np.zeros(3)],
}


@pytest.mark.parametrize("name", list(COLLATABLE))
def test_default_collate(name):
    same(lambda T: T.utils.data.default_collate(COLLATABLE[name](T)))


@pytest.mark.parametrize("name", list(COLLATABLE))
def test_default_convert(name):
    def program(T):
        converted = T.utils.data.default_convert(COLLATABLE[name](T))
        return [type(converted).__name__, [type(c).__name__ for c in converted],
                [c for c in converted if not isinstance(c, (Opaque, np.ndarray))]]

    same(program)


def test_default_convert_of_one_sample():
    ok(lambda T: T.utils.data.default_convert(np.arange(4).reshape(2, 2)))
    ok(lambda T: T.utils.data.default_convert(np.float32(2.5)))
    ok(lambda T: T.utils.data.default_convert(Point(np.array(0), np.array([1.5]))))
    ok(lambda T: T.utils.data.default_convert((np.zeros(1), "s", 3)))
    ok(lambda T: T.utils.data.default_convert(range(3)))
    ok(lambda T: type(T.utils.data.default_convert(np.array(["a"]))).__name__)


def test_collate_result_types():
    def program(T):
        collate = T.utils.data.default_collate
        return [type(collate(COLLATABLE[name](T))).__name__ for name in
                ("dicts", "ordered_dicts", "namedtuples", "tuples", "lists")]

    ok(program)


def test_collate_fn_map_can_be_extended():
    def program(T):
        collate = T.utils.data._utils.collate
        table = {**collate.default_collate_fn_map,
                 Opaque: lambda batch, *, collate_fn_map: f"{len(batch)} opaque"}
        return collate.collate([(Opaque(), 1), (Opaque(), 2)], collate_fn_map=table)

    ok(program)


# --- DataLoader ----------------------------------------------------------------------------


def _batches(loader):
    return [batch for batch in loader]


LOADER_CASES = {
    "default": {},
    "batch_3": {"batch_size": 3},
    "batch_3_drop": {"batch_size": 3, "drop_last": True},
    "batch_7": {"batch_size": 7},
    "batch_big_drop": {"batch_size": 8, "drop_last": True},
    "no_batching": {"batch_size": None},
    "shuffle_false": {"batch_size": 2, "shuffle": False},
    "sampler": {"batch_size": 2, "sampler": [6, 0, 5, 1]},
    "batch_sampler": {"batch_sampler": [[3, 1], [0], [6, 5, 4]]},
    "collate_fn": {"batch_size": 4, "collate_fn": lambda batch: len(batch)},
    "no_batching_collate": {"batch_size": None, "collate_fn": lambda sample: sample[1] + 1},
    "workers_2": {"batch_size": 2, "num_workers": 2},
    "workers_3_no_batching": {"batch_size": None, "num_workers": 3},
    "workers_prefetch": {"batch_size": 1, "num_workers": 2, "prefetch_factor": 1},
}


@pytest.mark.parametrize("case", list(LOADER_CASES))
def test_loader_batches_in_order(case):
    def program(T):
        loader = T.utils.data.DataLoader(_rows(T), **LOADER_CASES[case])
        return [len(loader), _batches(loader), _batches(loader), loader.batch_size,
                loader.drop_last, type(loader.sampler).__name__,
                type(loader.batch_sampler).__name__]

    ok(program)


@pytest.mark.parametrize("kwargs", [{"batch_size": 2}, {"batch_size": 3, "drop_last": True},
                                    {"batch_size": None}, {"batch_size": 2, "num_workers": 2},
                                    {"batch_size": 2, "num_workers": 2, "in_order": False}])
def test_shuffled_loader_is_a_permutation(kwargs):
    def program(T):
        loader = T.utils.data.DataLoader(_rows(T, 11), shuffle=True, **kwargs)
        batches = _batches(loader)
        labels = [b[1].reshape(-1).tolist() for b in batches]
        seen = [i for x in labels for i in x]
        return [len(loader), len(batches), sorted(len(x) for x in labels), len(set(seen)),
                set(seen) <= set(range(0, 110, 10)), type(loader.sampler).__name__]

    ok(program)


def test_shuffled_loader_is_reproducible_in_jaxgrad():
    data = jaxgrad.utils.data

    def order(seed, epochs=2):
        loader = data.DataLoader(_rows(jaxgrad, 20), batch_size=4, shuffle=True,
                                 generator=jaxgrad.Generator().manual_seed(seed))
        return [b[1].tolist() for _ in range(epochs) for b in loader]

    first = order(0)
    assert first == order(0) and first != order(1)
    assert first[:5] != first[5:]  # each epoch reshuffles
    jaxgrad.manual_seed(3)
    default = [b[1].tolist() for b in data.DataLoader(_rows(jaxgrad, 20), shuffle=True)]
    jaxgrad.manual_seed(3)
    assert default == [b[1].tolist() for b in data.DataLoader(_rows(jaxgrad, 20), shuffle=True)]


def test_loader_draws_from_the_generator_per_epoch():
    """Every new iterator draws a base seed from the loader's generator (torch's workers' seeds),
    so a training script's later random draws depend on how many epochs ran, as in torch."""
    jaxgrad.manual_seed(0)
    list(jaxgrad.utils.data.DataLoader([1, 2, 3]))
    after_one = jaxgrad.rand(3)
    jaxgrad.manual_seed(0)
    untouched = jaxgrad.rand(3)
    assert not bool((after_one == untouched).all())
    g = jaxgrad.Generator().manual_seed(0)
    state = g.get_state().tolist()
    iter(jaxgrad.utils.data.DataLoader([1, 2], generator=g))
    assert g.get_state().tolist() != state


def test_loader_over_python_data():
    ok(lambda T: _batches(T.utils.data.DataLoader([{"a": i, "b": [i, 2.0 * i]}
                                                   for i in range(5)], batch_size=2)))
    ok(lambda T: _batches(T.utils.data.DataLoader(["x", "y", "z"], batch_size=2)))
    ok(lambda T: _batches(T.utils.data.DataLoader([np.ones(2) * i for i in range(3)],
                                                  batch_size=2)))
    ok(lambda T: _batches(T.utils.data.DataLoader([(i, "s") for i in range(3)],
                                                  batch_size=None)))


def test_loader_batches_keep_autograd_history():
    def program(T):
        w = T.ones(3, requires_grad=True)
        data = T.utils.data.TensorDataset(T.arange(6.0).reshape(2, 3) * w)
        (x,) = next(iter(T.utils.data.DataLoader(data, batch_size=2)))
        x.sum().backward()
        return x, w.grad

    ok(program)


def test_loader_uses_getitems():
    def program(T):
        class Batched(T.utils.data.Dataset):
            def __getitem__(self, i):
                raise AssertionError("unused")

            def __getitems__(self, indices):
                return [i * 100 for i in indices]

            def __len__(self):
                return 5

        return _batches(T.utils.data.DataLoader(Batched(), batch_size=2))

    ok(program)


LOADER_ERRORS = {
    "sampler_and_shuffle": lambda T: T.utils.data.DataLoader([1], sampler=[0], shuffle=True),
    "batch_sampler_and_batch_size": lambda T: T.utils.data.DataLoader(
        [1], batch_sampler=[[0]], batch_size=2),
    "batch_sampler_and_shuffle": lambda T: T.utils.data.DataLoader(
        [1], batch_sampler=[[0]], shuffle=True),
    "batch_sampler_and_sampler": lambda T: T.utils.data.DataLoader(
        [1], batch_sampler=[[0]], sampler=[0]),
    "batch_sampler_and_drop_last": lambda T: T.utils.data.DataLoader(
        [1], batch_sampler=[[0]], drop_last=True),
    "no_batch_size_and_drop_last": lambda T: T.utils.data.DataLoader(
        [1], batch_size=None, drop_last=True),
    "negative_workers": lambda T: T.utils.data.DataLoader([1], num_workers=-1),
    "negative_timeout": lambda T: T.utils.data.DataLoader([1], timeout=-1),
    "prefetch_without_workers": lambda T: T.utils.data.DataLoader([1], prefetch_factor=2),
    "negative_prefetch": lambda T: T.utils.data.DataLoader([1], num_workers=1,
                                                           prefetch_factor=-1),
    "persistent_without_workers": lambda T: T.utils.data.DataLoader(
        [1], persistent_workers=True),
    "context_without_workers": lambda T: T.utils.data.DataLoader(
        [1], multiprocessing_context="fork"),
    "iterable_and_shuffle": lambda T: T.utils.data.DataLoader(Count.make(T, 2), shuffle=True),
    "iterable_and_sampler": lambda T: T.utils.data.DataLoader(Count.make(T, 2), sampler=[0]),
    "iterable_and_batch_sampler": lambda T: T.utils.data.DataLoader(
        Count.make(T, 2), batch_sampler=[[0]]),
    "bad_batch_size": lambda T: T.utils.data.DataLoader([1], batch_size=0),
    "timeout_without_workers": lambda T: iter(T.utils.data.DataLoader([1], timeout=1)),
    "len_of_iterable_without_len": lambda T: len(T.utils.data.DataLoader(Count.make(T, 2))),
    "len_of_sampler_without_len": lambda T: len(T.utils.data.DataLoader(
        [1, 2], sampler=iter([0, 1]))),
    "index_error": lambda T: _batches(T.utils.data.DataLoader([1, 2], sampler=[0, 5])),
    "pickle_iterator": lambda T: iter(T.utils.data.DataLoader([1])).__getstate__(),
}


@pytest.mark.parametrize("name", list(LOADER_ERRORS))
def test_loader_errors(name):
    raises(LOADER_ERRORS[name])


@pytest.mark.parametrize("attr", ["batch_size", "batch_sampler", "sampler", "drop_last",
                                  "dataset", "persistent_workers"])
def test_loader_attributes_are_frozen(attr):
    def program(T):
        loader = T.utils.data.DataLoader([1, 2])
        loader.num_workers = 0  # allowed
        setattr(loader, attr, None)

    raises(program)


def test_loader_with_an_iterable_dataset():
    def program(T):
        results = []
        for kwargs in ({}, {"batch_size": 2}, {"batch_size": 2, "drop_last": True},
                       {"batch_size": None}, {"batch_size": 4}):
            loader = T.utils.data.DataLoader(Count.make(T, 5, length=5), **kwargs)
            results.append([len(loader), _batches(loader), type(loader.sampler).__name__])
        return results

    ok(program)


def test_loader_warns_when_an_iterable_dataset_outruns_its_length():
    def program(T):
        loader = T.utils.data.DataLoader(Count.make(T, 4, length=2), batch_size=None)
        len(loader)
        return _batches(loader)

    ok(program)
    without_address = lambda lib: [(c, re.sub(" at 0x[0-9a-f]+", "", m))
                                   for c, m in captured_warnings(program, lib)]
    assert without_address(torch) == without_address(jaxgrad)
    assert len(without_address(torch)) == 2


def test_pin_memory_without_an_accelerator_warns_like_torch():
    program = lambda T: _batches(T.utils.data.DataLoader([1, 2], pin_memory=True))
    ok(program)
    if not jaxgrad.accelerator.is_available():
        assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)


def test_get_worker_info_in_the_main_process():
    ok(lambda T: T.utils.data.get_worker_info() is None)


# --- workers (jaxgrad: in this process, in torch's order) ----------------------------------


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("batch_size", [None, 1, 2])
def test_workers_each_iterate_their_own_copy(workers, batch_size):
    """Each worker iterates its copy of an iterable dataset; batches alternate between them."""

    def program(T):
        loader = T.utils.data.DataLoader(Count.make(T, 3, with_worker=True),
                                         num_workers=workers, batch_size=batch_size)
        return _batches(loader)

    ok(program)


def test_workers_split_an_iterable_by_worker_info():
    def program(T):
        class Sharded(T.utils.data.IterableDataset):
            def __iter__(self):
                info = T.utils.data.get_worker_info()
                return iter(range(info.id, 11, info.num_workers))

        def init(worker_id):
            info = T.utils.data.get_worker_info()
            assert info.id == worker_id and info.dataset is not None

        results = []
        for kwargs in ({"batch_size": 2}, {"batch_size": 2, "drop_last": True},
                       {"batch_size": None}, {"batch_size": 3, "worker_init_fn": init}):
            results.append(_batches(T.utils.data.DataLoader(Sharded(), num_workers=3, **kwargs)))
        return results

    ok(program)


def test_workers_hold_copies_of_the_dataset():
    def program(T):
        class Counting(T.utils.data.Dataset):
            def __init__(self):
                self.calls = 0

            def __getitem__(self, i):
                self.calls += 1
                return self.calls

            def __len__(self):
                return 6

        data = Counting()
        batches = _batches(T.utils.data.DataLoader(data, num_workers=2))
        return batches, data.calls, _batches(T.utils.data.DataLoader(data)), data.calls

    ok(program)


def test_persistent_workers_keep_their_copies():
    def program(T):
        class Counting(T.utils.data.Dataset):
            def __init__(self):
                self.calls = 0

            def __getitem__(self, i):
                self.calls += 1
                return self.calls

            def __len__(self):
                return 4

        loader = T.utils.data.DataLoader(Counting(), num_workers=2, persistent_workers=True)
        first = iter(loader)
        return _batches(first), _batches(loader), iter(loader) is first

    ok(program)


def test_worker_errors_name_the_worker():
    def program(T):
        class Failing(T.utils.data.Dataset):
            def __getitem__(self, i):
                if i == 3:
                    raise ValueError("bad sample")
                return i

            def __len__(self):
                return 6

        batches = []
        try:
            for batch in T.utils.data.DataLoader(Failing(), batch_size=2, num_workers=2):
                batches.append(batch)
        except ValueError as exc:
            return batches, str(exc).splitlines()[0], str(exc).splitlines()[-1]

    ok(program)

    def key_error(T):
        def init(worker_id):
            raise KeyError("no such key")

        try:
            _batches(T.utils.data.DataLoader([1, 2], num_workers=1, worker_init_fn=init))
        except KeyError as exc:
            return str(exc).splitlines()[0], str(exc).splitlines()[-1]

    ok(key_error)


def test_worker_seeds():
    def program(T):
        class Seeds(T.utils.data.Dataset):
            def __getitem__(self, i):
                info = T.utils.data.get_worker_info()
                return info.id, info.num_workers, info.seed - T.initial_seed()

            def __len__(self):
                return 4

        return _batches(T.utils.data.DataLoader(Seeds(), num_workers=2, batch_size=None))

    ok(program)


def test_workers_leave_the_main_random_state_alone():
    """A worker draws from its own generators (seeded base_seed + id), never the main ones."""

    class Noisy(jaxgrad.utils.data.Dataset):
        def __getitem__(self, i):
            return jaxgrad.rand(1).item(), np.random.rand(), random.random()

        def __len__(self):
            return 4

    def run(workers):
        jaxgrad.manual_seed(0)
        np.random.seed(0)
        random.seed(0)
        loader = jaxgrad.utils.data.DataLoader(Noisy(), num_workers=workers, batch_size=None)
        samples = _batches(loader)
        return samples, (jaxgrad.rand(1).item(), np.random.rand(), random.random())

    samples, after = run(2)
    assert samples == run(2)[0]
    samples = [tuple(s) for s in samples]
    worker0, worker1 = samples[0::2], samples[1::2]
    assert worker0 != worker1 and len(set(samples)) == 4
    jaxgrad.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    _batches(jaxgrad.utils.data.DataLoader(range(4), batch_size=None))  # draws the base seed
    assert after == (jaxgrad.rand(1).item(), np.random.rand(), random.random())


def test_worker_batches_cross_a_process_boundary():
    """What a worker sends is pickled: tensors arrive as new leaves (version 1), unpicklable
    samples and non-leaf tensors raise as in torch."""

    def program(T):
        class Rows(T.utils.data.Dataset):
            def __init__(self):
                self.w = T.ones(2, requires_grad=True)

            def __getitem__(self, i):
                return {"x": T.ones(2) * i, "w": self.w, "n": i}

            def __len__(self):
                return 3

        loader = lambda **kwargs: T.utils.data.DataLoader(Rows(), num_workers=1, **kwargs)
        try:
            _batches(loader(batch_size=2))  # stacking into shared memory (out=) refuses grads
        except RuntimeError as exc:
            failed = str(exc).splitlines()[0], str(exc).splitlines()[-1]
        return _batches(loader(batch_size=None)), failed

    ok(program)

    def non_leaf(T):
        w = T.ones(2, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _batches(T.utils.data.DataLoader(T.utils.data.TensorDataset(w * 2),
                                                    batch_size=None, num_workers=1))

    failure = attempt(lambda: non_leaf(jaxgrad))
    assert isinstance(failure, Raised) and failure.cls == "RuntimeError"
    assert "Cowardly refusing to serialize non-leaf tensor" in failure.message


# --- a tutorial-style training loop ---------------------------------------------------------


def test_tutorial_training_loop_over_a_dataloader():
    """The beginner tutorial's shape: TensorDataset -> DataLoader -> Sequential model, two epochs
    of SGD on MSE, batches in order."""

    def program(T):
        rng = np.random.default_rng(0)
        x = T.tensor(rng.standard_normal((10, 3)), dtype=T.float32)
        y = T.tensor(rng.standard_normal((10, 1)), dtype=T.float32)
        loader = T.utils.data.DataLoader(T.utils.data.TensorDataset(x, y), batch_size=4)
        model = T.nn.Sequential(T.nn.Linear(3, 5), T.nn.Tanh(), T.nn.Linear(5, 1))
        with T.no_grad():
            for _, p in sorted(model.named_parameters()):
                p.copy_(T.tensor(rng.standard_normal(tuple(p.shape)) * 0.5, dtype=T.float32))
        device = (T.accelerator.current_accelerator().type if T.accelerator.is_available()
                  else "cpu")
        model = model.to(device)
        optimizer = T.optim.SGD(model.parameters(), lr=0.1)
        loss_fn = T.nn.MSELoss()
        losses = []
        for _ in range(2):
            model.train()
            for xb, yb in loader:
                xb, yb = xb.to(device), yb.to(device)
                loss = loss_fn(model(xb), yb)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
        return losses, [p.detach().cpu() for p in model.parameters()], len(loader)

    ta, jb = ok(program)
    assert len(ta[0]) == 6 and isinstance(jb, tuple) and not isinstance(jb, Raised)
