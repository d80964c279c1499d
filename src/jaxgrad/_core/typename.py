"""The type names Python's C API prints in error messages (no jaxgrad imports: layer 0)."""

from __future__ import annotations

from typing import Any

_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python, printed by bare name


def type_name(obj: Any) -> str:
    """The type name Python's C API prints: module-qualified for types defined in C.

    >>> from jaxgrad._core.typename import type_name
    >>> import numpy as np
    >>> type_name(3), type_name(np.float32(1))
    ('int', 'numpy.float32')
    """
    t = type(obj)
    if t.__module__ == "builtins" or t.__flags__ & _HEAPTYPE:
        return t.__name__
    return f"{t.__module__}.{t.__name__}"
