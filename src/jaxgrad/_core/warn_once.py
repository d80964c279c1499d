"""torch's TORCH_WARN_ONCE: warnings given once per process, unless ``set_warn_always(True)``.

Every jaxgrad warning torch gives once goes through :func:`warn_once`, so the one switch
(``jaxgrad.set_warn_always``, as ``torch.set_warn_always``) turns all of them into warnings
given on every occurrence. This module imports nothing from jaxgrad.
"""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # jaxgrad/


class _WarnOnceState:
    __slots__ = ("always", "given")

    def __init__(self) -> None:
        self.always = False
        self.given: set[str] = set()


_state = _WarnOnceState()


def _first_caller_outside_jaxgrad() -> int:
    """The ``stacklevel`` (as ``warnings.warn`` counts from its caller's caller) of the first
    frame whose code is not in the jaxgrad package: the user's line, however deep the op."""
    frame, level = sys._getframe(2), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def warn_once(message: str, category: type[Warning] = UserWarning,
              stacklevel: int | None = None) -> None:
    """Warn ``message`` the first time it occurs in this process (every time while
    ``set_warn_always(True)``). ``stacklevel`` counts as ``warnings.warn``'s does from the
    function calling this one; by default the warning points at the first line outside jaxgrad.

    >>> import warnings
    >>> from jaxgrad._core.warn_once import warn_once
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
    if stacklevel is None:
        stacklevel = _first_caller_outside_jaxgrad()
    warnings.warn(message, category, stacklevel=stacklevel + 1)


def warn_at_user_line(message: str, category: type[Warning] = UserWarning) -> None:
    """Warn every time, pointing at the first line outside jaxgrad (where torch's warnings from
    its C++ engine point: the user's ``backward()`` call).

    >>> import warnings
    >>> from jaxgrad._core.warn_once import warn_at_user_line
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_at_user_line("shown at this line (doctest)")
    >>> caught[0].filename.startswith("<doctest")
    True
    """
    warnings.warn(message, category, stacklevel=_first_caller_outside_jaxgrad() + 1)


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
