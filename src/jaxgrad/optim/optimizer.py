"""``Optimizer``: torch's optimizer base class (param groups, per-parameter state, state dicts).

Subclasses compute each step as one jitted JAX function per param group (new parameter and
state arrays from the old ones) and store the results with ``store``, which writes through the
tensors' storage cells and bumps their version counters by as many in-place ops as torch's
single-tensor implementation runs, so ``_version`` and views stay right. With
``differentiable=True`` they instead run torch's single-tensor update as ordinary jaxgrad tensor
ops under grad mode, so autograd records it (meta-learning through the update).

Hooks follow torch: ``step`` is wrapped once per class (``profile_hook_step``) in a
``record_function("Optimizer.step#<Class>.step")`` range that runs the global and per-instance
step pre-hooks, the step, then the per-instance and global post-hooks; ``state_dict`` and
``load_state_dict`` run their own pre- and post-hooks.
"""

from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core.caches import cache
from .._core.dtypes import float32
from .._core.epoch import changed as structure_changed
from .._core.epoch import register_global_hooks
from .._core.grad_mode import enable_grad, set_grad_enabled
from .._core.graph import HookDict, RemovableHandle, add_hook
from .._core.jax_setup import jit, x64_scope
from .._core.tensor import Tensor
from .._engine.accumulate import reset_grad
from .._engine.dispatch import check_inplace
from .._engine.profiling import record_function
from .._functions.pointwise import typename

StateDict = dict[str, Any]
Args = tuple[Any, ...]
Kwargs = dict[str, Any]
StepPreHook = Callable[["Optimizer", Args, Kwargs], "tuple[Args, Kwargs] | None"]
StepPostHook = Callable[["Optimizer", Args, Kwargs], None]

_global_optimizer_pre_hooks: HookDict = HookDict()
_global_optimizer_post_hooks: HookDict = HookDict()
register_global_hooks(_global_optimizer_pre_hooks, _global_optimizer_post_hooks)
_HOOK_DICTS = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
               "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
               "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks")


def register_optimizer_step_pre_hook(hook: StepPreHook) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs)`` to run before every optimizer's ``step``.

    Global pre-hooks run before the optimizer's own; like those, a hook may return
    ``(new_args, new_kwargs)`` to replace the arguments ``step`` gets (``args[0]`` is the
    optimizer itself).

    >>> import jaxgrad
    >>> from jaxgrad.optim.optimizer import register_optimizer_step_pre_hook
    >>> w = jaxgrad.tensor([1.0], requires_grad=True)
    >>> opt = jaxgrad.optim.SGD([w])
    >>> handle = register_optimizer_step_pre_hook(
    ...     lambda o, args, kwargs: print(type(o).__name__, len(args), kwargs))
    >>> opt.step()
    SGD 1 {}
    >>> handle.remove(); opt.step()
    """
    return add_hook(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: StepPostHook) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs)`` to run after every optimizer's ``step``.

    Global post-hooks run after the optimizer's own post-hooks.

    >>> import jaxgrad
    >>> from jaxgrad.optim.optimizer import register_optimizer_step_post_hook
    >>> w = jaxgrad.tensor([1.0], requires_grad=True)
    >>> w.grad = jaxgrad.tensor([1.0])
    >>> opt = jaxgrad.optim.SGD([w], lr=0.5)
    >>> with register_optimizer_step_post_hook(lambda o, args, kwargs: print(w)):
    ...     opt.step()
    tensor([0.5000], requires_grad=True)
    """
    return add_hook(_global_optimizer_post_hooks, hook)


def use_grad_for_differentiable(func: Callable) -> Callable:
    """Run ``step`` with grad mode set to the optimizer's ``differentiable`` default.

    >>> import jaxgrad
    >>> from jaxgrad.optim.optimizer import use_grad_for_differentiable
    >>> class Probe:
    ...     defaults = {"differentiable": False}
    ...     @use_grad_for_differentiable
    ...     def step(self):
    ...         return jaxgrad.is_grad_enabled()
    >>> Probe().step(), jaxgrad.is_grad_enabled()
    (False, True)
    """

    @functools.wraps(func)
    def use_grad(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        with set_grad_enabled(bool(self.defaults["differentiable"])):
            return func(self, *args, **kwargs)

    return use_grad


class _RequiredParameter:
    """Marks a hyper-parameter every param group must give (torch's ``optim.required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def host_float(value: float | Tensor) -> float:
    """A hyper-parameter (a number or a one-element tensor) as a Python float.

    >>> import jaxgrad
    >>> from jaxgrad.optim.optimizer import host_float
    >>> host_float(jaxgrad.tensor([0.5])), host_float(1)
    (0.5, 1.0)
    """
    return float(value.item() if isinstance(value, Tensor) else value)


def hyper_vector(values: Iterable[float | Tensor | jax.Array]) -> Any:
    """Hyper-parameters as one float64 vector for an update kernel: a numpy array of Python
    floats, or a traced vector when one is traced (a learning rate under ``jaxgrad.compile``).

    >>> import jaxgrad
    >>> from jaxgrad.optim.optimizer import hyper_vector
    >>> hyper_vector([0.1, jaxgrad.tensor([0.5])]).tolist()
    [0.1, 0.5]
    """
    values = [v._value.reshape(()) if isinstance(v, Tensor) else v for v in values]
    if not any(isinstance(v, jax.core.Tracer) for v in values):
        return np.array([float(v) for v in values])
    with x64_scope():
        return jnp.stack([jnp.asarray(v, jnp.float64) for v in values])


def to_scalar(value: Any) -> Any:
    """A one-element tensor hyper-parameter squeezed to 0-d; anything else unchanged.

    >>> import jaxgrad
    >>> from jaxgrad.optim.optimizer import to_scalar
    >>> to_scalar(jaxgrad.tensor([0.5])), to_scalar(0.1)
    (tensor(0.5000), 0.1)
    """
    if isinstance(value, Tensor) and value.dim() != 0:
        return value.squeeze()
    return value


def store(tensor: Tensor, array: jax.Array, inplace_ops: int) -> None:
    """Write ``array`` into ``tensor`` as ``inplace_ops`` of torch's in-place ops would.

    >>> import jax.numpy as jnp
    >>> import jaxgrad
    >>> from jaxgrad.optim.optimizer import store
    >>> t = jaxgrad.zeros(2)
    >>> store(t, jnp.ones(2, dtype=jnp.float32), inplace_ops=2)
    >>> t, t._version
    (tensor([1., 1.]), 2)
    """
    check_inplace(tensor)
    tensor._write_inplace(array, inplace_ops)


def check_fused(fused: bool | None, differentiable: bool, foreach: bool | None) -> None:
    """torch's checks of ``fused=True`` against the other implementation flags.

    >>> from jaxgrad.optim.optimizer import check_fused
    >>> check_fused(True, differentiable=False, foreach=None)
    >>> check_fused(True, differentiable=False, foreach=True)
    Traceback (most recent call last):
        ...
    RuntimeError: `fused` and `foreach` cannot be `True` together.
    """
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _by_devices(params: list[Tensor]) -> list[list[Tensor]]:
    """``params`` split by the devices their values and gradients are on (torch's foreach
    grouping by device): one jitted update per split, since one JAX computation takes its
    arguments from one set of devices (weights sharded over a mesh, biases left on one device)."""
    def devices(p: Tensor) -> tuple | None:
        value, grad = p._value, p.grad._value
        if isinstance(value, jax.core.Tracer) or isinstance(grad, jax.core.Tracer):
            return None  # (inside a trace: the traced program places them)
        return (value.sharding.device_set, grad.sharding.device_set)

    first = devices(params[0])
    if first is None:
        return [params]
    if all(devices(p) == first for p in params[1:]):
        return [params]
    splits: dict[tuple, list[Tensor]] = {}
    for p in params:
        key = tuple(frozenset(d) for d in devices(p))
        splits.setdefault(key, []).append(p)
    return list(splits.values())


def jitted_kernel(update: Callable) -> Callable:
    """``update(flags)`` returning a JAX function, made into a cached jitted kernel per flags.

    >>> import jax.numpy as jnp
    >>> from jaxgrad.optim.optimizer import jitted_kernel
    >>> kernel = jitted_kernel(lambda scale: lambda x: x * scale)
    >>> kernel(2)(jnp.arange(3)).tolist(), kernel(2) is kernel(2)
    ([0, 2, 4], True)
    """
    return cache(maxsize=256, kernels=True)(lambda *flags: jit(update(*flags)))


class Optimizer:
    """Base class of all optimizers: param groups, per-parameter ``state``, state dicts.

    ``params`` is an iterable of tensors, or of dicts (param groups) with a ``"params"`` entry
    and per-group hyper-parameters overriding ``defaults``.

    >>> import jaxgrad
    >>> w = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> b = jaxgrad.tensor([0.5], requires_grad=True)
    >>> opt = jaxgrad.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    >>> [g["lr"] for g in opt.param_groups]
    [0.1, 0.5]
    >>> opt.state_dict()["param_groups"][1]["params"]
    [1]
    """

    # jaxgrad.compile traces each group's learning rate (a scheduler changes it every step);
    # state and hooks change only through the optimizer's API, which records it (_epoch)
    _jaxgrad_traced_state = {"param_groups": ("lr",)}
    _jaxgrad_managed_attrs = frozenset(("state", "_zero_grad_profile_name", *_HOOK_DICTS))

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]],
                 defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        for name in _HOOK_DICTS:
            setattr(self, name, HookDict())
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + typename(params))
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        structure_changed()
        self.__dict__.update(state)
        for name in _HOOK_DICTS:  # hooks are not pickled (nor deep-copied), as in torch
            if name not in self.__dict__:
                setattr(self, name, HookDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # -- parameters -------------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a param group (a dict with ``"params"`` and optional hyper-parameters).

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(2, requires_grad=True)], lr=0.1)
        >>> opt.add_param_group({"params": jaxgrad.zeros(3, requires_grad=True), "lr": 1.0})
        >>> [(len(g["params"]), g["lr"]) for g in opt.param_groups]
        [(1, 0.1), (1, 1.0)]
        """
        structure_changed()
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead.")
        _set_params_and_names(param_group, list(params))
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this "
                "will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information", stacklevel=3)
        param_set: set[Tensor] = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the parameters' gradients: to None (default), or to zeros in place.

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
        >>> (w * w).sum().backward()
        >>> opt = jaxgrad.optim.SGD([w])
        >>> opt.zero_grad(set_to_none=False); w.grad
        tensor([0., 0.])
        >>> opt.zero_grad(); print(w.grad)
        None
        """
        with record_function(self._zero_grad_profile_name):
            for group in self.param_groups:
                for p in group["params"]:
                    reset_grad(p, set_to_none)

    # -- stepping ---------------------------------------------------------------------------
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update the parameters from their gradients (subclasses implement it).

        >>> import jaxgrad
        >>> jaxgrad.optim.Optimizer([jaxgrad.zeros(1, requires_grad=True)], {}).step()
        Traceback (most recent call last):
        NotImplementedError
        """
        raise NotImplementedError

    def _step_groups(self, closure: Callable[[], Any] | None) -> Any:
        """The body of the optimizers' ``step``: the closure (with grad), then each group."""
        structure_changed()
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if params:
                if group.get("differentiable"):
                    self._update_group_differentiable(group, params)
                else:
                    for same_devices in _by_devices(params):
                        self._update_group(group, same_devices)
        return loss

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """One step for the ``params`` of ``group`` that have a gradient."""
        raise NotImplementedError

    def _update_group_differentiable(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """One step as jaxgrad tensor ops that autograd records (``differentiable=True``)."""
        raise NotImplementedError

    @staticmethod
    def profile_hook_step(func: Callable) -> Callable:
        """Wrap a ``step`` function: a profiler range around the step hooks and the step.

        Each optimizer class's ``step`` is wrapped so on first construction (torch does the
        same); the range is named ``Optimizer.step#<Class>.step``.

        >>> import jaxgrad
        >>> from jaxgrad.autograd.profiler import profile
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)])
        >>> type(opt).step.hooked
        True
        >>> with profile() as prof:
        ...     opt.step()
        >>> [e.name for e in prof.function_events]
        ['Optimizer.step#SGD.step']
        """

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            self = args[0]
            with record_function(f"Optimizer.step#{self.__class__.__name__}.step"):
                for pre_hook in chain(_global_optimizer_pre_hooks.values(),
                                      self._optimizer_step_pre_hooks.values()):
                    result = pre_hook(self, args, kwargs)
                    if result is not None:
                        if isinstance(result, tuple) and len(result) == 2:
                            args, kwargs = result
                        else:
                            raise RuntimeError(f"{func} must return None or a tuple of "
                                               f"(new_args, new_kwargs), but got {result}.")
                out = func(*args, **kwargs)
                for post_hook in chain(self._optimizer_step_post_hooks.values(),
                                       _global_optimizer_post_hooks.values()):
                    post_hook(self, args, kwargs)
                return out

        return wrapper

    def _patch_step_function(self) -> None:
        """Wrap the class's ``step`` once (torch does it on first construction)."""
        self._zero_grad_profile_name = (
            f"Optimizer.zero_grad#{self.__class__.__name__}.zero_grad")
        if not getattr(self.__class__.step, "hooked", None):
            self.__class__.step = self.profile_hook_step(self.__class__.step)  # type: ignore[method-assign]
            self.__class__.step.hooked = True  # type: ignore[attr-defined]

    # -- hooks ------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: StepPreHook) -> RemovableHandle:
        """Register ``hook(optimizer, args, kwargs)`` to run before ``step``.

        ``args`` holds the optimizer itself and the positional arguments of ``step``; a hook
        may return ``(new_args, new_kwargs)`` to replace them, or None. Anything else raises.

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0], requires_grad=True)
        >>> w.grad = jaxgrad.tensor([2.0])
        >>> opt = jaxgrad.optim.SGD([w], lr=0.5)
        >>> def closure():
        ...     return "loss"
        >>> def pass_closure(o, args, kwargs):
        ...     return (o,), {"closure": closure}
        >>> handle = opt.register_step_pre_hook(pass_closure)
        >>> opt.step()
        'loss'
        >>> handle.remove(); print(opt.step())
        None
        """
        return add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: StepPostHook) -> RemovableHandle:
        """Register ``hook(optimizer, args, kwargs)`` to run after ``step`` (its result is ignored).

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0], requires_grad=True)
        >>> opt = jaxgrad.optim.SGD([w], lr=0.5)
        >>> w.grad = jaxgrad.tensor([1.0])
        >>> handle = opt.register_step_post_hook(lambda o, args, kwargs: print(w))
        >>> opt.step()
        tensor([0.5000], requires_grad=True)
        """
        return add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable[[Optimizer], None],
                                     prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer)`` to run at the start of ``state_dict()``.

        ``prepend=True`` runs it before the pre-hooks already registered.

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=0.1)
        >>> _ = opt.register_state_dict_pre_hook(lambda o: print("second"))
        >>> _ = opt.register_state_dict_pre_hook(lambda o: print("first"), prepend=True)
        >>> _ = opt.state_dict()
        first
        second
        """
        return add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(
            self, hook: Callable[[Optimizer, StateDict], StateDict | None],
            prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer, state_dict)`` to run at the end of ``state_dict()``.

        The hook may edit the state dict in place or return a new one, which is then used.

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=0.1)
        >>> _ = opt.register_state_dict_post_hook(lambda o, sd: {"wrapped": sd["param_groups"]})
        >>> list(opt.state_dict())
        ['wrapped']
        """
        return add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(
            self, hook: Callable[[Optimizer, StateDict], StateDict | None],
            prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer, state_dict)`` to run before ``load_state_dict`` loads.

        It gets a shallow copy of the given state dict; a returned dict is loaded instead.

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=0.1)
        >>> def halve_lr(o, sd):
        ...     sd["param_groups"] = [dict(g, lr=g["lr"] / 2) for g in sd["param_groups"]]
        >>> _ = opt.register_load_state_dict_pre_hook(halve_lr)
        >>> opt.load_state_dict(opt.state_dict()); opt.param_groups[0]["lr"]
        0.05
        """
        return add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[[Optimizer], None],
                                           prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer)`` to run after ``load_state_dict`` has loaded.

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=0.1)
        >>> _ = opt.register_load_state_dict_post_hook(lambda o: print(o.param_groups[0]["lr"]))
        >>> opt.load_state_dict(opt.state_dict())
        0.1
        """
        return add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dicts ------------------------------------------------------------------------
    def state_dict(self) -> StateDict:
        """The optimizer's state: ``state`` and ``param_groups`` with parameters as int ids.

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0], requires_grad=True)
        >>> opt = jaxgrad.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.grad = jaxgrad.tensor([1.0]); opt.step()
        >>> opt.state_dict()["state"]
        {0: {'momentum_buffer': tensor([1.])}}
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        mapping: dict[int, int] = {}
        start = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(group["params"], start)
                            if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Load a state dict made by ``state_dict()`` (groups must have the same sizes).

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0], requires_grad=True)
        >>> opt = jaxgrad.optim.SGD([w], lr=0.1)
        >>> saved = opt.state_dict(); saved["param_groups"][0]["lr"] = 0.5
        >>> opt.load_state_dict(saved); opt.param_groups[0]["lr"]
        0.5
        """
        structure_changed()
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict[Any, Any] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = _cast(param, value, key, state_dict["param_groups"])
            else:
                state[key] = value
        for group, new_group in zip(groups, saved_groups):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)


def _set_params_and_names(param_group: dict[str, Any], params: list) -> None:
    """Split ``(name, tensor)`` pairs (named_parameters) into params and ``param_names``."""
    names = [p[0] for p in params if isinstance(p, tuple)]
    param_group["params"] = [p[1] if isinstance(p, tuple) else p for p in params]
    if names:
        if len(names) != len(params):
            raise ValueError("all optimizer params should be with/without names. Some param "
                             "names are missing")
        param_group["param_names"] = names


def _cast(param: Tensor, value: Any, param_id: Any, param_groups: list,
          key: Hashable = None) -> Any:
    """Loaded state ``value`` with tensors moved to ``param``'s device (and float dtype)."""
    if isinstance(value, Tensor):
        return _cast_tensor(param, value, param_id, param_groups, key)
    if isinstance(value, dict):
        return {k: _cast(param, v, param_id, param_groups, k) for k, v in value.items()}
    if isinstance(value, Iterable):
        return type(value)(_cast(param, v, param_id, param_groups) for v in value)
    return value


def _cast_tensor(param: Tensor, value: Tensor, param_id: Any, param_groups: list,
                 key: Hashable) -> Tensor:
    group = next((g for g in param_groups if param_id in g["params"]), {})
    if key == "step":
        if group.get("capturable", False) or group.get("fused", False):
            return value.to(dtype=float32, device=param.device)
        return value
    if param.is_floating_point():
        return value.to(dtype=param.dtype, device=param.device)
    return value.to(device=param.device)
