"""``jaxgrad.backends.mps``: Apple's Metal backend, which JAX (and so jaxgrad) does not run on.

>>> import jaxgrad
>>> jaxgrad.backends.mps.is_available(), jaxgrad.backends.mps.is_built()
(False, False)
"""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_built() -> bool:
    """Whether jaxgrad was built with MPS support: False (as torch's CPU build).

    >>> import jaxgrad
    >>> jaxgrad.backends.mps.is_built()
    False
    """
    return False


def is_available() -> bool:
    """Whether an MPS device can be used: False (as torch's CPU build).

    >>> import jaxgrad
    >>> jaxgrad.backends.mps.is_available()
    False
    """
    return False
