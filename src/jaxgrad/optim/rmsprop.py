"""``RMSprop``: gradients scaled by a running root mean square (centered, with momentum)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import jax.numpy as jnp

from .._core.tensor import Tensor
from .._functions.complex_numbers import view_as_real
from .._ops.half_precision import (
    add_scalar,
    add_scaled,
    addcdiv,
    addcmul,
    lerp_scalar,
    times_scalar,
)
from ._common import (
    as_number,
    check_capturable,
    check_differentiable,
    complex_like,
    fill_group_defaults,
    real_view,
    zero_state,
)
from .optimizer import (
    Optimizer,
    hyper_vector,
    jitted_kernel,
    store,
    to_scalar,
    use_grad_for_differentiable,
)

__all__ = ["RMSprop"]

# in-place ops torch's single-tensor step runs on each state tensor
_STATE_OPS = {"square_avg": 2, "grad_avg": 1, "momentum_buffer": 2}


class RMSprop(Optimizer):
    """RMSprop, as ``torch.optim.RMSprop`` (torch's single-tensor formulas, step by step).

    Per parameter: ``square_avg = alpha * square_avg + (1 - alpha) * g * g``; the update
    divides ``g`` by ``sqrt(square_avg) + eps`` (``centered``: ``square_avg`` minus the square
    of the running mean ``grad_avg`` of the gradients), through a ``momentum_buffer`` when
    ``momentum > 0``. State: ``step`` (a 0-d float tensor), ``square_avg`` and, when used,
    ``momentum_buffer`` and ``grad_avg``.

    >>> import jaxgrad
    >>> w = jaxgrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = jaxgrad.optim.RMSprop([w], lr=0.1, momentum=0.5, centered=True)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([-0.5025, -0.0412], requires_grad=True)
    >>> sorted(opt.state[w])
    ['grad_avg', 'momentum_buffer', 'square_avg', 'step']
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]],
                 lr: float | Tensor = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not momentum >= 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not alpha >= 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        fill_group_defaults(self, (("momentum", 0), ("centered", False), ("foreach", None),
                                  ("maximize", False), ("differentiable", False),
                                  ("capturable", False)))

    def _init_state(self, group: dict[str, Any], p: Tensor) -> dict[str, Any]:
        state = self.state[p]
        if len(state) == 0:
            state.update(zero_state(p, "square_avg",
                                    *["momentum_buffer"] * (group["momentum"] > 0),
                                    *["grad_avg"] * bool(group["centered"])))
        return state

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One RMSprop step for every parameter with a gradient; ``closure`` (re)computes the
        loss.

        Returns the closure's loss (None without a closure). With ``differentiable=True`` the
        step runs with grad mode on and autograd records the update.

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = jaxgrad.optim.RMSprop([w], lr=0.01, alpha=0.75)
        >>> w.grad = jaxgrad.tensor([3.0, -0.5]); opt.step(); w
        tensor([ 0.9800, -0.9800], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group_differentiable(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """torch's _single_tensor_rmsprop (its differentiable branch), op for op, as recorded
        jaxgrad tensor ops."""
        states = [self._init_state(group, p) for p in params]
        check_differentiable(group)
        if group["capturable"]:
            check_capturable(params)
        lr, alpha, eps, decay, momentum = (to_scalar(group["lr"]), group["alpha"], group["eps"],
                                           group["weight_decay"], group["momentum"])
        for p, state in zip(params, states):
            grad = -p.grad if group["maximize"] else p.grad
            square_avg = state["square_avg"]
            step = state["step"]
            step += 1
            if decay != 0:
                grad = grad.add(p, alpha=as_number(decay, "add", "alpha"))
            is_complex = p.is_complex()
            if is_complex:  # torch steps complex parameters through real views
                p, grad, square_avg = view_as_real(p), view_as_real(grad), view_as_real(square_avg)
            square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
            if group["centered"]:
                grad_avg = view_as_real(state["grad_avg"]) if is_complex else state["grad_avg"]
                grad_avg.lerp_(grad, 1 - alpha)
                avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
            else:
                avg = square_avg.sqrt()
            avg = avg.add(eps)
            if momentum > 0:
                buf = state["momentum_buffer"]
                buf = view_as_real(buf) if is_complex else buf
                buf.mul_(momentum).addcdiv_(grad, avg)
                p.add_(buf, alpha=as_number(-lr, "add_", "alpha"))
            else:
                p.addcdiv_(grad, avg, value=as_number(-lr, "addcdiv_", "value"))

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._init_state(group, p) for p in params]
        if group["capturable"]:
            check_capturable(params)
        use_momentum, centered = group["momentum"] > 0, bool(group["centered"])
        names = ["square_avg"]
        if use_momentum:
            names.append("momentum_buffer")
        if centered:
            names.append("grad_avg")
        kernel = _rmsprop_kernel(bool(group["maximize"]), group["weight_decay"] != 0,
                                 centered, use_momentum)
        hyper = hyper_vector(group[k] for k in ("lr", "alpha", "eps", "weight_decay",
                                                "momentum"))
        new_params, new_arrays, new_steps = kernel(
            [p._value for p in params], [p.grad._value for p in params],
            [{n: s[n]._value for n in names} for s in states],
            [s["step"]._value for s in states], hyper)
        for p, state, array, arrays, step in zip(params, states, new_params, new_arrays,
                                                 new_steps):
            store(state["step"], step, 1)  # step += 1
            for name in names:
                store(state[name], arrays[name], _STATE_OPS[name])
            store(p, array, 1)  # param.addcdiv_ (or param.add_(buf))


@jitted_kernel
def _rmsprop_kernel(maximize: bool, weight_decay: bool, centered: bool, momentum: bool):
    """torch's _single_tensor_rmsprop on arrays: new params, state arrays and steps."""

    def update(params, grads, state_arrays, steps, hyper):
        lr, alpha, eps, decay, mom = (hyper[i] for i in range(5))
        new_params, new_arrays, new_steps = [], [], []
        for p0, g, arrays, step in zip(params, grads, state_arrays, steps):
            step = step + 1
            if maximize:
                g = -g
            if weight_decay:
                g = add_scaled(g, p0, decay)
            p, g = real_view(p0), real_view(g)
            out = {}
            square_avg = addcmul(times_scalar(real_view(arrays["square_avg"]), alpha), g, g,
                                 1 - alpha)
            out["square_avg"] = square_avg
            if centered:
                grad_avg = lerp_scalar(real_view(arrays["grad_avg"]), g, 1 - alpha)
                out["grad_avg"] = grad_avg
                avg = jnp.sqrt(addcmul(square_avg, grad_avg, grad_avg, -1))
            else:
                avg = jnp.sqrt(square_avg)
            avg = add_scalar(avg, eps)
            if momentum:
                buf = addcdiv(times_scalar(real_view(arrays["momentum_buffer"]), mom), g,
                              avg, 1)
                out["momentum_buffer"] = buf
                p = add_scaled(p, buf, -lr)
            else:
                p = addcdiv(p, g, avg, -lr)
            new_params.append(complex_like(p, p0))
            new_arrays.append({k: complex_like(v, p0) for k, v in out.items()})
            new_steps.append(step)
        return new_params, new_arrays, new_steps

    return update
