"""``torch.func.functional_call`` and ``stack_module_state`` for jaxgrad Modules.

``functional_call`` swaps the given tensors into the module's ``_parameters``/``_buffers`` (or
attributes) for one call and restores the originals after it, as torch's
``nn.utils.stateless._reparametrize_module`` and ``NamedMemberAccessor`` do; inside a
``jaxgrad.func`` transform the swapped-in tensors wrap JAX tracers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._core.tensor import Tensor
from .._functions.joins import stack

if TYPE_CHECKING:  # any object with torch's Module protocol works; nn sits above this layer
    from ..nn.modules.module import Module

__all__ = ["functional_call", "stack_module_state"]

_MISSING: Any = object()


def functional_call(module: Module, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Call ``module`` with its parameters and buffers replaced by the given tensors
    (torch.func.functional_call); the module's own tensors are restored afterwards.

    >>> import jaxgrad
    >>> from jaxgrad.func import functional_call
    >>> lin = jaxgrad.nn.Linear(2, 1)
    >>> params = {"weight": jaxgrad.ones(1, 2), "bias": jaxgrad.zeros(1)}
    >>> functional_call(lin, params, (jaxgrad.tensor([[1.0, 2.0]]),))
    tensor([[3.]])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        given = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        given = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    tensors = _untie(module, given) if tie_weights else given
    if strict:
        _check_keys(module, tensors)
    originals = _swap_all(module, tensors)
    try:
        return module(*args, **kwargs)
    finally:
        _swap_all(module, originals)


def _named_tensors(module: Module) -> dict[str, Tensor]:
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    return named


def _untie(module: Module, given: dict[str, Tensor]) -> dict[str, Tensor]:
    """torch's ``_untie_named_tensors_map``: a value given for one of several tied names is used
    for all of them."""
    by_tensor: dict[int, set[str]] = {}
    for name, t in _named_tensors(module).items():
        by_tensor.setdefault(id(t), set()).add(name)
    tied = {n: names for names in by_tensor.values() if len(names) > 1 for n in names}
    given_tied = {n for n in given if n in tied}
    for n in given_tied:
        names = tied[n]
        if len(names & given_tied) > 1 and len({id(given[m]) for m in names if m in given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    out = dict(given)
    for n in given_tied:
        for m in tied[n]:
            out[m] = given[n]
    return out


def _check_keys(module: Module, tensors: dict[str, Tensor]) -> None:
    valid = set(_named_tensors(module))
    missing, unexpected = sorted(valid - set(tensors)), sorted(set(tensors) - valid)
    errors = []
    if unexpected:
        errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if errors:
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
            module._get_name(), "\n\t".join(errors)))


def _submodule(module: Module, path: str) -> Module:
    for attr in path.split(".") if path else ():
        try:
            module = getattr(module, attr)
        except AttributeError as ex:
            raise AttributeError(f"{module._get_name()} has no attribute `{attr}`") from ex
    return module


def _swap(module: Module, name: str, tensor: Any) -> Any:
    """Put ``tensor`` at ``name`` (``_MISSING``: remove it); return what was there."""
    prefix, _, attr = name.rpartition(".")
    owner = _submodule(module, prefix)
    for registry in (owner._parameters, owner._buffers):
        if attr in registry:
            orig = registry[attr]
            if tensor is _MISSING:
                del registry[attr]
            else:
                registry[attr] = tensor
            return orig
    orig = getattr(owner, attr) if hasattr(owner, attr) else _MISSING
    if tensor is not _MISSING:
        setattr(owner, attr, tensor)
    elif hasattr(owner, attr):
        delattr(owner, attr)
    return orig


def _swap_all(module: Module, tensors: dict[str, Any]) -> dict[str, Any]:
    done: dict[str, Any] = {}
    try:
        for name, t in tensors.items():
            done[name] = _swap(module, name, t)
    except Exception:
        for name, t in done.items():
            _swap(module, name, t)
        raise
    return done


def stack_module_state(models: Sequence[Module]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The parameters and buffers of same-class ``models`` stacked along a new first dimension
    (torch.func.stack_module_state), for ``vmap`` over an ensemble.

    >>> import jaxgrad
    >>> from jaxgrad.func import stack_module_state
    >>> params, buffers = stack_module_state([jaxgrad.nn.Linear(3, 2) for _ in range(4)])
    >>> params["weight"].shape, params["weight"].is_leaf, buffers
    (jaxgrad.Size([4, 2, 3]), True, {})
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = [dict(m.named_parameters()) for m in models]
    buffers = [dict(m.named_buffers()) for m in models]
    return ({k: _stacked_leaf([p[k] for p in params], k) for k in params[0]},
            {k: _stacked_leaf([b[k] for b in buffers], k) for k in buffers[0]})


def _stacked_leaf(tensors: list[Tensor], name: str) -> Tensor:
    flags = {t.requires_grad for t in tensors}
    if len(flags) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    return result.detach().requires_grad_() if True in flags else result
