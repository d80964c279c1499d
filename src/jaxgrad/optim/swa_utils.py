"""``jaxgrad.optim.swa_utils``: torch's stochastic weight averaging and exponential moving
averages of a model (``AveragedModel`` and its averaging functions), ``update_bn`` (recompute
batch-norm statistics for the averaged weights) and the ``SWALR`` schedule."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any, Literal

from .._core.dtypes import int64
from .._core.grad_mode import no_grad
from .._core.tensor import Tensor
from .._functions.complex_numbers import is_complex
from .._functions.creation import tensor as new_tensor
from .._functions.foreach import FUNCTIONS as FOREACH
from .._functions.shapes import is_floating_point
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from ._scheduler_base import LRScheduler, format_param
from .optimizer import Optimizer

__all__ = [
    "AveragedModel",
    "update_bn",
    "SWALR",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
]

PARAM_LIST = tuple[Tensor, ...] | list[Tensor]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """An exponential moving average over lists of tensors (``multi_avg_fn``), in place.

    >>> import jaxgrad
    >>> from jaxgrad.optim.swa_utils import get_ema_multi_avg_fn
    >>> ema = [jaxgrad.tensor([0.0])]
    >>> get_ema_multi_avg_fn(0.75)(ema, [jaxgrad.tensor([4.0])], 1); ema
    [tensor([1.])]
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST, _: Any) -> None:
        if is_floating_point(ema_param_list[0]) or is_complex(ema_param_list[0]):
            FOREACH["_foreach_lerp_"](ema_param_list, current_param_list, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[PARAM_LIST, PARAM_LIST, Tensor | int], None]:
    """The running mean over lists of tensors (``multi_avg_fn``), in place.

    >>> import jaxgrad
    >>> from jaxgrad.optim.swa_utils import get_swa_multi_avg_fn
    >>> avg = [jaxgrad.tensor([1.0])]
    >>> get_swa_multi_avg_fn()(avg, [jaxgrad.tensor([4.0])], 2); avg
    [tensor([2.])]
    """

    @no_grad()
    def swa_update(
        averaged_param_list: PARAM_LIST, current_param_list: PARAM_LIST, num_averaged: Tensor | int
    ) -> None:
        if is_floating_point(averaged_param_list[0]) or is_complex(averaged_param_list[0]):
            FOREACH["_foreach_lerp_"](
                averaged_param_list, current_param_list, 1 / (num_averaged + 1)
            )
        else:
            diffs = FOREACH["_foreach_sub"](current_param_list, averaged_param_list)
            if isinstance(num_averaged, Tensor):
                FOREACH["_foreach_addcdiv_"](
                    averaged_param_list, diffs, [num_averaged + 1] * len(averaged_param_list)
                )
            else:
                FOREACH["_foreach_add_"](averaged_param_list, diffs, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """An exponential moving average of one tensor (``avg_fn``): the new average.

    >>> import jaxgrad
    >>> from jaxgrad.optim.swa_utils import get_ema_avg_fn
    >>> get_ema_avg_fn(0.75)(jaxgrad.tensor([0.0]), jaxgrad.tensor([4.0]), 1)
    tensor([1.])
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Tensor | int], Tensor]:
    """The running mean of one tensor (``avg_fn``): the new average.

    >>> import jaxgrad
    >>> from jaxgrad.optim.swa_utils import get_swa_avg_fn
    >>> get_swa_avg_fn()(jaxgrad.tensor([1.0]), jaxgrad.tensor([4.0]), 2)
    tensor([2.])
    """

    @no_grad()
    def swa_update(
        averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int
    ) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_device_and_dtype(
    pairs: list[tuple[Tensor, Tensor]],
) -> dict[tuple[Any, Any], tuple[list, list]]:
    """The (averaged, current) pairs grouped by the averaged tensor's device and dtype, as
    torch's ``_group_tensors_by_device_and_dtype`` returns them: the group first seen last."""
    groups: dict[tuple[Any, Any], tuple[list, list]] = {}
    for averaged, current in pairs:
        mine, theirs = groups.setdefault((averaged.device, averaged.dtype), ([], []))
        mine.append(averaged)
        theirs.append(current)
    return dict(reversed(groups.items()))


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) hold an
    average of ``model``'s over the calls to ``update_parameters``: the running mean (SWA) by
    default, or what ``avg_fn`` / ``multi_avg_fn`` computes (e.g. an EMA).

    >>> import jaxgrad
    >>> from jaxgrad.optim.swa_utils import AveragedModel
    >>> model = jaxgrad.nn.Linear(1, 1, bias=False)
    >>> swa = AveragedModel(model)
    >>> for w in (1.0, 2.0, 6.0):
    ...     _ = model.weight.data.fill_(w); swa.update_parameters(model)
    >>> swa.module.weight.data, swa.n_averaged
    (tensor([[3.]]), tensor(3))
    """

    n_averaged: Tensor

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: Callable[[Tensor, Tensor, Tensor | int], Tensor] | None = None,
        multi_avg_fn: Callable[[PARAM_LIST, PARAM_LIST, Tensor | int], None] | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", new_tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The averaged module's output.

        >>> import jaxgrad
        >>> from jaxgrad.optim.swa_utils import AveragedModel
        >>> AveragedModel(jaxgrad.nn.Identity())(jaxgrad.tensor([2.0]))
        tensor([2.])
        """
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s current parameters (and buffers, with ``use_buffers``) in; the
        first call copies them. Without ``use_buffers`` the buffers are copied as they are.

        >>> import jaxgrad
        >>> from jaxgrad.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
        >>> model = jaxgrad.nn.Linear(1, 1, bias=False)
        >>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.5))
        >>> for w in (2.0, 4.0):
        ...     _ = model.weight.data.fill_(w); ema.update_parameters(model)
        >>> ema.module.weight.data
        tensor([[3.]])
        """
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        pairs = []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param, strict=False):
            p_model_ = p_model.detach().to(p_averaged.device)
            pairs.append((p_averaged.detach(), p_model_))
            if copy_param:
                p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                # on the CPU torch averages tensor by tensor unless multi_avg_fn is given
                for (device, _), (mine, theirs) in _group_by_device_and_dtype(pairs).items():
                    n_averaged = self.n_averaged.to(device)
                    if self.multi_avg_fn:
                        self.multi_avg_fn(mine, theirs, n_averaged)
                    else:
                        avg_fn = get_swa_avg_fn()
                        for p_averaged, p_model in zip(mine, theirs, strict=True):
                            p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))
            else:
                for p_averaged, p_model in pairs:
                    n_averaged = self.n_averaged.to(p_averaged.device)
                    p_averaged.detach().copy_(self.avg_fn(p_averaged.detach(), p_model, n_averaged))
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of ``model``'s batch-norm layers: reset them, then run
    every batch of ``loader`` (its first element, for a list or tuple) through the model in
    training mode with cumulative averaging (``momentum=None``).

    >>> import jaxgrad
    >>> from jaxgrad.optim.swa_utils import update_bn
    >>> bn = jaxgrad.nn.BatchNorm1d(1)
    >>> update_bn([jaxgrad.tensor([[1.0], [3.0]]), jaxgrad.tensor([[5.0], [7.0]])], bn)
    >>> bn.running_mean, bn.momentum
    (tensor([4.]), 0.1)
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to its ``swa_lr`` over ``anneal_epochs`` epochs
    (cosine or linear), then hold it there.

    >>> import jaxgrad
    >>> from jaxgrad.optim.swa_utils import SWALR
    >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = SWALR(opt, swa_lr=0.5, anneal_epochs=2, anneal_strategy="linear")
    >>> lrs = []
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.75, 0.5, 0.5]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | list[float],
        anneal_epochs: int = 10,
        anneal_strategy: Literal["cos", "linear"] = "cos",
        last_epoch: int = -1,
    ) -> None:
        swa_lrs = format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: Any, swa_lr: Any, alpha: float) -> Any:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float | Tensor]:
        """The rates of this step of the anneal (from the current rates, as torch does)."""
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use "
                "`get_last_lr()`.",
                UserWarning,
                stacklevel=2,
            )
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [
            self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
            for group in self.optimizer.param_groups
        ]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [
            group["swa_lr"] * alpha + lr * (1 - alpha)
            for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)
        ]

    def _set_anneal_func(self, anneal_strategy: Literal["cos", "linear"]) -> None:
        self._anneal_strategy = anneal_strategy
        if anneal_strategy == "cos":
            self.anneal_func = self._cosine_anneal
        else:
            self.anneal_func = self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer and the anneal function.

        >>> import jaxgrad
        >>> from jaxgrad.optim.swa_utils import SWALR
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
        >>> SWALR(opt, swa_lr=0.5).state_dict()["_anneal_strategy"]
        'cos'
        """
        return {
            key: value
            for key, value in self.__dict__.items()
            if key not in ("optimizer", "anneal_func")
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes; the anneal function follows the saved strategy.

        >>> import jaxgrad
        >>> from jaxgrad.optim.swa_utils import SWALR
        >>> opt = jaxgrad.optim.SGD([jaxgrad.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = SWALR(opt, swa_lr=0.5)
        >>> sched.load_state_dict({"_anneal_strategy": "linear"}); sched.anneal_func(0.25)
        0.25
        """
        super().load_state_dict(state_dict)
        self._set_anneal_func(self._anneal_strategy)
