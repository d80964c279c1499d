"""``Adafactor``: Adam-like steps with factored second moments (row and column means of the
squared gradient for matrices), relative step sizes and update clipping."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._core.grad_mode import no_grad
from .._core.tensor import Tensor
from .._core.type_info import finfo
from .._functions.creation import tensor as new_tensor
from .._functions.creation import zeros
from ._common import scalar_dtype, tensor_steps
from .optimizer import Optimizer, to_scalar

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor, as ``torch.optim.Adafactor`` (torch's single-tensor update, op for op).

    State per parameter: ``step`` (a 0-d float tensor) and, for a parameter of two or more
    dimensions, ``row_var`` and ``col_var`` (running means of the squared gradient over its
    last and second-to-last dimensions); for fewer dimensions, ``variance``. ``lr`` caps the
    relative step size ``min(lr, 1 / sqrt(step))`` and scales the decoupled weight decay;
    ``eps=(eps1, eps2)`` with ``eps1=None`` meaning the parameter dtype's machine epsilon.
    ``foreach=True`` runs the same single-tensor update (torch's foreach kernel computes the
    same values, grouped).

    >>> import jaxgrad
    >>> w = jaxgrad.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    >>> opt = jaxgrad.optim.Adafactor([w], lr=0.1)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([[ 0.3360, -1.5355],
            [ 0.2402,  2.4902]], requires_grad=True)
    >>> sorted(opt.state[w])
    ['col_var', 'row_var', 'step']
    """

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict[str, Any]],
        lr: float | Tensor = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not beta2_decay <= 0.0:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not eps[0] >= 0.0:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not eps[1] >= 0.0:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not d >= 1.0:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not weight_decay >= 0.0:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {
            "lr": lr,
            "beta2_decay": beta2_decay,
            "eps": eps,
            "d": d,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            tensor_steps(self, group)

    def _init_state(self, p: Tensor) -> dict[str, Any]:
        """torch's ``_init_group`` for one parameter: its checks, then its first state."""
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        state = self.state[p]
        if len(state) == 0:
            grad = p.grad
            state["step"] = new_tensor(0.0, dtype=scalar_dtype())
            if grad.dim() > 1:
                shape = list(grad.shape)
                state["row_var"] = zeros([*shape[:-1], 1], dtype=grad.dtype)
                state["col_var"] = zeros([*shape[:-2], 1, shape[-1]], dtype=grad.dtype)
            else:
                state["variance"] = zeros(grad.shape, dtype=grad.dtype)
        return state

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Adafactor step for every parameter with a gradient; ``closure`` (re)computes
        the loss, which is returned (None without a closure).

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = jaxgrad.optim.Adafactor([w], lr=0.5)
        >>> w.grad = jaxgrad.tensor([0.1, -3.0]); opt.step(); w
        tensor([ 0.5000, -0.5000], requires_grad=True)
        """
        with no_grad():
            return self._step_groups(closure)

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """torch's _single_tensor_adafactor, op for op (its ``.item()`` reads included)."""
        states = [self._init_state(p) for p in params]
        lr = to_scalar(group["lr"])
        eps1, eps2 = group["eps"]
        beta2_decay, decay, d = group["beta2_decay"], group["weight_decay"], group["d"]
        for p, state in zip(params, states):
            grad = -p.grad if group["maximize"] else p.grad
            if eps1 is None:
                eps1 = finfo(p.dtype).eps
            step_t = state["step"]
            step_t += 1
            step = step_t.item()
            one_minus_beta2_t = step**beta2_decay
            rho_t = min(lr, 1 / (step**0.5))
            alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho_t
            if decay != 0:
                p.mul_(1 - lr * decay)
            if grad.dim() > 1:
                row_var, col_var = state["row_var"], state["col_var"]
                row_mean = grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1))
                row_var.lerp_(row_mean, one_minus_beta2_t)
                col_mean = grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2))
                col_var.lerp_(col_mean, one_minus_beta2_t)
                var_estimate = row_var @ col_var
                var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
            else:
                variance = state["variance"]
                variance.lerp_(grad * grad, one_minus_beta2_t)
                var_estimate = variance.clone()
            update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
            update.mul_(grad)
            denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
            p.add_(update, alpha=-alpha / denom)
