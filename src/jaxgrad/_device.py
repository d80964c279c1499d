"""torch-style devices mapped onto JAX devices.

``'cpu'`` is JAX's CPU device; ``'cuda'``/``'cuda:N'`` the N-th JAX GPU; ``'tpu:N'`` the N-th TPU.
With no ``device=`` argument tensors go to JAX's default device, so one script runs unchanged
on a CPU, GPU or TPU runtime.
"""

from __future__ import annotations

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
        index = self.index or 0
        if index >= len(devices):
            raise RuntimeError(f"CUDA error: invalid device ordinal (device {self} of "
                               f"{len(devices)} {platform} devices)")
        return devices[index]

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


def to_jax(d) -> jax.Device | None:
    """Resolve a ``device=`` argument (str, int, device or None) to a JAX device."""
    if d is None:
        return None
    if isinstance(d, int):
        d = device("cuda", d)
    return device(d).jax
