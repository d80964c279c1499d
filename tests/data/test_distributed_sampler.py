"""``jaxgrad.utils.data.DistributedSampler`` against torch's.

Without shuffling every rank's indices and every length are compared with torch's exactly.
Shuffled orders come from each library's own generator (jaxgrad's permutations are not torch's),
so for those the checks are the properties the ranks rely on: the same permutation on every rank
for one ``seed + epoch``, split into disjoint, equally long shares (padded or cut like torch).
"""

from __future__ import annotations

import itertools

import pytest

import jaxgrad
from differential import ok, raises, torch

# dataset lengths: divisible by the replicas, not divisible, fewer than the replicas, empty
LENGTHS = [0, 1, 2, 3, 5, 7, 8, 10, 12, 13]
REPLICAS = [1, 2, 3, 4, 5]


def _shares(T, n, replicas, **kwargs):
    """Every rank's indices and length."""
    out = []
    for rank in range(replicas):
        sampler = T.utils.data.DistributedSampler(range(n), num_replicas=replicas, rank=rank,
                                                  **kwargs)
        out.append((list(sampler), len(sampler), sampler.num_samples, sampler.total_size))
    return out


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("replicas", REPLICAS)
@pytest.mark.parametrize("n", LENGTHS)
def test_unshuffled_shares_match_torch(n, replicas, drop_last):
    ok(lambda T: _shares(T, n, replicas, shuffle=False, drop_last=drop_last))


@pytest.mark.parametrize("drop_last", [False, True])
def test_lengths_match_torch_with_shuffling(drop_last):
    """``len`` and the attributes do not depend on the order."""
    def program(T):
        return [[(len(s), s.num_samples, s.total_size, s.epoch, s.seed, s.shuffle, s.drop_last)
                 for s in [T.utils.data.DistributedSampler(range(n), num_replicas=r, rank=r - 1,
                                                           seed=3, drop_last=drop_last)]]
                for n, r in itertools.product(LENGTHS, REPLICAS)]

    ok(program)


def test_both_paths_name_one_class():
    data = jaxgrad.utils.data
    assert data.DistributedSampler is data.distributed.DistributedSampler
    assert issubclass(data.DistributedSampler, data.Sampler)
    assert repr(data.DistributedSampler).replace("jaxgrad", "torch") == repr(
        torch.utils.data.DistributedSampler)


@pytest.mark.parametrize("rank", [-1, 3, 4, 100])
def test_bad_rank_raises_torchs_error(rank):
    raises(lambda T: T.utils.data.DistributedSampler(range(5), num_replicas=3, rank=rank))


def test_no_replicas_raises_torchs_error():
    raises(lambda T: T.utils.data.DistributedSampler(range(5), num_replicas=0, rank=0))


def test_without_a_process_group_raises_torchs_error():
    """The defaults ask the default process group, and there is none."""
    raises(lambda T: T.utils.data.DistributedSampler(range(5)))
    raises(lambda T: T.utils.data.DistributedSampler(range(5), num_replicas=2))
    raises(lambda T: T.utils.data.DistributedSampler(range(5), rank=0))


def test_defaults_come_from_the_process_group(monkeypatch):
    for lib in (torch, jaxgrad):
        monkeypatch.setattr(lib.distributed, "get_world_size", lambda group=None: 3)
        monkeypatch.setattr(lib.distributed, "get_rank", lambda group=None: 2)
    ok(lambda T: [(list(s), len(s), s.num_replicas, s.rank) for s in [
        T.utils.data.DistributedSampler(range(10), shuffle=False),
        T.utils.data.DistributedSampler(range(10), num_replicas=4, shuffle=False)]])
    raises(lambda T: T.utils.data.DistributedSampler(range(10), num_replicas=2))


def test_unavailable_distributed_raises_torchs_error(monkeypatch):
    for lib in (torch, jaxgrad):
        monkeypatch.setattr(lib.distributed, "is_available", lambda: False)
    raises(lambda T: T.utils.data.DistributedSampler(range(5)))
    raises(lambda T: T.utils.data.DistributedSampler(range(5), num_replicas=2))
    ok(lambda T: list(T.utils.data.DistributedSampler(range(5), num_replicas=2, rank=1,
                                                       shuffle=False)))


def test_iterating_twice_gives_the_same_order():
    ok(lambda T: [(list(s), list(s)) for s in [
        T.utils.data.DistributedSampler(range(7), num_replicas=2, rank=1, shuffle=False)]])
    s = jaxgrad.utils.data.DistributedSampler(range(9), num_replicas=2, rank=0, seed=5)
    assert list(s) == list(s)


# --- shuffling (jaxgrad only: its permutations are its own) -----------------------------------


def _permutation(n, seed):
    g = jaxgrad.Generator().manual_seed(seed)
    return jaxgrad.randperm(n, generator=g).tolist()


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("replicas", REPLICAS)
@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 10, 13])
def test_shuffled_shares_split_one_permutation(n, replicas, drop_last):
    seed, epoch = 11, 2
    samplers = [jaxgrad.utils.data.DistributedSampler(range(n), num_replicas=replicas, rank=r,
                                                      seed=seed, drop_last=drop_last)
                for r in range(replicas)]
    for s in samplers:
        s.set_epoch(epoch)
    shares = [list(s) for s in samplers]
    # torch's lengths, which do not depend on the order
    expected = _shares(torch, n, replicas, shuffle=False, drop_last=drop_last)
    assert [len(share) for share in shares] == [e[1] for e in expected]
    assert [len(s) for s in samplers] == [e[1] for e in expected]
    # interleaving the shares back gives the permutation of seed + epoch, padded or cut
    order = [share[i] for i in range(len(shares[0])) for share in shares]
    perm = _permutation(n, seed + epoch)
    assert sorted(perm) == list(range(n))
    total = samplers[0].total_size
    padded = (perm * (total // n + 1))[:total]
    assert order == padded
    if drop_last:
        assert len(set(order)) == len(order)  # disjoint shares
    else:
        assert set(order) == set(range(n))  # every index somewhere


def test_set_epoch_changes_the_order_and_seed_plus_epoch_fixes_it():
    def share(seed, epoch=None, rank=0):
        s = jaxgrad.utils.data.DistributedSampler(range(50), num_replicas=2, rank=rank, seed=seed)
        if epoch is not None:
            s.set_epoch(epoch)
        return list(s)

    first = share(0)
    assert first == share(0) == share(0, epoch=0)
    assert share(0, epoch=1) != first
    assert share(0, epoch=1) == share(1) == share(1, epoch=0)
    assert share(4, epoch=3) == share(7)
    # the same permutation on every rank: the two shares are disjoint halves of it
    assert sorted(share(0, epoch=1) + share(0, epoch=1, rank=1)) == list(range(50))
    s = jaxgrad.utils.data.DistributedSampler(range(50), num_replicas=2, rank=0)
    before = list(s)
    s.set_epoch(5)
    assert s.epoch == 5 and list(s) != before


def test_shuffling_leaves_the_global_generator_alone():
    jaxgrad.manual_seed(0)
    expected = jaxgrad.rand(3).tolist()
    jaxgrad.manual_seed(0)
    list(jaxgrad.utils.data.DistributedSampler(range(20), num_replicas=2, rank=0))
    assert jaxgrad.rand(3).tolist() == expected


# --- with a DataLoader -----------------------------------------------------------------------


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("batch_size", [1, 2, 3])
def test_dataloader_with_a_distributed_sampler(batch_size, drop_last):
    def program(T):
        data = T.utils.data.TensorDataset(T.arange(22.0).reshape(11, 2), T.arange(11) * 10)
        out = []
        for rank in range(3):
            sampler = T.utils.data.distributed.DistributedSampler(
                data, num_replicas=3, rank=rank, shuffle=False, drop_last=drop_last)
            loader = T.utils.data.DataLoader(data, batch_size=batch_size, sampler=sampler,
                                             drop_last=drop_last)
            out.append((len(loader), list(loader)))
        return out

    ok(program)


def test_dataloader_refuses_shuffle_with_a_sampler_like_torch():
    raises(lambda T: T.utils.data.DataLoader(
        list(range(4)), shuffle=True,
        sampler=T.utils.data.DistributedSampler(range(4), num_replicas=2, rank=0)))


def test_shuffled_dataloader_ranks_cover_the_dataset():
    data = jaxgrad.utils.data
    dataset = data.TensorDataset(jaxgrad.arange(12))
    seen = []
    for rank in range(4):
        sampler = data.DistributedSampler(dataset, num_replicas=4, rank=rank, seed=1)
        sampler.set_epoch(3)
        for (batch,) in data.DataLoader(dataset, batch_size=2, sampler=sampler):
            seen += batch.tolist()
    assert sorted(seen) == list(range(12))

