"""Learning-rate schedulers: ``LRScheduler``, ``StepLR``, ``CosineAnnealingLR`` (torch's formulas).

Schedulers set ``group["lr"]`` of their optimizer's param groups each ``step()``; they are pure
Python, so the floats they produce are torch's floats. Inside ``jaxgrad.compile`` the epoch
counters and learning rates are traced (so a schedule does not recompile every step): the
formulas then run on JAX scalars, branches become ``jnp.where``, and the ordering warnings,
which need concrete counters, are skipped.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from functools import wraps
from typing import Any
from weakref import ref

import jax
import jax.numpy as jnp

from .._core.epoch import changed as structure_changed
from .._core.tensor import Tensor
from .optimizer import Optimizer, to_scalar

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)

_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
    "later, you should call them in the opposite order: `optimizer.step()` before "
    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value "
    "of the learning rate schedule. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)

_OVERRIDDEN_WARNING = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before `lr_scheduler.step()`. "
    "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)


def _group_values(optimizer: Optimizer, key: str) -> list[Any]:
    """``group[key]`` of every param group (tensors cloned, so they never alias)."""
    return [g[key].clone() if isinstance(g[key], Tensor) else g[key]
            for g in optimizer.param_groups]


def _set_group_value(group: dict[str, Any], key: str, value: float | Tensor) -> None:
    """Set ``group[key]``: filled in place when it is a tensor, assigned otherwise."""
    if isinstance(group[key], Tensor):
        group[key].fill_(to_scalar(value))
    else:
        group[key] = value


def _is_traced(value: Any) -> bool:
    return isinstance(value, jax.core.Tracer)


def _branch(condition: Any, if_true: Callable[[], list], if_false: Callable[[], list]) -> list:
    """``if_true() if condition else if_false()``; when ``condition`` is traced, both lists
    are computed and chosen from elementwise with ``jnp.where``."""
    if not _is_traced(condition):
        return if_true() if condition else if_false()
    return [jnp.where(condition, a, b) for a, b in zip(if_true(), if_false(), strict=True)]


def _both(a: Any, b: Any) -> Any:
    return jnp.logical_and(a, b) if _is_traced(a) or _is_traced(b) else a and b


def _either(a: Any, b: Any) -> Any:
    return jnp.logical_or(a, b) if _is_traced(a) or _is_traced(b) else a or b


def _cos(x: Any) -> Any:
    return jnp.cos(x) if _is_traced(x) else math.cos(x)


def _mark_optimizer_steps(scheduler: LRScheduler) -> None:
    """Wrap ``optimizer.step`` once so that it records it was called (for the order warning)."""
    optimizer = scheduler.optimizer
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    optimizer_ref = ref(optimizer)
    func = optimizer.step.__func__

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        opt = optimizer_ref()
        opt._opt_called = True
        return func.__get__(opt, opt.__class__)(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper


class LRScheduler:
    """Base class of learning-rate schedulers: subclasses implement ``get_lr()``.

    Creating a scheduler records ``initial_lr`` in each param group and runs a first step.

    >>> import jaxgrad
    >>> from jaxgrad.optim.lr_scheduler import StepLR
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
    >>> lrs, opt.param_groups[0]["initial_lr"]
    ([1.0, 0.5, 0.5, 0.25], 1.0)
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False
    # jaxgrad.compile traces these (they change every step); the rest changes only in step()
    # and load_state_dict(), which record it (_epoch)
    _jaxgrad_traced_state = {"last_epoch": True, "_step_count": True, "_last_lr": True}
    _jaxgrad_managed_attrs = True

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                initial_lr = group["lr"]
                if isinstance(initial_lr, Tensor):
                    initial_lr = initial_lr.clone()
                group.setdefault("initial_lr", initial_lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        "scheduler with last_epoch >= 0.\nThis typically happens when:\n1. "
                        "You're trying to resume training from a checkpoint but haven't properly "
                        "loaded the optimizer state\n2. You're using last_epoch >= 0 for a fresh "
                        "training run (not recommended)")
        self.base_lrs: list[float | Tensor] = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _mark_optimizer_steps(self)
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, Any]:
        """Every attribute of the scheduler but its optimizer.

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = jaxgrad.optim.lr_scheduler.StepLR(opt, step_size=3)
        >>> sched.state_dict()["last_epoch"], sched.state_dict()["base_lrs"]
        (0, [1.0])
        """
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes saved by ``state_dict()``."""
        structure_changed()
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[float | Tensor]:
        """The learning rates the last ``step()`` set, one per param group."""
        return self._last_lr

    def get_lr(self) -> list[float | Tensor]:
        """The next learning rates (one per param group); implemented by subclasses."""
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch and set the param groups' learning rates.

        Call it after ``optimizer.step()``; torch's warning says so otherwise.
        """
        structure_changed()
        if not _is_traced(self._step_count) and self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(_OVERRIDDEN_WARNING, UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _set_group_value(group, "lr", lr)
        self._last_lr: list[float | Tensor] = _group_values(self.optimizer, "lr")

    def _warn_unless_stepping(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=3)


class StepLR(LRScheduler):
    """Multiply the learning rates by ``gamma`` every ``step_size`` epochs.

    >>> import jaxgrad
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = jaxgrad.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.05]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        """The current rates, times ``gamma`` at non-zero multiples of ``step_size``."""
        self._warn_unless_stepping()
        keep = _either(self.last_epoch == 0, self.last_epoch % self.step_size != 0)
        return _branch(keep, lambda: _group_values(self.optimizer, "lr"),
                       lambda: [group["lr"] * self.gamma for group in self.optimizer.param_groups])

    def _get_closed_form_lr(self) -> list[float | Tensor]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from each initial learning rate down to ``eta_min`` over ``T_max``
    epochs, with torch's recursive update (so the floats are torch's).

    >>> import jaxgrad
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = jaxgrad.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
    >>> opt.step(); sched.step(); round(sched.get_last_lr()[0], 6)
    0.5
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        """The next rates by torch's recursive cosine formula."""
        self._warn_unless_stepping()
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        epoch = self.last_epoch

        def restarted() -> list:
            return [group["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max))
                    / 2 for base_lr, group in zip(self.base_lrs, groups, strict=True)]

        def recursive() -> list:
            return [(1 + _cos(math.pi * epoch / self.T_max))
                    / (1 + _cos(math.pi * (epoch - 1) / self.T_max))
                    * (group["lr"] - self.eta_min) + self.eta_min for group in groups]

        return _branch(_both(self._step_count == 1, epoch > 0), self._get_closed_form_lr,
                       lambda: _branch((epoch - 1 - self.T_max) % (2 * self.T_max) == 0,
                                       restarted, recursive))

    def _get_closed_form_lr(self) -> list[float | Tensor]:
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + _cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]
