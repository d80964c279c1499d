"""What several optimizers' steps share: torch's scalar dtype for ``step`` counters, its checks
of capturable and differentiable steps, numbers where torch's ops take numbers, and complex
parameters stepped as real views (torch's ``view_as_real``)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from .._core.dtypes import float32, float64, get_default_dtype
from .._core.tensor import Tensor
from .._functions.creation import tensor as new_tensor

# torch's _get_capturable_supported_devices(), with and without "xla"
_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]


def scalar_dtype(fused: bool | None = None):
    """torch's ``_get_scalar_dtype``: float32, or float64 under a float64 default (not fused)."""
    if fused:
        return float32
    return float64 if get_default_dtype() is float64 else float32


def as_number(value: Any, op: str, arg: str) -> Any:
    """``value`` where torch's op takes a Python number: a tensor that requires grad is refused
    as torch's argument parser refuses it; another tensor becomes its value."""
    if isinstance(value, Tensor):
        if value.requires_grad:
            raise TypeError(f"{op}(): argument '{arg}' must be Number, not Tensor")
        return value.item()
    return value


def check_capturable(params: list[Tensor], xla: bool = True) -> None:
    """torch's check that capturable steps run on a device that can capture graphs."""
    devices = _CAPTURABLE_DEVICES if xla else _CAPTURABLE_DEVICES[:-1]
    if not all(p.device.type in devices for p in params):
        raise AssertionError("If capturable=True, params and state_steps must be on supported "
                             f"devices: {devices}.")


def tensor_steps(optimizer: Any, group: dict[str, Any], fused: bool | None = None) -> None:
    """Old checkpoints stored ``step`` as a number: make it a 0-d float tensor."""
    for p in group["params"]:
        p_state = optimizer.state.get(p, [])
        if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
            p_state["step"] = new_tensor(float(p_state["step"]), dtype=scalar_dtype(fused))


def check_differentiable(group: dict[str, Any]) -> None:
    """What torch refuses before a differentiable step: foreach."""
    if group["foreach"]:
        raise AssertionError("_foreach ops don't support autograd")


def real_view(x):
    """torch.view_as_real: complex values as trailing (real, imag) pairs."""
    return jnp.stack([x.real, x.imag], axis=-1) if jnp.iscomplexobj(x) else x


def complex_like(x, like):
    """Undo ``real_view`` when ``like`` is complex."""
    return jax.lax.complex(x[..., 0], x[..., 1]) if jnp.iscomplexobj(like) else x


def fill_group_defaults(optimizer: Any, defaults: tuple[tuple[str, Any], ...]) -> None:
    """torch's ``__setstate__``: the options an older checkpoint's groups lack take their
    defaults, and its number steps become tensors."""
    for group in optimizer.param_groups:
        for key, default in defaults:
            group.setdefault(key, default)
        tensor_steps(optimizer, group)


def zero_state(p: Tensor, *names: str) -> dict[str, Tensor]:
    """A parameter's first state: ``step`` 0 (torch's scalar dtype) and a zero tensor like
    ``p`` under each of ``names``."""
    zeros = jnp.zeros_like(p._value)
    return {"step": new_tensor(0.0, dtype=scalar_dtype()),
            **{name: Tensor._make(zeros) for name in names}}
