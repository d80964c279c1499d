"""``jaxgrad.accelerator`` against ``torch.accelerator``.

torch here is the CPU build: where JAX has no accelerator either, every answer and error is
compared with torch's. Where JAX has a GPU or TPU, the answers are checked against JAX's devices.
The bookkeeping (current index, the peak-memory reset that JAX lacks) is also checked on a
stand-in device, so it is tested on every machine.
"""

from __future__ import annotations

import jax
import pytest

import jaxgrad
from differential import attempt, captured_warnings, ok, raises, same, torch

HAS_ACCELERATOR = jaxgrad.accelerator.is_available()
cpu_only = pytest.mark.skipif(HAS_ACCELERATOR, reason="torch (CPU build) has no accelerator")

NEEDS_A_DEVICE = ["current_device_index", "synchronize", "empty_cache", "memory_allocated",
                  "max_memory_allocated", "memory_reserved", "max_memory_reserved",
                  "memory_stats", "reset_peak_memory_stats"]


@cpu_only
def test_no_accelerator_answers():
    ok(lambda T: [T.accelerator.is_available(), T.accelerator.current_accelerator(),
                  T.accelerator.current_accelerator(check_available=True),
                  T.accelerator.device_count(), T.accelerator.set_device_index(-1)])


@cpu_only
@pytest.mark.parametrize("name", NEEDS_A_DEVICE)
def test_no_accelerator_errors(name):
    raises(lambda T: getattr(T.accelerator, name)())


@cpu_only
@pytest.mark.parametrize("name", [n for n in NEEDS_A_DEVICE
                                  if n not in ("current_device_index", "empty_cache")])
@pytest.mark.parametrize("device", [0, "cuda", "cuda:0", "cpu", None])
def test_no_accelerator_device_arguments(name, device):
    raises(lambda T: getattr(T.accelerator, name)(device))


@cpu_only
@pytest.mark.parametrize("device", [0, 1, "cuda:0", "cuda", "cpu", None])
def test_no_accelerator_set_device_index(device):
    raises(lambda T: T.accelerator.set_device_index(device))


@cpu_only
def test_no_accelerator_device_index_context():
    def enter(T, index):
        with T.accelerator.device_index(index):
            return "entered"

    raises(lambda T: enter(T, 0))
    ok(lambda T: enter(T, None))


@cpu_only
def test_deprecated_names_warn_like_torch():
    for program in (lambda T: T.accelerator.current_device_idx(),
                    lambda T: T.accelerator.set_device_idx(-1)):
        same(program)
        assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)
        assert captured_warnings(program, jaxgrad)[0][0] == "FutureWarning"


def test_the_tutorial_device_line():
    """``device = torch.accelerator.current_accelerator().type if ... else "cpu"`` runs, and
    names a device tensors can be made on."""

    def program(T):
        device = (T.accelerator.current_accelerator().type if T.accelerator.is_available()
                  else "cpu")
        x = T.ones(2, device=device)
        return x.device.type == device, x.cpu()

    if HAS_ACCELERATOR:
        assert program(jaxgrad)[0]
    else:
        ok(program)


def _jax_devices(platform):
    found = attempt(lambda: jax.devices(platform))
    return found if isinstance(found, list) else []


def test_answers_match_jax_devices():
    platforms = [p for p in ("gpu", "tpu") if _jax_devices(p)]
    acc = jaxgrad.accelerator.current_accelerator()
    assert jaxgrad.accelerator.is_available() == bool(platforms)
    if not platforms:
        assert acc is None and jaxgrad.accelerator.device_count() == 0
        return
    assert acc == jaxgrad.device({"gpu": "cuda", "tpu": "tpu"}[platforms[0]])
    assert jaxgrad.accelerator.device_count() == len(jax.devices(platforms[0]))
    assert jaxgrad.accelerator.current_device_index() == 0
    jaxgrad.accelerator.synchronize()
    x = jaxgrad.ones(1024, device=acc.type)
    assert jaxgrad.accelerator.memory_allocated() >= x.numel() * 4
    assert jaxgrad.accelerator.max_memory_allocated() >= jaxgrad.accelerator.memory_allocated()
    assert jaxgrad.accelerator.memory_reserved() >= jaxgrad.accelerator.memory_allocated()
    jaxgrad.accelerator.empty_cache()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        jaxgrad.accelerator.set_device_index(jaxgrad.accelerator.device_count())
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        jaxgrad.accelerator.synchronize("cpu")


# --- the bookkeeping, on a stand-in accelerator ---------------------------------------------


class FakeDevice:
    """Reports allocator statistics as XLA's GPU allocator does."""

    def __init__(self, device_id):
        self.id = device_id
        self.stats = {"bytes_in_use": 100, "peak_bytes_in_use": 500, "num_allocs": 3,
                      "pool_bytes": 1000, "peak_pool_bytes": 1000, "bytes_limit": 4000}

    def memory_stats(self):
        return dict(self.stats)


@pytest.fixture
def fake(monkeypatch):
    devices = [FakeDevice(0), FakeDevice(1)]
    monkeypatch.setattr(jaxgrad.accelerator, "_platform", lambda: ("cuda", devices))
    monkeypatch.setattr(jaxgrad.accelerator, "_peak_baselines", {})
    yield devices
    jaxgrad._core.device.set_current_index("cuda", 0)


def test_current_index_and_context(fake):
    acc = jaxgrad.accelerator
    assert acc.current_accelerator() == jaxgrad.device("cuda") and acc.device_count() == 2
    assert acc.current_device_index() == 0
    acc.set_device_index("cuda:1")
    assert acc.current_device_index() == 1 and jaxgrad._core.device.current_index("cuda") == 1
    with acc.device_index(0):
        assert acc.current_device_index() == 0
    assert acc.current_device_index() == 1
    acc.set_device_index(-1)
    assert acc.current_device_index() == 1
    with pytest.raises(RuntimeError, match="CUDA error: invalid device ordinal"):
        acc.set_device_index(2)
    with pytest.raises(ValueError, match=r"Expected a jaxgrad\.device with a specified index"):
        acc.set_device_index("cuda")
    with pytest.raises(ValueError, match="cpu doesn't match the current accelerator cuda"):
        acc.memory_allocated("cpu")


def test_memory_figures_come_from_the_allocator(fake):
    acc = jaxgrad.accelerator
    assert acc.memory_allocated() == 100 and acc.max_memory_allocated() == 500
    assert acc.memory_reserved() == 1000 and acc.max_memory_reserved() == 1000
    assert acc.memory_stats()["allocation.all.allocated"] == 3
    assert list(acc.memory_stats()) == sorted(acc.memory_stats())
    fake[1].stats["bytes_in_use"] = 7
    assert acc.memory_allocated(1) == 7 and acc.memory_allocated("cuda:1") == 7
    del fake[0].stats["pool_bytes"], fake[0].stats["peak_pool_bytes"]
    assert acc.memory_reserved() == 4000  # no pool figure: the allocator's limit


def test_reset_peak_memory_stats(fake):
    acc, stats = jaxgrad.accelerator, fake[0].stats
    acc.reset_peak_memory_stats()
    assert acc.max_memory_allocated() == 100  # the use at the reset
    stats["bytes_in_use"] = 300  # below the old peak: the peak since the reset is unknown
    assert acc.max_memory_allocated() == 300
    stats["bytes_in_use"], stats["peak_bytes_in_use"] = 50, 800  # a new peak: exact again
    assert acc.max_memory_allocated() == 800
    assert acc.max_memory_allocated(1) == 500  # another device's peak was not reset
