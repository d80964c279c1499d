"""``torch.autograd.forward_ad``: dual tensors for forward-mode AD.

Inside ``dual_level()``, ``make_dual(x, v)`` gives a tensor that carries the tangent ``v``;
every op then computes its results' tangents (``jax.jvp`` of the op's own JAX kernel), and
``unpack_dual(y)`` returns ``(primal, tangent)``. Leaving the level drops every tangent.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

from .. import _forward_ad
from .._dispatch import _FORWARD_AD, apply_view
from .._grad_mode import is_inference_mode_enabled
from .._ops import views as V
from .._tensor import Tensor
from .._typename import type_name

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]

_current_level = -1  # the level the other functions use by default, as torch keeps it


def enter_dual_level() -> int:
    """Enter a new forward grad level (only one may exist) and make it the default one.

    >>> from jaxgrad.autograd import forward_ad as fwAD
    >>> level = fwAD.enter_dual_level(); fwAD.exit_dual_level(); level
    0
    """
    global _current_level
    new_level = _forward_ad.enter_level()
    if new_level != _current_level + 1:
        raise RuntimeError("Entering a new forward AD level but the current level is not valid. "
                           "Make sure you did not modify it directly.")
    _current_level = new_level
    return new_level


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit the last forward grad level entered, deleting the tangents held at it.

    >>> from jaxgrad.autograd import forward_ad as fwAD
    >>> fwAD.exit_dual_level()
    Traceback (most recent call last):
    RuntimeError: Dual level must be a positive number.
    """
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was "
                           "created. This is not supported.")
    _forward_ad.exit_level(level)
    _current_level = level - 1


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` carrying ``tangent`` (as-is) as its forward gradient at ``level``.

    >>> import jaxgrad
    >>> from jaxgrad.autograd import forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([1.0, 0.0]))
    ...     fwAD.unpack_dual(x.exp()).tangent
    tensor([2.7183, 0.0000])
    """
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    _forward_ad.check_level(level)
    if _forward_ad.own_tangent(tensor, level) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    if _forward_ad.own_tangent(tangent, level) is not None:
        raise RuntimeError("Setting a forward grad that itself has a forward gradient at the same "
                           f"level{level} is not supported.")
    _forward_ad.check_tangent_size(tensor.shape, tangent.shape)
    if is_inference_mode_enabled() or tensor._inference:
        return tensor.detach()  # torch: no view, and inference tensors hold no tangent
    with _forward_ad.suspended():
        dual = apply_view(V.VIEW, V.view_geometry, tensor, shape=tuple(tensor.shape))
    dual.__dict__[_forward_ad.NOT_FORWARD_VIEW] = True
    _forward_ad.set_tangent(dual, level, tangent)
    return dual


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the ``primal`` (a view) and the ``tangent`` (or None).

    >>> import jaxgrad
    >>> from jaxgrad.autograd import forward_ad as fwAD
    >>> fwAD.unpack_dual(jaxgrad.ones(1))
    UnpackedDualTensor(primal=tensor([1.]), tangent=None)
    """

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual tensor: a view of its value and its tangent as-is.

    >>> import jaxgrad
    >>> from jaxgrad.autograd import forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(jaxgrad.tensor([3.0]), jaxgrad.tensor([1.0]))
    ...     fwAD.unpack_dual(x * x)
    UnpackedDualTensor(primal=tensor([9.]), tangent=tensor([6.]))
    """
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
                        f"{type_name(tensor)}")
    with _forward_ad.suspended():
        primal = apply_view(V.ALIAS, V.alias_geometry, tensor)
        tangent = (_forward_ad.tangent_of(_FORWARD_AD, tensor, level)
                   if level <= _forward_ad.current_level() else None)
    primal.__dict__[_forward_ad.NOT_FORWARD_VIEW] = True
    return UnpackedDualTensor(primal, tangent)


class dual_level:
    """Context manager (and decorator) inside which dual tensors exist; leaving it drops every
    tangent of its level. Nesting is not supported, as in torch.

    >>> import jaxgrad
    >>> from jaxgrad.autograd import forward_ad as fwAD
    >>> with fwAD.dual_level() as level:
    ...     x = fwAD.make_dual(jaxgrad.ones(1), jaxgrad.ones(1))
    >>> level, fwAD.unpack_dual(x).tangent
    (0, None)
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()

    def __call__(self, fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with dual_level():
                return fn(*args, **kwargs)

        return wrapped


def _is_fwd_grad_enabled() -> bool:
    """Whether forward grad is computed (torch's private switch)."""
    return _forward_ad.is_enabled()


class _set_fwd_grad_enabled:
    """Turn forward grad on or off now, restoring the previous mode on exit (private in torch)."""

    def __init__(self, mode: bool) -> None:
        self.prev = _forward_ad.is_enabled()
        _forward_ad.set_enabled(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _forward_ad.set_enabled(self.prev)
