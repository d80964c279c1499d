"""The trapezoidal rule: trapezoid (trapz) and cumulative_trapezoid, composed as torch composes
them (aten/native/Integration.cpp: slices, sums, a cumsum), so their graphs are torch's."""

from __future__ import annotations

from typing import Any

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor, _wrap_dim
from .._engine.dispatch import apply
from .._ops import foreach as _scalar_ops
from .arguments import require_tensors
from .creation import zeros
from .opgen import declare
from .pointwise import _promote_with_scalars


def _mul(t: Tensor, s: float) -> Tensor:
    """``t * s`` as torch's C++ computes it with a double (mul.Scalar: MulBackward1)."""
    return apply(_scalar_ops.MUL_SCALAR, _promote_with_scalars(t, s), aux=(s,))


def _div(t: Tensor, s: float) -> Tensor:
    """``t / s`` with a double (div.Scalar: DivBackward1)."""
    return apply(_scalar_ops.DIV_SCALAR, _promote_with_scalars(t, s), aux=(s,))


def _halves(y: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """``y.slice(dim, 0, -1)`` and ``y.slice(dim, 1)``."""
    n = y.shape[dim]
    return y.narrow(dim, 0, max(n - 1, 0)), y.narrow(dim, min(n, 1), max(n - 1, 0))


def _x_spacing(y: Tensor, x: Tensor, dim: int, name: str) -> Tensor:
    """``x`` viewed against ``y`` (a 1-d ``x`` along ``dim``), then its differences."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        sizes = [1] * y.ndim
        sizes[dim] = x.shape[0]
        x = x.view(sizes)
    elif x.ndim < y.ndim:
        x = x.view([1] * (y.ndim - x.ndim) + list(x.shape))
    n = x.shape[dim]
    return x.narrow(dim, 1, n - 1) - x.narrow(dim, 0, n - 1)


def _check_dx(dx: Any, name: str) -> float:
    if isinstance(dx, (bool, complex, Tensor)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return float(dx)


@declare('trapezoid.x(Tensor y, Tensor? x=None, *, Scalar? dx=None, int dim=-1) -> Tensor',
         variants='function')
def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The integral of ``y`` along ``dim`` by the trapezoidal rule, with sample points ``x`` or
    a constant spacing ``dx`` (1 by default).

    >>> import jaxgrad
    >>> jaxgrad.trapezoid(jaxgrad.tensor([1.0, 2.0, 4.0])), jaxgrad.trapezoid(
    ...     jaxgrad.tensor([1.0, 2.0, 4.0]), jaxgrad.tensor([0.0, 1.0, 3.0]))
    (tensor(4.5000), tensor(7.5000))
    """
    require_tensors(y)
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments")
    dim = _wrap_dim(dim, y.ndim)
    if y.shape[dim] == 0:
        sizes = list(y.shape)
        del sizes[dim]
        return zeros(sizes, dtype=y.dtype)
    if x is not None:
        if y.dtype is _dtypes.bool_ or x.dtype is _dtypes.bool_:
            raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is "
                               "not supported")
        spacing = _x_spacing(y, x, dim, "trapezoid")
        left, right = _halves(y, dim)
        return _div(((left + right) * spacing).sum(dim), 2.0)
    if y.dtype is _dtypes.bool_:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    step = _check_dx(1 if dx is None else dx, "trapezoid")
    return _mul(y.sum(dim) - _mul(y.select(dim, 0) + y.select(dim, -1), 0.5), step)


@declare('trapz.x(Tensor y, Tensor? x=None, *, float dx=1, int dim=-1) -> Tensor',
         variants='function')
def trapz(y: Tensor, x: Tensor | None = None, *, dx: float = 1, dim: int = -1) -> Tensor:
    """``trapezoid`` under its older name.

    >>> import jaxgrad
    >>> jaxgrad.trapz(jaxgrad.tensor([1.0, 2.0, 4.0]), dx=2)
    tensor(9.)
    """
    return trapezoid(y, x, dim=dim) if x is not None else trapezoid(y, dx=dx, dim=dim)


@declare('cumulative_trapezoid.x(Tensor y, Tensor? x=None, *, Scalar? dx=None, int dim=-1) '
         '-> Tensor', variants='function')
def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None,
                         dim: int = -1) -> Tensor:
    """The running trapezoidal integral of ``y`` along ``dim`` (one element fewer than ``y``).

    >>> import jaxgrad
    >>> jaxgrad.cumulative_trapezoid(jaxgrad.tensor([1.0, 2.0, 4.0]))
    tensor([1.5000, 4.5000])
    """
    require_tensors(y)
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments")
    dim = _wrap_dim(dim, y.ndim)
    if x is not None:
        if y.dtype is _dtypes.bool_ or x.dtype is _dtypes.bool_:
            raise RuntimeError("cumulative_trapezoid: received a bool input for `x` or `y`, but "
                               "bool is not supported")
        spacing = _x_spacing(y, x, dim, "cumulative_trapezoid")
        left, right = _halves(y, dim)
        return _div(((left + right) * spacing).cumsum(dim), 2.0)
    step = _check_dx(1 if dx is None else dx, "cumulative_trapezoid")
    left, right = _halves(y, dim)
    return _mul(left + right, step / 2.0).cumsum(dim)
