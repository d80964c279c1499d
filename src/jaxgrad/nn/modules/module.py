"""``jaxgrad.nn.Module``: registration of parameters, buffers and submodules, iteration,
state dicts, and forward/backward hooks run in torch's order (``_call_impl``)."""

from __future__ import annotations

import inspect
import itertools
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from ..._core.dtypes import dtype as _dtype
from ..._core.epoch import changed as structure_changed
from ..._core.epoch import register_global_hooks
from ..._core.grad_mode import no_grad
from ..._core.tensor import Tensor
from ..._core.tracing import call_user_hook
from ..._engine.accumulate import reset_grad
from ..._functions.pointwise import typename
from ..parameter import Buffer, Parameter
from ._hooks import BackwardHook, RemovableHandle, _WrappedHook

__all__ = [
    "Module",
    "register_module_backward_hook",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
]

# Hooks common to all modules (torch keeps these process-global too).
_global_backward_pre_hooks: OrderedDict = OrderedDict()
_global_backward_hooks: OrderedDict = OrderedDict()
_global_is_full_backward_hook: bool | None = None
_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_forward_hooks_always_called: OrderedDict = OrderedDict()
_global_forward_hooks_with_kwargs: OrderedDict = OrderedDict()
_global_parameter_registration_hooks: OrderedDict = OrderedDict()
_global_buffer_registration_hooks: OrderedDict = OrderedDict()
_global_module_registration_hooks: OrderedDict = OrderedDict()
register_global_hooks(_global_backward_pre_hooks, _global_backward_hooks,
                      _global_forward_pre_hooks, _global_forward_hooks,
                      _global_forward_hooks_with_kwargs)

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"
_MIXED_GLOBAL_BACKWARD_HOOKS = ("Cannot use both regular backward hooks and full backward hooks "
                                "as a global Module hook. Please use only one of them.")
_MIXED_BACKWARD_HOOKS = ("Cannot use both regular backward hooks and full backward hooks on a "
                         "single Module. Please use only one of them.")


def _registration_hook(hooks: OrderedDict, hook: Callable[..., Any]) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(module, name, param)``, called whenever any module registers a parameter
    (``register_parameter`` or assigning a ``Parameter``); what it returns, if not None, is
    registered instead.

    >>> import jaxgrad
    >>> from jaxgrad.nn.modules.module import register_module_parameter_registration_hook
    >>> seen = []
    >>> h = register_module_parameter_registration_hook(lambda m, n, p: seen.append(n))
    >>> _ = jaxgrad.nn.Linear(2, 1)
    >>> h.remove(); seen
    ['weight', 'bias']
    """
    return _registration_hook(_global_parameter_registration_hooks, hook)


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(module, name, buffer)``, called whenever any module registers a buffer;
    what it returns, if not None, is registered instead.

    >>> import jaxgrad
    >>> from jaxgrad.nn.modules.module import register_module_buffer_registration_hook
    >>> h = register_module_buffer_registration_hook(lambda m, n, b: None if b is None else b * 2)
    >>> m = jaxgrad.nn.Module(); m.register_buffer("count", jaxgrad.ones(1))
    >>> h.remove(); m.count
    tensor([2.])
    """
    return _registration_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(module, name, submodule)``, called whenever any module registers a child
    (``add_module`` or assigning a module); what it returns, if not None, is registered instead.

    >>> import jaxgrad
    >>> from jaxgrad.nn.modules.module import register_module_module_registration_hook
    >>> seen = []
    >>> h = register_module_module_registration_hook(lambda m, n, s: seen.append(n))
    >>> _ = jaxgrad.nn.Sequential(jaxgrad.nn.ReLU())
    >>> h.remove(); seen
    ['0']
    """
    return _registration_hook(_global_module_registration_hooks, hook)


def _registered(hooks: OrderedDict, module: Module, name: str, value: Any) -> Any:
    """``value`` after the global registration ``hooks`` (each may return a replacement)."""
    for hook in hooks.values():
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(module, args)`` to run before every module's forward.

    >>> import jaxgrad
    >>> seen = []
    >>> h = jaxgrad.nn.modules.module.register_module_forward_pre_hook(
    ...     lambda m, args: seen.append(type(m).__name__))
    >>> _ = jaxgrad.nn.ReLU()(jaxgrad.ones(1))
    >>> h.remove(); seen
    ['ReLU']
    """
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook: Callable[..., Any], *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """Register ``hook(module, args, output)`` to run after every module's forward.

    >>> import jaxgrad
    >>> h = jaxgrad.nn.modules.module.register_module_forward_hook(lambda m, a, out: out * 2)
    >>> jaxgrad.nn.Identity()(jaxgrad.ones(2))
    tensor([2., 2.])
    >>> h.remove()
    """
    handle = RemovableHandle(_global_forward_hooks, extra_dict=_global_forward_hooks_always_called)
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def _register_global_backward_hook(hook: Callable[..., Any], full: bool) -> RemovableHandle:
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError(_MIXED_GLOBAL_BACKWARD_HOOKS)
    _global_is_full_backward_hook = full
    handle = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[handle.id] = hook
    return handle


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register a legacy (non-full) backward hook for every module (deprecated in torch).

    As in torch, the process is then committed to legacy global hooks (the example resets the
    private flag so that full global hooks can be registered again).

    >>> from jaxgrad.nn.modules import module
    >>> h = module.register_module_backward_hook(lambda m, gi, go: None)
    >>> module.register_module_full_backward_hook(lambda m, gi, go: None)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    RuntimeError: Cannot use both regular backward hooks and full backward hooks as a global ...
    >>> h.remove(); module._global_is_full_backward_hook = None
    """
    return _register_global_backward_hook(hook, full=False)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(module, grad_input, grad_output)`` for every module's backward.

    >>> import jaxgrad
    >>> seen = []
    >>> h = jaxgrad.nn.modules.module.register_module_full_backward_hook(
    ...     lambda m, gi, go: seen.append(gi[0]))
    >>> x = jaxgrad.tensor([1.0, -1.0], requires_grad=True)
    >>> jaxgrad.nn.ReLU()(x).sum().backward()
    >>> h.remove(); seen
    [tensor([1., 0.])]
    """
    return _register_global_backward_hook(hook, full=True)


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(module, grad_output)`` to run before every module's backward.

    >>> import jaxgrad
    >>> h = jaxgrad.nn.modules.module.register_module_full_backward_pre_hook(
    ...     lambda m, go: (go[0] * 10,))
    >>> x = jaxgrad.tensor([1.0], requires_grad=True)
    >>> jaxgrad.nn.Identity()(x).sum().backward()
    >>> h.remove(); x.grad
    tensor([10.])
    """
    handle = RemovableHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[handle.id] = hook
    return handle


class _IncompatibleKeys(NamedTuple("IncompatibleKeys", [("missing_keys", list),
                                                         ("unexpected_keys", list)])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text: str, spaces: int) -> str:
    first, *rest = text.split("\n")
    if not rest:
        return text
    return "\n".join([first] + [" " * spaces + line if line.strip() else "" for line in rest])


def _check_member_name(kind: str, name: Any) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
    if "." in name:
        raise KeyError(f"{kind} name can't contain \".\"")
    if name == "":
        raise KeyError(f"{kind} name can't be empty string \"\"")


def _forward_unimplemented(self: Module, *input: Any) -> None:
    """Define the computation done at every call; every subclass must override it.

    Call the module instance rather than ``forward``: the call runs the registered hooks.

    >>> import jaxgrad
    >>> jaxgrad.nn.Module()(jaxgrad.ones(1))
    Traceback (most recent call last):
        ...
    NotImplementedError: Module [Module] is missing the required "forward" function
    """
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function')


class Module:
    """Base class for all neural network modules, with torch's registration and hook rules.

    >>> import jaxgrad
    >>> class Net(jaxgrad.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = jaxgrad.nn.Linear(2, 1)
    ...     def forward(self, x):
    ...         return self.fc(x)
    >>> net = Net()
    >>> [name for name, _ in net.named_parameters()]
    ['fc.weight', 'fc.bias']
    >>> net
    Net(
      (fc): Linear(in_features=2, out_features=1, bias=True)
    )
    """

    dump_patches: bool = False
    _version: int = 1
    training: bool
    # jaxgrad.compile: these attributes change only through the Module API, which records the
    # change (jaxgrad._core.epoch), so a compiled step need not re-read them on every call
    _jaxgrad_managed_attrs = frozenset((
        "_parameters", "_buffers", "_modules", "_non_persistent_buffers_set",
        "_backward_pre_hooks", "_backward_hooks", "_forward_hooks", "_forward_hooks_with_kwargs",
        "_forward_hooks_always_called", "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
        "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
        "_load_state_dict_post_hooks"))
    call_super_init: bool = False
    forward: Callable[..., Any] = _forward_unimplemented

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not self.call_super_init and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if not self.call_super_init and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        state = {
            "training": True, "_parameters": {}, "_buffers": {},
            "_non_persistent_buffers_set": set(), "_backward_pre_hooks": OrderedDict(),
            "_backward_hooks": OrderedDict(), "_is_full_backward_hook": None,
            "_forward_hooks": OrderedDict(), "_forward_hooks_with_kwargs": OrderedDict(),
            "_forward_hooks_always_called": OrderedDict(), "_forward_pre_hooks": OrderedDict(),
            "_forward_pre_hooks_with_kwargs": OrderedDict(), "_state_dict_hooks": OrderedDict(),
            "_state_dict_pre_hooks": OrderedDict(), "_load_state_dict_pre_hooks": OrderedDict(),
            "_load_state_dict_post_hooks": OrderedDict(), "_modules": {},
        }
        for name, value in state.items():
            object.__setattr__(self, name, value)
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    # -- registration ----------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer (state that is not a parameter); non-persistent ones stay out of
        ``state_dict``.

        >>> import jaxgrad
        >>> m = jaxgrad.nn.Module()
        >>> m.register_buffer("count", jaxgrad.zeros(1))
        >>> list(m.state_dict())
        ['count']
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_member_name("buffer", name)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(jaxgrad Tensor or None required)")
        self._buffers[name] = _registered(_global_buffer_registration_hooks, self, name, tensor)
        structure_changed()
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None) under ``name``.

        >>> import jaxgrad
        >>> m = jaxgrad.nn.Module()
        >>> m.register_parameter("w", jaxgrad.nn.Parameter(jaxgrad.ones(2)))
        >>> m.w
        Parameter containing:
        tensor([1., 1.], requires_grad=True)
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_member_name("parameter", name)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            structure_changed()
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(jaxgrad.nn.Parameter or None required)")
        elif param.grad_fn:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method.")
        else:
            self._parameters[name] = _registered(_global_parameter_registration_hooks, self,
                                                 name, param)
            structure_changed()

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module (or None) under ``name``.

        >>> import jaxgrad
        >>> m = jaxgrad.nn.Module()
        >>> m.add_module("act", jaxgrad.nn.ReLU())
        >>> m
        Module(
          (act): ReLU()
        )
        """
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f"module name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError("module name can't be empty string \"\"")
        self._modules[name] = _registered(_global_module_registration_hooks, self, name, module)
        structure_changed()

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias of :meth:`add_module`.

        >>> import jaxgrad
        >>> m = jaxgrad.nn.Module()
        >>> m.register_module("id", jaxgrad.nn.Identity())
        >>> list(m._modules)
        ['id']
        """
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path ``target`` ("" is the module itself).

        >>> import jaxgrad
        >>> net = jaxgrad.nn.Sequential(jaxgrad.nn.Sequential(jaxgrad.nn.ReLU()))
        >>> net.get_submodule("0.0")
        ReLU()
        """
        if target == "":
            return self
        module: Module = self
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(module._get_name() + " has no attribute `" + item + "`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target``.

        >>> import jaxgrad
        >>> net = jaxgrad.nn.Sequential(jaxgrad.nn.Linear(2, 3))
        >>> net.get_parameter("0.bias").shape
        jaxgrad.Size([3])
        """
        module_path, _, param_name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, param_name):
            raise AttributeError(module._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(module, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path ``target``.

        >>> import jaxgrad
        >>> net = jaxgrad.nn.Sequential(jaxgrad.nn.Module())
        >>> net[0].register_buffer("steps", jaxgrad.zeros(1))
        >>> net.get_buffer("0.steps")
        tensor([0.])
        >>> net.get_buffer("0.training")
        Traceback (most recent call last):
        AttributeError: `training` is not a buffer
        """
        module_path, _, buffer_name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, buffer_name):
            raise AttributeError(module._get_name() + " has no attribute `" + buffer_name + "`")
        buffer = getattr(module, buffer_name)
        if buffer_name not in module._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at the dotted path ``target``: its parent must exist; with ``strict``
        the target must already exist too. Only a module (or nothing) may be replaced.

        >>> import jaxgrad
        >>> net = jaxgrad.nn.Sequential(jaxgrad.nn.Sequential(jaxgrad.nn.ReLU()))
        >>> net.set_submodule("0.0", jaxgrad.nn.Tanh())
        >>> net.set_submodule("0.act", jaxgrad.nn.Sigmoid())
        >>> net
        Sequential(
          (0): Sequential(
            (0): Tanh()
            (act): Sigmoid()
          )
        )
        """
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        *parent_atoms, name = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self.get_submodule(".".join(parent_atoms)) if parent_atoms else self
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    # -- attribute access ------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        for registry in ("_parameters", "_buffers", "_modules"):
            members = self.__dict__.get(registry)
            if members is not None and name in members:
                return members[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        structure_changed()
        params = self.__dict__.get("_parameters")
        modules = self.__dict__.get("_modules")
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_member(name, "__dict__", "_buffers", "_modules")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                "(jaxgrad.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_member(name, "__dict__", "_parameters", "_buffers")
            modules[name] = _registered(_global_module_registration_hooks, self, name, value)
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                "(jaxgrad.nn.Module or None expected)")
            modules[name] = _registered(_global_module_registration_hooks, self, name, value)
        elif isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(jaxgrad.nn.Buffer, jaxgrad.Tensor or None expected)")
            persistent = (value.persistent if isinstance(value, Buffer)
                          else name not in self._non_persistent_buffers_set)
            self._register_buffer_compat(name, value, persistent)
        else:
            object.__setattr__(self, name, value)

    def _register_buffer_compat(self, name: str, value: Tensor | None, persistent: bool) -> None:
        """torch's allowance for subclasses whose ``register_buffer`` lacks ``persistent``."""
        method = self.register_buffer
        if (getattr(method, "__func__", None) is Module.register_buffer
                or "persistent" in inspect.signature(method).parameters):
            method(name, value, persistent)
        elif not persistent:
            raise RuntimeError("Registering a non-persistent buffer on a Module subclass that "
                               "implements register_buffer() without the persistent argument "
                               "is not allowed.")
        else:
            method(name, value)

    def _remove_member(self, name: str, *registries: str) -> None:
        for registry in registries:
            members = self.__dict__ if registry == "__dict__" else self.__dict__[registry]
            members.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __delattr__(self, name: str) -> None:
        structure_changed()
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __getstate__(self) -> dict:
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        # Old checkpoints may lack the newer registries; torch fills them in.
        for name, default in (("_forward_pre_hooks", OrderedDict),
                              ("_forward_pre_hooks_with_kwargs", OrderedDict),
                              ("_forward_hooks_with_kwargs", OrderedDict),
                              ("_forward_hooks_always_called", OrderedDict),
                              ("_state_dict_hooks", OrderedDict),
                              ("_state_dict_pre_hooks", OrderedDict),
                              ("_load_state_dict_pre_hooks", OrderedDict),
                              ("_load_state_dict_post_hooks", OrderedDict),
                              ("_non_persistent_buffers_set", set),
                              ("_is_full_backward_hook", lambda: None),
                              ("_backward_pre_hooks", OrderedDict)):
            if name not in self.__dict__:
                object.__setattr__(self, name, default())

    def __dir__(self) -> list[str]:
        keys = (dir(type(self)) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(key for key in keys if not key[0].isdigit())

    # -- iteration ---------------------------------------------------------------------------
    def _named_members(self, members_of: Callable, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for name, value in members_of(module):
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(name, parameter) pairs: this module's first, then each submodule's, depth first.

        >>> import jaxgrad
        >>> [n for n, _ in jaxgrad.nn.Sequential(jaxgrad.nn.Linear(1, 1)).named_parameters()]
        ['0.weight', '0.bias']
        """
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The module's parameters (see :meth:`named_parameters`).

        >>> import jaxgrad
        >>> [p.shape for p in jaxgrad.nn.Linear(2, 3).parameters()]
        [jaxgrad.Size([3, 2]), jaxgrad.Size([3])]
        """
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """(name, buffer) pairs, in the order of :meth:`named_parameters`.

        >>> import jaxgrad
        >>> m = jaxgrad.nn.Module()
        >>> m.register_buffer("b", jaxgrad.zeros(1))
        >>> [n for n, _ in m.named_buffers()]
        ['b']
        """
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The module's buffers (see :meth:`named_buffers`).

        >>> import jaxgrad
        >>> list(jaxgrad.nn.ReLU().buffers())
        []
        """
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, module) for the direct children, each module once.

        >>> import jaxgrad
        >>> [n for n, _ in jaxgrad.nn.Sequential(jaxgrad.nn.ReLU()).named_children()]
        ['0']
        """
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct child modules.

        >>> import jaxgrad
        >>> list(jaxgrad.nn.Sequential(jaxgrad.nn.ReLU()).children())
        [ReLU()]
        """
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """(dotted name, module) for this module and all below it, depth first.

        >>> import jaxgrad
        >>> [n for n, _ in jaxgrad.nn.Sequential(jaxgrad.nn.ReLU()).named_modules()]
        ['', '0']
        """
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name,
                                                remove_duplicate)

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """This module and all below it (see :meth:`named_modules`).

        >>> import jaxgrad
        >>> len(list(jaxgrad.nn.Sequential(jaxgrad.nn.ReLU(), jaxgrad.nn.Tanh()).modules()))
        3
        """
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    # -- modes, gradients, conversion ---------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and every submodule.

        >>> import jaxgrad
        >>> jaxgrad.nn.Sequential(jaxgrad.nn.ReLU()).train(False)[0].training
        False
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``.

        >>> import jaxgrad
        >>> jaxgrad.nn.ReLU().eval().training
        False
        """
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter.

        >>> import jaxgrad
        >>> jaxgrad.nn.Linear(1, 1).requires_grad_(False).weight.requires_grad
        False
        """
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's ``.grad`` (to None, or to zeros in place).

        >>> import jaxgrad
        >>> lin = jaxgrad.nn.Linear(1, 1)
        >>> lin(jaxgrad.ones(1, 1)).sum().backward()
        >>> lin.zero_grad(); lin.weight.grad is None
        True
        """
        for param in self.parameters():
            reset_grad(param, set_to_none)

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every submodule (children first), then on this module.

        >>> import jaxgrad
        >>> names = []
        >>> _ = jaxgrad.nn.Sequential(jaxgrad.nn.ReLU()).apply(
        ...     lambda m: names.append(type(m).__name__))
        >>> names
        ['ReLU', 'Sequential']
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        """Replace the data of every parameter (and its grad) and every buffer by ``fn`` of it."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                param.data = fn(param)
                if param.grad is not None:
                    param.grad.data = fn(param.grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
                structure_changed()
        return self

    def float(self) -> Module:
        """Cast floating point parameters and buffers to float32.

        >>> import jaxgrad
        >>> jaxgrad.nn.Linear(1, 1).double().float().weight.dtype
        jaxgrad.float32
        """
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        """Cast floating point parameters and buffers to float64.

        >>> import jaxgrad
        >>> jaxgrad.nn.Linear(1, 1).double().weight.dtype
        jaxgrad.float64
        """
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        """Cast floating point parameters and buffers to float16.

        >>> import jaxgrad
        >>> jaxgrad.nn.Linear(1, 1).half().weight.dtype
        jaxgrad.float16
        """
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        """Cast floating point parameters and buffers to bfloat16.

        >>> import jaxgrad
        >>> jaxgrad.nn.Linear(1, 1).bfloat16().weight.dtype
        jaxgrad.bfloat16
        """
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def cuda(self, device: Any = None) -> Module:
        """Move parameters and buffers to a GPU (``device``: an index or a cuda device; the
        current one by default).

        >>> import jaxgrad
        >>> m = jaxgrad.nn.Linear(1, 1)
        >>> m.cuda() is m if jaxgrad.cuda.is_available() else True
        True
        """
        return self._apply(lambda t: t.cuda(device))

    def cpu(self) -> Module:
        """Move parameters and buffers to the CPU.

        >>> import jaxgrad
        >>> jaxgrad.nn.Linear(1, 1).cpu().weight.device
        device(type='cpu')
        """
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type: Any) -> Module:
        """Cast all parameters and buffers to ``dst_type`` (a dtype or a legacy type name).

        >>> import jaxgrad
        >>> jaxgrad.nn.Linear(1, 1).type(jaxgrad.float64).weight.dtype
        jaxgrad.float64
        """
        return self._apply(lambda t: t.type(dst_type))

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move and/or cast floating point parameters and buffers: ``to(dtype)``,
        ``to(device)``, ``to(tensor)``, ``to(device, dtype)``. The device may be a
        ``jax.Device``, or a ``jax.sharding.Sharding`` given to every parameter and buffer (a
        replicated ``NamedSharding(mesh, P())`` for data parallelism); parameters stay the same
        objects and their ``.grad`` moves with them.

        >>> import jax, jaxgrad
        >>> jaxgrad.nn.Linear(1, 1).to(jaxgrad.float64).bias.dtype
        jaxgrad.float64
        >>> jaxgrad.nn.Linear(1, 1).to(jax.devices("cpu")[0]).weight.device
        device(type='cpu')
        """
        device, dtype = _parse_to(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")
        if dtype is not None and dtype.is_complex:
            warnings.warn(
                "Complex modules are a new feature under active development whose design may "
                "change, and some modules might not work as expected when using complex tensors "
                "as parameters or buffers. Please file an issue at https://github.com/pytorch/"
                "pytorch/issues/new?template=bug-report.yml if a complex module does not work "
                "as expected.", stacklevel=2)

        def convert(t: Tensor) -> Tensor:
            keep = not (t.is_floating_point() or t.is_complex())
            target = {} if keep or dtype is None else {"dtype": dtype}
            if device is not None:
                target["device"] = device
            return t.to(**target) if target else t

        return self._apply(convert)

    # -- state dict --------------------------------------------------------------------------
    def get_extra_state(self) -> Any:
        """Extra (picklable) state for ``state_dict`` under ``<prefix>_extra_state``; override
        together with :meth:`set_extra_state`. The base method is never called.

        >>> import jaxgrad
        >>> class Counter(jaxgrad.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.count = 0
        ...     def get_extra_state(self):
        ...         return {"count": self.count}
        ...     def set_extra_state(self, state):
        ...         self.count = state["count"]
        >>> a, b = Counter(), Counter()
        >>> a.count = 5
        >>> dict(a.state_dict())
        {'_extra_state': {'count': 5}}
        >>> _ = b.load_state_dict(a.state_dict()); b.count
        5
        """
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    def set_extra_state(self, state: Any) -> None:
        """Restore what :meth:`get_extra_state` saved (see its example).

        >>> import jaxgrad
        >>> jaxgrad.nn.Module().set_extra_state({})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        RuntimeError: Reached a code path in Module.set_extra_state() that should never be ...
        """
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    def _has_extra_state(self, method: str) -> bool:
        return getattr(type(self), method, None) is not getattr(Module, method)

    def register_state_dict_pre_hook(self, hook: Callable[..., None]) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` runs when ``state_dict`` reaches this module,
        before its own entries are saved; its return value is ignored.

        >>> import jaxgrad
        >>> net = jaxgrad.nn.Sequential(jaxgrad.nn.Linear(1, 1))
        >>> h = net[0].register_state_dict_pre_hook(lambda m, prefix, keep: print(prefix, keep))
        >>> _ = net.state_dict()
        0. False
        """
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook: Callable[..., None]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` runs after this module and its
        children are saved; it may edit ``state_dict`` in place and must return None.

        >>> import jaxgrad
        >>> lin = jaxgrad.nn.Linear(1, 1)
        >>> h = lin.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd.pop("bias"))
        >>> lin.state_dict()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        RuntimeError: state_dict post-hook must return None
        >>> h.remove()
        >>> h = lin.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd.clear())
        >>> len(lin.state_dict())
        0
        """
        hook._from_public_api = True  # type: ignore[attr-defined]
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Legacy post-hook: a non-None return replaces the state dict (only the one that the
        root module's ``state_dict`` returns)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via register_state_dict_post_hook")
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if self._has_extra_state("get_extra_state"):
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        """Parameters and persistent buffers by dotted name (detached unless ``keep_vars``),
        with ``_metadata`` holding each module's ``version``. State-dict pre-hooks run before
        a module's entries are saved, post-hooks after its children's.

        >>> import jaxgrad
        >>> sd = jaxgrad.nn.Sequential(jaxgrad.nn.Linear(1, 1)).state_dict()
        >>> list(sd), dict(sd._metadata)
        (['0.weight', '0.bias'], {'': {'version': 1}, '0': {'version': 1}})
        """
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                "#torch.nn.Module.state_dict for details.", FutureWarning, stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if result is not None:
                    destination = result
            elif result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _register_load_state_dict_pre_hook(self, hook: Callable[..., None],
                                           with_module: bool = False) -> RemovableHandle:
        """Like :meth:`register_load_state_dict_pre_hook`, but the hook receives the module
        only ``with_module``."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = _WrappedHook(
            hook, self if with_module else None)
        return handle

    def register_load_state_dict_pre_hook(self, hook: Callable[..., None]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before this module loads its entries; it may edit
        ``state_dict`` (this module's copy) and the three lists. ``strict`` is always True
        here, as in torch; the caller's ``strict`` is applied at the end.

        >>> import jaxgrad
        >>> lin = jaxgrad.nn.Linear(1, 1)
        >>> def rename(module, sd, prefix, *rest):
        ...     sd[prefix + "weight"] = sd.pop(prefix + "w")
        >>> h = lin.register_load_state_dict_pre_hook(rename)
        >>> lin.load_state_dict({"w": jaxgrad.ones(1, 1), "bias": jaxgrad.zeros(1)})
        <All keys matched successfully>
        """
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable[..., None]) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` runs after this module and its children loaded;
        it may edit ``incompatible_keys.missing_keys`` / ``unexpected_keys`` in place (which
        the ``strict`` check then sees) and must return None.

        >>> import jaxgrad
        >>> lin = jaxgrad.nn.Linear(1, 1)
        >>> h = lin.register_load_state_dict_post_hook(
        ...     lambda m, keys: keys.missing_keys.clear())
        >>> lin.load_state_dict({"weight": jaxgrad.ones(1, 1)})
        <All keys matched successfully>
        """
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                         persistent.items()) if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key in state_dict:
                error = self._load_one(name, key, param, state_dict[key], assign)
                if error is not None:
                    error_msgs.append(error)
            elif strict:
                missing_keys.append(key)
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if self._has_extra_state("set_extra_state"):
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    head, *rest = key[len(prefix):].split(".", 1)
                    if (head not in self._modules) if rest else (head not in local_state):
                        unexpected_keys.append(key)

    def _load_one(self, name: str, key: str, param: Tensor, value: Any, assign: bool
                  ) -> str | None:
        """Copy (or with ``assign``, assign) one checkpoint entry; torch's error text if not."""
        if not isinstance(value, Tensor):
            return (f'While copying the parameter named "{key}", expected jaxgrad.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}")
        if len(param.shape) == 0 and len(value.shape) == 1 and value.shape[0] == 1:
            value = value[0]  # 1-element checkpoints of scalars (torch 0.3)
        if value.shape != param.shape:
            return (f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {param.shape}.")
        try:
            with no_grad():
                if not assign:
                    param.copy_(value)
                else:
                    if isinstance(param, Parameter):
                        if isinstance(value, Parameter):
                            value.requires_grad_(param.requires_grad)
                        else:
                            value = Parameter(value, requires_grad=param.requires_grad)
                    setattr(self, name, value)
        except Exception as exc:
            return (f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {param.size()} and whose dimensions in the checkpoint are "
                    f"{value.size()}, an exception occurred : {exc.args}.")
        return None

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy values from ``state_dict`` into parameters and buffers (under no_grad); with
        ``assign`` the state dict's tensors replace them instead (parameters keep their
        ``requires_grad``). Pre-hooks run per module before it loads, post-hooks after it and
        its children; ``strict`` then turns missing or unexpected keys into an error.

        >>> import jaxgrad
        >>> a, b = jaxgrad.nn.Linear(2, 1), jaxgrad.nn.Linear(2, 1)
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> bool((a.weight == b.weight).all())
        True
        >>> sd = {"weight": jaxgrad.ones(1, 2, dtype=jaxgrad.float64)}
        >>> b.load_state_dict(sd, strict=False, assign=True)
        _IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])
        >>> b.weight
        Parameter containing:
        tensor([[1., 1.]], dtype=jaxgrad.float64, requires_grad=True)
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list[str] = []
        unexpected_keys: list[str] = []
        error_msgs: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)  # a copy that _load_from_state_dict may edit
        if metadata is not None:
            state_dict._metadata = metadata
        self._load_recursively(state_dict, "", metadata, assign, missing_keys, unexpected_keys,
                               error_msgs)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    def _load_recursively(self, state_dict: dict, prefix: str, metadata: dict | None,
                          assign: bool, missing_keys: list, unexpected_keys: list,
                          error_msgs: list) -> None:
        # torch edits the checkpoint's own metadata entry here (observable after assign=True)
        local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        self._load_from_state_dict(state_dict, prefix, local_metadata, True, missing_keys,
                                   unexpected_keys, error_msgs)
        for name, child in self._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                child_state = {k: v for k, v in state_dict.items() if k.startswith(child_prefix)}
                child._load_recursively(child_state, child_prefix, metadata, assign,
                                        missing_keys, unexpected_keys, error_msgs)
        incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)
        for hook in self._load_state_dict_post_hooks.values():
            if hook(self, incompatible_keys) is not None:
                raise AssertionError(
                    "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                    "expected to return new values, if incompatible_keys need to be modified, "
                    "it should be done inplace.")

    # -- repr --------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The module-specific part of ``repr`` (override in layers; empty by default).

        >>> import jaxgrad
        >>> jaxgrad.nn.Linear(2, 3).extra_repr()
        'in_features=2, out_features=3, bias=True'
        """
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"

    # -- hooks -------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` (or ``hook(module, args, kwargs)`` with ``with_kwargs``)
        before forward; a non-None result replaces the arguments.

        >>> import jaxgrad
        >>> m = jaxgrad.nn.Identity()
        >>> h = m.register_forward_pre_hook(lambda mod, args: args[0] + 1)
        >>> m(jaxgrad.zeros(1))
        tensor([1.])
        """
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False
                              ) -> RemovableHandle:
        """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
        ``with_kwargs``) after forward; a non-None result replaces the output. With
        ``always_call`` it also runs when forward raises.

        >>> import jaxgrad
        >>> m = jaxgrad.nn.Identity()
        >>> h = m.register_forward_hook(lambda mod, args, out: out * 3)
        >>> m(jaxgrad.ones(1))
        tensor([3.])
        """
        handle = RemovableHandle(self._forward_hooks, extra_dict=[
            self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False
                                        ) -> RemovableHandle:
        """``hook(module, grad_output)`` when the gradients of the module's outputs are known;
        a non-None result replaces grad_output.

        >>> import jaxgrad
        >>> m = jaxgrad.nn.Identity()
        >>> h = m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
        >>> x = jaxgrad.ones(1, requires_grad=True)
        >>> m(x).sum().backward(); x.grad
        tensor([2.])
        """
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False
                                    ) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` when the gradients of the module's inputs
        are computed; a non-None result replaces grad_input.

        >>> import jaxgrad
        >>> m = jaxgrad.nn.ReLU()
        >>> h = m.register_full_backward_hook(lambda mod, gi, go: print(gi, go))
        >>> m(jaxgrad.tensor([-1.0, 2.0], requires_grad=True)).sum().backward()
        (tensor([0., 1.]),) (tensor([1., 1.]),)
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError(_MIXED_BACKWARD_HOOKS)
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Legacy backward hook (deprecated in torch): registered on the output's ``grad_fn``,
        so it sees only the gradients of the module's *last* operation.

        >>> import jaxgrad
        >>> m = jaxgrad.nn.Sigmoid()
        >>> h = m.register_backward_hook(lambda mod, gi, go: print(len(gi), len(go)))
        >>> x = jaxgrad.zeros(1, requires_grad=True)
        >>> m(x * 1).sum().backward()
        1 1
        """
        if self._is_full_backward_hook is True:
            raise RuntimeError(_MIXED_BACKWARD_HOOKS)
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def _get_backward_hooks(self) -> tuple[list, list]:
        full: list = []
        legacy: list = []
        for is_full, hooks in ((_global_is_full_backward_hook, _global_backward_hooks),
                               (self._is_full_backward_hook, self._backward_hooks)):
            if is_full is True:
                full += hooks.values()
            elif is_full is False:
                legacy += hooks.values()
        return full, legacy

    def _get_backward_pre_hooks(self) -> list:
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    # -- calling -----------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call_impl(*args, **kwargs)

    def _has_hooks(self) -> bool:
        return bool(self._backward_hooks or self._backward_pre_hooks or self._forward_hooks
                    or self._forward_pre_hooks or _global_backward_pre_hooks
                    or _global_backward_hooks or _global_forward_hooks
                    or _global_forward_pre_hooks)

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        if not self._has_hooks():
            return self.forward(*args, **kwargs)
        call = _HookedCall(self, args, kwargs)
        try:
            return call.run()
        except Exception:
            call.run_always_called_hooks()
            raise


class _HookedCall:
    """One call of a module with hooks: torch's ``_call_impl`` step by step."""

    def __init__(self, module: Module, args: tuple, kwargs: dict) -> None:
        self.module = module
        self.args = args
        self.kwargs = kwargs
        self.result: Any = None
        self.called_always_hooks: set[int] = set()

    def run(self) -> Any:
        """Pre-hooks, ``forward``, forward hooks and the backward-hook setup; returns the output."""
        module = self.module
        backward_pre_hooks = (module._get_backward_pre_hooks() if module._backward_pre_hooks
                              or _global_backward_pre_hooks else [])
        full_hooks, legacy_hooks = (module._get_backward_hooks() if module._backward_hooks
                                    or _global_backward_hooks else ([], []))
        self._run_forward_pre_hooks()
        bw_hook = None
        if full_hooks or backward_pre_hooks:
            bw_hook = BackwardHook(module, full_hooks, backward_pre_hooks)
            self.args = bw_hook.setup_input_hook(self.args)
        self.result = module.forward(*self.args, **self.kwargs)
        self._run_forward_hooks()
        if bw_hook:
            if not isinstance(self.result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a "
                              f"Tensor or a tuple of Tensors but received {type(self.result)}",
                              stacklevel=3)
            self.result = bw_hook.setup_output_hook(self.result)
        if legacy_hooks:
            self._register_legacy_backward_hooks(legacy_hooks)
        return self.result

    def _run_forward_pre_hooks(self) -> None:
        module = self.module
        for hook_id, hook in (*_global_forward_pre_hooks.items(),
                              *module._forward_pre_hooks.items()):
            if hook_id in module._forward_pre_hooks_with_kwargs:
                out = call_user_hook(hook, module, self.args, self.kwargs)
                if out is None:
                    continue
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {out}.")
                self.args, self.kwargs = out
            else:
                out = call_user_hook(hook, module, self.args)
                if out is not None:
                    self.args = out if isinstance(out, tuple) else (out,)

    def _run_forward_hooks(self) -> None:
        module = self.module
        for hook_id, hook in (*_global_forward_hooks.items(), *module._forward_hooks.items()):
            if (hook_id in module._forward_hooks_always_called
                    or hook_id in _global_forward_hooks_always_called):
                self.called_always_hooks.add(hook_id)
            if (hook_id in module._forward_hooks_with_kwargs
                    or hook_id in _global_forward_hooks_with_kwargs):
                out = call_user_hook(hook, module, self.args, self.kwargs, self.result)
            else:
                out = call_user_hook(hook, module, self.args, self.result)
            if out is not None:
                self.result = out

    def run_always_called_hooks(self) -> None:
        """After forward raised: the ``always_call`` forward hooks that have not run yet."""
        module = self.module
        pending = [(hook_id, hook, False, "global module forward hook")
                   for hook_id, hook in _global_forward_hooks.items()
                   if hook_id in _global_forward_hooks_always_called]
        pending += [(hook_id, hook, hook_id in module._forward_hooks_with_kwargs,
                     "module forward hook") for hook_id, hook in module._forward_hooks.items()
                    if hook_id in module._forward_hooks_always_called]
        for hook_id, hook, with_kwargs, kind in pending:
            if hook_id in self.called_always_hooks:
                continue
            try:
                out = (hook(module, self.args, self.kwargs, self.result) if with_kwargs
                       else hook(module, self.args, self.result))
                if out is not None:
                    self.result = out
            except Exception as exc:
                warnings.warn(f"{kind} with ``always_call=True`` raised an exception that was "
                              f"silenced as another error was raised in forward: {exc}",
                              stacklevel=3)

    def _register_legacy_backward_hooks(self, hooks: list) -> None:
        var = self.result
        while not isinstance(var, Tensor):
            if isinstance(var, dict):
                var = next(v for v in var.values() if isinstance(v, Tensor))
            else:
                var = var[0]
        grad_fn = var.grad_fn
        if grad_fn is None:
            return
        for hook in hooks:
            grad_fn.register_hook(_WrappedHook(hook, self.module))
        _warn_legacy_backward_hook(self.args, self.result, grad_fn)


def _warn_legacy_backward_hook(inputs: Any, result: Any, grad_fn: Any) -> None:
    """torch's FutureWarnings about what a non-full backward hook will miss."""
    message = _legacy_backward_hook_problem(inputs, result, grad_fn)
    if message is not None:
        warnings.warn(message, FutureWarning, stacklevel=4)


def _legacy_backward_hook_problem(inputs: Any, result: Any, grad_fn: Any) -> str | None:
    advice = " Please use register_full_backward_hook to get the documented behavior."
    deprecated = "is deprecated and will be removed in future versions."
    results = _as_tensor_tuple(result)
    if results is None:
        return ("Using non-full backward hooks on a Module that does not return a single Tensor "
                f"or a tuple of Tensors {deprecated} This hook will be missing some of the "
                "grad_output." + advice)
    input_tensors = _as_tensor_tuple(inputs)
    if input_tensors is None:
        return ("Using non-full backward hooks on a Module that does not take as input a single "
                f"Tensor or a tuple of Tensors {deprecated} This hook will be missing some of "
                "the grad_input." + advice)
    out_grad_fns = {r.grad_fn for r in results if r.grad_fn is not None}
    if not out_grad_fns or (len(out_grad_fns) == 1 and grad_fn not in out_grad_fns):
        return ("Using a non-full backward hook when outputs are nested in python data structure "
                f"{deprecated} This hook will be missing some grad_output.")
    if len(out_grad_fns) > 1:
        return ("Using a non-full backward hook when outputs are generated by different "
                f"autograd Nodes {deprecated} This hook will be missing some grad_output."
                + advice)
    inputs_grad_fns = {i.grad_fn for i in input_tensors if i.grad_fn is not None}
    if inputs_grad_fns != {n for n, _ in grad_fn.next_functions}:
        return ("Using a non-full backward hook when the forward contains multiple autograd "
                f"Nodes {deprecated} This hook will be missing some grad_input." + advice)
    return None


def _as_tensor_tuple(value: Any) -> tuple | None:
    if isinstance(value, Tensor):
        return (value,)
    if isinstance(value, tuple) and all(isinstance(v, Tensor) for v in value):
        return value
    return None


def _parse_to(args: tuple, kwargs: dict) -> tuple[Any, _dtype | None]:
    """(device, dtype) from Module.to's arguments: dtype, device, tensor, in any valid order."""
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    tensor = kwargs.get("tensor")
    for arg in args:
        if isinstance(arg, _dtype):
            dtype = arg
        elif isinstance(arg, Tensor):
            tensor = arg
        elif not isinstance(arg, bool):
            device = arg
    if tensor is not None:
        device, dtype = tensor._value.sharding, tensor.dtype
    return device, dtype
