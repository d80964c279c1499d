"""torch's ``repr`` for jaxgrad tensors: data text from ``tensor_str`` plus torch's suffixes.

While a forward-AD dual level exists, forward AD hands in how to find a tensor's tangent
(:func:`show_tangents`), and a dual tensor prints it as torch does (``tangent=tensor(...)``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import dtypes as _dtypes
from .tensor_str import format_tensor

_INVALID = object()
_tangent_of: Callable[[Any], Any] | None = None  # set while a dual level exists


def show_tangents(tangent_of: Callable[[Any], Any] | None) -> None:
    """Print tensors' tangents found by ``tangent_of`` (None: no dual level, no tangents)."""
    global _tangent_of
    _tangent_of = tangent_of


def tensor_repr(t, prefix: str = "tensor(") -> str:
    """``tensor([2., 4.], grad_fn=<MulBackward0>)`` as torch prints it."""
    values = np.asarray(t._value)
    d = t.dtype
    if d is _dtypes.bfloat16:
        values = values.astype(np.float32)
    suffixes = []
    try:
        fn = t.grad_fn
    except RuntimeError:  # a no_grad view modified in place: torch prints it as invalid
        fn = _INVALID
    if fn is _INVALID:
        suffixes.append("grad_fn=<Invalid>")
    elif fn is not None:
        suffixes.append(f"grad_fn=<{type(fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    tangent = None if _tangent_of is None else _tangent_of(t)
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")  # (a 0-dim one formats as its number)
    dev = t.device
    device_suffix = None if dev.type == "cpu" else f"device='{dev}'"
    default = d in (_dtypes.get_default_dtype(), _dtypes.scalar_dtype(1j), _dtypes.int64,
                    _dtypes.bool_)
    return format_tensor(values, dtype_name=repr(d), is_default_dtype=default,
                         suffixes=suffixes, prefix=prefix, device_suffix=device_suffix)
