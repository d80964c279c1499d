"""``jaxgrad.accelerator``: torch.accelerator's questions answered by JAX's accelerator devices.

The accelerator is the platform of JAX's GPUs (``'cuda'``) or, failing that, TPUs (``'tpu'``);
on a CPU-only JAX, as on CPU-only torch, there is none: ``current_accelerator()`` is None,
``is_available()`` False, and the calls that need a device raise torch's RuntimeError. The current
device index is the per-thread one of ``jaxgrad.device`` (shared with ``jaxgrad.cuda``). Memory
figures come from JAX's allocator (``jax.Device.memory_stats()``).

>>> import jaxgrad
>>> device = jaxgrad.accelerator.current_accelerator().type if (
...     jaxgrad.accelerator.is_available()) else "cpu"
>>> jaxgrad.ones(2, device=device).device.type == device
True
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any

import jax
import jax.numpy as jnp

from ._core.device import current_index as _current_index
from ._core.device import device as _device
from ._core.device import local_devices
from ._core.device import set_current_index as _set_current_index

_PLATFORMS = (("gpu", "cuda"), ("tpu", "tpu"))  # JAX platform -> torch device type, by priority
_NONE = "Cannot access accelerator device when none is available."
# reset_peak_memory_stats: (device type, index) -> (allocator peaks, current use) at the reset
_peak_baselines: dict[tuple[str, int], tuple[int, int, int, int]] = {}


def _platform() -> tuple[str, list[jax.Device]] | None:
    """The accelerator's torch device type and JAX devices, or None."""
    for platform, kind in _PLATFORMS:
        devices = local_devices(platform)  # (this process's, as torch counts them)
        if devices:
            return kind, devices
    return None


def _require() -> tuple[str, list[jax.Device]]:
    found = _platform()
    if found is None:
        raise RuntimeError(_NONE)
    return found


def _device_index(device: Any, optional: bool) -> int:
    """torch's reading of a device argument: an int is an index; a device (or string) must be of
    the accelerator's type and give its index, else the current index when ``optional``."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _device(device)
    index = None
    if isinstance(device, _device):
        acc = current_accelerator()
        if acc is None:
            raise RuntimeError("Accelerator expected")
        if acc.type != device.type:
            raise ValueError(f"{device.type} doesn't match the current accelerator {acc}.")
        index = device.index
    if index is None:
        if not optional:
            raise ValueError("Expected a jaxgrad.device with a specified index or an integer, "
                             f"but got:{device}")
        return current_device_index()
    return index


def _jax_device(index: int) -> tuple[str, jax.Device]:
    kind, devices = _require()
    if not 0 <= index < len(devices):
        raise RuntimeError(f"{'CUDA' if kind == 'cuda' else kind.upper()} error: invalid device "
                           "ordinal")
    return kind, devices[index]


def is_available() -> bool:
    """Whether JAX has an accelerator (a GPU or TPU) with at least one device.

    >>> import jaxgrad
    >>> jaxgrad.accelerator.is_available() == (jaxgrad.accelerator.device_count() > 0)
    True
    """
    return _platform() is not None


def current_accelerator(check_available: bool = False) -> _device | None:
    """The accelerator as a device without an index (``device(type='cuda')``), or None when JAX
    has none. JAX knows its platforms at run time only, so ``check_available`` changes nothing.

    >>> import jaxgrad
    >>> acc = jaxgrad.accelerator.current_accelerator(check_available=True)
    >>> acc is None or acc.type in ("cuda", "tpu")
    True
    """
    found = _platform()
    return None if found is None else _device(found[0])


def device_count() -> int:
    """How many devices the accelerator has (0 without one).

    >>> import jaxgrad
    >>> jaxgrad.accelerator.device_count() >= 0
    True
    """
    found = _platform()
    return 0 if found is None else len(found[1])


def current_device_index() -> int:
    """This thread's current accelerator device index (RuntimeError without an accelerator).

    >>> import jaxgrad
    >>> jaxgrad.accelerator.current_device_index() if jaxgrad.accelerator.is_available() else 0
    0
    """
    return _current_index(_require()[0])


def current_device_idx() -> int:
    """Deprecated name of :func:`current_device_index` (FutureWarning, as torch).

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     try: _ = jaxgrad.accelerator.current_device_idx()
    ...     except RuntimeError: pass
    >>> caught[0].category.__name__
    'FutureWarning'
    """
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device: Any, /) -> None:
    """Make ``device`` (an index, or a device of the accelerator's type with an index) this
    thread's current accelerator device; a negative index does nothing, as in torch.

    >>> import jaxgrad
    >>> jaxgrad.accelerator.set_device_index(-1)
    """
    index = _device_index(device, optional=False)
    if index < 0:
        return
    kind, _ = _jax_device(index)
    _set_current_index(kind, index)


def set_device_idx(device: Any, /) -> None:
    """Deprecated name of :func:`set_device_index` (FutureWarning, as torch).

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     jaxgrad.accelerator.set_device_idx(-1)
    >>> caught[0].category.__name__
    'FutureWarning'
    """
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:
    """Make a device index current for a ``with`` body, then restore the previous one; ``None``
    changes nothing.

    >>> import jaxgrad
    >>> with jaxgrad.accelerator.device_index(None):
    ...     pass
    """

    def __init__(self, device: int | None, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc_info: object) -> None:
        if self.idx is not None and self.prev_idx >= 0:
            set_device_index(self.prev_idx)


def synchronize(device: Any = None, /) -> None:
    """Wait for the work queued on an accelerator device (JAX runs a device's computations in
    order: waiting for a fresh one there waits for those before it).

    >>> import jaxgrad
    >>> if jaxgrad.accelerator.is_available(): jaxgrad.accelerator.synchronize()
    """
    index = _device_index(device, optional=True)
    _, target = _jax_device(index)
    jax.effects_barrier()
    jax.block_until_ready(jax.device_put(jnp.zeros(()), target) + 0)


def _allocator_stats(device: Any) -> tuple[str, int, dict[str, int]]:
    _require()  # torch asks whether the allocator is up before it reads the device argument
    index = _device_index(device, optional=True)
    kind, target = _jax_device(index)
    return kind, index, dict(target.memory_stats() or {})


def _reserved(stats: dict[str, int], peak: bool) -> int:
    """The allocator's pool: XLA's BFC allocator reports it as ``pool_bytes`` (preallocated up
    to ``bytes_limit`` by default)."""
    keys = (("peak_pool_bytes", "peak_bytes_reserved", "bytes_limit") if peak
            else ("pool_bytes", "bytes_reserved", "bytes_limit"))
    return next((int(stats[k]) for k in keys if stats.get(k)), 0)


def memory_stats(device: Any = None, /) -> OrderedDict[str, Any]:
    """JAX's allocator statistics under torch's names: ``allocated_bytes.all.{current,peak}``
    (bytes held by live arrays), ``reserved_bytes.all.{current,peak}`` (the allocator's pool),
    ``allocation.all.allocated`` (number of allocations). Peaks count from the last
    :func:`reset_peak_memory_stats` (see there).

    >>> import jaxgrad
    >>> if jaxgrad.accelerator.is_available():
    ...     assert "allocated_bytes.all.current" in jaxgrad.accelerator.memory_stats()
    """
    kind, index, stats = _allocator_stats(device)
    in_use = int(stats.get("bytes_in_use", 0))
    reserved = _reserved(stats, peak=False)
    peak_in_use = int(stats.get("peak_bytes_in_use", in_use))
    peak_reserved = _reserved(stats, peak=True)
    baseline = _peak_baselines.get((kind, index))
    if baseline is not None:  # JAX cannot reset its peaks: see reset_peak_memory_stats
        old_peak_in_use, old_peak_reserved, in_use_then, reserved_then = baseline
        if peak_in_use <= old_peak_in_use:
            peak_in_use = max(in_use_then, in_use)
        if peak_reserved <= old_peak_reserved:
            peak_reserved = max(reserved_then, reserved)
    return OrderedDict(sorted({
        "allocated_bytes.all.current": in_use, "allocated_bytes.all.peak": peak_in_use,
        "allocation.all.allocated": int(stats.get("num_allocs", 0)),
        "reserved_bytes.all.current": reserved, "reserved_bytes.all.peak": peak_reserved,
    }.items()))


def memory_allocated(device: Any = None, /) -> int:
    """Bytes held by live arrays on an accelerator device (JAX's ``bytes_in_use``).

    >>> import jaxgrad
    >>> jaxgrad.accelerator.memory_allocated() >= 0 if jaxgrad.accelerator.is_available() else True
    True
    """
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device: Any = None, /) -> int:
    """The peak of :func:`memory_allocated` since the program started or since
    :func:`reset_peak_memory_stats` (a lower bound after a reset; see there).

    >>> import jaxgrad
    >>> if jaxgrad.accelerator.is_available():
    ...     assert jaxgrad.accelerator.max_memory_allocated() >= 0
    """
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device: Any = None, /) -> int:
    """Bytes of device memory JAX's allocator holds (its pool; by default JAX preallocates most
    of a GPU's memory at start-up, so this is large from the first array on).

    >>> import jaxgrad
    >>> jaxgrad.accelerator.memory_reserved() >= 0 if jaxgrad.accelerator.is_available() else True
    True
    """
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device: Any = None, /) -> int:
    """The peak of :func:`memory_reserved` (a lower bound after a reset; see
    :func:`reset_peak_memory_stats`).

    >>> import jaxgrad
    >>> if jaxgrad.accelerator.is_available():
    ...     assert jaxgrad.accelerator.max_memory_reserved() >= 0
    """
    return memory_stats(device)["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device: Any = None, /) -> None:
    """Start the peaks of :func:`max_memory_allocated`/:func:`max_memory_reserved` afresh.

    JAX has no call that resets its allocator's peak, so jaxgrad remembers the peak at the reset:
    a later peak above it is reported exactly; while the allocator's peak has not moved, the
    peak since the reset is unknown and the larger of the use at the reset and the use now is
    reported (a lower bound of the true peak).

    >>> import jaxgrad
    >>> if jaxgrad.accelerator.is_available():
    ...     jaxgrad.accelerator.reset_peak_memory_stats()
    ...     assert (jaxgrad.accelerator.max_memory_allocated()
    ...             >= jaxgrad.accelerator.memory_allocated())
    """
    kind, index, stats = _allocator_stats(device)
    in_use = int(stats.get("bytes_in_use", 0))
    _peak_baselines[(kind, index)] = (int(stats.get("peak_bytes_in_use", in_use)),
                                      _reserved(stats, peak=True), in_use,
                                      _reserved(stats, peak=False))


def empty_cache() -> None:
    """torch hands its caching allocator's unused blocks back to the device here. XLA's
    allocator has no such call: it keeps its pool (preallocated by default) for the life of the
    process, so this checks that there is an accelerator and returns. An array's memory goes
    back to the pool when its last tensor is gone; to make JAX allocate and free on demand, start
    the process with ``XLA_PYTHON_CLIENT_PREALLOCATE=false`` or
    ``XLA_PYTHON_CLIENT_ALLOCATOR=platform``.

    >>> import jaxgrad
    >>> if jaxgrad.accelerator.is_available(): jaxgrad.accelerator.empty_cache()
    """
    _require()
