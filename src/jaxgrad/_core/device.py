"""torch-style devices mapped onto JAX devices.

``'cpu'`` is JAX's CPU device; ``'cuda'``/``'cuda:N'`` the N-th JAX GPU; ``'tpu:N'`` the N-th TPU.
Devices are numbered per process, as torch numbers them: under JAX's multi-controller runtime
(``jax.distributed``) ``cuda:0`` is this process's first GPU, not process 0's.
With no ``device=`` argument tensors go to JAX's default device, so one script runs unchanged
on a CPU, GPU or TPU runtime. Wherever torch takes a device, a ``jax.Device`` works too, and
``Tensor.to``/``Module.to`` also take a ``jax.sharding.Sharding`` (see functorch_notes/devices.md).
"""

from __future__ import annotations

import threading

import jax

from .typename import public_path

_JAX_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "tpu": "tpu"}
_TORCH_TYPE = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "rocm": "cuda", "tpu": "tpu"}


@public_path("jaxgrad")
class device:
    """A device such as ``jaxgrad.device('cuda:0')``; ``.jax`` is the JAX device it maps to.

    >>> import jaxgrad
    >>> jaxgrad.device("cpu")
    device(type='cpu')
    """

    __slots__ = ("index", "type")

    def __init__(self, type: str | device | jax.Device, index: int | None = None) -> None:
        if isinstance(type, jax.Device):
            type = of_jax(type)
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments: {type!r}")
        kind, _, idx = type.partition(":")
        if kind not in _JAX_PLATFORM:
            raise RuntimeError(
                "Expected one of cpu, cuda, tpu device type at start of device string: " + type
            )
        if idx:
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        self.type, self.index = kind, index

    @property
    def jax(self) -> jax.Device:
        """The JAX device this maps to (RuntimeError if this runtime has none)."""
        platform = _JAX_PLATFORM[self.type]
        devices = local_devices(platform)
        if not devices and platform == "gpu":
            raise RuntimeError(
                "Found no NVIDIA driver on your system: JAX has no GPU backend in this runtime "
                "(device 'cuda' maps to JAX's GPU devices)."
            )
        if not devices:
            raise RuntimeError(f"JAX has no {platform} devices in this runtime")
        index = current_index(self.type) if self.index is None else self.index
        if index >= len(devices):
            raise RuntimeError(f"CUDA error: invalid device ordinal (device {self} of "
                               f"{len(devices)} {platform} devices)")
        return devices[index]

    def __enter__(self) -> device:
        """``with jaxgrad.device('cuda'):`` makes factory calls without ``device=`` use it."""
        _default.__dict__.setdefault("stack", []).append(self)
        return self

    def __exit__(self, *exc_info) -> None:
        _default.stack.pop()

    def __eq__(self, other) -> bool:
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


def local_devices(platform: str | None = None) -> list[jax.Device]:
    """This process's JAX devices of ``platform`` (JAX's default backend for None), in the order
    torch-style indices count them; empty where this runtime has no such backend.

    >>> from jaxgrad._core.device import local_devices
    >>> local_devices("cpu")[0].platform
    'cpu'
    """
    try:
        return jax.local_devices(backend=platform)
    except RuntimeError:
        return []


def of_jax(d: jax.Device) -> device:
    """The jaxgrad device of a JAX device, numbered among this process's devices of its kind;
    CPU device 0 has no index, as in torch (further CPU devices, which JAX can simulate, are
    ``cpu:N``). A device of another process, which torch has no name for, keeps JAX's id."""
    found = _OF_JAX.get(d)
    if found is None:
        kind = _TORCH_TYPE.get(d.platform, d.platform)
        mine = local_devices(d.platform)
        index = mine.index(d) if d in mine else d.id
        found = _OF_JAX[d] = device(kind) if kind == "cpu" and index == 0 else device(kind, index)
    return found


# JAX device -> jaxgrad device (a JAX runtime started later, by jax.distributed, makes new
# device objects: the old entries are never asked for again)
_OF_JAX: dict = {}


def first_of(devices) -> jax.Device:
    """The device a tensor spread over ``devices`` reports: its first one in this process (by
    JAX's id), else its first one.

    >>> import jax
    >>> from jaxgrad._core.device import first_of
    >>> first_of(jax.devices()) == jax.local_devices()[0]
    True
    """
    here = jax.process_index()
    mine = [d for d in devices if d.process_index == here]
    return min(mine or devices, key=lambda d: d.id)


# torch keeps the default device per thread: ``set_default_device`` and ``with device(...)``
_default = threading.local()


def _default_device() -> device | None:
    stack = getattr(_default, "stack", None)
    return stack[-1] if stack else getattr(_default, "device", None)


def current_index(kind: str) -> int:
    """This thread's current device index of a device type (``torch.cuda.current_device``)."""
    return getattr(_default, "current", {}).get(kind, 0)


def set_current_index(kind: str, index: int) -> None:
    """Make ``index`` this thread's current device of type ``kind``."""
    _default.__dict__.setdefault("current", {})[kind] = index


def set_default_device(d: str | device | int | None) -> None:
    """Make factory functions called without ``device=`` allocate on ``d`` (in this thread), as
    ``torch.set_default_device``; ``None`` restores JAX's default device.

    >>> import jaxgrad
    >>> jaxgrad.set_default_device("cpu")
    >>> jaxgrad.zeros(2).device
    device(type='cpu')
    >>> jaxgrad.set_default_device(None)
    """
    _default.device = None if d is None else device("cuda", d) if isinstance(d, int) else device(d)


def get_default_device() -> device:
    """The device factory functions use when given none, with its index where it has one (as
    ``torch.get_default_device``); without a setting, JAX's default device.

    >>> import jaxgrad
    >>> jaxgrad.get_default_device()
    device(type='cpu')
    """
    d = _default_device()
    if d is None:
        return of_jax(jax.local_devices()[0])
    return d if d.index is not None or d.type == "cpu" else of_jax(d.jax)


def to_jax(d) -> jax.Device | None:
    """Resolve a ``device=`` argument (str, int, device, jax.Device or None) to a JAX device;
    None is the default device (``set_default_device``), or None when there is no setting."""
    if isinstance(d, jax.Device):
        return d
    if d is None:
        d = _default_device()
        if d is None:
            return None
    if isinstance(d, int):
        d = device("cuda", d)
    return device(d).jax


def placement(d) -> jax.Device | jax.sharding.Sharding | None:
    """Resolve a ``device=`` argument that may also be a ``jax.sharding.Sharding``."""
    return d if isinstance(d, jax.sharding.Sharding) else to_jax(d)


def is_placement(d) -> bool:
    """Whether ``d`` names a device (str, device, jax.Device or Sharding; not an int)."""
    return isinstance(d, (str, device, jax.Device, jax.sharding.Sharding))


INCOMPATIBLE = "incompatible devices for jitted computation"


def mixed_devices_error(args: tuple) -> RuntimeError:
    """torch's error for tensors on different devices among ``args`` (JAX refused to run one
    computation on arrays committed to different devices or device sets). As torch's
    TensorIterator does, the first non-CPU device is the common one."""
    placed = [frozenset(a._cell.array.devices()) for a in args if hasattr(a, "_cell")]
    named = [of_jax(min(p, key=lambda d: d.id)) for p in placed]
    common = next((i for i, d in enumerate(named) if d.type != "cpu"), 0)
    other = next((i for i, p in enumerate(placed) if p != placed[common]), len(placed) - 1)
    return RuntimeError("Expected all tensors to be on the same device, but found at least two "
                        f"devices, {named[common]} and {named[other]}!")


def like(t, d):
    """The ``device=`` of a ``*_like`` factory: ``d``, else where ``t`` lives (its sharding; a
    traced value inside a transformation has none: JAX places the result)."""
    if d is not None:
        return d
    value = t._value
    return None if isinstance(value, jax.core.Tracer) else value.sharding
