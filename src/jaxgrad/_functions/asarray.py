"""``asarray`` and ``frombuffer``: tensors over existing memory where torch shares it (a
tensor, a numpy array, a Python buffer), copies where a dtype or ``copy=True`` asks for one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core import dtypes as _dtypes
from .._core.device import device as _device_type
from .._core.tensor import Tensor
from .._core.warn_once import warn_once
from .creation import from_numpy, tensor

_UNSPECIFIED_GRAD = (
    "jaxgrad.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of "
    "False. Pass requires_grad=False explicitly to get the old behavior and silence this "
    "warning.")
_BUFFER_NOT_WRITABLE = (
    "The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
    "means you can write to the underlying (supposedly non-writable) buffer using the tensor. "
    "You may want to copy the buffer to protect its data or make it writable before converting "
    "it to a tensor. This type of warning will be suppressed for the rest of this program.")


def _is_buffer(obj: Any) -> bool:
    try:
        with memoryview(obj):
            return True
    except TypeError:
        return False


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-d tensor over the memory of a Python buffer (``bytearray``, ``memoryview``, an
    ``array.array``): writes through either show in the other.

    >>> import jaxgrad
    >>> data = bytearray(b"\\x01\\x00\\x02\\x00")
    >>> t = jaxgrad.frombuffer(data, dtype=jaxgrad.int16)
    >>> data[0] = 7
    >>> t
    tensor([7, 2], dtype=jaxgrad.int16)
    """
    d = _dtypes.to_dtype(dtype)
    if not _is_buffer(buffer):
        raise ValueError("object does not implement Python buffer protocol.")
    with memoryview(buffer) as view:
        length, readonly = view.nbytes, view.readonly
    size = d.itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    array = np.ndarray((count,), d.np, buffer=buffer, offset=offset)  # (its base: buffer)
    if readonly:
        warn_once(_BUFFER_NOT_WRITABLE, UserWarning)
        result = tensor(array.copy(), dtype=d)
    else:
        result = from_numpy(array)
    if requires_grad:
        result.requires_grad_(True)
    return result


def _dtype_name(d: _dtypes.dtype) -> str:
    return _dtypes.scalar_type_name(d)


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool | None = None) -> Tensor:
    """``obj`` (a tensor, numpy array, Python buffer, sequence or number) as a tensor, sharing
    its memory where it can (``copy=None``), always copying with ``copy=True``, and refusing to
    copy with ``copy=False``. ``requires_grad`` unspecified keeps a tensor's (torch warns when
    that is True); given, a leaf's flag is set in place and a non-leaf is detached.

    >>> import numpy as np
    >>> import jaxgrad
    >>> a = np.array([1, 2], dtype=np.int32)
    >>> t = jaxgrad.asarray(a)
    >>> a[0] = 5
    >>> t, jaxgrad.asarray([1, 2.5], dtype=jaxgrad.float64)
    (tensor([5, 2], dtype=jaxgrad.int32), tensor([1.0000, 2.5000], dtype=jaxgrad.float64))
    """
    d = None if dtype is None else _dtypes.to_dtype(dtype)
    if isinstance(obj, Tensor):
        if requires_grad is None and obj.requires_grad:
            warn_once(_UNSPECIFIED_GRAD, UserWarning)
        result = _from_tensor(obj, d, device, copy, "tensor")
    elif isinstance(obj, np.ndarray):
        result = _from_tensor(from_numpy(obj), d, device, copy, "tensor")
    elif _is_buffer(obj) and not isinstance(obj, (str, np.generic)):
        result = _from_tensor(frombuffer(obj, dtype=d or _dtypes.get_default_dtype()), None,
                              device, copy, "tensor")
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        result = tensor(obj, dtype=d, device=device)
    if requires_grad is not None and result.requires_grad != requires_grad:
        if requires_grad and not (result.dtype.is_floating_point or result.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        if result.is_leaf:
            result.requires_grad_(requires_grad)
        else:
            result = result.detach()
    return result


def _from_tensor(t: Tensor, d: Any, device: Any, copy: bool | None, what: str) -> Tensor:
    """``t`` itself where its dtype and device are the ones asked for and no copy is, else its
    copy (recorded as torch's: ToCopyBackward0, CloneBackward0)."""
    d = d or t.dtype
    dev = t.device if device is None else _device_type(device)
    if d is t.dtype and dev == t.device and not copy:
        return t
    if copy is False:
        if d is not t.dtype:
            raise ValueError(f"can't alias {what} with dtype '{_dtype_name(t.dtype)}' into "
                             f"dtype '{_dtype_name(d)}'.")
        raise ValueError(f"can't alias {what} on device '{t.device}' into device '{dev}'.")
    if d is t.dtype and dev == t.device:
        return t.clone()
    return t.to(device=dev, dtype=d)
