"""``Adagrad``: per-coordinate learning rates from the running sum of squared gradients."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import jax.numpy as jnp

from .._core.tensor import Tensor
from .._functions.complex_numbers import view_as_real
from .._functions.creation import tensor as new_tensor
from .._ops.half_precision import add_scalar, add_scaled, addcdiv, addcmul
from ._common import (
    as_number,
    check_differentiable,
    complex_like,
    real_view,
    scalar_dtype,
    tensor_steps,
)
from .optimizer import (
    Optimizer,
    check_fused,
    hyper_vector,
    jitted_kernel,
    store,
    to_scalar,
    use_grad_for_differentiable,
)

__all__ = ["Adagrad"]

_FUSED_DEVICES = ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]  # (torch's)


class Adagrad(Optimizer):
    """Adagrad, as ``torch.optim.Adagrad`` (torch's single-tensor formulas, step by step).

    Per parameter: ``sum += g * g`` and ``p -= clr * g / (sqrt(sum) + eps)`` with
    ``clr = lr / (1 + (step - 1) * lr_decay)``. Unlike the other optimizers, the state
    (``step``, a 0-d float tensor, and ``sum``, filled with ``initial_accumulator_value``) is
    made for every parameter at construction.

    >>> import jaxgrad
    >>> w = jaxgrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = jaxgrad.optim.Adagrad([w], lr=0.5)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.2764, -1.2000], requires_grad=True)
    >>> opt.state[w]["sum"], opt.state[w]["step"]
    (tensor([ 5., 25.]), tensor(2.))
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]],
                 lr: float | Tensor = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10,
                 foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not lr_decay >= 0.0:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not initial_accumulator_value >= 0.0:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        check_fused(fused, differentiable, foreach)
        if fused:
            self._need_device_dtype_check_for_fused = True
            self._step_supports_amp_scaling = True
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p].update(self._new_state(group, p))

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        fused = None
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            fused = group.setdefault("fused", None)
            tensor_steps(self, group, group["fused"])
        states = list(self.state.values())
        if states and not isinstance(states[0]["step"], Tensor):
            for s in states:
                s["step"] = new_tensor(float(s["step"]), dtype=scalar_dtype(fused))

    def _new_state(self, group: dict[str, Any], p: Tensor) -> dict[str, Any]:
        """A fresh ``step`` and ``sum`` (the constructor's ``initial_accumulator_value``, as
        torch reads it from ``defaults``, not from the group)."""
        init = self.defaults["initial_accumulator_value"]
        if p.is_complex():
            init = complex(init, init)
        return {"step": new_tensor(0.0, dtype=scalar_dtype(group["fused"])),
                "sum": Tensor._make(jnp.full_like(p._value, init))}

    def _init_state(self, group: dict[str, Any], p: Tensor) -> dict[str, Any]:
        if group["fused"] and getattr(self, "_need_device_dtype_check_for_fused", True):
            _check_fused_param(p)
            self._need_device_dtype_check_for_fused = False
        state = self.state[p]
        if len(state) == 0:
            if group["fused"]:
                _check_fused_param(p)
            state.update(self._new_state(group, p))
        return state

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Adagrad step for every parameter with a gradient; ``closure`` (re)computes the
        loss.

        Returns the closure's loss (None without a closure). With ``differentiable=True`` the
        step runs with grad mode on and autograd records the update.

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = jaxgrad.optim.Adagrad([w], lr=0.5, initial_accumulator_value=3.0)
        >>> w.grad = jaxgrad.tensor([1.0, -1.0]); opt.step(); w
        tensor([ 0.7500, -0.7500], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group_differentiable(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """torch's _single_tensor_adagrad (its differentiable branch), op for op, as recorded
        jaxgrad tensor ops."""
        states = [self._init_state(group, p) for p in params]
        check_differentiable(group)
        lr, decay, lr_decay, eps = (to_scalar(group["lr"]), group["weight_decay"],
                                    group["lr_decay"], group["eps"])
        for p, state in zip(params, states):
            step_t, state_sum = state["step"], state["sum"]
            step_t += 1
            step = step_t.item()
            grad = -p.grad if group["maximize"] else p.grad
            if decay != 0:
                grad = grad.add(p, alpha=as_number(decay, "add", "alpha"))
            clr = lr / (1 + (step - 1) * lr_decay)
            if p.is_complex():  # torch steps complex parameters through real views
                grad, state_sum, p = view_as_real(grad), view_as_real(state_sum), view_as_real(p)
            state_sum.addcmul_(grad, grad, value=1)
            std = state_sum.sqrt() + eps
            p.addcdiv_(grad, std, value=as_number(-clr, "addcdiv_", "value"))

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._init_state(group, p) for p in params]
        if group["fused"] and any(p.is_complex() for p in params):
            raise RuntimeError("`fused` does not support sparse grad or complex param")
        kernel = _adagrad_kernel(bool(group["maximize"]), group["weight_decay"] != 0)
        hyper = hyper_vector(group[k] for k in ("lr", "lr_decay", "weight_decay", "eps"))
        new_params, new_sums, new_steps = kernel(
            [p._value for p in params], [p.grad._value for p in params],
            [s["sum"]._value for s in states], [s["step"]._value for s in states], hyper)
        # torch's fused kernel writes the parameters and sums without bumping their versions
        inplace_ops = 0 if group["fused"] else 1
        for p, state, array, total, step in zip(params, states, new_params, new_sums,
                                                new_steps):
            store(state["step"], step, 1)  # step_t += 1
            store(state["sum"], total, inplace_ops)  # state_sum.addcmul_
            store(p, array, inplace_ops)  # param.addcdiv_


def _check_fused_param(p: Tensor) -> None:
    """torch's _device_dtype_check_for_fused: fused steps need floating point parameters."""
    if not (p.device.type in _FUSED_DEVICES and p.is_floating_point()):
        raise RuntimeError(
            "`fused=True` requires all the params to be floating point Tensors of supported "
            f"devices: {_FUSED_DEVICES} but {p.dtype} and {p.device.type}")


@jitted_kernel
def _adagrad_kernel(maximize: bool, weight_decay: bool):
    """torch's _single_tensor_adagrad on arrays: new params, sums and steps."""

    def update(params, grads, sums, steps, hyper):
        lr, lr_decay, decay, eps = (hyper[i] for i in range(4))
        new_params, new_sums, new_steps = [], [], []
        for p0, g, s0, step in zip(params, grads, sums, steps):
            step = step + 1
            if maximize:
                g = -g
            if weight_decay:
                g = add_scaled(g, p0, decay)
            clr = lr / (1 + (step.astype(jnp.float64) - 1) * lr_decay)
            p, g, s = real_view(p0), real_view(g), real_view(s0)
            s = addcmul(s, g, g, 1)
            std = add_scalar(jnp.sqrt(s), eps)
            p = addcdiv(p, g, std, -clr)
            new_params.append(complex_like(p, p0))
            new_sums.append(complex_like(s, s0))
            new_steps.append(step)
        return new_params, new_sums, new_steps

    return update
