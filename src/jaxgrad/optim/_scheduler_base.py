"""What every learning-rate scheduler shares: torch's ``LRScheduler`` base (the first step at
construction, ``initial_lr``, the ``optimizer.step`` wrapper behind the ordering warning, the
deprecated ``epoch`` argument) and the helpers torch's schedulers use on param groups.

Schedulers are pure Python, so the floats they produce are torch's floats. Inside
``jaxgrad.compile`` the epoch counters and learning rates are traced (so a schedule does not
recompile every step): the formulas then run on JAX scalars, branches become ``jnp.where``
(``_branch``), and the ordering warnings, which need concrete counters, are skipped.
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
from .._core.typename import public_path
from .optimizer import Optimizer, to_scalar

PUBLIC_MODULE = "jaxgrad.optim.lr_scheduler"

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


def group_values(optimizer: Optimizer, key: str) -> list[Any]:
    """``group[key]`` of every param group (tensors cloned, so they never alias).

    >>> import jaxgrad
    >>> from jaxgrad.optim._scheduler_base import group_values
    >>> group_values(jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=0.5), "lr")
    [0.5]
    """
    return [
        g[key].clone() if isinstance(g[key], Tensor) else g[key] for g in optimizer.param_groups
    ]


def set_group_value(group: dict[str, Any], key: str, value: float | Tensor) -> None:
    """Set ``group[key]``: filled in place when it is a tensor, assigned otherwise.

    >>> import jaxgrad
    >>> from jaxgrad.optim._scheduler_base import set_group_value
    >>> group = {"lr": jaxgrad.tensor(1.0)}
    >>> set_group_value(group, "lr", 0.25); group["lr"]
    tensor(0.2500)
    """
    if isinstance(group[key], Tensor):
        group[key].fill_(to_scalar(value))
    else:
        group[key] = value


def format_param(name: str, optimizer: Optimizer, param: Any) -> list[Any]:
    """One value per param group (torch's ``_format_param``): a list or tuple must have one per
    group, a single value is repeated; tensors are cloned.

    >>> import jaxgrad
    >>> from jaxgrad.optim._scheduler_base import format_param
    >>> format_param("max_lr", jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)]), 0.1)
    [0.1]
    """
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} has "
                f"{len(param)} values, param_groups has {len(optimizer.param_groups)}."
            )
    else:
        param = [param] * len(optimizer.param_groups)
    return [p.clone() if isinstance(p, Tensor) else p for p in param]


def is_traced(value: Any) -> bool:
    """Whether ``value`` is a JAX tracer (a scheduler stepped inside ``jaxgrad.compile``).

    >>> from jaxgrad.optim._scheduler_base import is_traced
    >>> is_traced(3)
    False
    """
    return isinstance(value, jax.core.Tracer)


def branch(condition: Any, if_true: Callable[[], list], if_false: Callable[[], list]) -> list:
    """``if_true() if condition else if_false()``; when ``condition`` is traced, both lists
    are computed and chosen from elementwise with ``jnp.where``.

    >>> from jaxgrad.optim._scheduler_base import branch
    >>> branch(False, lambda: [1.0], lambda: [2.0])
    [2.0]
    """
    if not is_traced(condition):
        return if_true() if condition else if_false()
    return [jnp.where(condition, a, b) for a, b in zip(if_true(), if_false(), strict=True)]


def both(a: Any, b: Any) -> Any:
    """``a and b``, elementwise when either is traced.

    >>> from jaxgrad.optim._scheduler_base import both
    >>> both(True, False)
    False
    """
    return jnp.logical_and(a, b) if is_traced(a) or is_traced(b) else a and b


def either(a: Any, b: Any) -> Any:
    """``a or b``, elementwise when either is traced.

    >>> from jaxgrad.optim._scheduler_base import either
    >>> either(True, False)
    True
    """
    return jnp.logical_or(a, b) if is_traced(a) or is_traced(b) else a or b


def cos(x: Any) -> Any:
    """``math.cos``, or ``jnp.cos`` of a traced value.

    >>> from jaxgrad.optim._scheduler_base import cos
    >>> cos(0.0)
    1.0
    """
    return jnp.cos(x) if is_traced(x) else math.cos(x)


def warn_get_lr_called_within_step(scheduler: LRScheduler) -> None:
    """torch's warning when ``get_lr()`` is called outside ``step()``.

    >>> import jaxgrad, warnings
    >>> from jaxgrad.optim._scheduler_base import warn_get_lr_called_within_step
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)])
    >>> sched = jaxgrad.optim.lr_scheduler.StepLR(opt, step_size=1)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always"); warn_get_lr_called_within_step(sched)
    >>> len(caught)
    1
    """
    if not scheduler._get_lr_called_within_step:
        warnings.warn(
            "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
            UserWarning,
            stacklevel=3,
        )


class _enable_get_lr_call:
    """Within: ``get_lr()`` is called by ``step()`` (no warning)."""

    def __init__(self, scheduler: LRScheduler) -> None:
        self.scheduler = scheduler

    def __enter__(self) -> _enable_get_lr_call:
        self.scheduler._get_lr_called_within_step = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.scheduler._get_lr_called_within_step = False


class _initial_mode:
    """Within: the scheduler's first step, run at construction."""

    def __init__(self, scheduler: LRScheduler) -> None:
        self.scheduler = scheduler

    def __enter__(self) -> None:
        self.scheduler._is_initial = True

    def __exit__(self, *exc: object) -> None:
        self.scheduler._is_initial = False


def _mark_optimizer_steps(optimizer: Optimizer) -> None:
    """Wrap ``optimizer.step`` once so that it records it was called (for the order warning)."""
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


@public_path(PUBLIC_MODULE)
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
                        "training run (not recommended)"
                    )
        self.base_lrs: list[float | Tensor] = group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _mark_optimizer_steps(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        """The step run at construction (and by ``SequentialLR`` for its first scheduler)."""
        self._step_count = 0
        with _initial_mode(self):
            self.step()

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
        """Restore the attributes saved by ``state_dict()``.

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = jaxgrad.optim.lr_scheduler.StepLR(opt, step_size=3)
        >>> sched.load_state_dict({"last_epoch": 7}); sched.last_epoch
        7
        """
        structure_changed()
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[float | Tensor]:
        """The learning rates the last ``step()`` set, one per param group.

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
        >>> jaxgrad.optim.lr_scheduler.StepLR(opt, step_size=3).get_last_lr()
        [1.0]
        """
        return self._last_lr

    def get_lr(self) -> list[float | Tensor]:
        """The next learning rates (one per param group); implemented by subclasses."""
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch and set the param groups' learning rates.

        Call it after ``optimizer.step()``; torch's warning says so otherwise.

        >>> import jaxgrad
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = jaxgrad.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        >>> opt.step(); sched.step(); opt.param_groups[0]["lr"]
        0.5
        """
        structure_changed()
        if not is_traced(self._step_count) and self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(_OVERRIDDEN_WARNING, UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        with _enable_get_lr_call(self):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            set_group_value(group, "lr", lr)
        self._last_lr: list[float | Tensor] = group_values(self.optimizer, "lr")


@public_path(PUBLIC_MODULE)
class _LRScheduler(LRScheduler):
    """torch's backward-compatible name of :class:`LRScheduler`."""
