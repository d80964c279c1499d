"""``jaxgrad.amp.GradScaler``: loss scaling for low-precision training, as torch's.

The loss is multiplied by a scale before ``backward`` so that small float16/bfloat16 gradients
do not flush to zero; ``step`` unscales the gradients, skips the optimizer step when any of them
is inf/NaN, and ``update`` backs the scale off after such a step or grows it after
``growth_interval`` clean ones."""

from __future__ import annotations

import warnings
from collections import abc, defaultdict
from enum import Enum
from typing import Any

from .. import cuda as _cuda
from .._core.dtypes import float16, float32, int32
from .._core.grad_mode import no_grad
from .._core.tensor import Tensor
from .._functions import creation as _creation

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    """Where an optimizer is in the scaler's iteration."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_optimizer_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _non_finite_check_and_unscale_(grads: list[Tensor], found_inf: Tensor,
                                   inv_scale: Tensor) -> None:
    """torch's ``_amp_foreach_non_finite_check_and_unscale_``: ``found_inf`` becomes 1 if any
    gradient holds an inf or NaN; every gradient is multiplied by ``inv_scale`` in place."""
    for grad in grads:
        if not bool(grad.isfinite().all()):
            found_inf.fill_(1.0)
        grad.mul_(inv_scale)


def _update_scale_(scale: Tensor, growth_tracker: Tensor, found_inf: Tensor,
                   growth_factor: float, backoff_factor: float, growth_interval: int) -> None:
    """torch's ``_amp_update_scale_``: back off after an inf, grow after ``growth_interval``
    clean steps in a row (unless the grown scale would overflow)."""
    if float(found_inf.item()):
        scale.mul_(backoff_factor)
        growth_tracker.fill_(0)
        return
    successful = int(growth_tracker.item()) + 1
    if successful == growth_interval:
        grown = scale * growth_factor
        if bool(grown.isfinite()):
            scale.copy_(grown)
        growth_tracker.fill_(0)
    else:
        growth_tracker.fill_(successful)


class GradScaler:
    """Scales the loss, unscales and checks the gradients, and adapts the scale.

    >>> import jaxgrad
    >>> w = jaxgrad.nn.Parameter(jaxgrad.ones(2))
    >>> opt = jaxgrad.optim.SGD([w], lr=0.1)
    >>> scaler = jaxgrad.amp.GradScaler("cpu", init_scale=4.0)
    >>> scaler.scale((w * 3).sum()).backward()
    >>> scaler.step(opt); scaler.update()
    >>> w.detach(), scaler.get_scale()
    (tensor([0.7000, 0.7000]), 4.0)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not _cuda.is_available():
            warnings.warn("jaxgrad.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: Tensor | None = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Tensor | None = None
            self._per_optimizer_states: dict[int, dict[str, Any]] = defaultdict(
                _fresh_optimizer_state)

    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Tensor, Tensor]:
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier "
               "in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev: Any) -> None:
        self._scale = _creation.full((), self._init_scale, dtype=float32, device=dev)
        self._growth_tracker = _creation.full((), self._init_growth_tracker, dtype=int32,
                                              device=dev)

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor or nested lists/tuples of tensors) times the current scale.

        >>> import jaxgrad
        >>> jaxgrad.amp.GradScaler("cpu", init_scale=8.0).scale(jaxgrad.tensor(0.5))
        tensor(4.)
        """
        if not self._enabled:
            return outputs

        def apply_scale(value: Any) -> Any:
            if isinstance(value, Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(value.device)
                return value * self._scale.to(device=value.device)
            if isinstance(value, abc.Iterable):
                scaled = map(apply_scale, value)
                return type(value)(scaled) if isinstance(value, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer: Any, inv_scale: Tensor, found_inf: Tensor,
                        allow_fp16: bool) -> dict[Any, Tensor]:
        grouped: dict[Any, dict[Any, list[Tensor]]] = defaultdict(lambda: defaultdict(list))
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError(
                            f"expected param to be jaxgrad.Tensor, got {type(param).__name__}")
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype is float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grouped[grad.device][grad.dtype].append(grad)
            found_per_device: dict[Any, Tensor] = {}
            for device, per_dtype in grouped.items():
                found = found_per_device.setdefault(
                    device, found_inf.to(device=device, copy=True))
                for grads in per_dtype.values():
                    _non_finite_check_and_unscale_(grads, found, inv_scale.to(device=device))
        return found_per_device

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale in place (once per ``update``).

        >>> import jaxgrad
        >>> w = jaxgrad.nn.Parameter(jaxgrad.ones(1))
        >>> opt = jaxgrad.optim.SGD([w], lr=1.0)
        >>> scaler = jaxgrad.amp.GradScaler("cpu", init_scale=4.0)
        >>> scaler.scale(w.sum()).backward(); scaler.unscale_(opt); w.grad
        tensor([1.])
        """
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = _creation.full((), 0.0, dtype=float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale ``optimizer``'s gradients (unless ``unscale_`` did) and run its step, unless
        some gradient is inf/NaN; returns what the step returns (None when skipped).

        >>> import jaxgrad
        >>> w = jaxgrad.nn.Parameter(jaxgrad.ones(1))
        >>> opt = jaxgrad.optim.SGD([w], lr=1.0)
        >>> scaler = jaxgrad.amp.GradScaler("cpu")
        >>> scaler.scale(w * float("inf")).sum().backward(); scaler.step(opt); w.detach()
        tensor([1.])
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Adapt the scale after this iteration's steps (or set it to ``new_scale``).

        >>> import jaxgrad
        >>> scaler = jaxgrad.amp.GradScaler("cpu", init_scale=4.0)
        >>> _ = scaler.scale(jaxgrad.tensor(1.0)); scaler.update(2.0); scaler.get_scale()
        2.0
        """
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element jaxgrad.cuda.FloatTensor or "
                          "jaxgrad.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found_infs = [found.to(device=scale.device)
                          for state in self._per_optimizer_states.values()
                          for found in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            combined = found_infs[0]
            for found in found_infs[1:]:
                combined += found
            _update_scale_(scale, growth_tracker, combined, self._growth_factor,
                           self._backoff_factor, self._growth_interval)
        self._per_optimizer_states = defaultdict(_fresh_optimizer_state)

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled).

        >>> import jaxgrad
        >>> jaxgrad.amp.GradScaler("cpu").get_scale()
        65536.0
        """
        if self._enabled:
            return self._init_scale if self._scale is None else float(self._scale.item())
        return 1.0

    def get_growth_factor(self) -> float:
        """The factor the scale grows by.

        >>> import jaxgrad
        >>> jaxgrad.amp.GradScaler("cpu").get_growth_factor()
        2.0
        """
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the factor the scale grows by.

        >>> import jaxgrad
        >>> jaxgrad.amp.GradScaler("cpu").set_growth_factor(4.0)
        """
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The factor the scale backs off by.

        >>> import jaxgrad
        >>> jaxgrad.amp.GradScaler("cpu").get_backoff_factor()
        0.5
        """
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the factor the scale backs off by.

        >>> import jaxgrad
        >>> jaxgrad.amp.GradScaler("cpu").set_backoff_factor(0.25)
        """
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """How many clean steps in a row grow the scale.

        >>> import jaxgrad
        >>> jaxgrad.amp.GradScaler("cpu").get_growth_interval()
        2000
        """
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set how many clean steps in a row grow the scale.

        >>> import jaxgrad
        >>> jaxgrad.amp.GradScaler("cpu").set_growth_interval(10)
        """
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            return (self._init_growth_tracker if self._growth_tracker is None
                    else int(self._growth_tracker.item()))
        return 0

    def is_enabled(self) -> bool:
        """Whether this scaler is enabled.

        >>> import jaxgrad
        >>> jaxgrad.amp.GradScaler("cpu", enabled=False).is_enabled()
        False
        """
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """The scale, factors, interval and growth tracker (empty when disabled).

        >>> import jaxgrad
        >>> jaxgrad.amp.GradScaler("cpu").state_dict()["scale"]
        65536.0
        """
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take the state of a ``state_dict``.

        >>> import jaxgrad
        >>> s = jaxgrad.amp.GradScaler("cpu")
        >>> s.load_state_dict(jaxgrad.amp.GradScaler("cpu", init_scale=2.0).state_dict())
        >>> s.get_scale()
        2.0
        """
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
