"""``jaxgrad.nn.utils.weight_norm`` / ``remove_weight_norm``: the deprecated hook form of weight
normalisation (``torch.nn.utils.weight_norm``): parameters ``<name>_g`` and ``<name>_v``, and a
forward pre-hook that recomputes ``<name>`` before every call.
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from .._functional.normalization import _weight_norm, norm_except_dim
from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]

_DEPRECATED = (
    "`torch.nn.utils.weight_norm` is deprecated in favor of "
    "`torch.nn.utils.parametrizations.weight_norm`."
)


class WeightNorm:
    """The forward pre-hook of :func:`weight_norm`: ``<name> = g * v / ||v||``.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils.weight_norm import WeightNorm
    >>> lin = jaxgrad.nn.Linear(2, 2)
    >>> lin.weight_g = jaxgrad.nn.Parameter(jaxgrad.ones(2, 1))
    >>> lin.weight_v = jaxgrad.nn.Parameter(jaxgrad.tensor([[3.0, 4.0], [0.0, 2.0]]))
    >>> WeightNorm("weight", 0).compute_weight(lin)
    tensor([[0.6000, 0.8000],
            [0.0000, 1.0000]], grad_fn=<WeightNormInterfaceBackward0>)
    """

    name: str
    dim: int

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Any:
        """``g * v / ||v||`` from the module's ``<name>_g`` and ``<name>_v``."""
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        """Split ``module.<name>`` into ``<name>_g``/``<name>_v`` and register the hook (with
        torch's deprecation warning)."""
        warnings.warn(_DEPRECATED.replace("torch", "jaxgrad"), FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized "
                "parameters. Make sure to run the dummy forward before applying "
                "weight normalization"
            )
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        """Put back ``module.<name>`` as a parameter holding the current normalised weight."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


T_module = TypeVar("T_module", bound=Module)


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Deprecated: reparametrize ``module.<name>`` as ``g * v / ||v||`` with parameters
    ``<name>_g`` and ``<name>_v`` and a forward pre-hook (use
    ``parametrizations.weight_norm``).

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     lin = jaxgrad.nn.utils.weight_norm(jaxgrad.nn.Linear(3, 2))
    >>> [name for name, _ in lin.named_parameters()]
    ['bias', 'weight_g', 'weight_v']
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo :func:`weight_norm`: ``<name>`` is a parameter again.

    >>> import jaxgrad, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     lin = jaxgrad.nn.utils.weight_norm(jaxgrad.nn.Linear(3, 2))
    >>> lin = jaxgrad.nn.utils.remove_weight_norm(lin)
    >>> [name for name, _ in lin.named_parameters()]
    ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
