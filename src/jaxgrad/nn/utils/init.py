"""``jaxgrad.nn.utils.skip_init``: build a module without running its parameter
initialisation (``torch.nn.utils.skip_init``)."""

from __future__ import annotations

import inspect
from typing import Any, TypeVar

from ..._core.grad_mode import no_grad
from ..._core.tensor import Tensor
from ..._functions.creation import empty_like
from ..._functions.random import get_rng_state, set_rng_state
from ..modules.module import Module

__all__ = ["skip_init"]

_M = TypeVar("_M", bound=Module)


def skip_init(module_cls: type[_M], *args: Any, **kwargs: Any) -> _M:
    """An instance of ``module_cls(*args, **kwargs)`` whose parameters and buffers are left
    uninitialised (``empty_like``: zeros here), without drawing from the random generator.
    The class must take a ``device`` argument.

    torch builds the module on the meta device and then calls ``to_empty``; jaxgrad has no
    meta device, so it builds the module normally with the generator's state restored
    afterwards, then replaces every tensor by an empty one, as ``to_empty`` does.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils import skip_init
    >>> skip_init(jaxgrad.nn.Linear, 2, 3).weight.shape
    jaxgrad.Size([3, 2])
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = final_device
    state = get_rng_state()
    try:
        module = module_cls(*args, **kwargs)
    finally:
        set_rng_state(state)

    def empty(t: Tensor) -> Tensor:
        return empty_like(t, device=final_device)

    with no_grad():
        return module._apply(empty)
