"""Elementwise math on a number's parts: copysign, float_power, ldexp, frexp, positive, gcd, lcm
and the bit shifts (``<<``, ``>>``), with their in-place forms; the rows of
``_ops/elementwise_bits.py`` with variants (ldexp, gcd, lcm) are generated here whole.
"""

from __future__ import annotations

from typing import Any

from .._core import dtypes as _dtypes
from .._core import return_types
from .._core.tensor import Tensor
from .._engine.dispatch import apply
from .._ops import elementwise_bits as B
from .arguments import number_or_tensor, require_tensors
from .opgen import declare, generate
from .pointwise import _scalar_or_tensor, binary_tensor_or_number, pow, pow_, tensor_like
from .shapes import to_dtype

globals().update(generate(B))


@declare('copysign.Tensor(Tensor self, Tensor other) -> Tensor', numbers_as_tensors=('other',),
         variants='function method out')
def copysign(input: Tensor, other: Any) -> Tensor:
    """The magnitude of ``input`` with the sign of ``other`` (a tensor: CopysignBackward0, a
    number: CopysignBackward1); integers become floats.

    >>> import jaxgrad
    >>> jaxgrad.copysign(jaxgrad.tensor([1.0, -2.0]), -1), jaxgrad.copysign(jaxgrad.tensor([3]), 1)
    (tensor([-1., -2.]), tensor([3.]))
    """
    return _scalar_or_tensor(B.COPYSIGN_SCALAR, B.COPYSIGN, input, other)


@declare('copysign_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)',
         numbers_as_tensors=('other',), variants='method')
def copysign_(input: Tensor, other: Any) -> Tensor:
    """``copysign``, in place.

    >>> import jaxgrad
    >>> jaxgrad.tensor([1.0, -2.0]).copysign_(jaxgrad.tensor([-0.0, 1.0]))
    tensor([-1.,  2.])
    """
    return _scalar_or_tensor(B.COPYSIGN_SCALAR, B.COPYSIGN, input, other, inplace=True)


def _float_power_dtype(*operands: Any) -> Any:
    """torch's float_power result: complex128 if an operand is complex, else float64."""
    complex_ = any(x.dtype.is_complex if isinstance(x, Tensor) else isinstance(x, complex)
                   for x in operands)
    return _dtypes.complex128 if complex_ else _dtypes.float64


def _cast_number(x: Any, dtype: Any) -> Any:
    return complex(x) if dtype is _dtypes.complex128 else float(x)


@declare('float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor',
         numbers_as_tensors=True, variants='function method out')
def float_power(input: Any, exponent: Any) -> Tensor:
    """``input ** exponent`` computed in double precision (float64, or complex128 with a complex
    operand), composed as torch's: ``pow(input.to(float64), exponent.to(float64))``.

    >>> import jaxgrad
    >>> jaxgrad.float_power(jaxgrad.tensor([2, 3]), 2)
    tensor([4., 9.], dtype=jaxgrad.float64)
    """
    dtype = _float_power_dtype(input, exponent)
    if not isinstance(input, Tensor):
        require_tensors(exponent)
        return pow(_cast_number(input, dtype), to_dtype(exponent, dtype))
    if not isinstance(exponent, Tensor):
        return pow(to_dtype(input, dtype), _cast_number(number_or_tensor(exponent), dtype))
    return pow(to_dtype(input, dtype), to_dtype(exponent, dtype))


@declare('float_power_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)',
         numbers_as_tensors=('exponent',), variants='method')
def float_power_(input: Tensor, exponent: Any) -> Tensor:
    """``float_power``, in place: ``input`` must already have the result's dtype.

    >>> import jaxgrad
    >>> jaxgrad.tensor([2.0, 3.0], dtype=jaxgrad.float64).float_power_(2)
    tensor([4., 9.], dtype=jaxgrad.float64)
    """
    dtype = _float_power_dtype(input, exponent)
    if input.dtype is not dtype:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_dtypes.scalar_type_name(input.dtype)} but the operation's result "
                           f"requires dtype {_dtypes.scalar_type_name(dtype)}")
    if isinstance(exponent, Tensor):
        return pow_(input, to_dtype(exponent, dtype))
    return pow_(input, _cast_number(number_or_tensor(exponent), dtype))


@declare('frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)',
         variants='function method')
def frexp(input: Tensor) -> Any:
    """The mantissa (in [0.5, 1) in magnitude, input's dtype) and the int32 exponent with
    ``input == mantissa * 2 ** exponent`` (FrexpBackward0; the exponent is not differentiable).

    >>> import jaxgrad
    >>> jaxgrad.frexp(jaxgrad.tensor([8.0, -3.0]))
    jaxgrad.return_types.frexp(
    mantissa=tensor([ 0.5000, -0.7500]),
    exponent=tensor([4, 2], dtype=jaxgrad.int32))
    """
    require_tensors(input)
    mantissa, exponent = apply(B.FREXP, input)
    return return_types.frexp(mantissa, exponent)


@declare('positive(Tensor(a) self) -> Tensor(a)', variants='function method')
def positive(input: Tensor) -> Tensor:
    """``+input``: the tensor itself (a bool tensor raises, as torch's does).

    >>> import jaxgrad
    >>> x = jaxgrad.tensor([1.0, -2.0])
    >>> jaxgrad.positive(x) is x
    True
    """
    require_tensors(input)
    if input.dtype is _dtypes.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _shift(row: Any, input: Any, other: Any, inplace: bool = False) -> Tensor:
    if not isinstance(input, Tensor):  # torch's Scalar_Tensor overload
        require_tensors(other)
        return apply(row, tensor_like(number_or_tensor(input), other), other)
    return binary_tensor_or_number(row, input, other, inplace)


@declare('bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor', numbers_as_tensors=True,
         variants='function method out')
def bitwise_left_shift(input: Any, other: Any) -> Tensor:
    """Integer elements shifted left by ``other`` bits (``<<``); a shift past the width (or
    negative) gives 0.

    >>> import jaxgrad
    >>> jaxgrad.bitwise_left_shift(jaxgrad.tensor([1, -3]), 2)
    tensor([  4, -12])
    """
    return _shift(B.BITWISE_LEFT_SHIFT, input, other)


@declare('bitwise_left_shift_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)',
         numbers_as_tensors=('other',), variants='method')
def bitwise_left_shift_(input: Tensor, other: Any) -> Tensor:
    """``bitwise_left_shift``, in place (``<<=``).

    >>> import jaxgrad
    >>> jaxgrad.tensor([1, -3]).bitwise_left_shift_(2)
    tensor([  4, -12])
    """
    return _shift(B.BITWISE_LEFT_SHIFT, input, other, inplace=True)


@declare('bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor', numbers_as_tensors=True,
         variants='function method out')
def bitwise_right_shift(input: Any, other: Any) -> Tensor:
    """Integer elements shifted right by ``other`` bits (``>>``); a shift past the width (or
    negative) gives 0, or -1 for a negative signed element.

    >>> import jaxgrad
    >>> jaxgrad.bitwise_right_shift(jaxgrad.tensor([8, -7]), 1)
    tensor([ 4, -4])
    """
    return _shift(B.BITWISE_RIGHT_SHIFT, input, other)


@declare('bitwise_right_shift_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)',
         numbers_as_tensors=('other',), variants='method')
def bitwise_right_shift_(input: Tensor, other: Any) -> Tensor:
    """``bitwise_right_shift``, in place (``>>=``).

    >>> import jaxgrad
    >>> jaxgrad.tensor([8, -7]).bitwise_right_shift_(1)
    tensor([ 4, -4])
    """
    return _shift(B.BITWISE_RIGHT_SHIFT, input, other, inplace=True)
