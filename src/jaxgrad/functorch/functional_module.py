"""functorch's module API, kept by torch 2.13 as deprecated: ``make_functional``,
``make_functional_with_buffers`` and ``combine_state_for_ensemble`` turn a module into a function
of its parameters (and buffers), for ``jaxgrad.func`` transforms over them.

The returned ``FunctionalModule`` holds a deep copy of the model. Where torch leaves meta tensors
in that copy, jaxgrad leaves the extracted tensors themselves (there is no meta device); every
call swaps the given tensors in for the call and the previous ones back after it, as torch's does.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from .._core.tensor import Tensor
from .._func.functional_call import _swap
from .._functions.joins import stack
from ..nn import Module

__all__ = ["FunctionalModule", "FunctionalModuleWithBuffers", "combine_state_for_ensemble",
           "make_functional", "make_functional_with_buffers"]


def _tied_names(unique: Sequence[tuple[str, Tensor]],
                every: Sequence[tuple[str, Tensor]]) -> dict[str, list[str]]:
    """Each unique member's name -> every name it is reachable by (tied weights share one)."""
    names: dict[int, list[str]] = {id(t): [] for _, t in unique}
    for name, t in every:
        names[id(t)].append(name)
    return {name: names[id(t)] for name, t in unique}


def _extract(named_members: Any) -> tuple[tuple[Tensor, ...], tuple[str, ...],
                                          dict[str, list[str]]]:
    unique = tuple(named_members(remove_duplicate=True))
    names_map = _tied_names(unique, tuple(named_members(remove_duplicate=False)))
    return tuple(t for _, t in unique), tuple(n for n, _ in unique), names_map


def _swap_state(model: Module, names_map: dict[str, list[str]],
                tensors: Iterable[Tensor]) -> list[Tensor]:
    """Put each tensor at every name of its member; return what the first name held."""
    previous = []
    for names, tensor in zip(names_map.values(), tensors):
        previous.append(_swap(model, names[0], tensor))
        for name in names[1:]:
            _swap(model, name, tensor)
    return previous


class FunctionalModuleWithBuffers(Module):
    """The callable :func:`make_functional_with_buffers` returns:
    ``fmodel(params, buffers, *args, **kwargs)``."""

    def __init__(self, stateless_model: Module, param_names: tuple[str, ...],
                 buffer_names: tuple[str, ...], param_names_map: dict[str, list[str]],
                 buffer_names_map: dict[str, list[str]]) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names
        self.all_names_map = {**param_names_map, **buffer_names_map}

    @staticmethod
    def _create_from(model: Module, disable_autograd_tracking: bool = False
                     ) -> tuple[FunctionalModuleWithBuffers, tuple[Tensor, ...],
                                tuple[Tensor, ...]]:
        model_copy = copy.deepcopy(model)
        params, param_names, param_names_map = _extract(model_copy.named_parameters)
        buffers, buffer_names, buffer_names_map = _extract(model_copy.named_buffers)
        if disable_autograd_tracking:
            for param in params:
                param.requires_grad_(False)
        fmodel = FunctionalModuleWithBuffers(model_copy, param_names, buffer_names,
                                             param_names_map, buffer_names_map)
        return fmodel, params, buffers

    def forward(self, params: Iterable[Tensor], buffers: Iterable[Tensor], *args: Any,
                **kwargs: Any) -> Any:
        old = _swap_state(self.stateless_model, self.all_names_map,
                          tuple(params) + tuple(buffers))
        try:
            return self.stateless_model(*args, **kwargs)
        finally:
            _swap_state(self.stateless_model, self.all_names_map, old)


class FunctionalModule(Module):
    """The callable :func:`make_functional` returns: ``fmodel(params, *args, **kwargs)``."""

    def __init__(self, stateless_model: Module, param_names: tuple[str, ...],
                 names_map: dict[str, list[str]]) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.names_map = names_map

    @staticmethod
    def _create_from(model: Module, disable_autograd_tracking: bool = False
                     ) -> tuple[FunctionalModule, tuple[Tensor, ...]]:
        model_copy = copy.deepcopy(model)
        params, param_names, names_map = _extract(model_copy.named_parameters)
        if disable_autograd_tracking:
            for param in params:
                param.requires_grad_(False)
        return FunctionalModule(model_copy, param_names, names_map), params

    def forward(self, params: Iterable[Tensor], *args: Any, **kwargs: Any) -> Any:
        old = _swap_state(self.stateless_model, self.names_map, params)
        try:
            return self.stateless_model(*args, **kwargs)
        finally:
            _swap_state(self.stateless_model, self.names_map, old)


def make_functional(model: Module, disable_autograd_tracking: bool = False
                    ) -> tuple[FunctionalModule, tuple[Tensor, ...]]:
    """``(fmodel, params)``: a copy of ``model`` as a function of its parameters, and the
    parameters (torch's ``functorch.make_functional``; tied parameters appear once).
    ``disable_autograd_tracking=True`` returns them with ``requires_grad=False``.

    >>> import jaxgrad
    >>> from jaxgrad.functorch.functional_module import make_functional
    >>> from jaxgrad.func import grad
    >>> fmodel, params = make_functional(jaxgrad.nn.Linear(3, 1))
    >>> loss = lambda params, x: fmodel(params, x).sum()
    >>> [g.shape for g in grad(loss)(params, jaxgrad.ones(2, 3))]
    [jaxgrad.Size([1, 3]), jaxgrad.Size([1])]
    """
    if any(True for _ in model.buffers()):
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    return FunctionalModule._create_from(model, disable_autograd_tracking)


def make_functional_with_buffers(model: Module, disable_autograd_tracking: bool = False
                                 ) -> tuple[FunctionalModuleWithBuffers, tuple[Tensor, ...],
                                            tuple[Tensor, ...]]:
    """``(fmodel, params, buffers)``: a copy of ``model`` as a function of its parameters and
    buffers, called ``fmodel(params, buffers, *args)`` (torch's
    ``functorch.make_functional_with_buffers``).

    >>> import jaxgrad
    >>> from jaxgrad.functorch.functional_module import make_functional_with_buffers
    >>> fmodel, params, buffers = make_functional_with_buffers(jaxgrad.nn.BatchNorm1d(2))
    >>> len(params), len(buffers)
    (2, 3)
    >>> fmodel(params, buffers, jaxgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[-1.0000, -1.0000],
            [ 1.0000,  1.0000]], grad_fn=<NativeBatchNormBackward0>)
    """
    return FunctionalModuleWithBuffers._create_from(model, disable_autograd_tracking)


def combine_state_for_ensemble(models: Sequence[Module]
                               ) -> tuple[FunctionalModuleWithBuffers, tuple[Tensor, ...],
                                          tuple[Tensor, ...]]:
    """``(fmodel, params, buffers)`` for ``vmap`` over an ensemble of same-class ``models``:
    each parameter and buffer stacked along a new first dimension, detached (torch's
    ``functorch.combine_state_for_ensemble``).

    >>> import jaxgrad
    >>> from jaxgrad.functorch.functional_module import combine_state_for_ensemble
    >>> from jaxgrad.func import vmap
    >>> fmodel, params, buffers = combine_state_for_ensemble(
    ...     [jaxgrad.nn.Linear(3, 2) for _ in range(4)])
    >>> vmap(fmodel, (0, 0, None))(params, buffers, jaxgrad.ones(5, 3)).shape
    jaxgrad.Size([4, 5, 2])
    """
    if len(models) == 0:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same "
                           "class.")
    funcs, params, buffers = zip(*[make_functional_with_buffers(m) for m in models])
    return funcs[0], _stacked(params), _stacked(buffers)


def _stacked(per_model: tuple[tuple[Tensor, ...], ...]) -> tuple[Tensor, ...]:
    return tuple(stack(shards).detach() for shards in zip(*per_model))
