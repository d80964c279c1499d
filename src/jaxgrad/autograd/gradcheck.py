"""``torch.autograd.gradcheck``: ``gradcheck``, ``gradgradcheck``, ``GradcheckError`` and torch's
Jacobian helpers.

As in torch, ``jaxgrad.autograd.gradcheck`` is the *function* (the package re-exports it over
this module's name), while ``from jaxgrad.autograd.gradcheck import GradcheckError`` imports
from this module.
"""

from .._autograd.gradcheck import GradcheckError as GradcheckError
from .._autograd.gradcheck import get_analytical_jacobian as get_analytical_jacobian
from .._autograd.gradcheck import get_numerical_jacobian as get_numerical_jacobian
from .._autograd.gradcheck import (
    get_numerical_jacobian_wrt_specific_input as get_numerical_jacobian_wrt_specific_input,
)
from .._autograd.gradcheck import gradcheck as gradcheck
from .._autograd.gradcheck import gradgradcheck as gradgradcheck
