"""Questions about dtypes and shapes that compute nothing on the device: ``result_type``,
``can_cast``, ``is_nonzero``, ``is_same_size`` and ``broadcast_shapes``.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core import dtypes as _dtypes
from .._core.storage import TypedStorage, UntypedStorage
from .._core.tensor import Size, Tensor
from .._core.typename import type_name
from .opgen import declare


@declare('result_type.Tensor(Tensor tensor, Tensor other) -> ScalarType', variants='function',
         numbers_as_tensors=True)
def result_type(tensor: Any, other: Any) -> _dtypes.dtype:
    """The dtype an arithmetic op on ``tensor`` and ``other`` (tensors or numbers) gives, by
    torch's promotion rules (dimensioned tensors before 0-d ones before numbers).

    >>> import jaxgrad
    >>> jaxgrad.result_type(jaxgrad.tensor([1, 2]), 2.5)
    jaxgrad.float32
    >>> jaxgrad.result_type(jaxgrad.tensor([1], dtype=jaxgrad.uint8), jaxgrad.tensor(1))
    jaxgrad.uint8
    """
    dims, scalars = [], []
    for value in (tensor, other):
        if isinstance(value, Tensor):
            dims.append((value.dtype, value.ndim))
        elif isinstance(value, (bool, int, float, complex, np.number, np.bool_)):
            scalars.append(value.item() if isinstance(value, (np.number, np.bool_)) else value)
        else:
            raise TypeError(f"expected Tensor or a number, not {type_name(value)}")
    return _dtypes.result_type(dims, scalars)


@declare('can_cast(ScalarType from_, ScalarType to) -> bool', variants='function')
def can_cast(from_: _dtypes.dtype, to: _dtypes.dtype) -> bool:
    """Whether torch's casting rules allow a ``from_`` result to be written into ``to``
    (no lowering of category: complex to float, float to integer, integer to bool).

    >>> import jaxgrad
    >>> jaxgrad.can_cast(jaxgrad.float64, jaxgrad.float16), jaxgrad.can_cast(jaxgrad.float32,
    ...                                                                         jaxgrad.int32)
    (True, False)
    """
    for index, (name, value) in enumerate((("from_", from_), ("to", to)), 1):
        if not isinstance(value, _dtypes.dtype):
            raise TypeError(f"can_cast(): argument '{name}' (position {index}) must be "
                            f"jaxgrad.dtype, not {type_name(value)}")
    return _dtypes.can_cast(from_, to)


@declare('is_nonzero(Tensor self) -> bool')
def is_nonzero(input: Tensor) -> bool:
    """Whether the single element of ``input`` is not zero (NaN counts as nonzero); torch's
    error for a tensor of no or several elements.

    >>> import jaxgrad
    >>> jaxgrad.is_nonzero(jaxgrad.tensor([0.0])), jaxgrad.tensor(3).is_nonzero()
    (False, True)
    """
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item() != 0)


@declare('is_same_size(Tensor self, Tensor other) -> bool')
def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether ``input`` and ``other`` have the same shape.

    >>> import jaxgrad
    >>> jaxgrad.is_same_size(jaxgrad.zeros(2, 3), jaxgrad.ones(2, 3))
    True
    """
    return tuple(input.shape) == tuple(other.shape)


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape tensors of ``shapes`` broadcast to (an int stands for a 1-d shape), with
    torch's errors.

    >>> import jaxgrad
    >>> jaxgrad.broadcast_shapes((2,), (3, 1), (1, 1, 1))
    jaxgrad.Size([1, 3, 2])
    """
    shapes = tuple((s,) if isinstance(s, int) else s for s in shapes if s is not None)
    if not shapes:
        return Size([])
    for shape in shapes:
        if not isinstance(shape, Sequence):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {shape}")
    common = [1] * builtins.max(len(s) for s in shapes)
    for index, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            if shape[i] == common[i]:
                continue
            if common[i] == 1:
                if shape[i] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[i] = shape[i]
            if shape[i] != 1 and common[i] != shape[i]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[i]} at {i}! "
                    f"Mismatching argument at index {index} had {shape}; but expected shape "
                    f"should be broadcastable to {common}")
    return Size(common)


@declare('is_signed(Tensor self) -> bool')
def is_signed(input: Tensor) -> bool:
    """Whether ``input``'s dtype holds negative numbers (not bool nor uint8).

    >>> import jaxgrad
    >>> jaxgrad.is_signed(jaxgrad.tensor([1], dtype=jaxgrad.uint8)), jaxgrad.ones(1).is_signed()
    (False, True)
    """
    return input.dtype.is_signed


@declare('numel(Tensor self) -> int', variants='function')
def numel(input: Tensor) -> int:
    """How many elements ``input`` has.

    >>> import jaxgrad
    >>> jaxgrad.numel(jaxgrad.ones(2, 3))
    6
    """
    return input.numel()


@declare('get_device(Tensor self) -> int', variants='function')
def get_device(input: Tensor) -> int:
    """The index of the device ``input`` is on; -1 on the CPU.

    >>> import jaxgrad
    >>> jaxgrad.get_device(jaxgrad.ones(1))
    -1
    """
    return input.get_device()


def is_storage(obj: Any) -> bool:
    """Whether ``obj`` is a storage (typed or untyped).

    >>> import jaxgrad
    >>> t = jaxgrad.ones(1)
    >>> jaxgrad.is_storage(t.untyped_storage()), jaxgrad.is_storage(t)
    (True, False)
    """
    return isinstance(obj, (TypedStorage, UntypedStorage))
