"""The named tuples returned by ``max``/``min`` along a dim, ``sort``, ``topk``... (torch's
structseqs ``torch.return_types.max``...), shown at their public path ``jaxgrad.return_types``."""

from __future__ import annotations

from typing import Any

from .typename import public_path

_PUBLIC = "jaxgrad.return_types"


class _ValuesIndices(tuple):
    """A ``(values, indices)`` pair with named fields."""

    __slots__ = ()

    def __new__(cls, values: Any, indices: Any) -> _ValuesIndices:
        return super().__new__(cls, (values, indices))

    @property
    def values(self) -> Any:
        return self[0]

    @property
    def indices(self) -> Any:
        return self[1]

    def __repr__(self) -> str:
        return (f"jaxgrad.return_types.{type(self).__name__}(\nvalues={self[0]!r},\n"
                f"indices={self[1]!r})")


@public_path(_PUBLIC)
class max(_ValuesIndices):
    """The result of ``max(input, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class min(_ValuesIndices):
    """The result of ``min(input, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class sort(_ValuesIndices):
    """The result of ``sort(input)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class topk(_ValuesIndices):
    """The result of ``topk(input, k)``."""

    __slots__ = ()



@public_path(_PUBLIC)
class cummax(_ValuesIndices):
    """The result of ``cummax(input, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class cummin(_ValuesIndices):
    """The result of ``cummin(input, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class median(_ValuesIndices):
    """The result of ``median(input, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class nanmedian(_ValuesIndices):
    """The result of ``nanmedian(input, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class kthvalue(_ValuesIndices):
    """The result of ``kthvalue(input, k, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class mode(_ValuesIndices):
    """The result of ``mode(input, dim)``."""

    __slots__ = ()


@public_path(_PUBLIC)
class aminmax(tuple):
    """The result of ``aminmax(input)``: a ``(min, max)`` pair with named fields."""

    __slots__ = ()

    def __new__(cls, min: Any, max: Any) -> aminmax:
        return super().__new__(cls, (min, max))

    @property
    def min(self) -> Any:
        return self[0]

    @property
    def max(self) -> Any:
        return self[1]

    def __repr__(self) -> str:
        return f"jaxgrad.return_types.aminmax(\nmin={self[0]!r},\nmax={self[1]!r})"
