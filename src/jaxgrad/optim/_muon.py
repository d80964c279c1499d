"""``Muon``: momentum SGD for 2-D parameters whose update is orthogonalised by a Newton-Schulz
iteration (in bfloat16, as torch runs it)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import jax

from .._core.grad_mode import no_grad
from .._core.tensor import Tensor
from .._functions.creation import zeros
from .._functions.linalg import addmm
from .optimizer import Optimizer, to_scalar

__all__ = ["Muon"]

# Keller Jordan's constants (torch.optim._muon's)
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(
    grad: Tensor, ns_coefficients: tuple[float, float, float], ns_steps: int, eps: float
) -> Tensor:
    """torch's quintic Newton-Schulz iteration towards ``U V^T`` of ``grad = U S V^T``, in
    bfloat16 (the result's singular values land near, not at, one)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    ortho_grad = grad.bfloat16()
    if grad.size(0) > grad.size(1):
        ortho_grad = ortho_grad.T
    ortho_grad.div_(ortho_grad.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram_matrix = ortho_grad @ ortho_grad.T
        gram_update = addmm(gram_matrix, gram_matrix, gram_matrix, beta=b, alpha=c)
        ortho_grad = addmm(ortho_grad, gram_update, ortho_grad, beta=a)
    if grad.size(0) > grad.size(1):
        ortho_grad = ortho_grad.T
    return ortho_grad


def _adjust_lr(lr: Any, adjust_lr_fn: str | None, param_shape: tuple[int, ...]) -> Any:
    """The learning rate scaled for the matrix's shape: ``"original"`` (Keller Jordan's
    ``sqrt(max(1, A / B))``) or ``"match_rms_adamw"`` (Moonshot's ``0.2 * sqrt(max(A, B))``)."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon, as ``torch.optim.Muon`` (torch's single-tensor update, op for op).

    Only 2-D parameters: per step ``buf.lerp_(grad, 1 - momentum)``, the update (Nesterov's
    ``grad.lerp(buf, momentum)`` or ``buf``) orthogonalised by ``ns_steps`` Newton-Schulz
    iterations in bfloat16, then decoupled weight decay ``p *= 1 - lr * weight_decay`` and
    ``p -= adjusted_lr * update``. State per parameter: ``momentum_buffer``.

    >>> import jaxgrad
    >>> w = jaxgrad.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    >>> opt = jaxgrad.optim.Muon([w], lr=0.1, weight_decay=0.0)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([[ 0.9172, -1.9613],
            [ 0.4473,  2.9352]], requires_grad=True)
    """

    # (under jaxgrad.compile the learning rate starts static, so the whole update traces;
    # ``add_``'s alpha must be a number: once a changing lr is traced, jaxgrad.compile warns
    # and runs that signature eagerly)
    _jaxgrad_traced_state: dict[str, Any] = {}

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict[str, Any]],
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
        eps: float = EPS,
        ns_steps: int = DEFAULT_NS_STEPS,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not momentum >= 0.0:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not weight_decay >= 0.0:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a "
                        f"parameter with size: {p.size()}"
                    )

    def _init_state(self, p: Tensor) -> dict[str, Any]:
        """torch's ``_init_group`` for one parameter: its checks, then its momentum buffer."""
        if p.is_complex():
            raise RuntimeError("Muon does not support complex parameters")
        state = self.state[p]
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = zeros(p.grad.shape, dtype=p.grad.dtype)
        return state

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Muon step for every parameter with a gradient; ``closure`` (re)computes the
        loss, which is returned (None without a closure).

        >>> import jaxgrad
        >>> w = jaxgrad.tensor([[2.0, 0.0], [0.0, 1.0]], requires_grad=True)
        >>> opt = jaxgrad.optim.Muon([w], lr=0.5, weight_decay=0.0, nesterov=False)
        >>> w.grad = jaxgrad.tensor([[4.0, 0.0], [0.0, 1.0]]); opt.step(); w
        tensor([[1.6348, 0.0000],
                [0.0000, 0.6348]], requires_grad=True)
        """
        with no_grad():
            return self._step_groups(closure)

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """torch's _single_tensor_muon, op for op."""
        states = [self._init_state(p) for p in params]
        lr, decay, momentum = to_scalar(group["lr"]), group["weight_decay"], group["momentum"]
        if isinstance(lr, jax.core.Tracer):
            lr = float(lr)  # (raises jax's ConcretizationTypeError: compile runs eagerly)
        for p, state in zip(params, states):
            grad = p.grad
            if grad.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            buf = state["momentum_buffer"]
            buf.lerp_(grad, 1 - momentum)
            update = grad.lerp(buf, momentum) if group["nesterov"] else buf
            update = _zeropower_via_newtonschulz(
                update, group["ns_coefficients"], group["ns_steps"], group["eps"]
            )
            adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
            p.mul_(1 - lr * decay)
            p.add_(update, alpha=-adjusted_lr)
