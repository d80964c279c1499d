"""torch-style dtype objects and PyTorch's type-promotion rules.

Every array jaxgrad creates carries an explicit dtype, so JAX's own (32-bit) defaults never
leak into jaxgrad results. A jaxgrad dtype is accepted wherever JAX or numpy take a dtype
(``jnp.zeros(2, dtype=jaxgrad.float32)``, ``jax.ShapeDtypeStruct``, chex's asserts): numpy reads
its ``dtype`` attribute, as it does for any object carrying one.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from .typename import public_path


@public_path("jaxgrad")
class dtype:
    """A tensor element type, e.g. ``jaxgrad.float32``; wraps a numpy/JAX dtype.

    >>> import jaxgrad
    >>> d = jaxgrad.tensor([1.0]).dtype
    >>> d, d.is_floating_point, d.itemsize, d.np
    (jaxgrad.float32, True, 4, dtype('float32'))
    """

    __slots__ = ("_category", "_legacy", "is_floating_point", "itemsize", "name", "np")

    def __init__(self, name: str, np_dtype, legacy: str, category: int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self._legacy = legacy
        self._category = category  # 0 bool, 1 integral, 2 floating, 3 complex
        self.is_floating_point = category == 2

    @property
    def is_complex(self) -> bool:
        """Whether this is a complex dtype (``complex64`` or ``complex128``).

        >>> import jaxgrad
        >>> jaxgrad.complex64.is_complex, jaxgrad.float32.is_complex
        (True, False)
        """
        return self._category == 3

    @property
    def abbr(self) -> str:
        """torch's short name of the dtype, as its logs print shapes (``f32[2, 3]``).

        >>> import jaxgrad
        >>> jaxgrad.float32.abbr, jaxgrad.bool.abbr, jaxgrad.bfloat16.abbr
        ('f32', 'b8', 'bf16')
        """
        if self.name == "bool":
            return "b8"
        if self.name == "bfloat16":
            return "bf16"
        kind = {"uint": "u", "int": "i", "float": "f", "complex": "c"}
        prefix = next(p for p in ("uint", "int", "float", "complex") if self.name.startswith(p))
        return kind[prefix] + self.name[len(prefix):]

    @property
    def is_signed(self) -> bool:
        """Whether the dtype can hold negative values (all but ``bool`` and ``uint8``).

        >>> import jaxgrad
        >>> jaxgrad.int8.is_signed, jaxgrad.uint8.is_signed
        (True, False)
        """
        return self.name not in ("bool", "uint8")

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype, read by numpy and JAX wherever they take a dtype.

        >>> import jax.numpy as jnp
        >>> import jaxgrad
        >>> jnp.zeros(2, dtype=jaxgrad.int32).dtype, jaxgrad.int32.dtype
        (dtype('int32'), dtype('int32'))
        """
        return self.np

    def __repr__(self) -> str:
        return f"jaxgrad.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


bool_ = dtype("bool", np.bool_, "BoolTensor", 0)
uint8 = dtype("uint8", np.uint8, "ByteTensor", 1)
int8 = dtype("int8", np.int8, "CharTensor", 1)
int16 = dtype("int16", np.int16, "ShortTensor", 1)
int32 = dtype("int32", np.int32, "IntTensor", 1)
int64 = dtype("int64", np.int64, "LongTensor", 1)
float16 = dtype("float16", np.float16, "HalfTensor", 2)
bfloat16 = dtype("bfloat16", jnp.bfloat16, "BFloat16Tensor", 2)
float32 = dtype("float32", np.float32, "FloatTensor", 2)
float64 = dtype("float64", np.float64, "DoubleTensor", 2)
complex64 = dtype("complex64", np.complex64, "ComplexFloatTensor", 3)
complex128 = dtype("complex128", np.complex128, "ComplexDoubleTensor", 3)

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
              complex64, complex128)
_BY_NP = {d.np: d for d in ALL_DTYPES}
_BY_NAME = {d.name: d for d in ALL_DTYPES}

_default_float = [float32]


def _by_name(name: str) -> dtype:
    return _BY_NAME[name]


def get_default_dtype() -> dtype:
    """The dtype of tensors made from Python floats (``float32`` unless changed).

    >>> import jaxgrad
    >>> jaxgrad.get_default_dtype()
    jaxgrad.float32
    """
    return _default_float[0]


def set_default_dtype(d: dtype) -> None:
    """Set the floating dtype used for Python floats (``float32`` or ``float64``).

    >>> import jaxgrad
    >>> jaxgrad.set_default_dtype(jaxgrad.float64); jaxgrad.tensor(1.5).dtype
    jaxgrad.float64
    >>> jaxgrad.set_default_dtype(jaxgrad.float32)
    """
    if not isinstance(d, dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as the "
                        "default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float[0] = d


def from_numpy_dtype(np_dtype) -> dtype:
    """The jaxgrad dtype of a numpy/JAX dtype (uint16/32/64 are not torch dtypes).

    >>> import numpy as np
    >>> from jaxgrad._core.dtypes import from_numpy_dtype
    >>> from_numpy_dtype(np.int16)
    jaxgrad.int16
    """
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype)}. The only supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint8, and bool."
        ) from None


def to_dtype(d) -> dtype:
    """Accept a jaxgrad dtype, a numpy/JAX dtype, or a Python type (float, int, bool).

    >>> from jaxgrad._core.dtypes import to_dtype
    >>> to_dtype(float), to_dtype("int32")
    (jaxgrad.float64, jaxgrad.int32)
    """
    if isinstance(d, dtype):
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    return from_numpy_dtype(d)


# --- promotion -----------------------------------------------------------------------------

_INT_ORDER = (uint8, int8, int16, int32, int64)


def promote_types(a: dtype, b: dtype) -> dtype:
    """torch.promote_types: the smallest dtype both ``a`` and ``b`` convert to safely.

    >>> import jaxgrad
    >>> jaxgrad.promote_types(jaxgrad.uint8, jaxgrad.int8)
    jaxgrad.int16
    >>> jaxgrad.promote_types(jaxgrad.int64, jaxgrad.float16)
    jaxgrad.float16
    """
    if a is b:
        return a
    if a._category != b._category:
        hi, lo = (a, b) if a._category > b._category else (b, a)
        if hi._category == 3 and lo is float64:
            return complex128
        return hi
    if a._category == 1:
        if {a, b} == {uint8, int8}:
            return int16
        return max(a, b, key=_INT_ORDER.index)
    if a._category == 2:
        if {a, b} == {float16, bfloat16}:
            return float32
        return max(a, b, key=lambda d: d.itemsize)
    if a._category == 3:
        return max(a, b, key=lambda d: d.itemsize)
    return a


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._category == 3:
        return higher
    if lower._category == 3:
        return complex128 if higher is float64 else (complex64 if higher._category == 2 else lower)
    if higher._category == 2:
        return higher
    if higher is bool_ or lower._category == 2:
        return promote_types(higher, lower)
    return higher


def scalar_dtype(value) -> dtype:
    """The dtype torch gives a wrapped Python number in type promotion.

    >>> from jaxgrad._core.dtypes import scalar_dtype
    >>> scalar_dtype(True), scalar_dtype(3), scalar_dtype(1.5)
    (jaxgrad.bool, jaxgrad.int64, jaxgrad.float32)
    """
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, complex):
        return complex64 if get_default_dtype() is float32 else complex128
    return get_default_dtype()


def result_type(dims: list[tuple[dtype, int]], scalars: list) -> dtype:
    """torch.result_type over tensors given as (dtype, ndim) pairs plus Python scalars.

    >>> import jaxgrad
    >>> from jaxgrad._core.dtypes import result_type
    >>> result_type([(jaxgrad.int32, 1)], [2.5])  # a float scalar lifts an int tensor
    jaxgrad.float32
    >>> result_type([(jaxgrad.float16, 1), (jaxgrad.float64, 0)], [])
    jaxgrad.float16
    """
    dim_result = zero_result = wrapped = None
    for d, ndim in dims:
        if ndim > 0:
            dim_result = d if dim_result is None else promote_types(dim_result, d)
        else:
            zero_result = d if zero_result is None else promote_types(zero_result, d)
    for s in scalars:
        d = scalar_dtype(s)
        wrapped = d if wrapped is None else promote_types(wrapped, d)
    return _combine_categories(dim_result, _combine_categories(zero_result, wrapped))


def can_cast(src: dtype, dst: dtype) -> bool:
    """torch.can_cast: whether an in-place op may write a ``src`` result into ``dst``.

    >>> import jaxgrad
    >>> from jaxgrad._core.dtypes import can_cast
    >>> can_cast(jaxgrad.int64, jaxgrad.float16), can_cast(jaxgrad.float32, jaxgrad.int64)
    (True, False)
    """
    return src._category <= dst._category


def legacy_type_name(d: dtype) -> str:
    """The legacy type string torch prints in messages, e.g. ``FloatTensor``.

    >>> import jaxgrad
    >>> from jaxgrad._core.dtypes import legacy_type_name
    >>> legacy_type_name(jaxgrad.int64)
    'LongTensor'
    """
    return d._legacy


def scalar_type_name(d: dtype) -> str:
    """torch's ScalarType name used in messages, e.g. ``Float`` or ``Long``.

    >>> import jaxgrad
    >>> from jaxgrad._core.dtypes import scalar_type_name
    >>> scalar_type_name(jaxgrad.float64)
    'Double'
    """
    return {
        "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
        "int64": "Long", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
        "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
    }[d.name]


def check_scalar_type(found: dtype, expected: dtype) -> None:
    """torch's scalar-type check of a kernel's operand: RuntimeError "expected scalar type
    Float but found Double" unless ``found`` is ``expected``.

    >>> import jaxgrad
    >>> from jaxgrad._core.dtypes import check_scalar_type
    >>> check_scalar_type(jaxgrad.float64, jaxgrad.float32)
    Traceback (most recent call last):
    ...
    RuntimeError: expected scalar type Float but found Double
    """
    if found is not expected:
        raise RuntimeError(f"expected scalar type {scalar_type_name(expected)} but found "
                           f"{scalar_type_name(found)}")


_CONVERT_NAMES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int",
                  "int64": "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                  "float32": "float", "float64": "double", "complex64": "c10::complex<float>",
                  "complex128": "c10::complex<double>"}


def convertible_range(d: dtype, of_floats: bool = False) -> tuple[float, float]:
    """The lowest and largest number torch's ``checked_convert`` takes into the real or integer
    dtype ``d``: an unsigned type also takes the negative integers it wraps (-255 for uint8),
    but no negative float (``of_floats``).

    >>> import jaxgrad
    >>> from jaxgrad._core.dtypes import convertible_range
    >>> convertible_range(jaxgrad.int8), convertible_range(jaxgrad.uint8)
    ((-128, 127), (-255, 255))
    >>> convertible_range(jaxgrad.uint8, of_floats=True)
    (0, 255)
    """
    lowest, largest = _RANGES[d.name]
    unsigned = not (d.is_floating_point or d.is_complex) and lowest == -largest
    return (0 if of_floats and unsigned else lowest), largest


def _range_of(d: dtype) -> tuple[float, float]:
    if d.is_floating_point or d.is_complex:
        largest = float(jnp.finfo(d.np).max)
        return -largest, largest
    info = np.iinfo(d.np)
    return (-int(info.max) if info.min == 0 else int(info.min)), int(info.max)


_RANGES = {d.name: _range_of(d) for d in ALL_DTYPES if d.name != "bool"}


def checked_scalar(value: complex, d: dtype, numel: int = 2) -> complex:
    """``value`` as torch's ``checked_convert`` takes a number into ``d`` (``fill_``, ``full``,
    ``masked_fill``, ``index_fill``): a number ``d`` cannot hold raises torch's RuntimeError.
    Integers take whole numbers in :func:`convertible_range` (a negative one into an unsigned
    type is returned wrapped: -1 is 255), no NaN or infinity; floats any value up to their
    largest, infinity and NaN included; a real type no imaginary part (a complex number with none
    is returned as its real part); bool anything. A one-element half-precision tensor is filled
    through a double, as torch's fast path does.

    >>> import jaxgrad
    >>> from jaxgrad._core.dtypes import checked_scalar
    >>> checked_scalar(2 + 0j, jaxgrad.uint8), checked_scalar(-1, jaxgrad.uint8)
    (2.0, 255)
    >>> checked_scalar(300, jaxgrad.int8)
    Traceback (most recent call last):
    ...
    RuntimeError: value cannot be converted to type int8_t without overflow
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, complex, np.number)):
        return value  # (a traced number, a tensor: not a number to check here)
    if d.name == "bool":
        return bool(value)
    target = d
    if d.is_floating_point and numel == 1 and d.itemsize == 2:
        d = float64  # (torch's one-element fill converts through a double)
    parts = (value.real, value.imag) if isinstance(value, complex) else (value,)
    lowest, largest = convertible_range(d, of_floats=isinstance(parts[0], (float, np.floating)))
    if not d.is_complex and len(parts) == 2 and parts[1] != 0:
        fits = False
    elif d.is_floating_point or d.is_complex:
        fits = all(p != p or abs(p) == math.inf or abs(p) <= largest for p in map(float, parts))
    else:
        x = parts[0]
        fits = not (isinstance(x, float) and (x != x or abs(x) == math.inf)) and (
            lowest <= x <= largest)
    if not fits:
        name = _CONVERT_NAMES.get(d.name, d.name)
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    if d.is_complex:
        return value
    x = parts[0]
    if target is not d and abs(float(x)) > _RANGES[target.name][1]:
        return math.copysign(math.inf, float(x))  # (what the double rounds to)
    if x < 0 and not d.is_floating_point and lowest == -largest:  # (an unsigned type wraps it)
        return int(x) % (largest + 1)
    return x


def c_type_name(d: dtype) -> str:
    """The C type name torch prints in some messages, e.g. ``float`` or ``double``.

    >>> import jaxgrad
    >>> from jaxgrad._core.dtypes import c_type_name
    >>> c_type_name(jaxgrad.int64)
    'long int'
    """
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}.get(d.name, d.name)
