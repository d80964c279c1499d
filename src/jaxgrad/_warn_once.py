"""torch's TORCH_WARN_ONCE: warnings given once per process, unless ``set_warn_always(True)``.

Every jaxgrad warning torch gives once goes through :func:`warn_once`, so the one switch
(``jaxgrad.set_warn_always``, as ``torch.set_warn_always``) turns all of them into warnings
given on every occurrence. This module imports nothing from jaxgrad.
"""

from __future__ import annotations

import warnings


class _WarnOnceState:
    __slots__ = ("always", "given")

    def __init__(self) -> None:
        self.always = False
        self.given: set[str] = set()


_state = _WarnOnceState()


def warn_once(message: str, category: type[Warning] = UserWarning, stacklevel: int = 2) -> None:
    """Warn ``message`` the first time it occurs in this process (every time while
    ``set_warn_always(True)``).

    >>> import warnings
    >>> from jaxgrad._warn_once import warn_once
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     for _ in range(3):
    ...         warn_once("only the first of these is shown (doctest)")
    >>> len(caught)
    1
    """
    if message in _state.given and not _state.always:
        return
    _state.given.add(message)
    warnings.warn(message, category, stacklevel=stacklevel + 1)


def set_warn_always(b: bool) -> None:
    """When True, warnings jaxgrad gives once per process (torch's TORCH_WARN_ONCE) are given
    every time, as ``torch.set_warn_always``.

    >>> import jaxgrad
    >>> jaxgrad.set_warn_always(True); jaxgrad.is_warn_always_enabled()
    True
    >>> jaxgrad.set_warn_always(False)
    """
    _state.always = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether :func:`set_warn_always` is on (``torch.is_warn_always_enabled``).

    >>> import jaxgrad
    >>> jaxgrad.is_warn_always_enabled()
    False
    """
    return _state.always
