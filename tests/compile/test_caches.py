"""One cache policy: every memo is bounded and registered, and ``jaxgrad._clear_caches()`` empties
them all without changing any result."""

from __future__ import annotations

import numpy as np

import jaxgrad
from jaxgrad._core import caches as _caches
from jaxgrad._core import kernel_cache as _kernel_cache
from jaxgrad._engine import compiled_backward as _compiled_backward
from jaxgrad._engine import dispatch as _dispatch
from jaxgrad._ops._table import jitted_backward, jitted_forward


def _step():
    x = jaxgrad.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = (x.clamp(min=-0.5) * 3.0).exp().sum()
    y.backward()
    return y.detach().numpy(), x.grad.numpy()


def test_clear_caches_empties_every_registered_cache_and_results_stay(monkeypatch):
    monkeypatch.setattr(_kernel_cache._State, "max_live", 1 << 30)  # no release in between
    before = _step()
    _step()  # a second step hits the compiled backward and the cached device scalar
    assert jitted_forward.cache_info().currsize > 0
    assert len(_dispatch._promotion_cache) > 0
    assert len(_compiled_backward._cache) > 0
    jaxgrad._clear_caches()
    assert all(len(c) == 0 if isinstance(c, dict) else c.cache_info().currsize == 0
               for c in _caches._registry)
    assert jitted_backward.cache_info().currsize == 0
    after = _step()
    np.testing.assert_array_equal(before[0], after[0])
    np.testing.assert_array_equal(before[1], after[1])


def test_every_cache_is_bounded():
    for c in _caches._registry:
        size = c.maxsize if isinstance(c, dict) else c.cache_info().maxsize
        assert size is not None and size > 0


def test_a_full_memo_drops_its_oldest_entry():
    memo = _caches.Memo(maxsize=3)
    for i in range(10):
        memo[i] = i
    assert list(memo) == [7, 8, 9]
    memo[8] = "again"  # an existing key does not evict
    assert list(memo) == [7, 8, 9]
    _caches._registry.remove(memo)
