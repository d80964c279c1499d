"""``NAdam``: Adam with Nesterov momentum (momentum decay schedule ``mu_t``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import jax.numpy as jnp

from .._core.tensor import Tensor
from .._functions.complex_numbers import view_as_real
from .._functions.creation import tensor as new_tensor
from .._ops.half_precision import (
    add_scalar,
    add_scaled,
    addcdiv,
    addcmul,
    div_scalar,
    lerp_scalar,
    times_scalar,
)
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

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam, as ``torch.optim.NAdam`` (torch's single-tensor formulas, step by step).

    Per parameter: ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (step * momentum_decay))``,
    ``mu_product *= mu_t``, Adam's moving averages, and the Nesterov update
    ``p -= lr * ((1 - mu_t) / (1 - mu_product) * g
    + mu_{t+1} / (1 - mu_product * mu_{t+1}) * exp_avg) / (sqrt(exp_avg_sq / bc2) + eps)``.
    State: ``step`` and ``mu_product`` (0-d float tensors), ``exp_avg`` and ``exp_avg_sq``.
    ``decoupled_weight_decay=True`` is NAdamW.

    >>> import jaxgrad
    >>> w = jaxgrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = jaxgrad.optim.NAdam([w], lr=0.1)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.8200, -1.8179], requires_grad=True)
    >>> sorted(opt.state[w]), opt.state[w]["step"]
    (['exp_avg', 'exp_avg_sq', 'mu_product', 'step'], tensor(2.))
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]],
                 lr: float | Tensor = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
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
        if not momentum_decay >= 0.0:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        fill_group_defaults(self, (("maximize", False), ("foreach", None), ("capturable", False),
                                  ("differentiable", False), ("decoupled_weight_decay", False)))
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["mu_product"], Tensor):
                    p_state["mu_product"] = new_tensor(p_state["mu_product"],
                                                       dtype=scalar_dtype())

    def _init_state(self, p: Tensor) -> dict[str, Any]:
        state = self.state[p]
        if len(state) == 0:
            zeros = jnp.zeros_like(p._value)
            state["step"] = new_tensor(0.0, dtype=scalar_dtype())
            state["mu_product"] = new_tensor(1.0, dtype=scalar_dtype())
            state["exp_avg"] = Tensor._make(zeros)
            state["exp_avg_sq"] = Tensor._make(zeros)
        return state

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One NAdam step for every parameter with a gradient; ``closure`` (re)computes the
        loss.

        Returns the closure's loss (None without a closure). With ``differentiable=True`` the
        step runs with grad mode on and autograd records the update.

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = jaxgrad.optim.NAdam([w], lr=0.5)
        >>> w.grad = jaxgrad.tensor([0.1, -3.0]); opt.step(); w
        tensor([ 0.4718, -0.4718], requires_grad=True)
        >>> opt.state[w]["mu_product"]
        tensor(0.4501)
        """
        return self._step_groups(closure)

    def _update_group_differentiable(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """torch's _single_tensor_nadam (its differentiable branch), op for op, as recorded
        jaxgrad tensor ops."""
        states = [self._init_state(p) for p in params]
        check_differentiable(group)
        if group["capturable"]:
            _check_capturable(params, foreach=False)
        lr, decay, eps = to_scalar(group["lr"]), group["weight_decay"], group["eps"]
        beta1, beta2 = group["betas"]
        momentum_decay = group["momentum_decay"]
        for p, state in zip(params, states):
            grad = -p.grad if group["maximize"] else p.grad
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            mu_product, step_t = state["mu_product"], state["step"]
            if p.is_complex():  # torch steps complex parameters through real views
                p, grad, exp_avg, exp_avg_sq = (view_as_real(t)
                                                for t in (p, grad, exp_avg, exp_avg_sq))
            step_t += 1
            step = step_t.item()
            bias_correction2 = 1 - beta2 ** step
            if decay != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * decay)
                else:
                    grad = grad.add(p, alpha=as_number(decay, "add", "alpha"))
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product *= mu
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            denom = exp_avg_sq.div(bias_correction2).sqrt()
            denom = denom.add(eps)
            mu_product_next = mu_product * mu_next
            grad = grad * (-lr * (1.0 - mu) / (1.0 - mu_product))
            scaled_avg = exp_avg * (-lr * mu_next / (1.0 - mu_product_next))
            p.addcdiv_(grad, denom)
            p.addcdiv_(scaled_avg, denom)

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._init_state(p) for p in params]
        if group["capturable"]:
            _check_capturable(params, foreach=bool(group["foreach"]))
        decays = group["weight_decay"] != 0
        decoupled = bool(group["decoupled_weight_decay"]) and decays
        kernel = _nadam_kernel(bool(group["maximize"]), decays, decoupled)
        beta1, beta2 = group["betas"]
        hyper = hyper_vector((group["lr"], beta1, beta2, group["eps"], group["weight_decay"],
                              group["momentum_decay"]))
        new_params, new_avgs, new_sqs, new_mus, new_steps = kernel(
            [p._value for p in params], [p.grad._value for p in params],
            [s["exp_avg"]._value for s in states], [s["exp_avg_sq"]._value for s in states],
            [s["mu_product"]._value for s in states], [s["step"]._value for s in states],
            hyper)
        for p, state, array, avg, sq, mu_product, step in zip(
                params, states, new_params, new_avgs, new_sqs, new_mus, new_steps):
            store(state["step"], step, 1)  # step_t += 1
            store(state["mu_product"], mu_product, 1)  # mu_product *= mu
            store(state["exp_avg"], avg, 1)  # exp_avg.lerp_
            store(state["exp_avg_sq"], sq, 2)  # exp_avg_sq.mul_().addcmul_
            store(p, array, 3 if decoupled else 2)  # [param.mul_], 2 x param.addcdiv_


def _check_capturable(params: list[Tensor], foreach: bool) -> None:
    """torch's check (single-tensor or foreach wording) that capturable steps run on a device
    that can capture graphs."""
    devices = _CAPTURABLE_DEVICES[:-1] if foreach else _CAPTURABLE_DEVICES
    if not all(p.device.type in devices for p in params):
        which = ("params, mu_products, and state_steps" if foreach
                 else "params, mu_products and state_steps")
        raise AssertionError(f"If capturable=True, {which} must be on supported devices: "
                             f"{devices}.")


@jitted_kernel
def _nadam_kernel(maximize: bool, weight_decay: bool, decoupled: bool):
    """torch's _single_tensor_nadam on arrays: new params, exp_avgs, exp_avg_sqs, mu_products
    and steps (the Python-side scalars torch computes from ``.item()`` in float64)."""

    def update(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps, hyper):
        lr, beta1, beta2, eps, decay, momentum_decay = (hyper[i] for i in range(6))
        out = [], [], [], [], []
        for p0, g, avg0, sq0, mu_product, step in zip(params, grads, exp_avgs, exp_avg_sqs,
                                                       mu_products, steps):
            step = step + 1
            if maximize:
                g = -g
            p, g = real_view(p0), real_view(g)
            t = step.astype(jnp.float64)
            bias_correction2 = 1 - beta2 ** t
            if weight_decay and decoupled:
                p = times_scalar(p, 1 - lr * decay)
            elif weight_decay:
                g = add_scaled(g, p, decay)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (t * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((t + 1) * momentum_decay)))
            mu_product = times_scalar(mu_product, mu)
            exp_avg = lerp_scalar(real_view(avg0), g, 1 - beta1)
            exp_avg_sq = addcmul(times_scalar(real_view(sq0), beta2), g, g, 1 - beta2)
            denom = add_scalar(jnp.sqrt(div_scalar(exp_avg_sq, bias_correction2)), eps)
            mu_product_value = mu_product.astype(jnp.float64)
            mu_product_next = mu_product_value * mu_next
            p = addcdiv(p, g, denom, -lr * (1.0 - mu) / (1.0 - mu_product_value))
            p = addcdiv(p, exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product_next))
            for results, value in zip(out, (complex_like(p, p0), complex_like(exp_avg, p0),
                                            complex_like(exp_avg_sq, p0), mu_product, step)):
                results.append(value)
        return out

    return update
