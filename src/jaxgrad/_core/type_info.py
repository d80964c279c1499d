"""``torch.finfo`` and ``torch.iinfo``: the numeric limits of a dtype, as Python numbers."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from . import dtypes as _dtypes
from .typename import public_path


def _dtype_argument(function: str, d: Any) -> _dtypes.dtype:
    if d is None:
        return _dtypes.get_default_dtype()
    if not isinstance(d, _dtypes.dtype):
        raise TypeError(f"{function}(): argument 'type' (position 1) must be jaxgrad.dtype, not "
                        f"{type(d).__name__}")
    return d


class _Limits:
    """Fields compared by value and printed as torch prints them (``%g``)."""

    __slots__ = ()
    __hash__ = None  # torch's are unhashable

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            getattr(self, f) == getattr(other, f) for f in self.__slots__)

    def __repr__(self) -> str:
        shown = [f"{f}={getattr(self, f):g}" for f in self._printed]
        return f"{type(self).__name__}({', '.join(shown)}, dtype={self.dtype})"


@public_path("jaxgrad")
class finfo(_Limits):
    """The limits of a floating dtype (of its real part, for a complex one); the default
    dtype's when called without one.

    >>> import jaxgrad
    >>> jaxgrad.finfo(jaxgrad.bfloat16).eps, jaxgrad.finfo().dtype
    (0.0078125, 'float32')
    >>> jaxgrad.finfo(jaxgrad.float16).max, jaxgrad.finfo(jaxgrad.float16).resolution
    (65504.0, 0.001)
    """

    __slots__ = ("bits", "dtype", "eps", "max", "min", "resolution", "smallest_normal", "tiny")
    _printed = ("resolution", "min", "max", "eps", "smallest_normal", "tiny")

    def __init__(self, type: _dtypes.dtype | None = None) -> None:
        d = _dtype_argument("finfo", type)
        if not (d.is_floating_point or d.is_complex):
            raise TypeError("jaxgrad.finfo() requires a floating point input type. Use "
                            "jaxgrad.iinfo to handle 'jaxgrad.finfo'")
        info = jnp.finfo(d.np)  # a complex dtype's is its real part's
        self.bits = int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # a power of ten, as torch reports it
        self.dtype = str(info.dtype)


@public_path("jaxgrad")
class iinfo(_Limits):
    """The limits of an integer dtype.

    >>> import jaxgrad
    >>> jaxgrad.iinfo(jaxgrad.uint8).max, jaxgrad.iinfo(jaxgrad.int32)
    (255, iinfo(min=-2.14748e+09, max=2.14748e+09, dtype=int32))
    """

    __slots__ = ("bits", "dtype", "max", "min")
    _printed = ("min", "max")

    def __init__(self, type: _dtypes.dtype) -> None:
        d = _dtype_argument("iinfo", type)
        if d is _dtypes.bool_:
            raise TypeError("jaxgrad.bool is not supported by jaxgrad.iinfo")
        if d.is_floating_point or d.is_complex:
            raise TypeError("jaxgrad.iinfo() requires an integer input type. Use jaxgrad.finfo "
                            "to handle 'jaxgrad.iinfo'")
        info = jnp.iinfo(d.np)
        self.bits, self.max, self.min = int(info.bits), int(info.max), int(info.min)
        self.dtype = d.name
