"""``Adadelta``: steps scaled by the ratio of running RMS of updates and of gradients."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import jax.numpy as jnp

from .._core.tensor import Tensor
from .._functions.complex_numbers import view_as_complex, view_as_real
from .._ops.half_precision import add_scalar, add_scaled, addcmul, times_scalar
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

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta, as ``torch.optim.Adadelta`` (torch's single-tensor formulas, step by step).

    Per parameter: ``square_avg = rho * square_avg + (1 - rho) * g * g``, the update
    ``delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g``, then
    ``acc_delta = rho * acc_delta + (1 - rho) * delta * delta`` and ``p -= lr * delta``.
    State: ``step`` (a 0-d float tensor), ``square_avg`` and ``acc_delta``.

    >>> import jaxgrad
    >>> w = jaxgrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = jaxgrad.optim.Adadelta([w], lr=1.0, rho=0.5, eps=0.01)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.7050, -1.6996], requires_grad=True)
    >>> opt.state[w]["step"]
    tensor(2.)
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]],
                 lr: float | Tensor = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        fill_group_defaults(self, (("foreach", None), ("maximize", False),
                                  ("differentiable", False), ("capturable", False)))

    def _init_state(self, p: Tensor) -> dict[str, Any]:
        state = self.state[p]
        if len(state) == 0:
            state.update(zero_state(p, "square_avg", "acc_delta"))
        return state

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Adadelta step for every parameter with a gradient; ``closure`` (re)computes the
        loss.

        Returns the closure's loss (None without a closure). With ``differentiable=True`` the
        step runs with grad mode on and autograd records the update.

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = jaxgrad.optim.Adadelta([w], rho=0.0, eps=0.25)
        >>> w.grad = jaxgrad.tensor([0.0, 1.5]); opt.step(); w
        tensor([ 1.0000, -1.4743], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group_differentiable(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """torch's _single_tensor_adadelta (its differentiable branch), op for op, as recorded
        jaxgrad tensor ops."""
        states = [self._init_state(p) for p in params]
        check_differentiable(group)
        if group["capturable"]:
            check_capturable(params, xla=False)
        lr, rho, eps, decay = (to_scalar(group["lr"]), group["rho"], group["eps"],
                               group["weight_decay"])
        for p, state in zip(params, states):
            square_avg, acc_delta, step = state["square_avg"], state["acc_delta"], state["step"]
            step += 1
            grad = -p.grad if group["maximize"] else p.grad
            if decay != 0:
                grad = grad.add(p, alpha=as_number(decay, "add", "alpha"))
            if p.is_complex():  # torch steps the state through real views, not the parameter
                square_avg, acc_delta = view_as_real(square_avg), view_as_real(acc_delta)
                grad = view_as_real(grad)
            square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
            std = square_avg.add(eps).sqrt_()
            delta = acc_delta.add(eps).sqrt_().clone()
            delta.div_(std).mul_(grad)
            acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
            if p.is_complex():
                delta = view_as_complex(delta)
            p.add_(delta, alpha=as_number(-lr, "add_", "alpha"))

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._init_state(p) for p in params]
        if group["capturable"]:
            check_capturable(params, xla=False)
        kernel = _adadelta_kernel(bool(group["maximize"]), group["weight_decay"] != 0)
        hyper = hyper_vector(group[k] for k in ("lr", "rho", "eps", "weight_decay"))
        new_params, new_squares, new_deltas, new_steps = kernel(
            [p._value for p in params], [p.grad._value for p in params],
            [s["square_avg"]._value for s in states], [s["acc_delta"]._value for s in states],
            [s["step"]._value for s in states], hyper)
        for p, state, array, square, delta, step in zip(params, states, new_params,
                                                        new_squares, new_deltas, new_steps):
            store(state["step"], step, 1)  # step += 1
            store(state["square_avg"], square, 2)  # square_avg.mul_(rho).addcmul_
            store(state["acc_delta"], delta, 2)  # acc_delta.mul_(rho).addcmul_
            store(p, array, 1)  # param.add_(delta, alpha=-lr)


@jitted_kernel
def _adadelta_kernel(maximize: bool, weight_decay: bool):
    """torch's _single_tensor_adadelta on arrays: new params, square_avgs, acc_deltas, steps."""

    def update(params, grads, square_avgs, acc_deltas, steps, hyper):
        lr, rho, eps, decay = (hyper[i] for i in range(4))
        out = [], [], [], []
        for p0, g, sq0, acc0, step in zip(params, grads, square_avgs, acc_deltas, steps):
            step = step + 1
            if maximize:
                g = -g
            if weight_decay:
                g = add_scaled(g, p0, decay)
            p, g = real_view(p0), real_view(g)
            square_avg = addcmul(times_scalar(real_view(sq0), rho), g, g, 1 - rho)
            std = jnp.sqrt(add_scalar(square_avg, eps))
            acc_delta = real_view(acc0)
            delta = jnp.sqrt(add_scalar(acc_delta, eps)) / std * g
            acc_delta = addcmul(times_scalar(acc_delta, rho), delta, delta, 1 - rho)
            p = add_scaled(p, delta, -lr)
            for results, value in zip(out, (complex_like(p, p0), complex_like(square_avg, p0),
                                            complex_like(acc_delta, p0), step)):
                results.append(value)
        return out

    return update
