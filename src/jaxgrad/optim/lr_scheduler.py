"""``jaxgrad.optim.lr_scheduler``: torch's learning-rate schedulers, with torch's formulas.

Schedulers set ``group["lr"]`` of their optimizer's param groups each ``step()``. Each one
computes its rates as torch does: chainable (from the current rates) on ``step()``, closed form
(from ``base_lrs``) when ``step(epoch)`` is given, so the floats are torch's floats. The
multiplicative schedulers are here; the base class, the composites (``SequentialLR``,
``ChainedScheduler``), ``ReduceLROnPlateau`` and the cyclic schedulers live in private modules
and are shown at this path.
"""

from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import jax.numpy as jnp

from .._core.tensor import Tensor
from ._cyclic_schedulers import CosineAnnealingWarmRestarts as CosineAnnealingWarmRestarts
from ._cyclic_schedulers import CyclicLR as CyclicLR
from ._cyclic_schedulers import OneCycleLR as OneCycleLR
from ._reduce_on_plateau import ReduceLROnPlateau as ReduceLROnPlateau
from ._scheduler_base import EPOCH_DEPRECATION_WARNING as EPOCH_DEPRECATION_WARNING
from ._scheduler_base import LRScheduler as LRScheduler
from ._scheduler_base import _LRScheduler as _LRScheduler
from ._scheduler_base import (
    both,
    branch,
    cos,
    either,
    group_values,
    is_traced,
    structure_changed,
    warn_get_lr_called_within_step,
)
from ._scheduler_chains import ChainedScheduler as ChainedScheduler
from ._scheduler_chains import SequentialLR as SequentialLR
from .optimizer import Optimizer

__all__ = [
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "SequentialLR",
    "CosineAnnealingLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
    "CyclicLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "PolynomialLR",
    "LRScheduler",
]


def _lambdas(optimizer: Optimizer, lr_lambda: Any) -> list[Callable[[int], float]]:
    """One lambda per param group (a single one repeated), as torch's ``LambdaLR`` takes them."""
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(
            f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"
        )
    return list(lr_lambda)


class _LambdaState:
    """``state_dict()``/``load_state_dict()`` of schedulers that hold ``lr_lambdas``: a plain
    function saves as None, a callable object as a copy of its ``__dict__``."""

    lr_lambdas: list[Callable[[int], float]]

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer; ``lr_lambdas`` as torch saves them.

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
        >>> jaxgrad.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.5).state_dict()["lr_lambdas"]
        [None]
        """
        state = {
            key: value
            for key, value in self.__dict__.items()
            if key not in ("optimizer", "lr_lambdas")
        }
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
            for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes; a saved callable object's ``__dict__`` updates the current one.

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = jaxgrad.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.5)
        >>> sched.load_state_dict({"last_epoch": 4, "lr_lambdas": [None]}); sched.last_epoch
        4
        """
        structure_changed()
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas  # the caller's dict is left as it was
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaState, LRScheduler):
    """Each group's initial learning rate times ``lr_lambda(epoch)``.

    >>> import jaxgrad
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = jaxgrad.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.5 ** epoch)
    >>> opt.step(); sched.step(); opt.step(); sched.step(); sched.get_last_lr()
    [0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        """``base_lr * lr_lambda(last_epoch)`` per group."""
        warn_get_lr_called_within_step(self)
        return [
            base_lr * lmbda(self.last_epoch)
            for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)
        ]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """Each step multiplies the learning rates by ``lr_lambda(epoch)``.

    >>> import jaxgrad
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = jaxgrad.optim.lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.5)
    >>> opt.step(); sched.step(); opt.step(); sched.step(); sched.get_last_lr()
    [0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        """The current rates times ``lr_lambda(last_epoch)`` (unchanged at construction)."""
        warn_get_lr_called_within_step(self)
        if self._is_initial:
            return group_values(self.optimizer, "lr")
        return [
            group["lr"] * lmbda(self.last_epoch)
            for lmbda, group in zip(self.lr_lambdas, self.optimizer.param_groups, strict=True)
        ]


class StepLR(LRScheduler):
    """Multiply the learning rates by ``gamma`` every ``step_size`` epochs.

    >>> import jaxgrad
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = jaxgrad.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.05]
    """

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        """The current rates, times ``gamma`` at non-zero multiples of ``step_size``."""
        warn_get_lr_called_within_step(self)
        keep = either(self.last_epoch == 0, self.last_epoch % self.step_size != 0)
        return branch(
            keep,
            lambda: group_values(self.optimizer, "lr"),
            lambda: [group["lr"] * self.gamma for group in self.optimizer.param_groups],
        )

    def _get_closed_form_lr(self) -> list[float | Tensor]:
        return [
            base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs
        ]


class MultiStepLR(LRScheduler):
    """Multiply the learning rates by ``gamma`` at each milestone (twice at a repeated one).

    >>> import jaxgrad
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = jaxgrad.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 1], gamma=0.5)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        """The current rates, times ``gamma ** count`` at a milestone."""
        warn_get_lr_called_within_step(self)
        epoch = self.last_epoch
        if is_traced(epoch):  # inside jaxgrad.compile: the count at this epoch, maybe 0
            count = sum(jnp.where(epoch == m, n, 0) for m, n in self.milestones.items())
            return [group["lr"] * self.gamma**count for group in self.optimizer.param_groups]
        if epoch not in self.milestones:
            return group_values(self.optimizer, "lr")
        return [
            group["lr"] * self.gamma ** self.milestones[epoch]
            for group in self.optimizer.param_groups
        ]

    def _get_closed_form_lr(self) -> list[float | Tensor]:
        milestones = sorted(self.milestones.elements())
        return [
            base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
            for base_lr in self.base_lrs
        ]


class ConstantLR(LRScheduler):
    """The learning rates times ``factor`` until epoch ``total_iters``, then the full rates.

    >>> import jaxgrad
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = jaxgrad.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=1)
    >>> first = sched.get_last_lr(); opt.step(); sched.step(); first, sched.get_last_lr()
    ([0.5], [1.0])
    """

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        """``factor`` times the rates at epoch 0, divided back out at ``total_iters``."""
        warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return group_values(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float | Tensor]:
        return [
            base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
            for base_lr in self.base_lrs
        ]


class LinearLR(LRScheduler):
    """The learning rates' factor goes linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs.

    >>> import jaxgrad
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = jaxgrad.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.75]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and "
                "less or equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        """The next rates by torch's chainable linear formula."""
        warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return group_values(self.optimizer, "lr")
        delta = self.end_factor - self.start_factor
        factor = 1.0 + delta / (
            self.total_iters * self.start_factor + (self.last_epoch - 1) * delta
        )
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float | Tensor]:
        return [
            base_lr
            * (
                self.start_factor
                + (self.end_factor - self.start_factor)
                * min(self.total_iters, self.last_epoch)
                / self.total_iters
            )
            for base_lr in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    """Multiply the learning rates by ``gamma`` every epoch.

    >>> import jaxgrad
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = jaxgrad.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        """The current rates times ``gamma`` (unchanged at construction)."""
        warn_get_lr_called_within_step(self)
        if self._is_initial:
            return group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float | Tensor]:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the learning rates polynomially (``power``) to zero over ``total_iters`` epochs.

    >>> import jaxgrad
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = jaxgrad.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=1.0)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.75]
    """

    def __init__(
        self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1
    ) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        """The current rates times torch's chainable decay factor."""
        warn_get_lr_called_within_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return group_values(self.optimizer, "lr")
        decay_factor = (
            (1.0 - self.last_epoch / self.total_iters)
            / (1.0 - (self.last_epoch - 1) / self.total_iters)
        ) ** self.power
        return [group["lr"] * decay_factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float | Tensor]:
        return [
            base_lr
            * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
            for base_lr in self.base_lrs
        ]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from each initial learning rate down to ``eta_min`` over ``T_max``
    epochs, with torch's recursive update (so the floats are torch's).

    >>> import jaxgrad
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = jaxgrad.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
    >>> opt.step(); sched.step(); round(sched.get_last_lr()[0], 6)
    0.5
    """

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        """The next rates by torch's recursive cosine formula."""
        warn_get_lr_called_within_step(self)
        groups = self.optimizer.param_groups
        if self._is_initial:
            return group_values(self.optimizer, "lr")
        epoch = self.last_epoch

        def restarted() -> list:
            return [
                group["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                for base_lr, group in zip(self.base_lrs, groups, strict=True)
            ]

        def recursive() -> list:
            return [
                (1 + cos(math.pi * epoch / self.T_max))
                / (1 + cos(math.pi * (epoch - 1) / self.T_max))
                * (group["lr"] - self.eta_min)
                + self.eta_min
                for group in groups
            ]

        def resumed() -> list:  # torch's formula here multiplies in another order
            return [
                self.eta_min
                + (base_lr - self.eta_min) * (1 + cos(epoch * math.pi / self.T_max)) / 2
                for base_lr in self.base_lrs
            ]

        return branch(
            both(self._step_count == 1, epoch > 0),
            resumed,
            lambda: branch((epoch - 1 - self.T_max) % (2 * self.T_max) == 0, restarted, recursive),
        )

    def _get_closed_form_lr(self) -> list[float | Tensor]:
        return [
            self.eta_min
            + (base_lr - self.eta_min) * (1 + cos(math.pi * self.last_epoch / self.T_max)) / 2
            for base_lr in self.base_lrs
        ]
