"""DLPack exchange (``torch.from_dlpack``/``torch.to_dlpack``).

A numpy array's memory is shared, as torch shares it: in-place ops on the result show in the
array. Other producers (torch tensors, capsules, bfloat16 data, accelerators) are copied: JAX
arrays are immutable and jaxgrad cannot see who else holds foreign memory, so later writes on
either side are not seen by the other (torch would share them).

>>> import numpy as np
>>> import jaxgrad
>>> a = np.zeros(3, dtype=np.float32)
>>> t = jaxgrad.from_dlpack(a)
>>> _ = t.add_(1.0)
>>> a
array([1., 1., 1.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core.tensor import Tensor
from . import creation

_INVALID_CAPSULE = (
    "from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
    "consumed only once, so you might have already constructed a tensor from it "
    "once."
)
_CPU = 1  # DLPack's kDLCPU


class _Capsule:
    """A bare DLPack capsule (``to_dlpack``'s result) as the protocol object numpy takes."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **_: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (_CPU, 0)


def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor over a DLPack producer's data (an object with ``__dlpack__``, or a capsule from
    :func:`to_dlpack`); a jaxgrad tensor gives a new tensor over its storage, with its own
    version counter, as torch's does. ``copy=True`` always copies; ``device`` moves the result.

    >>> import jaxgrad
    >>> x = jaxgrad.arange(3.0)
    >>> y = jaxgrad.from_dlpack(x)
    >>> _ = y.mul_(2)
    >>> x, x._version, y._version
    (tensor([0., 2., 4.]), 0, 1)
    """
    out = _imported(ext_tensor, copy)
    return out if device is None else out.to(device)


def _imported(ext_tensor: Any, copy: bool | None) -> Tensor:
    if isinstance(ext_tensor, Tensor):
        if ext_tensor.requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        alias = ext_tensor._alias(share_version=False)
        return alias.clone() if copy else alias
    if isinstance(ext_tensor, np.ndarray):
        return creation.tensor(ext_tensor) if copy else creation.from_numpy(ext_tensor)
    if hasattr(ext_tensor, "__dlpack__"):
        producer = ext_tensor
    elif type(ext_tensor).__name__ == "PyCapsule":
        producer = _Capsule(ext_tensor)
    else:
        raise RuntimeError(_INVALID_CAPSULE)
    if producer.__dlpack_device__()[0] == _CPU:
        try:
            return creation.tensor(np.from_dlpack(producer))
        except ValueError as exc:  # a capsule consumed already
            raise RuntimeError(_INVALID_CAPSULE) from exc
        except (RuntimeError, BufferError, TypeError):
            pass  # (a dtype numpy lacks: bfloat16)
    return creation.from_jax(jnp.array(jax.dlpack.from_dlpack(producer), copy=True))


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule of ``tensor``'s data (consumable once, by any DLPack consumer).

    >>> import jaxgrad
    >>> capsule = jaxgrad.to_dlpack(jaxgrad.tensor([1.0, 2.0]))
    >>> jaxgrad.from_dlpack(capsule)
    tensor([1., 2.])
    """
    return tensor._value.__dlpack__()
