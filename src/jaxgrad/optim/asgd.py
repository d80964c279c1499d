"""``ASGD``: averaged stochastic gradient descent (with a running average ``ax`` of the
parameters)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import jax
import jax.numpy as jnp

from .._core.dtypes import float64, get_default_dtype
from .._core.jax_setup import x64_scope
from .._core.tensor import Tensor
from .._functions.complex_numbers import view_as_real
from .._functions.creation import tensor as new_tensor
from .._ops.half_precision import add_scaled, times_scalar
from ._common import (
    _CAPTURABLE_DEVICES,
    as_number,
    check_differentiable,
    complex_like,
    fill_group_defaults,
    real_view,
    scalar_dtype,
)
from .optimizer import (
    Optimizer,
    hyper_vector,
    jitted_kernel,
    store,
    to_scalar,
    use_grad_for_differentiable,
)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """ASGD, as ``torch.optim.ASGD`` (torch's single-tensor formulas, step by step).

    Per parameter: ``p = p * (1 - lambd * eta) - eta * g``; the average ``ax`` copies ``p``
    while ``mu == 1`` and then moves towards it by ``mu``; afterwards
    ``eta = lr / (1 + lambd * lr * step) ** alpha`` and ``mu = 1 / max(1, step - t0)``. State:
    ``step``, ``eta`` and ``mu`` (0-d float tensors) and ``ax``.

    >>> import jaxgrad
    >>> w = jaxgrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = jaxgrad.optim.ASGD([w], lr=0.1, t0=1)
    >>> for _ in range(4):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.4096, -0.8192], requires_grad=True)
    >>> opt.state[w]["ax"], opt.state[w]["mu"]
    (tensor([ 0.4608, -0.9216]), tensor(0.3333))
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]],
                 lr: float | Tensor = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        fill_group_defaults(self, (("foreach", None), ("maximize", False),
                                  ("differentiable", False), ("capturable", False)))
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0:
                    for key in ("eta", "mu"):
                        if not isinstance(p_state[key], Tensor):
                            p_state[key] = new_tensor(p_state[key], dtype=scalar_dtype())

    def _init_state(self, group: dict[str, Any], p: Tensor) -> dict[str, Any]:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_tensor(0.0, dtype=scalar_dtype())
            state["eta"] = _scalar_tensor(to_scalar(group["lr"]))
            state["mu"] = new_tensor(1.0, dtype=scalar_dtype())
            state["ax"] = Tensor._make(jnp.zeros_like(p._value))
        return state

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One ASGD step for every parameter with a gradient; ``closure`` (re)computes the
        loss.

        Returns the closure's loss (None without a closure). With ``differentiable=True`` the
        step runs with grad mode on and autograd records the update.

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = jaxgrad.optim.ASGD([w], lr=0.5, lambd=0.0)
        >>> w.grad = jaxgrad.tensor([0.1, -3.0]); opt.step(); w
        tensor([0.9500, 0.5000], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group_differentiable(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """torch's _single_tensor_asgd (its differentiable branch), op for op, as recorded
        jaxgrad tensor ops."""
        states = [self._init_state(group, p) for p in params]
        check_differentiable(group)
        if group["capturable"]:
            _check_capturable(params, foreach=False)
        lr, decay = to_scalar(group["lr"]), group["weight_decay"]
        lambd, alpha, t0 = group["lambd"], group["alpha"], group["t0"]
        for p, state in zip(params, states):
            grad = -p.grad if group["maximize"] else p.grad
            mu, ax, eta, step_t = state["mu"], state["ax"], state["eta"], state["step"]
            if p.is_complex():  # torch steps complex parameters through real views
                grad, p, ax = view_as_real(grad), view_as_real(p), view_as_real(ax)
            step_t += 1
            if decay != 0:
                grad = grad.add(p, alpha=as_number(decay, "add", "alpha"))
            eta_value = eta.item()
            p.mul_(1 - lambd * eta_value)
            p.add_(grad, alpha=-eta_value)
            if mu.item() != 1:
                ax.add_(p.sub(ax).mul_(mu))
            else:
                ax.copy_(p)
            step = step_t.item()
            eta.copy_(_as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
            mu.copy_(_as_tensor(1 / max(1, step - t0)))

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._init_state(group, p) for p in params]
        if group["capturable"]:
            _check_capturable(params, foreach=bool(group["foreach"]))
        kernel = _asgd_kernel(bool(group["maximize"]), group["weight_decay"] != 0,
                              get_default_dtype() is float64)
        hyper = hyper_vector(group[k] for k in ("lr", "lambd", "alpha", "t0", "weight_decay"))
        new_params, new_axs, new_etas, new_mus, new_steps = kernel(
            [p._value for p in params], [p.grad._value for p in params],
            [s["ax"]._value for s in states], [s["eta"]._value for s in states],
            [s["mu"]._value for s in states], [s["step"]._value for s in states], hyper)
        for p, state, array, ax, eta, mu, step in zip(params, states, new_params, new_axs,
                                                      new_etas, new_mus, new_steps):
            store(state["step"], step, 1)  # step_t += 1
            store(p, array, 2)  # param.mul_, param.add_
            store(state["ax"], ax, 1)  # ax.add_ (or ax.copy_)
            store(state["eta"], eta, 1)  # eta.copy_
            store(state["mu"], mu, 1)  # mu.copy_


def _scalar_tensor(value: Any) -> Tensor:
    """torch.as_tensor(value, dtype=<scalar dtype>) for a number or a one-element tensor,
    also traced (a learning rate under ``jaxgrad.compile``)."""
    if isinstance(value, Tensor):
        value = value._value.reshape(())
    if isinstance(value, jax.core.Tracer):
        with x64_scope():
            return Tensor._make(jnp.asarray(value).astype(scalar_dtype().dtype))
    return new_tensor(float(value), dtype=scalar_dtype())


def _as_tensor(value: Any) -> Tensor:
    """torch.as_tensor of a number (a default-dtype tensor) or of a tensor (itself)."""
    return value if isinstance(value, Tensor) else new_tensor(value)


def _check_capturable(params: list[Tensor], foreach: bool) -> None:
    """torch's check that capturable steps run on a device that can capture graphs."""
    devices = _CAPTURABLE_DEVICES[:-1] if foreach else _CAPTURABLE_DEVICES
    if not all(p.device.type in devices for p in params):
        raise AssertionError("If capturable=True, params, mus, etas, and state_steps must be "
                             f"on supported devices: {devices}.")


@jitted_kernel
def _asgd_kernel(maximize: bool, weight_decay: bool, default_float64: bool):
    """torch's _single_tensor_asgd on arrays: new params, axs, etas, mus and steps (``eta``
    and ``mu`` computed as torch's Python numbers, made default-dtype tensors, copied)."""
    default = jnp.float64 if default_float64 else jnp.float32

    def update(params, grads, axs, etas, mus, steps, hyper):
        lr, lambd, alpha, t0, decay = (hyper[i] for i in range(5))
        out = [], [], [], [], []
        for p0, g, ax0, eta, mu, step in zip(params, grads, axs, etas, mus, steps):
            step = step + 1
            if maximize:
                g = -g
            p, g, ax = real_view(p0), real_view(g), real_view(ax0)
            if weight_decay:
                g = add_scaled(g, p, decay)
            eta_value = eta.astype(jnp.float64)
            p = add_scaled(times_scalar(p, 1 - lambd * eta_value), g, -eta_value)
            ax = jnp.where(mu != 1, ax + times_scalar(p - ax, mu), p)
            t = step.astype(jnp.float64)
            new_eta = (lr / ((1 + lambd * lr * t) ** alpha)).astype(default).astype(eta.dtype)
            new_mu = (1 / jnp.maximum(1, t - t0)).astype(default).astype(mu.dtype)
            for results, value in zip(out, (complex_like(p, p0), complex_like(ax, p0),
                                            new_eta, new_mu, step)):
                results.append(value)
        return out

    return update
