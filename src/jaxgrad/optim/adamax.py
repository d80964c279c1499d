"""``Adamax``: Adam with the infinity norm of past gradients in place of their RMS."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import jax.numpy as jnp

from .._core.tensor import Tensor
from .._functions.complex_numbers import view_as_real
from .._functions.joins import cat
from .._ops.half_precision import add_scalar, add_scaled, addcdiv, lerp_scalar, times_scalar
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

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax, as ``torch.optim.Adamax`` (torch's single-tensor formulas, step by step).

    Per parameter: ``exp_avg = lerp(exp_avg, g, 1 - beta1)``,
    ``exp_inf = max(beta2 * exp_inf, |g| + eps)`` and
    ``p -= lr / (1 - beta1 ** step) * exp_avg / exp_inf``. State: ``step`` (a 0-d float
    tensor), ``exp_avg`` and ``exp_inf``.

    >>> import jaxgrad
    >>> w = jaxgrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = jaxgrad.optim.Adamax([w], lr=0.1)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.8052, -1.8025], requires_grad=True)
    >>> opt.state[w]["exp_inf"]
    tensor([1.9980, 3.9960])
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]],
                 lr: float | Tensor = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
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
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        fill_group_defaults(self, (("foreach", None), ("maximize", False),
                                  ("differentiable", False), ("capturable", False)))

    def _init_state(self, p: Tensor) -> dict[str, Any]:
        state = self.state[p]
        if len(state) == 0:
            state.update(zero_state(p, "exp_avg", "exp_inf"))
        return state

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Adamax step for every parameter with a gradient; ``closure`` (re)computes the
        loss.

        Returns the closure's loss (None without a closure). With ``differentiable=True`` the
        step runs with grad mode on and autograd records the update.

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = jaxgrad.optim.Adamax([w], lr=0.5)
        >>> w.grad = jaxgrad.tensor([0.1, -3.0]); opt.step(); w
        tensor([ 0.5000, -0.5000], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group_differentiable(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """torch's _single_tensor_adamax (its differentiable branch), op for op, as recorded
        jaxgrad tensor ops."""
        states = [self._init_state(p) for p in params]
        check_differentiable(group)
        if group["capturable"]:
            check_capturable(params)
        lr, eps, decay = to_scalar(group["lr"]), group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        for p, state in zip(params, states):
            grad = -p.grad if group["maximize"] else p.grad
            exp_avg, exp_inf, step_t = state["exp_avg"], state["exp_inf"], state["step"]
            step_t += 1
            if decay != 0:
                grad = grad.add(p, alpha=as_number(decay, "add", "alpha"))
            if p.is_complex():  # torch steps complex parameters through real views
                p, grad, exp_avg, exp_inf = (view_as_real(t) for t in (p, grad, exp_avg, exp_inf))
            exp_avg.lerp_(grad, 1 - beta1)
            norm_buf = cat([exp_inf.mul_(beta2).unsqueeze(0),
                            grad.abs().add_(eps).unsqueeze_(0)], 0)
            exp_inf.copy_(norm_buf.amax(0, keepdim=False))
            if group["capturable"]:
                neg_bias_correction = beta1 ** step_t - 1
                neg_bias_correction.div_(lr)
                p.addcdiv_(exp_avg, exp_inf * neg_bias_correction)
            else:
                clr = lr / (1 - beta1 ** step_t.item())
                p.addcdiv_(exp_avg, exp_inf, value=as_number(-clr, "addcdiv_", "value"))

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._init_state(p) for p in params]
        capturable = bool(group["capturable"])
        if capturable:
            check_capturable(params, xla=not group["foreach"])
        kernel = _adamax_kernel(bool(group["maximize"]), group["weight_decay"] != 0,
                                capturable)
        beta1, beta2 = group["betas"]
        hyper = hyper_vector((group["lr"], beta1, beta2, group["eps"], group["weight_decay"]))
        new_params, new_avgs, new_infs, new_steps = kernel(
            [p._value for p in params], [p.grad._value for p in params],
            [s["exp_avg"]._value for s in states], [s["exp_inf"]._value for s in states],
            [s["step"]._value for s in states], hyper)
        for p, state, array, avg, inf, step in zip(params, states, new_params, new_avgs,
                                                   new_infs, new_steps):
            store(state["step"], step, 1)  # step_t += 1
            store(state["exp_avg"], avg, 1)  # exp_avg.lerp_
            store(state["exp_inf"], inf, 2)  # exp_inf.mul_, torch.maximum(out=exp_inf)
            store(p, array, 1)  # param.addcdiv_


@jitted_kernel
def _adamax_kernel(maximize: bool, weight_decay: bool, capturable: bool):
    """torch's _single_tensor_adamax on arrays: new params, exp_avgs, exp_infs and steps."""

    def update(params, grads, exp_avgs, exp_infs, steps, hyper):
        lr, beta1, beta2, eps, decay = (hyper[i] for i in range(5))
        out = [], [], [], []
        for p0, g, avg0, inf0, step in zip(params, grads, exp_avgs, exp_infs, steps):
            step = step + 1
            if maximize:
                g = -g
            if weight_decay:
                g = add_scaled(g, p0, decay)
            p, g = real_view(p0), real_view(g)
            exp_avg = lerp_scalar(real_view(avg0), g, 1 - beta1)
            exp_inf = jnp.maximum(times_scalar(real_view(inf0), beta2),
                                  add_scalar(jnp.abs(g), eps))
            if capturable:  # 0-d tensor arithmetic in the step's dtype, as torch's
                neg_bias_correction = (beta1.astype(step.dtype) ** step - 1) / lr.astype(
                    step.dtype)
                p = addcdiv(p, exp_avg, exp_inf * neg_bias_correction.astype(exp_inf.dtype), 1)
            else:
                clr = lr / (1 - beta1 ** step.astype(jnp.float64))
                p = addcdiv(p, exp_avg, exp_inf, -clr)
            for results, value in zip(out, (complex_like(p, p0), complex_like(exp_avg, p0),
                                            complex_like(exp_inf, p0), step)):
                results.append(value)
        return out

    return update
