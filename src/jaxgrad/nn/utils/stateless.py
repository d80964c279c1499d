"""``jaxgrad.nn.utils.stateless.functional_call``: torch's deprecated spelling of
``jaxgrad.func.functional_call`` (``torch.nn.utils.stateless``)."""

from __future__ import annotations

import warnings
from typing import Any

from ..._core.tensor import Tensor
from ..._func.functional_call import functional_call as _functional_call
from ..modules.module import Module
from ..parallel import DataParallel

__all__ = ["functional_call"]

_DEPRECATED = (
    "`jaxgrad.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
    "and will be removed in a future version of PyTorch. Please use "
    "`jaxgrad.func.functional_call` instead which is a drop-in replacement."
)


def functional_call(
    module: Module,
    parameters_and_buffers: dict[str, Tensor],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """Deprecated (with torch's FutureWarning): call ``module`` with its parameters and
    buffers replaced by ``parameters_and_buffers``, as ``jaxgrad.func.functional_call``.

    >>> import jaxgrad, warnings
    >>> from jaxgrad.nn.utils import stateless
    >>> lin = jaxgrad.nn.Linear(2, 1)
    >>> params = {"weight": jaxgrad.ones(1, 2), "bias": jaxgrad.zeros(1)}
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     stateless.functional_call(lin, params, jaxgrad.tensor([[1.0, 2.0]]))
    tensor([[3.]])
    """
    warnings.warn(_DEPRECATED, FutureWarning, stacklevel=2)
    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    return _functional_call(
        module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict
    )
