"""``torch.memory_format`` and its four values (``jaxgrad.contiguous_format``, ...).

JAX arrays have no user-visible strides, so jaxgrad keeps every value in the default
(row-major) order: the formats are accepted wherever torch takes one and name the layout asked
for; a tensor's own strides (``Tensor.stride()``) are those of its storage view.
"""

from __future__ import annotations

from .typename import public_path


class NamedConstant:
    """A torch enum-like value that is a ``jaxgrad`` module constant: printed and pickled by its
    name (unpickling gives the constant back)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"jaxgrad.{self._name}"

    def __reduce__(self) -> str:
        return self._name


@public_path("jaxgrad")  # torch prints <class 'torch.memory_format'>
class memory_format(NamedConstant):
    """A memory layout name, as ``torch.memory_format`` (its instances are module constants).

    >>> import jaxgrad
    >>> jaxgrad.channels_last, isinstance(jaxgrad.contiguous_format, jaxgrad.memory_format)
    (jaxgrad.channels_last, True)
    """

    __slots__ = ()


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
