"""``functorch``, the package torch 2.13 keeps for programs written before ``torch.func``: the
transforms under their old names (each call warns, as torch's do, pointing at its
``jaxgrad.func`` name) and the module API of ``make_functional``. ``import functorch`` becomes
``import jaxgrad.functorch as functorch``.

>>> import warnings
>>> import jaxgrad
>>> from jaxgrad import functorch
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", FutureWarning)
...     functorch.grad(jaxgrad.sin)(jaxgrad.tensor(0.0))
tensor(1.)
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from .. import func as _func
from .functional_module import FunctionalModule as FunctionalModule
from .functional_module import FunctionalModuleWithBuffers as FunctionalModuleWithBuffers
from .functional_module import combine_state_for_ensemble as _combine_state_for_ensemble
from .functional_module import make_functional as _make_functional
from .functional_module import make_functional_with_buffers as _make_functional_with_buffers

__all__ = ["FunctionalModule", "FunctionalModuleWithBuffers", "combine_state_for_ensemble",
           "functionalize", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "make_functional", "make_functional_with_buffers", "vjp", "vmap"]


def _deprecation_message(api: str, new_api: str) -> str:
    return (f"We've integrated functorch into PyTorch. As the final step of the integration, "
            f"`functorch.{api}` is deprecated as of PyTorch 2.0 and will be deleted in a future "
            f"version of PyTorch >= 2.3. Please use `{new_api}` instead; see the PyTorch 2.0 "
            f"release notes and/or the `torch.func` migration guide for more details "
            f"https://pytorch.org/docs/main/func.migrating.html")


def _deprecated(api: str, implementation: Callable[..., Any], new_api: str) -> Callable[..., Any]:
    """``implementation`` under functorch's name ``api``, warning (FutureWarning) on each call."""

    @functools.wraps(implementation)
    def deprecated(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(_deprecation_message(api, new_api), FutureWarning, stacklevel=2)
        return implementation(*args, **kwargs)

    deprecated.__name__ = deprecated.__qualname__ = api
    return deprecated


vmap = _deprecated("vmap", _func.vmap, "jaxgrad.vmap")
grad = _deprecated("grad", _func.grad, "jaxgrad.func.grad")
grad_and_value = _deprecated("grad_and_value", _func.grad_and_value,
                             "jaxgrad.func.grad_and_value")
vjp = _deprecated("vjp", _func.vjp, "jaxgrad.func.vjp")
jvp = _deprecated("jvp", _func.jvp, "jaxgrad.func.jvp")
jacrev = _deprecated("jacrev", _func.jacrev, "jaxgrad.func.jacrev")
jacfwd = _deprecated("jacfwd", _func.jacfwd, "jaxgrad.func.jacfwd")
hessian = _deprecated("hessian", _func.hessian, "jaxgrad.func.hessian")
functionalize = _deprecated("functionalize", _func.functionalize, "jaxgrad.func.functionalize")
make_functional = _deprecated("make_functional", _make_functional,
                              "jaxgrad.func.functional_call")
make_functional_with_buffers = _deprecated("make_functional_with_buffers",
                                           _make_functional_with_buffers,
                                           "jaxgrad.func.functional_call")
combine_state_for_ensemble = _deprecated("combine_state_for_ensemble",
                                         _combine_state_for_ensemble,
                                         "jaxgrad.func.stack_module_state")
