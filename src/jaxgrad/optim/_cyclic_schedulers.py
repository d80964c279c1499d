"""Schedulers that cycle: ``CyclicLR`` and ``OneCycleLR`` (which also cycle momentum, or
Adam's first beta) and ``CosineAnnealingWarmRestarts``, with torch's formulas."""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from functools import partial
from typing import Any, Literal

from .._core.tensor import Tensor
from .._core.typename import public_path
from ._scheduler_base import (
    PUBLIC_MODULE,
    LRScheduler,
    _enable_get_lr_call,
    format_param,
    group_values,
    set_group_value,
    structure_changed,
    warn_get_lr_called_within_step,
)
from .optimizer import Optimizer


def _set_momentum(group: dict[str, Any], use_beta1: bool, momentum: Any) -> None:
    """Set a group's momentum, or the first of its ``betas``."""
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _uses_beta1(optimizer: Optimizer) -> bool:
    """Whether momentum cycling sets the first of ``betas`` (else ``momentum``); torch's error
    when the optimizer has neither."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(
            "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
        )
    return "betas" in optimizer.defaults


def _start_momentums(
    optimizer: Optimizer, use_beta1: bool, base_momentums: list[Any], max_momentums: list[Any]
) -> None:
    """Fresh groups start at ``max_momentum`` and record both bounds."""
    for m_momentum, b_momentum, group in zip(
        max_momentums, base_momentums, optimizer.param_groups, strict=True
    ):
        _set_momentum(group, use_beta1, m_momentum)
        group["max_momentum"] = m_momentum
        group["base_momentum"] = b_momentum


@public_path(PUBLIC_MODULE)
class CyclicLR(LRScheduler):
    """Cycle the learning rates between ``base_lr`` and ``max_lr`` (triangular, triangular2,
    exp_range or a custom ``scale_fn``), and the momentum the opposite way.

    >>> import jaxgrad
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0, momentum=0.9)
    >>> sched = jaxgrad.optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5,
    ...                                             step_size_up=2)
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 6))
    >>> lrs
    [0.3, 0.5, 0.3, 0.1]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: Literal["triangular", "triangular2", "exp_range"] = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: Literal["cycle", "iterations"] = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float = 0.8,
        max_momentum: float = 0.9,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                set_group_value(group, "lr", lr)
        self.max_lrs = format_param("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_ref: Callable[[float], float]
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _uses_beta1(optimizer)
            self.base_momentums = format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                _start_momentums(optimizer, self.use_beta1, self.base_momentums, self.max_momentums)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(self._exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x: Any) -> float:
        """The amplitude's scale at cycle (or iteration) ``x``: the custom ``scale_fn`` or the
        mode's.

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], momentum=0.9)
        >>> jaxgrad.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, mode="triangular2").scale_fn(3)
        0.25
        """
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x: float) -> float:
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x: float) -> float:
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma: float, x: float) -> float:
        return gamma**x

    def get_lr(self) -> list[float | Tensor]:
        """This iteration's rates (and, cycling momentum, set the groups' momentums)."""
        warn_get_lr_called_within_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [
            base_lr + (max_lr - base_lr) * scale_factor * self.scale_fn(at)
            for base_lr, max_lr in zip(self.base_lrs, self.max_lrs, strict=True)
        ]
        if self.cycle_momentum:
            momentums = [
                max_m - (max_m - base_m) * scale_factor * self.scale_fn(at)
                for base_m, max_m in zip(self.base_momentums, self.max_momentums, strict=True)
            ]
            for group, momentum in zip(self.optimizer.param_groups, momentums, strict=True):
                _set_momentum(group, self.use_beta1, momentum)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer and the scale function (a custom callable object
        saves as a copy of its ``__dict__``, a function as None).

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], momentum=0.9)
        >>> jaxgrad.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0).state_dict()["_scale_fn_custom"]
        """
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes; the scale function is set up again from the mode.

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], momentum=0.9)
        >>> sched = jaxgrad.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0)
        >>> sched.load_state_dict({"mode": "triangular2", "_scale_fn_custom": None})
        >>> sched.scale_fn(2)
        0.5
        """
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


@public_path(PUBLIC_MODULE)
class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing that restarts every ``T_i`` epochs, ``T_i`` growing by ``T_mult``.

    >>> import jaxgrad
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = jaxgrad.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> lrs = []
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 6))
    >>> lrs
    [0.5, 1.0, 0.5]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}"
            )
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        """The rates at ``T_cur`` of the current period."""
        warn_get_lr_called_within_step(self)
        return [
            self.eta_min
            + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
            for base_lr in self.base_lrs
        ]

    def step(self, epoch: float | None = None) -> None:
        """Advance one iteration, or jump to ``epoch`` (which may be fractional).

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = jaxgrad.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4)
        >>> sched.step(2.0); sched.get_last_lr()[0] < 1.0e-15 + 0.5
        True
        """
        structure_changed()
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** (n)
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        with _enable_get_lr_call(self):
            for group, lr in zip(self.optimizer.param_groups, self.get_lr(), strict=True):
                set_group_value(group, "lr", lr)
        self._last_lr = group_values(self.optimizer, "lr")


def _phase(
    end_step: float, start_lr: str, end_lr: str, start_momentum: str, end_momentum: str
) -> dict[str, Any]:
    return {
        "end_step": end_step,
        "start_lr": start_lr,
        "end_lr": end_lr,
        "start_momentum": start_momentum,
        "end_momentum": end_momentum,
    }


@public_path(PUBLIC_MODULE)
class OneCycleLR(LRScheduler):
    """The 1cycle policy: warm up to ``max_lr``, then anneal far below the initial rate
    (momentum cycling the opposite way); ``three_phase`` adds a symmetric descent first.

    >>> import jaxgrad
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0, momentum=0.9)
    >>> sched = jaxgrad.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10,
    ...                                               anneal_strategy="linear")
    >>> sched.get_last_lr(), opt.param_groups[0]["momentum"]
    ([0.04], 0.95)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: Literal["cos", "linear"] = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(
                    f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}"
                )
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        warmup_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                _phase(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(
                    float(2 * pct_start * self.total_steps) - 2,
                    "max_lr",
                    "initial_lr",
                    "base_momentum",
                    "max_momentum",
                ),
                _phase(
                    self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"
                ),
            ]
        else:
            self._schedule_phases = [
                _phase(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        max_lrs = format_param("max_lr", self.optimizer, max_lr)
        if last_epoch == -1:
            for idx, group in enumerate(self.optimizer.param_groups):
                group["initial_lr"] = max_lrs[idx] / div_factor
                group["max_lr"] = max_lrs[idx]
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if self.cycle_momentum:
            self.use_beta1 = _uses_beta1(optimizer)
            max_momentums = format_param("max_momentum", optimizer, max_momentum)
            base_momentums = format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                _start_momentums(optimizer, self.use_beta1, base_momentums, max_momentums)
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, *args: Any, **kwargs: Any) -> Any:
        if hasattr(self, "_anneal_func_type"):
            if self._anneal_func_type == "cos":
                return self._annealing_cos(*args, **kwargs)
            if self._anneal_func_type == "linear":
                return self._annealing_linear(*args, **kwargs)
            raise ValueError(f"Unknown _anneal_func_type: {self._anneal_func_type}")
        return self.anneal_func(*args, **kwargs)  # state saved by an older torch

    @staticmethod
    def _annealing_cos(start: Any, end: Any, pct: float) -> Any:
        """Cosine from ``start`` (pct 0) to ``end`` (pct 1)."""
        cos_out = math.cos(math.pi * pct) + 1
        return end + (start - end) / 2.0 * cos_out

    @staticmethod
    def _annealing_linear(start: Any, end: Any, pct: float) -> Any:
        """Linear from ``start`` (pct 0) to ``end`` (pct 1)."""
        return (end - start) * pct + start

    def get_lr(self) -> list[float | Tensor]:
        """This step's rates (and, cycling momentum, set the groups' momentums)."""
        warn_get_lr_called_within_step(self)
        lrs = []
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(
                f"Tried to step {step_num} times. The specified number of total "
                f"steps is {self.total_steps}"
            )
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(
                        self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    )
                    if self.cycle_momentum:
                        _set_momentum(
                            group,
                            self.use_beta1,
                            self._anneal_func(
                                group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                            ),
                        )
                    break
                start_step = phase["end_step"]
        return lrs
