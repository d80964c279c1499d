"""``jaxgrad.backends.mha``: torch's switch for the fast path of ``nn.MultiheadAttention`` and
``nn.TransformerEncoder``/``TransformerEncoderLayer`` (eval mode, no gradient needed).

jaxgrad reproduces what that path changes for a user: masks read as booleans, causal hints
ignored, NaN rows where every key is masked, zeros at the padded positions of the encoder's
nested-tensor route. With the switch off, every call takes the ordinary composition.

>>> import jaxgrad
>>> jaxgrad.backends.mha.get_fastpath_enabled()
True
"""

from __future__ import annotations

__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]

_is_fastpath_enabled: bool = True


def get_fastpath_enabled() -> bool:
    """Whether the fast path of ``MultiheadAttention`` and ``TransformerEncoder`` may be taken
    (it still is only when the inputs and modules meet its conditions).

    >>> import jaxgrad
    >>> jaxgrad.backends.mha.get_fastpath_enabled()
    True
    """
    return _is_fastpath_enabled


def set_fastpath_enabled(value: bool) -> None:
    """Allow (``True``) or forbid the fast path of ``MultiheadAttention`` and
    ``TransformerEncoder``.

    >>> import jaxgrad
    >>> jaxgrad.backends.mha.set_fastpath_enabled(False)
    >>> jaxgrad.backends.mha.get_fastpath_enabled()
    False
    >>> jaxgrad.backends.mha.set_fastpath_enabled(True)
    """
    global _is_fastpath_enabled
    _is_fastpath_enabled = value
