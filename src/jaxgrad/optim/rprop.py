"""``Rprop``: resilient backpropagation (per-coordinate step sizes from gradient signs)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import jax.numpy as jnp

from .._core.tensor import Tensor
from .._functions.complex_numbers import view_as_real
from .._functions.creation import tensor as new_tensor
from .._ops.half_precision import addcmul
from ._common import (
    check_capturable,
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

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop, as ``torch.optim.Rprop`` (torch's single-tensor formulas, step by step).

    Per coordinate: where the gradient kept its sign the step size grows by ``etas[1]``, where
    it flipped it shrinks by ``etas[0]`` (and that gradient counts as zero), both clamped to
    ``step_sizes``; then ``p -= sign(g) * step_size``. State: ``step`` (a 0-d float tensor),
    ``prev`` (the previous gradient) and ``step_size`` (filled with ``lr`` at the first step).

    >>> import jaxgrad
    >>> w = jaxgrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = jaxgrad.optim.Rprop([w], lr=0.1)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.6360, -1.6360], requires_grad=True)
    >>> opt.state[w]["step_size"]
    tensor([0.1440, 0.1440])
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]],
                 lr: float | Tensor = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        fill_group_defaults(self, (("foreach", None), ("maximize", False),
                                  ("differentiable", False), ("capturable", False)))

    def _init_state(self, group: dict[str, Any], p: Tensor) -> dict[str, Any]:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_tensor(0.0, dtype=scalar_dtype())
            state["prev"] = Tensor._make(jnp.zeros_like(p._value))
            lr = to_scalar(group["lr"])
            lr = lr._value if isinstance(lr, Tensor) else lr  # (a tracer under compile)
            fill = lr * (1 + 1j) if p.is_complex() else lr  # complex(lr, lr)
            state["step_size"] = Tensor._make(jnp.full_like(p.grad._value, fill))
        return state

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Rprop step for every parameter with a gradient; ``closure`` (re)computes the
        loss.

        Returns the closure's loss (None without a closure). With ``differentiable=True`` the
        step runs with grad mode on and autograd records the update.

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = jaxgrad.optim.Rprop([w], lr=0.5)
        >>> w.grad = jaxgrad.tensor([0.1, -3.0]); opt.step(); w
        tensor([ 0.5000, -0.5000], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group_differentiable(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """torch's _single_tensor_rprop (its differentiable branch), op for op, as recorded
        jaxgrad tensor ops."""
        states = [self._init_state(group, p) for p in params]
        check_differentiable(group)
        if group["capturable"]:
            check_capturable(params)
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        for p, state in zip(params, states):
            grad = -p.grad if group["maximize"] else p.grad
            prev, step_size, step = state["prev"], state["step_size"], state["step"]
            step += 1
            if p.is_complex():  # torch steps complex parameters through real views
                grad, prev, p, step_size = (view_as_real(t) for t in (grad, prev, p, step_size))
            sign = grad.mul(prev.clone()).sign()
            sign[sign.gt(0)] = etaplus
            sign[sign.lt(0)] = etaminus
            sign[sign.eq(0)] = 1
            step_size.mul_(sign).clamp_(step_size_min, step_size_max)
            grad = grad.clone()
            grad[sign.eq(etaminus)] = 0
            p.addcmul_(grad.sign(), step_size, value=-1)
            prev.copy_(grad)

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._init_state(group, p) for p in params]
        if group["capturable"]:
            check_capturable(params)  # (foreach too: torch lists "xla" for both)
        kernel = _rprop_kernel(bool(group["maximize"]))
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        hyper = hyper_vector((etaminus, etaplus, step_size_min, step_size_max))
        new_params, new_prevs, new_sizes, new_steps = kernel(
            [p._value for p in params], [p.grad._value for p in params],
            [s["prev"]._value for s in states], [s["step_size"]._value for s in states],
            [s["step"]._value for s in states], hyper)
        for p, state, array, prev, size, step in zip(params, states, new_params, new_prevs,
                                                     new_sizes, new_steps):
            store(state["step"], step, 1)  # step += 1
            store(state["step_size"], size, 2)  # step_size.mul_(sign).clamp_
            store(p, array, 1)  # param.addcmul_
            store(state["prev"], prev, 1)  # prev.copy_(grad)


@jitted_kernel
def _rprop_kernel(maximize: bool):
    """torch's _single_tensor_rprop on arrays: new params, prevs, step sizes and steps."""

    def update(params, grads, prevs, step_sizes, steps, hyper):
        etaminus, etaplus, size_min, size_max = (hyper[i] for i in range(4))
        out = [], [], [], []
        for p0, g, prev0, size0, step in zip(params, grads, prevs, step_sizes, steps):
            step = step + 1
            if maximize:
                g = -g
            p, g, prev, size = real_view(p0), real_view(g), real_view(prev0), real_view(size0)
            sign = jnp.sign(g * prev)
            dtype = sign.dtype
            sign = jnp.where(sign > 0, etaplus.astype(dtype), sign)
            sign = jnp.where(sign < 0, etaminus.astype(dtype), sign)
            sign = jnp.where(sign == 0, jnp.ones((), dtype), sign)
            size = size * sign
            size = jnp.minimum(jnp.maximum(size, size_min.astype(dtype)),  # (NaN stays)
                               size_max.astype(dtype))
            g = jnp.where(sign == etaminus.astype(dtype), jnp.zeros((), dtype), g)
            p = addcmul(p, jnp.sign(g), size, -1)
            for results, value in zip(out, (complex_like(p, p0), complex_like(g, p0),
                                            complex_like(size, p0), step)):
                results.append(value)
        return out

    return update
