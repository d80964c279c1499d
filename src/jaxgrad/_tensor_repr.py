"""torch's ``repr`` for jaxgrad tensors: data text from ``_tensor_str`` plus torch's suffixes."""

from __future__ import annotations

import numpy as np

from . import _dtypes
from ._tensor_str import format_tensor

_INVALID = object()


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
    dev = t.device
    device_suffix = None if dev.type == "cpu" else f"device='{dev}'"
    default = d in (_dtypes.get_default_dtype(), _dtypes.scalar_dtype(1j), _dtypes.int64,
                    _dtypes.bool_)
    return format_tensor(values, dtype_name=repr(d), is_default_dtype=default,
                         suffixes=suffixes, prefix=prefix, device_suffix=device_suffix)
