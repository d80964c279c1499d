"""``functorch.experimental``: the transforms torch 2.13 still exports from it, without
deprecation warnings (``jaxgrad.func``'s own functions).

>>> import jaxgrad
>>> from jaxgrad.functorch.experimental import jacfwd
>>> jacfwd(jaxgrad.sin)(jaxgrad.tensor(0.0))
tensor(1.)
"""

from ...func import functionalize as functionalize
from ...func import hessian as hessian
from ...func import jacfwd as jacfwd
from ...func import jvp as jvp
from ...func import replace_all_batch_norm_modules_ as replace_all_batch_norm_modules_

__all__ = ["functionalize", "hessian", "jacfwd", "jvp", "replace_all_batch_norm_modules_"]
