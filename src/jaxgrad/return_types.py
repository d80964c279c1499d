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
