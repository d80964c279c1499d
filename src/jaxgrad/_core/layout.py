"""``torch.layout`` and its values (``jaxgrad.strided``, ``jaxgrad.sparse_coo``, ...).

Every jaxgrad tensor is dense: its layout is ``strided``. The sparse and jagged layouts exist as
torch's names, so code that compares against them or passes ``layout=jaxgrad.strided`` runs; asking
to create a tensor in one of them is refused (``check_strided``).
"""

from __future__ import annotations

from typing import Any

from .memory_format import NamedConstant
from .typename import public_path


@public_path("jaxgrad")  # torch prints <class 'torch.layout'>
class layout(NamedConstant):
    """A tensor memory layout, as ``torch.layout`` (its instances are module constants).

    >>> import jaxgrad
    >>> jaxgrad.zeros(2).layout, jaxgrad.zeros(2).layout == jaxgrad.sparse_coo
    (jaxgrad.strided, False)
    """

    __slots__ = ()


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")
_mkldnn = layout("_mkldnn")


def check_strided(requested: Any) -> None:
    """Refuse a layout other than ``strided`` (``None`` means the default, strided)."""
    if requested is None or requested is strided:
        return
    if not isinstance(requested, layout):
        raise TypeError(f"layout must be jaxgrad.layout, not {type(requested).__name__}")
    raise NotImplementedError(f"jaxgrad tensors are dense: layout={requested!r} is not supported "
                              "(only jaxgrad.strided)")
