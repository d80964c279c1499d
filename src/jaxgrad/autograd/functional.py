"""``torch.autograd.functional``: ``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``, ``vhp``."""

from .._functional import hessian as hessian
from .._functional import hvp as hvp
from .._functional import jacobian as jacobian
from .._functional import jvp as jvp
from .._functional import vhp as vhp
from .._functional import vjp as vjp
