"""``RAdam``: Adam with the variance of the adaptive learning rate rectified."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import jax.numpy as jnp

from .._core.tensor import Tensor
from .._functions.complex_numbers import view_as_real
from .._ops.half_precision import (
    add_scalar,
    add_scaled,
    addcmul,
    div_scalar,
    lerp_scalar,
    scalar_over,
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

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam, as ``torch.optim.RAdam`` (torch's single-tensor formulas, step by step).

    Per parameter: Adam's moving averages; while the length of the approximated simple moving
    average ``rho_t`` is at most 5 the step is ``p -= lr * exp_avg / (1 - beta1 ** step)``
    (momentum SGD), afterwards it is scaled by the adaptive learning rate
    ``sqrt(1 - beta2 ** step) / (sqrt(exp_avg_sq) + eps)`` and the rectification term. State:
    ``step`` (a 0-d float tensor), ``exp_avg`` and ``exp_avg_sq``.
    ``decoupled_weight_decay=True`` is RAdamW.

    >>> import jaxgrad
    >>> w = jaxgrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = jaxgrad.optim.RAdam([w], lr=0.1)
    >>> for _ in range(7):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.1970, -0.3986], requires_grad=True)
    >>> opt.state[w]["step"]
    tensor(7.)
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]],
                 lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        fill_group_defaults(self, (("foreach", None), ("maximize", False),
                                  ("differentiable", False), ("decoupled_weight_decay", False),
                                  ("capturable", False)))

    def _init_state(self, p: Tensor) -> dict[str, Any]:
        state = self.state[p]
        if len(state) == 0:
            state.update(zero_state(p, "exp_avg", "exp_avg_sq"))
        return state

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One RAdam step for every parameter with a gradient; ``closure`` (re)computes the
        loss.

        Returns the closure's loss (None without a closure). With ``differentiable=True`` the
        step runs with grad mode on and autograd records the update.

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = jaxgrad.optim.RAdam([w], lr=0.5)
        >>> w.grad = jaxgrad.tensor([0.1, -3.0]); opt.step(); w
        tensor([0.9500, 0.5000], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group_differentiable(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """torch's _single_tensor_radam (its differentiable branch), op for op, as recorded
        jaxgrad tensor ops."""
        states = [self._init_state(p) for p in params]
        check_differentiable(group)
        if group["capturable"]:
            check_capturable(params)
        lr, decay, eps = to_scalar(group["lr"]), group["weight_decay"], group["eps"]
        beta1, beta2 = group["betas"]
        for p, state in zip(params, states):
            grad = -p.grad if group["maximize"] else p.grad
            exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
            if p.is_complex():  # torch steps complex parameters through real views
                p, grad, exp_avg, exp_avg_sq = (view_as_real(t)
                                                for t in (p, grad, exp_avg, exp_avg_sq))
            step_t += 1
            step = step_t.item()
            if decay != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * decay)
                else:
                    grad = grad.add(p, alpha=as_number(decay, "add", "alpha"))
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            bias_corrected_exp_avg = exp_avg / bias_correction1
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add(eps)
                p.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
            else:
                p.add_(bias_corrected_exp_avg * lr, alpha=-1.0)

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._init_state(p) for p in params]
        if group["capturable"]:
            check_capturable(params, xla=not group["foreach"])
        decays = group["weight_decay"] != 0
        decoupled = bool(group["decoupled_weight_decay"]) and decays
        kernel = _radam_kernel(bool(group["maximize"]), decays, decoupled)
        beta1, beta2 = group["betas"]
        hyper = hyper_vector((group["lr"], beta1, beta2, group["eps"], group["weight_decay"]))
        new_params, new_avgs, new_sqs, new_steps = kernel(
            [p._value for p in params], [p.grad._value for p in params],
            [s["exp_avg"]._value for s in states], [s["exp_avg_sq"]._value for s in states],
            [s["step"]._value for s in states], hyper)
        for p, state, array, avg, sq, step in zip(params, states, new_params, new_avgs,
                                                  new_sqs, new_steps):
            store(state["step"], step, 1)  # step_t += 1
            store(state["exp_avg"], avg, 1)  # exp_avg.lerp_
            store(state["exp_avg_sq"], sq, 2)  # exp_avg_sq.mul_().addcmul_
            store(p, array, 2 if decoupled else 1)  # [param.mul_], param.add_


@jitted_kernel
def _radam_kernel(maximize: bool, weight_decay: bool, decoupled: bool):
    """torch's _single_tensor_radam on arrays: new params, exp_avgs, exp_avg_sqs and steps
    (torch's Python-side branch on ``rho_t > 5`` as a select)."""

    def update(params, grads, exp_avgs, exp_avg_sqs, steps, hyper):
        lr, beta1, beta2, eps, decay = (hyper[i] for i in range(5))
        out = [], [], [], []
        for p0, g, avg0, sq0, step in zip(params, grads, exp_avgs, exp_avg_sqs, steps):
            step = step + 1
            if maximize:
                g = -g
            p, g = real_view(p0), real_view(g)
            t = step.astype(jnp.float64)
            if weight_decay and decoupled:
                p = times_scalar(p, 1 - lr * decay)
            elif weight_decay:
                g = add_scaled(g, p, decay)
            exp_avg = lerp_scalar(real_view(avg0), g, 1 - beta1)
            exp_avg_sq = addcmul(times_scalar(real_view(sq0), beta2), g, g, 1 - beta2)
            bias_correction1 = 1 - beta1 ** t
            bias_correction2 = 1 - beta2 ** t
            bias_corrected_exp_avg = div_scalar(exp_avg, bias_correction1)
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * t * (beta2 ** t) / bias_correction2
            rect = jnp.sqrt(jnp.maximum((rho_t - 4) * (rho_t - 2) * rho_inf
                                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t), 0))
            adaptive_lr = scalar_over(bias_correction2 ** 0.5,
                                      add_scalar(jnp.sqrt(exp_avg_sq), eps))
            momentum = times_scalar(bias_corrected_exp_avg, lr)
            rectified = times_scalar(momentum * adaptive_lr, rect)
            p = add_scaled(p, jnp.where(rho_t > 5.0, rectified, momentum), -1.0)
            for results, value in zip(out, (complex_like(p, p0), complex_like(exp_avg, p0),
                                            complex_like(exp_avg_sq, p0), step)):
                results.append(value)
        return out

    return update
