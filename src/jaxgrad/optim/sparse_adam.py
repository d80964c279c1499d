"""``SparseAdam``: torch's masked Adam for sparse gradients. jaxgrad has no sparse layout, so
every gradient it makes is dense, which SparseAdam refuses, as torch does."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._core.grad_mode import enable_grad
from .._core.tensor import Tensor
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam, as ``torch.optim.SparseAdam``: Adam that updates only the entries a sparse
    gradient holds (``nn.Embedding(sparse=True)``'s rows).

    Construction, param groups, ``repr``, state dicts, hooks and errors are torch's. What
    differs: jaxgrad has no sparse layout (``Tensor.is_sparse`` is always False, and
    ``Embedding(sparse=True)`` raises NotImplementedError), so every gradient is dense and
    ``step`` raises torch's RuntimeError for it, before touching any state, just as torch does
    for a dense gradient. A step that updates parameters cannot happen in jaxgrad; use
    ``Adam`` instead.

    >>> import jaxgrad
    >>> w = jaxgrad.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = jaxgrad.optim.SparseAdam([w], lr=0.1)
    >>> opt.param_groups[0]["betas"]
    (0.9, 0.999)
    >>> (w * w).sum().backward(); opt.step()
    Traceback (most recent call last):
        ...
    RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead
    """

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict[str, Any]],
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr > 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not eps > 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        complex_params = [
            [index, d_index]
            for index, group in enumerate(self.param_groups)
            for d_index, param in enumerate(group["params"])
            if param.is_complex()
        ]
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not "
                "support complex parameters"
            )

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Run ``closure`` (with grad) and check the gradients: a parameter with a (dense)
        gradient raises torch's RuntimeError; without gradients, the closure's loss returns.

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SparseAdam([jaxgrad.zeros(2, requires_grad=True)])
        >>> opt.step(lambda: 1.5)
        1.5
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None and not p.grad.is_sparse:
                    raise RuntimeError(
                        "SparseAdam does not support dense gradients, please consider Adam instead"
                    )
        return loss
