"""``jaxgrad.backends.opt_einsum``: torch's switches for contraction-order optimisation in
``einsum``.

``jax.numpy.einsum``, under jaxgrad's ``einsum``, always orders its contractions with opt_einsum
(a dependency of JAX): ``enabled`` and ``strategy`` are stored and read back only.

>>> import jaxgrad
>>> jaxgrad.backends.opt_einsum.is_available(), jaxgrad.backends.opt_einsum.strategy
(True, 'auto')
"""

from __future__ import annotations

from typing import Any

import opt_einsum as _opt_einsum

__all__ = ["is_available", "get_opt_einsum", "enabled", "strategy"]

enabled: bool = True
strategy: str = "auto"


def is_available() -> bool:
    """Whether opt_einsum is installed: True (JAX depends on it).

    >>> import jaxgrad
    >>> jaxgrad.backends.opt_einsum.is_available()
    True
    """
    return True


def get_opt_einsum() -> Any:
    """The ``opt_einsum`` package.

    >>> import jaxgrad
    >>> jaxgrad.backends.opt_einsum.get_opt_einsum().__name__
    'opt_einsum'
    """
    return _opt_einsum
