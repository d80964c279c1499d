"""Schedulers made of schedulers: ``SequentialLR`` (one after another, switching at milestones)
and ``ChainedScheduler`` (all of them every step), as torch writes them."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from .._core.typename import public_path
from ._reduce_on_plateau import ReduceLROnPlateau
from ._scheduler_base import (
    PUBLIC_MODULE,
    LRScheduler,
    group_values,
    set_group_value,
    structure_changed,
)
from .optimizer import Optimizer


def _check_schedulers(owner: str, optimizer: Optimizer, schedulers: Sequence[Any]) -> None:
    """torch's checks of the schedulers a composite is given (one optimizer, no plateau)."""
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{i} in the given schedulers sequence."
            )
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {scheduler.__class__.__name__} at index {i} has "
                f"{scheduler.optimizer}, which is different from "
                f"{optimizer.__class__.__name__}."
            )


class _CompositeState:
    """``state_dict()``/``load_state_dict()`` of a composite: its schedulers' own state dicts
    under ``_schedulers``."""

    _schedulers: Sequence[LRScheduler]

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer, the schedulers as their state dicts.

        >>> import jaxgrad
        >>> from jaxgrad.optim import lr_scheduler
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
        >>> chain = lr_scheduler.ChainedScheduler([lr_scheduler.ExponentialLR(opt, 0.5)])
        >>> chain.state_dict()["_schedulers"][0]["gamma"]
        0.5
        """
        state = {
            key: value
            for key, value in self.__dict__.items()
            if key not in ("optimizer", "_schedulers")
        }
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes and each scheduler's state.

        >>> import jaxgrad
        >>> from jaxgrad.optim import lr_scheduler
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
        >>> chain = lr_scheduler.ChainedScheduler([lr_scheduler.ExponentialLR(opt, 0.5)])
        >>> chain.load_state_dict({"_schedulers": [{"gamma": 0.25}]})
        >>> chain._schedulers[0].gamma
        0.25
        """
        structure_changed()
        schedulers = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = schedulers  # the caller's dict is left as it was
        for scheduler, saved in zip(self._schedulers, schedulers):
            scheduler.load_state_dict(saved)


@public_path(PUBLIC_MODULE)
class SequentialLR(_CompositeState, LRScheduler):
    """Run ``schedulers`` one after another, switching to the next at each milestone (where it
    starts from its closed form at epoch 0).

    >>> import jaxgrad
    >>> from jaxgrad.optim import lr_scheduler
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> warmup = lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=10)
    >>> decay = lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> sched = lr_scheduler.SequentialLR(opt, [warmup, decay], milestones=[1])
    >>> first = sched.get_last_lr(); opt.step(); sched.step(); first, sched.get_last_lr()
    ([0.5], [1.0])
    """

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: list[LRScheduler],
        milestones: list[int],
        last_epoch: int = -1,
    ) -> None:
        owner = self.__class__.__name__
        if len(schedulers) < 1:
            raise ValueError(f"{owner} expects at least one scheduler, but got no scheduler.")
        _check_schedulers(owner, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                "than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in self.optimizer.param_groups:  # back to the initial rates
            set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()  # "undo" the steps the schedulers made at construction
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched: Any = None) -> None:
        """Take back one epoch of every scheduler inside (nested composites included).

        >>> import jaxgrad
        >>> from jaxgrad.optim import lr_scheduler
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
        >>> inner = lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> sched = lr_scheduler.SequentialLR(opt, [inner], milestones=[])
        >>> sched.recursive_undo(); inner.last_epoch
        -1
        """
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """Step the scheduler of this epoch (the next one starts from its epoch 0).

        >>> import jaxgrad
        >>> from jaxgrad.optim import lr_scheduler
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
        >>> inner = lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> sched = lr_scheduler.SequentialLR(opt, [inner], milestones=[])
        >>> opt.step(); sched.step(); sched.get_last_lr()
        [0.5]
        """
        structure_changed()
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


@public_path(PUBLIC_MODULE)
class ChainedScheduler(_CompositeState, LRScheduler):
    """Step every one of ``schedulers`` at each step (their factors multiply).

    >>> import jaxgrad
    >>> from jaxgrad.optim import lr_scheduler
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> chain = lr_scheduler.ChainedScheduler([lr_scheduler.ExponentialLR(opt, 0.5),
    ...                                        lr_scheduler.ExponentialLR(opt, 0.5)])
    >>> opt.step(); chain.step(); chain.get_last_lr()
    [0.25]
    """

    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        owner = self.__class__.__name__
        if len(schedulers) < 1:
            raise ValueError(
                f"{owner} expects at least one scheduler to be chained, but got no scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(owner, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = group_values(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        """Step each scheduler in turn.

        >>> import jaxgrad
        >>> from jaxgrad.optim import lr_scheduler
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
        >>> chain = lr_scheduler.ChainedScheduler([lr_scheduler.ExponentialLR(opt, 0.5)])
        >>> opt.step(); chain.step(); opt.param_groups[0]["lr"]
        0.5
        """
        structure_changed()
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = group_values(self._schedulers[-1].optimizer, "lr")
