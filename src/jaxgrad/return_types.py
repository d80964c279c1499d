"""``jaxgrad.return_types``: the named tuples returned by ``max``/``min`` along a dim (torch's
structseqs ``torch.return_types.max``/``min``/``sort``/``topk``)."""

from __future__ import annotations

from typing import Any


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


class max(_ValuesIndices):
    """The result of ``max(input, dim)``."""

    __slots__ = ()


class min(_ValuesIndices):
    """The result of ``min(input, dim)``."""

    __slots__ = ()


class sort(_ValuesIndices):
    """The result of ``sort(input)``."""

    __slots__ = ()


class topk(_ValuesIndices):
    """The result of ``topk(input, k)``."""

    __slots__ = ()


# --- reductions and indexing (issue 10) ---

class cummax(_ValuesIndices):
    """The result of ``cummax(input, dim)``."""

    __slots__ = ()


class cummin(_ValuesIndices):
    """The result of ``cummin(input, dim)``."""

    __slots__ = ()


class median(_ValuesIndices):
    """The result of ``median(input, dim)``."""

    __slots__ = ()


class nanmedian(_ValuesIndices):
    """The result of ``nanmedian(input, dim)``."""

    __slots__ = ()


class kthvalue(_ValuesIndices):
    """The result of ``kthvalue(input, k, dim)``."""

    __slots__ = ()


class mode(_ValuesIndices):
    """The result of ``mode(input, dim)``."""

    __slots__ = ()


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
