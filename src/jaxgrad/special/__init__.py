"""``torch.special``: the special functions jaxgrad has, under torch's names.

>>> import jaxgrad
>>> jaxgrad.special.gammaincc(jaxgrad.tensor([1.0]), jaxgrad.tensor([0.0]))
tensor([1.])
"""

from .._functions import catalog as _catalog  # noqa: F401 - the ops below are declared there
from .._functions.opgen import namespaced_alias

__all__ = ["gammainc", "gammaincc"]

gammainc = namespaced_alias("igamma", "special_gammainc")
gammaincc = namespaced_alias("igammac", "special_gammaincc")
