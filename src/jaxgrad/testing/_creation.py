"""``torch.testing.make_tensor``: a random tensor of a shape, dtype and device for tests."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from .._core import dtypes as _d
from .._core.tensor import Tensor
from .._core.type_info import finfo, iinfo
from .._functions.complex_numbers import view_as_real
from .._functions.creation import empty
from .._functions.random import randint

_FLOATING_OR_COMPLEX = (_d.float16, _d.bfloat16, _d.float32, _d.float64, _d.complex64,
                        _d.complex128)
_BOOL_OR_INTEGRAL = (_d.bool_, _d.uint8, _d.int8, _d.int16, _d.int32, _d.int64)


def _bounds(low: float | None, high: float | None, dtype: _d.dtype, lowest: float,
            highest: float, default: tuple[float, float]) -> tuple[float, float]:
    """``[low, high)`` with torch's defaults, checks and clamping to what ``dtype`` holds."""
    low = default[0] if low is None else low
    high = default[1] if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype in _FLOATING_OR_COMPLEX:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. Use "
                      "`torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype in _BOOL_OR_INTEGRAL:  # randint's bound is exclusive: both are ceiled
        return math.ceil(low), math.ceil(high)
    return low, high


def _uniform_fill(t: Tensor, low: float, high: float) -> None:
    if high - low >= finfo(t.dtype).max:  # uniform_ needs the width to be finite
        t.uniform_(low / 2, high / 2).mul_(2)
    else:
        t.uniform_(low, high)


def make_tensor(*shape: int | Sequence[int], dtype: _d.dtype, device: Any,
                low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format: Any = None) -> Tensor:
    """A tensor of ``shape`` with values drawn uniformly from ``[low, high)`` (by default
    ``[-9, 9)`` for floating and complex dtypes, ``[-9, 10)`` for signed integers, ``[0, 10)``
    for ``uint8`` and ``[0, 2)`` for ``bool``), as ``torch.testing.make_tensor``.
    ``noncontiguous`` makes a strided view; ``exclude_zero`` replaces zeros by one (integers)
    or the dtype's smallest normal number.

    >>> import jaxgrad
    >>> from jaxgrad.testing import make_tensor
    >>> x = make_tensor(2, 3, dtype=jaxgrad.float32, device="cpu", low=-1, high=1)
    >>> x.shape, bool(((x >= -1) & (x < 1)).all())
    (jaxgrad.Size([2, 3]), True)
    >>> make_tensor((4,), dtype=jaxgrad.int64, device="cpu", noncontiguous=True).is_contiguous()
    False
    """
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    if requires_grad and dtype in _BOOL_OR_INTEGRAL:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral dtypes, "
                         f"but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # twice the last dimension, then every other element from the second
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is _d.bool_:
        low, high = _bounds(low, high, dtype, 0, 2, (0, 2))
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _BOOL_OR_INTEGRAL:
        info = iinfo(dtype)
        # randint takes int64 bounds: int64's greatest value cannot be drawn
        highest = info.max + (1 if dtype is not _d.int64 else 0)
        low, high = _bounds(low, high, dtype, info.min, highest, (-9, 10))
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING_OR_COMPLEX:
        info = finfo(dtype)
        low, high = _bounds(low, high, dtype, info.min, info.max, (-9, 9))
        result = empty(shape, device=device, dtype=dtype)
        _uniform_fill(view_as_real(result) if dtype.is_complex else result, low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "torch.testing.make_tensor(). To request support, file an issue at: "
                        "https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype in _BOOL_OR_INTEGRAL else finfo(dtype).tiny
    if dtype in _FLOATING_OR_COMPLEX:
        result.requires_grad = requires_grad
    return result
