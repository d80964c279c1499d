"""``torch.testing._internal.common_dtype`` for jaxgrad: the dtype lists torch's tests
parametrize over (its dispatch macros' sets), over the dtypes jaxgrad has.

>>> from jaxgrad.testing._internal.common_dtype import floating_types_and
>>> import jaxgrad
>>> floating_types_and(jaxgrad.bfloat16)
(jaxgrad.float32, jaxgrad.float64, jaxgrad.bfloat16)
"""

from __future__ import annotations

from ..._core import dtypes as _d


class _dispatch_dtypes(tuple):
    """A tuple of dtypes that stays one when added to."""

    __slots__ = ()

    def __add__(self, other: tuple) -> _dispatch_dtypes:
        if not isinstance(other, tuple):
            raise AssertionError(f"Expected other to be a tuple, got {type(other)}")
        return _dispatch_dtypes(tuple.__add__(self, other))


def _validated(*dtypes: _d.dtype) -> tuple[_d.dtype, ...]:
    for d in dtypes:
        if not isinstance(d, _d.dtype):
            raise AssertionError(f"Expected dtype to be torch.dtype, got {type(d)}")
    return dtypes


_EMPTY = _dispatch_dtypes(())
_FLOATING = _dispatch_dtypes((_d.float32, _d.float64))
_COMPLEX = _dispatch_dtypes((_d.complex64, _d.complex128))
_INTEGRAL = _dispatch_dtypes((_d.uint8, _d.int8, _d.int16, _d.int32, _d.int64))


def empty_types() -> _dispatch_dtypes:
    return _EMPTY


def custom_types(*dtypes: _d.dtype) -> _dispatch_dtypes:
    return _EMPTY + _validated(*dtypes)


def floating_types() -> _dispatch_dtypes:
    return _FLOATING


def floating_types_and_half() -> _dispatch_dtypes:
    return _FLOATING + (_d.float16,)


def floating_types_and(*dtypes: _d.dtype) -> _dispatch_dtypes:
    return _FLOATING + _validated(*dtypes)


def floating_and_complex_types() -> _dispatch_dtypes:
    return _FLOATING + _COMPLEX


def floating_and_complex_types_and(*dtypes: _d.dtype) -> _dispatch_dtypes:
    return _FLOATING + _COMPLEX + _validated(*dtypes)


def double_types() -> _dispatch_dtypes:
    return _dispatch_dtypes((_d.float64, _d.complex128))


def integral_types() -> _dispatch_dtypes:
    return _INTEGRAL


def integral_types_and(*dtypes: _d.dtype) -> _dispatch_dtypes:
    return _INTEGRAL + _validated(*dtypes)


def all_types() -> _dispatch_dtypes:
    return _FLOATING + _INTEGRAL


def all_types_and(*dtypes: _d.dtype) -> _dispatch_dtypes:
    return _FLOATING + _INTEGRAL + _validated(*dtypes)


def complex_types() -> _dispatch_dtypes:
    return _COMPLEX


def complex_types_and(*dtypes: _d.dtype) -> _dispatch_dtypes:
    return _COMPLEX + _validated(*dtypes)


def all_types_and_complex() -> _dispatch_dtypes:
    return _FLOATING + _INTEGRAL + _COMPLEX


def all_types_and_complex_and(*dtypes: _d.dtype) -> _dispatch_dtypes:
    return _FLOATING + _INTEGRAL + _COMPLEX + _validated(*dtypes)


def all_types_and_half() -> _dispatch_dtypes:
    return _FLOATING + _INTEGRAL + (_d.float16,)


def get_all_int_dtypes() -> list[_d.dtype]:
    return list(_INTEGRAL)


def get_all_fp_dtypes(include_half: bool = True, include_bfloat16: bool = True) -> list[_d.dtype]:
    return [_d.float32, _d.float64, *([_d.float16] if include_half else []),
            *([_d.bfloat16] if include_bfloat16 else [])]


def get_all_complex_dtypes(include_complex32: bool = False) -> list[_d.dtype]:
    if include_complex32:
        raise NotImplementedError("jaxgrad has no complex32")
    return list(_COMPLEX)


def get_all_dtypes(include_half: bool = True, include_bfloat16: bool = True,
                   include_bool: bool = True, include_complex: bool = True,
                   include_complex32: bool = False, include_qint: bool = False) -> list[_d.dtype]:
    if include_qint:
        raise NotImplementedError("jaxgrad has no quantized dtypes")
    return [*get_all_int_dtypes(), *get_all_fp_dtypes(include_half, include_bfloat16),
            *([_d.bool_] if include_bool else []),
            *(get_all_complex_dtypes(include_complex32) if include_complex else [])]


def get_all_math_dtypes(device: str) -> list[_d.dtype]:
    return [*get_all_int_dtypes(),
            *get_all_fp_dtypes(include_half=device.startswith("cuda"), include_bfloat16=False),
            *get_all_complex_dtypes()]


def highest_precision_float(device: str) -> _d.dtype:
    return _d.float64


def highest_precision_complex(device: str) -> _d.dtype:
    return _d.complex128
