"""``Adam``: adaptive moment estimation (with AMSGrad, maximize, L2 or decoupled weight decay)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import jax.numpy as jnp

from .._core.dtypes import float32, float64, get_default_dtype
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
from ._common import check_differentiable, complex_like, real_view
from .optimizer import (
    Optimizer,
    check_fused,
    host_float,
    hyper_vector,
    jitted_kernel,
    store,
    to_scalar,
    use_grad_for_differentiable,
)

_STATE_ARRAYS = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam`` (torch's single-tensor formulas, step by step).

    State per parameter: ``step`` (a 0-d float tensor), ``exp_avg``, ``exp_avg_sq`` and, with
    ``amsgrad``, ``max_exp_avg_sq``. ``decoupled_weight_decay=True`` is AdamW.

    >>> import jaxgrad
    >>> w = jaxgrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = jaxgrad.optim.Adam([w], lr=0.1)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.7016, -1.7006], requires_grad=True)
    >>> opt.state[w]["step"]
    tensor(3.)
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]],
                 lr: float | Tensor = 1e-3,
                 betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError(
                    "lr as a Tensor is not supported for capturable=False and foreach=True")
            if lr.numel() != 1:
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
        _check_betas(betas, foreach, capturable)
        defaults = {"lr": lr, "betas": tuple(map(to_scalar, betas)), "eps": eps,
                    "weight_decay": weight_decay, "amsgrad": amsgrad, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        check_fused(fused, differentiable, foreach)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            for key, default in (("amsgrad", False), ("maximize", False), ("foreach", None),
                                 ("capturable", False), ("differentiable", False),
                                 ("decoupled_weight_decay", False), ("fused", None)):
                group.setdefault(key, default)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = new_tensor(float(p_state["step"]),
                                                 dtype=_step_dtype(group))

    def _init_state(self, group: dict[str, Any], p: Tensor) -> dict[str, Any]:
        state = self.state[p]
        if len(state) == 0:
            zeros = jnp.zeros_like(p._value)
            state["step"] = new_tensor(0.0, dtype=_step_dtype(group))
            state["exp_avg"] = Tensor._make(zeros)
            state["exp_avg_sq"] = Tensor._make(zeros)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = Tensor._make(zeros)
        return state

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Adam step for every parameter with a gradient; ``closure`` (re)computes the loss.

        Returns the closure's loss (None without a closure). With ``differentiable=True`` the
        step runs with grad mode on and autograd records the update.

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = jaxgrad.optim.Adam([w], lr=0.5)
        >>> w.grad = jaxgrad.tensor([0.1, -3.0]); opt.step(); w
        tensor([ 0.5000, -0.5000], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group_differentiable(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """torch's _single_tensor_adam (its capturable/differentiable branch), op for op, as
        recorded jaxgrad tensor ops."""
        states = [self._init_state(group, p) for p in params]
        for state in states:
            if state["step"].requires_grad:
                raise RuntimeError(
                    "`requires_grad` is not supported for `step` in differentiable mode")
        self._check_tensor_lr(group)
        check_differentiable(group)
        lr, decay, eps, amsgrad = (to_scalar(group["lr"]), group["weight_decay"], group["eps"],
                                   group["amsgrad"])
        beta1, beta2 = (to_scalar(b) for b in group["betas"])
        for p, state in zip(params, states):
            grad = -p.grad if group["maximize"] else p.grad
            exp_avg, exp_avg_sq, step = state["exp_avg"], state["exp_avg_sq"], state["step"]
            step += 1
            if decay != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * decay)
                elif isinstance(decay, Tensor) and decay.requires_grad:
                    grad = grad.addcmul_(p.clone(), decay)
                else:
                    grad = grad.add(p, alpha=host_float(decay))
            max_sq = state.get("max_exp_avg_sq")
            if p.is_complex():  # torch steps complex parameters through real views
                grad, exp_avg, exp_avg_sq = (view_as_real(t) for t in (grad, exp_avg, exp_avg_sq))
                max_sq = view_as_real(max_sq) if amsgrad else max_sq
                p = view_as_real(p)
            device_beta1 = beta1.to(dtype=p.dtype) if isinstance(beta1, Tensor) else beta1
            exp_avg.lerp_(grad, 1 - device_beta1)
            if isinstance(beta2, Tensor) and beta2.requires_grad:
                exp_avg_sq.lerp_(grad.square(), 1 - beta2)
            else:
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=host_float(1 - beta2))
            grad_beta = (isinstance(beta1, Tensor) and beta1.requires_grad,
                         isinstance(beta2, Tensor) and beta2.requires_grad)
            bias_correction1 = 1 - beta1 ** (step.clone() if grad_beta[0] else step)
            bias_correction2 = 1 - beta2 ** (step.clone() if grad_beta[1] else step)
            step_size_neg = (lr / bias_correction1).neg()
            bias_correction2_sqrt = bias_correction2.sqrt()
            second = exp_avg_sq
            if amsgrad:
                max_sq.copy_(max_sq.clone().maximum(exp_avg_sq))
                second = max_sq
            denom = (second.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(
                eps / step_size_neg)
            p.addcdiv_(exp_avg.clone(), denom)

    def _check_tensor_lr(self, group: dict[str, Any]) -> None:
        if group["foreach"] and isinstance(group["lr"], Tensor) and not group["capturable"]:
            raise RuntimeError(
                "lr as a Tensor is not supported for capturable=False and foreach=True")

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        self._check_tensor_lr(group)
        states = [self._init_state(group, p) for p in params]
        names = _STATE_ARRAYS if group["amsgrad"] else _STATE_ARRAYS[:2]
        decays = group["weight_decay"] != 0
        decoupled = bool(group["decoupled_weight_decay"]) and decays
        kernel = _adam_kernel(bool(group["maximize"]), decays, decoupled, bool(group["amsgrad"]))
        beta1, beta2 = group["betas"]
        hyper = hyper_vector((group["lr"], beta1, beta2, group["eps"], group["weight_decay"]))
        new_params, new_arrays, new_steps = kernel(
            [p._value for p in params], [p.grad._value for p in params],
            [tuple(s[n]._value for n in names) for s in states],
            [s["step"]._value for s in states], hyper)
        for state, arrays, step in zip(states, new_arrays, new_steps):
            store(state["step"], step, 1)  # step_t += 1
            for name, array in zip(names, arrays):
                store(state[name], array, _STATE_OPS[name])
        for p, array in zip(params, new_params):
            store(p, array, 2 if decoupled else 1)  # [param.mul_], param.addcdiv_


# in-place ops torch runs on each state tensor per step
_STATE_OPS = {"exp_avg": 1, "exp_avg_sq": 2, "max_exp_avg_sq": 1}


def _step_dtype(group: dict[str, Any]):
    """The ``step`` counter's dtype: float32, or float64 under a float64 default (unless fused)."""
    if group["fused"]:
        return float32
    return float64 if get_default_dtype() is float64 else float32


def _check_betas(betas: tuple, foreach: bool | None, capturable: bool) -> None:
    """torch's checks that betas are two floats or two one-element tensors."""
    if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
            or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, beta in enumerate(betas):
        if isinstance(beta, Tensor):
            if not capturable and foreach:
                raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                 "capturable=False and foreach=True")
            if beta.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")


@jitted_kernel
def _adam_kernel(maximize: bool, weight_decay: bool, decoupled: bool, amsgrad: bool):
    """torch's _single_tensor_adam on arrays: new params, state arrays and steps."""

    def update(params, grads, state_arrays, steps, hyper):
        lr, beta1, beta2, eps, decay = (hyper[i] for i in range(5))
        new_params, new_arrays, new_steps = [], [], []
        for p0, g, arrays, step in zip(params, grads, state_arrays, steps):
            step = step + 1
            p, g = real_view(p0), real_view(g)
            exp_avg, exp_avg_sq, *max_sq = (real_view(a) for a in arrays)
            if maximize:
                g = -g
            if weight_decay and decoupled:
                p = times_scalar(p, 1 - lr * decay)
            elif weight_decay:
                g = add_scaled(g, p, decay)
            exp_avg = lerp_scalar(exp_avg, g, 1 - beta1)
            exp_avg_sq = addcmul(times_scalar(exp_avg_sq, beta2), g, g, 1 - beta2)
            t = step.astype(jnp.float64)
            step_size = lr / (1 - beta1 ** t)
            bias_correction2_sqrt = jnp.sqrt(1 - beta2 ** t)
            second = exp_avg_sq
            if amsgrad:
                second = max_sq[0] = jnp.maximum(max_sq[0], exp_avg_sq)
            denom = add_scalar(div_scalar(jnp.sqrt(second), bias_correction2_sqrt), eps)
            p = addcdiv(p, exp_avg, denom, -step_size)
            new_params.append(complex_like(p, p0))
            new_arrays.append(tuple(complex_like(a, p0) for a in (exp_avg, exp_avg_sq, *max_sq)))
            new_steps.append(step)
        return new_params, new_arrays, new_steps

    return update
