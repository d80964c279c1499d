"""torch-style devices mapped onto JAX devices.

``'cpu'`` is JAX's CPU device; ``'cuda'``/``'cuda:N'`` the N-th JAX GPU; ``'tpu:N'`` the N-th TPU.
With no ``device=`` argument tensors go to JAX's default device, so one script runs unchanged
on a CPU, GPU or TPU runtime.
"""

from __future__ import annotations

import threading

import jax

_JAX_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "tpu": "tpu"}
_TORCH_TYPE = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "rocm": "cuda", "tpu": "tpu"}


class device:
    """A device such as ``jaxgrad.device('cuda:0')``; ``.jax`` is the JAX device it maps to.

    >>> import jaxgrad
    >>> jaxgrad.device("cpu")
    device(type='cpu')
    """

    __slots__ = ("index", "type")

    def __init__(self, type: str | device, index: int | None = None) -> None:
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
        try:
            devices = jax.devices(platform)
        except RuntimeError:
            devices = []
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


def of_jax(d: jax.Device) -> device:
    """The jaxgrad device of a JAX device; CPU has no index, as in torch."""
    kind = _TORCH_TYPE.get(d.platform, d.platform)
    return device(kind) if kind == "cpu" else device(kind, d.id)


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
        return of_jax(jax.devices()[0])
    return d if d.index is not None or d.type == "cpu" else of_jax(d.jax)


def to_jax(d) -> jax.Device | None:
    """Resolve a ``device=`` argument (str, int, device or None) to a JAX device; None is the
    default device (``set_default_device``), or None when there is no setting."""
    if d is None:
        d = _default_device()
        if d is None:
            return None
    if isinstance(d, int):
        d = device("cuda", d)
    return device(d).jax
