"""Module hook machinery: removable handles, torch's ``BackwardHook`` for full backward hooks,
and the wrapper that binds a legacy backward hook to its module."""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

from ..._autograd.function import Function
from ..._core.grad_mode import is_grad_enabled
from ..._core.graph import RemovableHandle as _NodeHandle
from ..._core.tensor import Tensor
from ..._core.warn_once import warn_at_user_line


class RemovableHandle(_NodeHandle):
    """A hook handle whose ``remove()`` also clears the hook's flags kept in ``extra_dict``.

    >>> import jaxgrad
    >>> act = jaxgrad.nn.ReLU()
    >>> h = act.register_forward_hook(lambda m, args, out: out * 2, always_call=True)
    >>> act(jaxgrad.ones(1))
    tensor([2.])
    >>> h.remove(); act(jaxgrad.ones(1))
    tensor([1.])
    >>> len(act._forward_hooks_always_called)
    0
    """

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        super().__init__(hooks_dict)
        extras = extra_dict if isinstance(extra_dict, list) else (
            [] if extra_dict is None else [extra_dict])
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self) -> None:
        """Unregister the hook and drop its entries from the ``extra_dict`` dicts."""
        super().remove()
        for ref in self.extra_dict_ref:
            extra = ref()
            if extra is not None and self.id in extra:
                del extra[self.id]


class BackwardHookFunction(Function):
    """Identity on tensors; its ``BackwardHookFunctionBackward`` node is where hooks attach.

    >>> import jaxgrad
    >>> from jaxgrad.nn.modules._hooks import BackwardHookFunction
    >>> y, = BackwardHookFunction.apply(jaxgrad.ones(2, requires_grad=True))
    >>> y.grad_fn.name()
    'BackwardHookFunctionBackward'
    """

    @staticmethod
    def forward(ctx: Any, *args: Tensor) -> tuple:
        """Return the tensors as they are (those not requiring grad marked non-differentiable)."""
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        """Pass the gradients through unchanged (hooks on this node see and may replace them)."""
        return grads


class _WrappedHook:
    """torch's ``_WrappedHook``: calls ``hook(module, *args)`` when bound to a module (held by a
    weak reference), ``hook(*args)`` otherwise; pickles with its module."""

    def __init__(self, hook: Callable, module: Any = None) -> None:
        self.hook = hook
        functools.update_wrapper(self, hook)  # torch's hook-result errors name the user's hook
        self.with_module = module is not None
        if module is not None:
            self.module = weakref.ref(module)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self.with_module:
            return self.hook(*args, **kwargs)
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args, **kwargs)

    def __getstate__(self) -> dict:
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state: dict) -> None:
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


def _pack_with_none(indices: list, values: Any, size: int) -> tuple:
    packed: list = [None] * size
    for index, value in zip(indices, values):
        packed[index] = value
    return tuple(packed)


class BackwardHook:
    """torch's ``BackwardHook``: identity Functions around a module's tensor inputs and outputs
    capture grad_output (output side) and grad_input (input side) for the user's hooks.

    >>> import jaxgrad
    >>> act, seen = jaxgrad.nn.Tanh(), []
    >>> _ = act.register_full_backward_hook(lambda m, gin, gout: seen.append((gin, gout)))
    >>> act(jaxgrad.zeros(2, requires_grad=True)).sum().backward()
    >>> seen
    [((tensor([1., 1.]),), (tensor([1., 1.]),))]
    """

    def __init__(self, module: Any, user_hooks: list, user_pre_hooks: list) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_outputs = -1
        self.output_tensors_index: list | None = None
        self.n_inputs = -1
        self.input_tensors_index: list | None = None

    def setup_input_hook(self, args: tuple) -> tuple:
        """Route the tensors in ``args`` through a ``BackwardHookFunction`` to catch grad_input."""
        res, self.input_tensors_index = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        return res

    def setup_output_hook(self, result: Any) -> Any:
        """Route the tensors of ``result`` through a ``BackwardHookFunction`` for grad_output."""
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        def hook(grad_input: tuple, grad_output: tuple) -> tuple | None:
            return self._on_grad_output(grad_output)

        res, self.output_tensors_index = self._apply_on_tensors(
            lambda grad_fn: grad_fn.register_hook(hook), args)
        self.n_outputs = len(args)
        return res if is_tuple else res[0]

    def _apply_on_tensors(self, register: Callable, args: Any) -> tuple:
        indices = [i for i, arg in enumerate(args) if isinstance(arg, Tensor)]
        tensors = [args[i] for i in indices]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        if len(new_tensors) == 0:
            raise RuntimeError(
                "Cannot set Module backward hook for a Module with no input Tensors.")
        grad_fns = [t.grad_fn for t in new_tensors
                    if t.grad_fn is not None and t.grad_fn.name() == "BackwardHookFunctionBackward"]
        if not grad_fns:
            raise RuntimeError("Error while setting up backward hooks. Please open an issue with "
                               "a code sample to reproduce this.")
        register(grad_fns[0])
        arg_list = list(args)
        for index, tensor in zip(indices, new_tensors):
            arg_list[index] = tensor
        return (tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)), indices

    def _set_user_hook(self, grad_fn: Any) -> None:
        # named ``hook`` as torch's: the engine's checks of its result name it
        def hook(grad_input: tuple, grad_output: tuple) -> tuple | None:
            return self._on_grad_input(grad_input)

        grad_fn.register_hook(hook)

    def _on_grad_input(self, grad_input: tuple) -> tuple | None:
        if self.grad_outputs is None:  # gradient reached the inputs without the outputs
            return None
        res = _pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_tensors_index)

    def _on_grad_output(self, grad_output: tuple) -> tuple | None:
        self.grad_outputs = _pack_with_none(self.output_tensors_index, grad_output,
                                            self.n_outputs)
        self._run_pre_hooks()
        local_grad_outputs = self.grad_outputs
        if self.input_tensors_index is None:
            self._run_hooks_without_input_grads()
        if local_grad_outputs is None:
            return None
        # Hand the engine copies: it may sum into a gradient it believes it owns, in place,
        # which would change the grad_output tensors the hooks were given (and may keep).
        return tuple(None if g is None else g.clone()
                     for g in (local_grad_outputs[i] for i in self.output_tensors_index))

    def _run_pre_hooks(self) -> None:
        expected = len(self.grad_outputs)
        for hook in self.user_pre_hooks:
            out = hook(self.module, self.grad_outputs)
            if out is None:
                continue
            if len(out) != expected:
                raise RuntimeError("Backward pre hook returned an invalid number of grad_output, "
                                   f"got {len(out)}, but expected {expected}")
            self.grad_outputs = out

    def _run_hooks_without_input_grads(self) -> None:
        warn_at_user_line(
            "Full backward hook is firing when gradients are computed with respect to module "
            "outputs since no inputs require gradients. See "
            "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module."
            "register_full_backward_hook for more details.")
        grad_inputs = _pack_with_none([], [], self.n_inputs)
        for hook in self.user_hooks:
            res = hook(self.module, grad_inputs, self.grad_outputs)
            if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                raise RuntimeError("Backward hook for Modules where no input requires gradient "
                                   "should always return None or None for all gradients.")
        self.grad_outputs = None
