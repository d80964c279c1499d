"""``torch.autograd.forward_ad``: dual tensors for forward-mode AD.

Inside ``dual_level()``, ``make_dual(x, v)`` gives a tensor that carries the tangent ``v``;
every op then computes its results' tangents (``jax.jvp`` of the op's own JAX kernel), and
``unpack_dual(y)`` returns ``(primal, tangent)``. Leaving the level drops every tangent.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

from .._core.tensor import Tensor
from .._engine import forward_ad as _forward_ad
from .._engine.dispatch import _FORWARD_AD

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]


def __getattr__(name: str) -> Any:
    """``_current_level``: the level the other functions use by default, as torch keeps it."""
    if name == "_current_level":
        return _forward_ad.default_level
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def enter_dual_level() -> int:
    """Enter a new forward grad level (only one may exist) and make it the default one.

    >>> from jaxgrad.autograd import forward_ad as fwAD
    >>> level = fwAD.enter_dual_level(); fwAD.exit_dual_level(); level
    0
    """
    return _forward_ad.enter_dual_level(_FORWARD_AD)


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit the last forward grad level entered, deleting the tangents held at it.

    >>> from jaxgrad.autograd import forward_ad as fwAD
    >>> fwAD.exit_dual_level()
    Traceback (most recent call last):
    RuntimeError: Dual level must be a positive number.
    """
    _forward_ad.exit_dual_level(level)


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` carrying ``tangent`` (as-is) as its forward gradient at ``level``.

    >>> import jaxgrad
    >>> from jaxgrad.autograd import forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(jaxgrad.tensor([1.0, 2.0]), jaxgrad.tensor([1.0, 0.0]))
    ...     fwAD.unpack_dual(x.exp()).tangent
    tensor([2.7183, 0.0000])
    """
    return _forward_ad.make_dual(_FORWARD_AD, tensor, tangent, level)


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
    return UnpackedDualTensor(*_forward_ad.unpack_dual(_FORWARD_AD, tensor, level))


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
    """Whether forward grad is computed (torch's private switch; off inside an
    ``autograd.Function``'s forward, as in torch).

    >>> from jaxgrad.autograd import forward_ad
    >>> forward_ad._is_fwd_grad_enabled()
    True
    """
    return _forward_ad.is_enabled() and not _forward_ad.is_suspended()


class _set_fwd_grad_enabled:
    """Turn forward grad on or off now, restoring the previous mode on exit (private in torch)."""

    def __init__(self, mode: bool) -> None:
        self.prev = _forward_ad.is_enabled()
        _forward_ad.set_enabled(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _forward_ad.set_enabled(self.prev)
