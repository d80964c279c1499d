"""``torch.autograd.functional``: ``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``, ``vhp``."""

from .._autograd.functional import _construct_standard_basis_for as _construct_standard_basis_for
from .._autograd.functional import hessian as hessian
from .._autograd.functional import hvp as hvp
from .._autograd.functional import jacobian as jacobian
from .._autograd.functional import jvp as jvp
from .._autograd.functional import vhp as vhp
from .._autograd.functional import vjp as vjp
