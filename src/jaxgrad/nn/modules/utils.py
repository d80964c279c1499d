"""Argument helpers shared by the layers (torch's ``nn.modules.utils``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def _ntuple(value: Any, n: int) -> tuple[Any, ...]:
    """``value`` as a tuple: an iterable is converted as is, a scalar repeated ``n`` times.

    >>> from jaxgrad.nn.modules.utils import _ntuple
    >>> _ntuple(3, 2), _ntuple([1, 2], 2)
    ((3, 3), (1, 2))
    """
    if isinstance(value, Iterable):
        return tuple(value)
    return (value,) * n
