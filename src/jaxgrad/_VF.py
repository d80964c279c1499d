"""``jaxgrad._VF``: torch's ``torch._VF``, the native functions behind torch's Python-level
ones (``_VF.unique_dim``, which torch keeps out of its own namespace, and the native
``_VF.unique_consecutive``, which returns all three outputs); every other declared op by its
name.

>>> import jaxgrad
>>> jaxgrad._VF.unique_dim(jaxgrad.tensor([[2, 2], [1, 1]]), 0)[0]
tensor([[1, 1],
        [2, 2]])
"""

from __future__ import annotations

from typing import Any

from ._functions import sorting
from ._functions.catalog import FUNCTIONS

_NATIVE = {"unique_dim": sorting.unique_dim,
           "unique_consecutive": sorting.unique_consecutive_native}


def __getattr__(name: str) -> Any:
    if name in _NATIVE:
        return _NATIVE[name]
    if name in FUNCTIONS:
        return FUNCTIONS[name]
    raise AttributeError(f"module 'jaxgrad._VF' has no attribute {name!r}")
