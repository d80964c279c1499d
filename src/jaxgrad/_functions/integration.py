"""The trapezoidal rule: trapezoid (trapz) and cumulative_trapezoid, composed as torch composes
them (aten/native/Integration.cpp: slices, sums, a cumsum), so their graphs are torch's; and
its inverse in spirit, ``gradient`` (finite differences, as ReduceOps.cpp composes them)."""

from __future__ import annotations

from typing import Any

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor, _wrap_dim
from .._ops import scalar_overloads as _scalar_ops
from .arguments import require_tensors
from .creation import zeros
from .joins import cat, diff
from .opgen import declare
from .pointwise import with_scalar
from .shapes import narrow_slice


def _mul(t: Tensor, s: float) -> Tensor:
    """``t * s`` as torch's C++ computes it with a double (mul.Scalar: MulBackward1)."""
    return with_scalar(_scalar_ops.MUL_SCALAR, t, s)


def _div(t: Tensor, s: float) -> Tensor:
    """``t / s`` with a double (div.Scalar: DivBackward1)."""
    return with_scalar(_scalar_ops.DIV_SCALAR, t, s)


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


# --- gradient: finite differences, composed as torch composes them (ReduceOps.cpp) ------------

def _cut(t: Tensor, dim: int, start: int, stop: int | None = None) -> Tensor:
    """``at::slice(t, dim, start, stop)`` (SliceBackward0)."""
    return narrow_slice(t, dim, start, stop, 1)


def _spacing_args(input: Tensor, spacing: Any, dim: Any) -> tuple[list, list[int], bool]:
    """(spacing per dim, the dims, whether the spacing is coordinate tensors), after torch's
    checks of their lengths."""
    if input.dtype is _dtypes.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims = list(range(input.ndim)) if dim is None else (
        [dim] if isinstance(dim, int) else [int(d) for d in dim])
    if spacing is None:
        steps, given = [1.0] * len(dims), None
    elif isinstance(spacing, (list, tuple)):
        steps, given = list(spacing), len(spacing)
    else:
        steps = [spacing] * (len(dims) if isinstance(dim, (list, tuple)) else
                             (1 if dim is not None else input.ndim))
        given = len(steps)
    if given is not None and dim is None and given != input.ndim:
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {input.ndim}', since dim argument was not given, but got "
            f"a list of length {given}")
    if given is not None and dim is not None and given != len(dims):
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
            f"dim arguments to have the same length, but got a spacing argument of length "
            f"{given} and a dim argument of length {len(dims)}.")
    return steps, dims, bool(steps) and all(isinstance(s, Tensor) for s in steps)


def _check_dims(input: Tensor, dims: list[int], explicit: bool, edge_order: int) -> None:
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if explicit:
        seen = set()
        for d in dims:
            w = _wrap_dim(d, input.ndim)
            if w in seen:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            seen.add(w)
    for d in (dims if explicit else range(input.ndim)):
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")


def _gradient_uniform(x: Tensor, h: Any, d: int, edge_order: int) -> Tensor:
    center = _div(_cut(x, d, 2) - _cut(x, d, 0, -2), h)
    if edge_order == 1:
        first = _div(_cut(x, d, 1, 2) - _cut(x, d, 0, 1), h)
        last = _div(_cut(x, d, -1) - _cut(x, d, -2, -1), h)
    else:
        first = _div(_mul(_cut(x, d, 0, 1), -1.5) + _mul(_cut(x, d, 1, 2), 2)
                     - _mul(_cut(x, d, 2, 3), 0.5), h)
        last = _div(_mul(_cut(x, d, -3, -2), 0.5) - _mul(_cut(x, d, -2, -1), 2)
                    + _mul(_cut(x, d, -1), 1.5), h)
    return cat([first, _div(center, 2), last], d)


def _gradient_coordinates(x: Tensor, coordinates: Tensor, d: int, edge_order: int) -> Tensor:
    if coordinates.ndim != 1:
        raise RuntimeError("torch.gradient expected each element of spacing to have one "
                           f"dimension, but got an element with {coordinates.ndim} dimensions!")
    shape = [1] * x.ndim
    shape[d] = -1
    dx = diff(coordinates, 1, 0)
    dx1, dx2 = _cut(dx, 0, 0, -1), _cut(dx, 0, 1)
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _cut(x, d, 0, -2) + b * _cut(x, d, 1, -1) + c * _cut(x, d, 2)
    h0, h1, hl, hm = dx.select(0, 0), dx.select(0, 1), dx.select(0, -1), dx.select(0, -2)
    if edge_order == 1:
        first = (_cut(x, d, 1, 2) - _cut(x, d, 0, 1)) / h0
        last = (_cut(x, d, -1) - _cut(x, d, -2, -1)) / hl
    else:
        a = -(_mul(h0, 2.0) + h1) / (h0 * (h0 + h1))
        b = (h0 + h1) / (h0 * h1)
        c = (-h0) / (h1 * (h0 + h1))
        first = a * _cut(x, d, 0, 1) + b * _cut(x, d, 1, 2) + c * _cut(x, d, 2, 3)
        a = hl / (hm * (hl + hm))
        b = -(hl + hm) / (hl * hm)
        c = (_mul(hl, 2) + hm) / (hl * (hl + hm))
        last = a * _cut(x, d, -3, -2) + b * _cut(x, d, -2, -1) + c * _cut(x, d, -1)
    return cat([first, center, last], d)


@declare('gradient.scalarrayint(Tensor self, *, Scalar[]? spacing=None, int? dim=None, '
         'int edge_order=1) -> Tensor[]', variants='function')
def gradient(input: Tensor, *, spacing: Any = None, dim: Any = None,
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """The derivative of ``input`` estimated along each dim in ``dim`` (all by default) by
    central differences inside and one-sided ones (of ``edge_order`` 1 or 2) at the edges;
    ``spacing`` is the sample distance (a number, one per dim) or the sample coordinates (1-d
    tensors, one per dim).

    >>> import jaxgrad
    >>> jaxgrad.gradient(jaxgrad.tensor([1.0, 4.0, 9.0, 16.0]))
    (tensor([3., 4., 6., 7.]),)
    """
    require_tensors(input)
    steps, dims, coordinates = _spacing_args(input, spacing, dim)
    _check_dims(input, dims, dim is not None, edge_order)
    out = []
    for step, d in zip(steps, dims):
        d = _wrap_dim(d, input.ndim)
        out.append(_gradient_coordinates(input, step, d, edge_order) if coordinates
                   else _gradient_uniform(input, step, d, edge_order))
    return tuple(out)
