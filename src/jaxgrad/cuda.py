"""``jaxgrad.cuda``: torch.cuda's questions answered by JAX's GPU devices.

``device('cuda:N')`` is the N-th of this process's JAX GPUs, so everything here describes those:
``is_available()`` is true exactly when JAX has a GPU backend. Asking for a GPU where JAX has
none raises what a CUDA build of torch raises on a machine without a driver.

>>> import jaxgrad
>>> jaxgrad.cuda.is_available() == bool(jaxgrad.cuda.device_count())
True
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from ._core.device import current_index as _current_index
from ._core.device import device as _device
from ._core.device import local_devices
from ._core.device import set_current_index as _set_current_index
from ._functions import random as _random
from ._functions.legacy_types import CUDA_TYPES

BFloat16Tensor = CUDA_TYPES["BFloat16Tensor"]
BoolTensor = CUDA_TYPES["BoolTensor"]
ByteTensor = CUDA_TYPES["ByteTensor"]
CharTensor = CUDA_TYPES["CharTensor"]
DoubleTensor = CUDA_TYPES["DoubleTensor"]
FloatTensor = CUDA_TYPES["FloatTensor"]
HalfTensor = CUDA_TYPES["HalfTensor"]
IntTensor = CUDA_TYPES["IntTensor"]
LongTensor = CUDA_TYPES["LongTensor"]
ShortTensor = CUDA_TYPES["ShortTensor"]

_NO_GPU = ("Found no NVIDIA driver on your system: JAX has no GPU backend in this runtime "
           "(jaxgrad.cuda describes JAX's GPU devices).")


def _gpus() -> list[jax.Device]:
    return local_devices("gpu")  # (this process's, as torch counts them)


def _gpu(index: Any = None) -> jax.Device:
    gpus = _gpus()
    if not gpus:
        raise RuntimeError(_NO_GPU)
    i = current_device() if index is None else _index(index)
    if not 0 <= i < len(gpus):
        raise RuntimeError("CUDA error: invalid device ordinal")
    return gpus[i]


def _index(d: Any) -> int:
    if isinstance(d, int):
        return d
    d = _device(d)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return current_device() if d.index is None else d.index


def is_available() -> bool:
    """True when JAX has at least one GPU.

    >>> import jaxgrad
    >>> isinstance(jaxgrad.cuda.is_available(), bool)
    True
    """
    return bool(_gpus())


def device_count() -> int:
    """How many GPUs JAX sees (0 without a GPU backend).

    >>> import jaxgrad
    >>> jaxgrad.cuda.device_count() >= 0
    True
    """
    return len(_gpus())


def is_initialized() -> bool:
    """Whether JAX's GPU backend is up (it starts with JAX, so: whether there is one).

    >>> import jaxgrad
    >>> jaxgrad.cuda.is_initialized() == jaxgrad.cuda.is_available()
    True
    """
    return is_available()


def current_device() -> int:
    """The index of this thread's current GPU (0 unless :func:`set_device` changed it).

    >>> import jaxgrad
    >>> jaxgrad.cuda.current_device() if jaxgrad.cuda.is_available() else 0
    0
    """
    if not _gpus():
        raise RuntimeError(_NO_GPU)
    return _current_index("cuda")


def set_device(device: Any) -> None:
    """Make ``device`` this thread's current GPU; a negative index is ignored, as in torch.

    >>> import jaxgrad
    >>> if jaxgrad.cuda.is_available(): jaxgrad.cuda.set_device(0)
    """
    index = _index(device)
    if index >= 0:
        _gpu(index)
        _set_current_index("cuda", index)


class device:
    """Context manager that makes a GPU current for its body (``torch.cuda.device``).

    >>> import jaxgrad
    >>> if jaxgrad.cuda.is_available():
    ...     with jaxgrad.cuda.device(0):
    ...         assert jaxgrad.cuda.current_device() == 0
    """

    def __init__(self, device: Any) -> None:
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx >= 0:
            self.prev_idx = current_device()
            set_device(self.idx)

    def __exit__(self, *exc_info: Any) -> None:
        if self.idx >= 0:
            set_device(self.prev_idx)


def get_device_name(device: Any = None) -> str:
    """The GPU's model name, as JAX reports it (``jax.Device.device_kind``).

    >>> import jaxgrad
    >>> isinstance(jaxgrad.cuda.get_device_name(), str) if jaxgrad.cuda.is_available() else True
    True
    """
    return _gpu(device).device_kind


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """The GPU's compute capability ``(major, minor)``.

    >>> import jaxgrad
    >>> len(jaxgrad.cuda.get_device_capability()) if jaxgrad.cuda.is_available() else 2
    2
    """
    major, _, minor = str(getattr(_gpu(device), "compute_capability", "0.0")).partition(".")
    return int(major), int(minor or 0)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current GPU computes in bfloat16 (compute capability 8.0 or newer; any GPU
    when emulation counts). False without a GPU.

    >>> import jaxgrad
    >>> jaxgrad.cuda.is_bf16_supported() in (True, False)
    True
    """
    if not _gpus():
        return False
    return including_emulation or get_device_capability() >= (8, 0)


def synchronize(device: Any = None) -> None:
    """Wait for all work queued on the GPU (JAX runs a device's computations in order, so
    waiting for a fresh one waits for those before it).

    >>> import jaxgrad
    >>> if jaxgrad.cuda.is_available(): jaxgrad.cuda.synchronize()
    """
    target = _gpu(device)
    jax.effects_barrier()
    jax.block_until_ready(jax.device_put(jnp.zeros(()), target) + 0)


def _memory_stat(device: Any, key: str) -> int:
    stats = _gpu(device).memory_stats() or {}
    return int(stats.get(key, 0))


def memory_allocated(device: Any = None) -> int:
    """Bytes of GPU memory held by live arrays (JAX's allocator ``bytes_in_use``).

    >>> import jaxgrad
    >>> jaxgrad.cuda.memory_allocated() >= 0 if jaxgrad.cuda.is_available() else True
    True
    """
    return _memory_stat(device, "bytes_in_use")


def max_memory_allocated(device: Any = None) -> int:
    """The peak of :func:`memory_allocated` (JAX's allocator ``peak_bytes_in_use``).

    >>> import jaxgrad
    >>> jaxgrad.cuda.max_memory_allocated() >= 0 if jaxgrad.cuda.is_available() else True
    True
    """
    return _memory_stat(device, "peak_bytes_in_use")


def memory_reserved(device: Any = None) -> int:
    """Bytes JAX's allocator has reserved on the GPU (``bytes_reserved``, else its pool limit).

    >>> import jaxgrad
    >>> jaxgrad.cuda.memory_reserved() >= 0 if jaxgrad.cuda.is_available() else True
    True
    """
    return _memory_stat(device, "bytes_reserved") or _memory_stat(device, "bytes_limit")


def manual_seed(seed: int) -> None:
    """Seed the current GPU's default generator (lazily, when there is no GPU, as torch).

    >>> import jaxgrad
    >>> jaxgrad.cuda.manual_seed(0)
    """
    index = _current_index("cuda")
    _random.cuda_generator(index).manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's default generator.

    >>> import jaxgrad
    >>> jaxgrad.cuda.manual_seed_all(0)
    """
    _random.seed_cuda_generators(int(seed))


def seed() -> None:
    """Seed the current GPU's default generator non-deterministically.

    >>> import jaxgrad
    >>> jaxgrad.cuda.seed()
    """
    _random.cuda_generator(_current_index("cuda")).seed()


def seed_all() -> None:
    """Seed every GPU's default generator with one non-deterministic seed.

    >>> import jaxgrad
    >>> jaxgrad.cuda.seed_all()
    """
    _random.seed_cuda_generators(_random.Generator().seed())


def initial_seed() -> int:
    """The seed of the current GPU's default generator.

    >>> import jaxgrad
    >>> jaxgrad.cuda.manual_seed(3)
    >>> jaxgrad.cuda.initial_seed() if jaxgrad.cuda.is_available() else 3
    3
    """
    return _random.cuda_generator(current_device()).initial_seed()
