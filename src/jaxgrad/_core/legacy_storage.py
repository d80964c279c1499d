"""torch's legacy typed storage classes (``torch.FloatStorage``, ``torch.LongStorage``, ...):
what ``Tensor.storage_type()`` returns. Calling one builds a :class:`TypedStorage` of its
dtype (torch's returns a plain ``TypedStorage`` too), and ``isinstance`` asks a storage's dtype.

>>> import jaxgrad
>>> s = jaxgrad.DoubleStorage([1, 2])
>>> type(s).__name__, s.tolist(), isinstance(s, jaxgrad.DoubleStorage)
('TypedStorage', [1.0, 2.0], True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax.numpy as jnp

from . import dtypes as _dtypes
from .jax_setup import in_x64_scope
from .storage import Storage, TypedStorage

_SIGNATURES = (
    "Expected one of:\n * no arguments\n * (int size)\n * (Sequence data)\n"
    " * (*, UntypedStorage wrap_storage)"
)


class _LegacyStorageMeta(type):
    """``isinstance(s, FloatStorage)``: ``s`` is a CPU storage of float32, as in torch."""

    dtype: _dtypes.dtype

    def __instancecheck__(cls, instance: Any) -> bool:
        return (
            type(instance) is TypedStorage
            and instance.device.type == "cpu"
            and instance.dtype is cls.dtype
        )


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    """The base of the legacy storage classes; never instantiated itself.

    >>> import jaxgrad
    >>> len(jaxgrad.FloatStorage(3))
    3
    """

    @in_x64_scope
    def __new__(cls, *args: Any, **kwargs: Any) -> TypedStorage:  # type: ignore[misc]
        if kwargs:
            raise RuntimeError(
                f"{cls!r}.__new__ received an invalid combination of arguments. {_SIGNATURES}\n"
                f"Keyword argument '{next(iter(kwargs))}' cannot be specified"
            )
        if len(args) > 1:
            raise RuntimeError(
                f"{cls!r}.__new__ received an invalid combination of arguments. {_SIGNATURES}\n"
                f"Too many positional arguments"
            )
        if not args:
            values = jnp.zeros(0, cls.dtype.np)
        elif isinstance(args[0], int) and not isinstance(args[0], bool):
            values = jnp.zeros(args[0], cls.dtype.np)
        elif isinstance(args[0], Sequence) and not isinstance(args[0], str):
            values = jnp.asarray(list(args[0]), cls.dtype.np).reshape(-1)
        else:
            raise TypeError(f"new(): invalid data type '{type(args[0]).__name__}'")
        return TypedStorage(Storage(values))


def _legacy_class(d: _dtypes.dtype) -> type:
    name = _dtypes.legacy_type_name(d).replace("Tensor", "Storage")
    doc = (
        f"torch's legacy ``{name}``: ``{name}(size)`` or ``{name}(sequence)`` builds a "
        f"``TypedStorage`` of ``{d}``.\n\n    >>> import jaxgrad\n    >>> jaxgrad.{name}.dtype"
        f"\n    {d}\n    "
    )
    cls = _LegacyStorageMeta(
        name, (_LegacyStorage,), {"__doc__": doc, "dtype": d, "__module__": "jaxgrad"}
    )
    return cls


LEGACY_STORAGES: dict[str, type] = {
    cls.__name__: cls for cls in map(_legacy_class, _dtypes.ALL_DTYPES)
}

BFloat16Storage = LEGACY_STORAGES["BFloat16Storage"]
BoolStorage = LEGACY_STORAGES["BoolStorage"]
ByteStorage = LEGACY_STORAGES["ByteStorage"]
CharStorage = LEGACY_STORAGES["CharStorage"]
ComplexDoubleStorage = LEGACY_STORAGES["ComplexDoubleStorage"]
ComplexFloatStorage = LEGACY_STORAGES["ComplexFloatStorage"]
DoubleStorage = LEGACY_STORAGES["DoubleStorage"]
FloatStorage = LEGACY_STORAGES["FloatStorage"]
HalfStorage = LEGACY_STORAGES["HalfStorage"]
IntStorage = LEGACY_STORAGES["IntStorage"]
LongStorage = LEGACY_STORAGES["LongStorage"]
ShortStorage = LEGACY_STORAGES["ShortStorage"]


def storage_type(d: _dtypes.dtype) -> type:
    """The legacy storage class of dtype ``d`` (``Tensor.storage_type()``).

    >>> import jaxgrad
    >>> from jaxgrad._core.legacy_storage import storage_type
    >>> storage_type(jaxgrad.int64)
    <class 'jaxgrad.LongStorage'>
    """
    return LEGACY_STORAGES[_dtypes.legacy_type_name(d).replace("Tensor", "Storage")]
