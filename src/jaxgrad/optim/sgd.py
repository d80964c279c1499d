"""``SGD``: stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._core.tensor import Tensor
from .._ops.half_precision import add_scaled, times_scalar
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


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), as ``torch.optim.SGD``.

    Each step computes, per parameter, torch's single-tensor update ``p -= lr * d`` where ``d``
    is the gradient (negated when ``maximize``, plus ``weight_decay * p``), or its momentum
    buffer ``buf = momentum * buf + (1 - dampening) * d`` (Nesterov: ``d + momentum * buf``).

    >>> import jaxgrad
    >>> w = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = jaxgrad.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([0.4600, 0.9200], requires_grad=True)
    >>> opt.state[w]["momentum_buffer"]
    tensor([3.4000, 6.8000])
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]],
                 lr: float | Tensor = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float | Tensor = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        check_fused(fused, differentiable, foreach)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One SGD step for every parameter with a gradient; ``closure`` (re)computes the loss.

        Returns the closure's loss (None without a closure). With ``differentiable=True`` the
        step runs with grad mode on and autograd records the update.

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = jaxgrad.optim.SGD([w], lr=0.5)
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = (w * w).sum()
        ...     loss.backward()
        ...     return loss
        >>> opt.step(closure)
        tensor(2., grad_fn=<SumBackward0>)
        >>> w
        tensor([0., 0.], requires_grad=True)
        """
        return self._step_groups(closure)

    def _update_group_differentiable(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """torch's _single_tensor_sgd, op for op, as recorded jaxgrad tensor ops."""
        lr, decay, momentum = to_scalar(group["lr"]), group["weight_decay"], group["momentum"]
        for p in params:
            grad = -p.grad if group["maximize"] else p.grad
            if decay != 0:
                if isinstance(decay, Tensor) and decay.requires_grad:
                    grad = grad.addcmul_(p.clone(), decay)
                else:
                    grad = grad.add(p, alpha=host_float(decay))
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = grad.detach().clone()
                else:
                    buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
                grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
            if isinstance(lr, Tensor) and lr.requires_grad:
                p.addcmul_(grad, lr, value=-1)
            else:
                p.add_(grad, alpha=-host_float(lr))

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        use_momentum = group["momentum"] != 0
        buffers = [self.state[p].get("momentum_buffer") for p in params] if use_momentum else []
        kernel = _sgd_kernel(bool(group["maximize"]), group["weight_decay"] != 0, use_momentum,
                             bool(group["nesterov"]))
        hyper = hyper_vector(group[k] for k in ("lr", "momentum", "dampening", "weight_decay"))
        new_params, new_buffers = kernel(
            [p._value for p in params], [p.grad._value for p in params],
            [None if b is None else b._value for b in buffers], hyper)
        for p, array in zip(params, new_params):
            store(p, array, 1)  # param.add_(grad, alpha=-lr)
        for p, old, array in zip(params, buffers, new_buffers):
            if old is None:  # torch: buf = grad.detach().clone()
                self.state[p]["momentum_buffer"] = Tensor._make(array)
            else:
                store(old, array, 2)  # buf.mul_(momentum).add_(grad, alpha=1 - dampening)


@jitted_kernel
def _sgd_kernel(maximize: bool, weight_decay: bool, momentum: bool, nesterov: bool):
    """torch's _single_tensor_sgd on arrays: (params, grads, buffers, hyper) -> new arrays;
    each step rounds as torch's op of that name does in half precision."""

    def update(params, grads, buffers, hyper):
        lr, mom, dampening, decay = hyper[0], hyper[1], hyper[2], hyper[3]
        new_params, new_buffers = [], []
        for i, (p, d) in enumerate(zip(params, grads)):
            if maximize:
                d = -d
            if weight_decay:
                d = add_scaled(d, p, decay)
            if momentum:
                buf = buffers[i]
                buf = d if buf is None else add_scaled(times_scalar(buf, mom), d, 1 - dampening)
                new_buffers.append(buf)
                d = add_scaled(d, buf, mom) if nesterov else buf
            new_params.append(add_scaled(p, d, -lr))
        return new_params, new_buffers

    return update

