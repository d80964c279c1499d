"""``torch.autograd.gradcheck``: ``gradcheck``, ``gradgradcheck`` and ``GradcheckError``.

As in torch, ``jaxgrad.autograd.gradcheck`` is the *function* (the package re-exports it over
this module's name), while ``from jaxgrad.autograd.gradcheck import GradcheckError`` imports
from this module.
"""

from .._gradcheck import GradcheckError as GradcheckError
from .._gradcheck import gradcheck as gradcheck
from .._gradcheck import gradgradcheck as gradgradcheck
