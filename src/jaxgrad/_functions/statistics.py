"""Order statistics and counts: quantile and nanquantile (composed as torch's CPU kernel composes
them: sort, gather at the ranks, ``lerp_``, in-place squeeze, so the graph is torch's), msort,
bincount and histc (not differentiable).
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes
from .._core import return_types
from .._core.tensor import Tensor, _wrap_dim
from .._engine.dispatch import apply
from .._ops import counting as C
from .arguments import require_tensors
from .creation import full_like, linspace, tensor
from .opgen import declare

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_output_shape(input: Tensor, q: Tensor, dim: int | None, wrapped: int,
                           keepdim: bool) -> list[int]:
    if dim is not None and input.ndim > 0:
        shape = list(input.shape)
        if keepdim:
            shape[wrapped] = 1
        else:
            del shape[wrapped]
    elif keepdim:
        shape = [1] * input.ndim
    else:
        shape = []
    if q.ndim > 0:
        shape.insert(0, q.numel())
    return shape


def _quantile(input: Tensor, q: Any, dim: int | None, keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Tensor:
    """torch's quantile_impl and quantile_compute (aten/native/Sorting.cpp), op for op."""
    require_tensors(input)
    if interpolation not in _MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if not isinstance(q, Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
        q = tensor(q, dtype=input.dtype)
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (_dtypes.float32, _dtypes.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if input.dtype is not q.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    wrapped = _wrap_dim(0 if dim is None else dim, max(input.ndim, 1))
    out_shape = _quantile_output_shape(input, q, dim, wrapped, keepdim)
    q_values = np.asarray(q.detach()._value)
    if not bool(np.all((q_values >= 0) & (q_values <= 1))):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if dim is None:
        ordered = input.flatten().sort()[0]
    elif wrapped == input.ndim - 1:
        ordered = input.sort()[0]
    else:
        ordered = input.unsqueeze(-1).transpose(wrapped, -1).sort()[0]
    if q.ndim == 0:
        out_shape.insert(0, q.numel())
    ordered = ordered.view([*out_shape[1:], ordered.shape[-1]])
    if ignore_nan:
        ranks = q * (ordered.isnan().logical_not_().sum(-1, True) - 1)
        ranks.masked_fill_(ranks < 0, 0)
    else:
        last = ordered.shape[-1] - 1
        has_nan = ordered.isnan().any(-1, True)
        scaled, has_nan = _broadcast_pair(q * last, has_nan)
        ranks = scaled.masked_fill(has_nan, last)
    if interpolation == "lower":
        ranks.floor_()
    elif interpolation == "higher":
        ranks.ceil_()
    elif interpolation == "nearest":
        ranks.round_()
    ranks_below = ranks.long()
    values = ordered.gather(-1, ranks_below)
    if interpolation in ("linear", "midpoint"):
        weights = full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - ranks_below
        ranks_above = ranks.ceil_().long()
        values.lerp_(ordered.gather(-1, ranks_above), weights)
    if q.ndim == 0:
        values.squeeze_(-1)
    else:
        values.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)
    return values


def _broadcast_pair(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    return a.expand(shape), b.expand(shape)


@declare('quantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, '
         'str interpolation="linear") -> Tensor', variants='function method',
         numbers_as_tensors=('q',))
def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The ``q``-th quantiles of ``input`` (over all elements, or along ``dim``), interpolated
    between neighbouring order statistics as ``interpolation`` says; NaN where a NaN is reduced.

    >>> import jaxgrad
    >>> x = jaxgrad.tensor([[3.0, 1.0, 4.0], [1.5, 9.0, 2.0]])
    >>> jaxgrad.quantile(x, 0.25, dim=1), jaxgrad.quantile(x, 0.5, interpolation="lower")
    (tensor([2.0000, 1.7500]), tensor(2.))
    """
    return _quantile(input, q, dim, keepdim, interpolation, False)


@declare('nanquantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, '
         'str interpolation="linear") -> Tensor', variants='function method',
         numbers_as_tensors=('q',))
def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """``quantile`` ignoring NaNs (NaN only where every reduced element is NaN).

    >>> import jaxgrad
    >>> jaxgrad.nanquantile(jaxgrad.tensor([1.0, float("nan"), 3.0]), 0.5)
    tensor(2.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, True)


@declare('msort(Tensor self) -> Tensor', variants='function method')
def msort(input: Tensor) -> Tensor:
    """``input`` sorted along its first dim: ``sort(input, dim=0).values`` (SortBackward0).

    >>> import jaxgrad
    >>> jaxgrad.msort(jaxgrad.tensor([[3.0, 1.0], [2.0, 4.0]]))
    tensor([[2., 1.],
            [3., 4.]])
    """
    require_tensors(input)
    return input.sort(dim=0)[0]


_INTEGRAL = ("uint8", "int8", "int16", "int32", "int64")


@declare('bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor',
         variants='function method')
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each non-negative integer occurs in the 1-d ``input`` (summing ``weights``
    instead of ones when given), in ``max(input) + 1`` bins at least ``minlength``.

    >>> import jaxgrad
    >>> jaxgrad.bincount(jaxgrad.tensor([1, 1, 3]))
    tensor([0, 2, 0, 1])
    >>> jaxgrad.bincount(jaxgrad.tensor([0, 2]), minlength=4)
    tensor([1, 0, 1, 0])
    """
    require_tensors(input)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    name = str(input.dtype).split(".")[-1]
    if name not in _INTEGRAL:
        raise NotImplementedError(
            f"\"bincount_cpu\" not implemented for '{_dtypes.scalar_type_name(input.dtype)}'")
    values = np.asarray(input.detach()._value)
    if input.ndim != 1 or (values.size and values.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    length = max(int(values.max()) + 1 if values.size else 0, minlength)
    if weights is None:
        return apply(C.BINCOUNT, input, length=length, dtype=_dtypes.int64.np)
    dtype = _dtypes.float32 if weights.dtype is _dtypes.float32 else _dtypes.float64
    return apply(C.BINCOUNT_WEIGHTS, input, weights, length=length, dtype=dtype.np)


@declare('histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor',
         variants='function method out')
def histc(input: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:
    """A histogram of ``input``'s elements in ``bins`` equal bins over [min, max] (the data's
    range when ``min == max``); elements outside are not counted. Not differentiable.

    >>> import jaxgrad
    >>> jaxgrad.histc(jaxgrad.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    require_tensors(input)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"histogram_cpu\" not implemented for '{_dtypes.scalar_type_name(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = float(min), float(max)
    if low == high and input.numel() > 0:
        values = np.asarray(input.detach()._value, np.float64)
        low, high = float(values.min()), float(values.max())
    if low == high:
        low, high = low - 1, high + 1
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{low:g}, {high:g}] "
                           "is not finite")
    if low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    return apply(C.HISTC, input, aux=(low, high), bins=int(bins))


@declare('histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, Tensor? weight=None,'
         ' bool density=False) -> (Tensor hist, Tensor bin_edges)', variants='function method')
def histogram(input: Tensor, bins: Any = 100, *, range: Any = None,
              weight: Tensor | None = None, density: bool = False) -> Any:
    """``(hist, bin_edges)``: ``bins`` equal bins over ``range`` (the data's by default), or
    the bins between the edges of a 1-d tensor ``bins``; ``weight`` sums weights instead of
    counting, ``density`` normalises to a probability density. Not differentiable.

    >>> import jaxgrad
    >>> jaxgrad.histogram(jaxgrad.tensor([1.0, 2.0, 1.0]), bins=3, range=(0.0, 3.0)).hist
    tensor([0., 2., 1.])
    """
    require_tensors(input)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"histogramdd\" not implemented for '{_dtypes.scalar_type_name(input.dtype)}'")
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            "the input tensor excluding its innermost dimension, but got input with shape "
            f"{[input.numel(), 1]} and weight with shape {list(weight.shape)}")
    if isinstance(bins, Tensor):
        if bins.ndim != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {bins.ndim} dimensions in the bins tensor for dimension 0")
        if bins.dtype is not input.dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {_dtypes.scalar_type_name(input.dtype).lower()} and "
                f"bins for dimension 0 with dtype "
                f"{_dtypes.scalar_type_name(bins.dtype).lower()}")
        edges = bins.detach()
    else:
        edges = _histogram_edges(input, int(bins), range)
    operands = (input,) if weight is None else (input, weight)
    row = C.HISTOGRAM if weight is None else C.HISTOGRAM_WEIGHT
    hist, bin_edges = apply(row, *operands, aux=(edges,), density=bool(density))
    return return_types.histogram(hist, bin_edges)


@declare('histogramdd(Tensor self, int[] bins, float[]? range=None, Tensor? weight=None, '
         'bool density=False) -> (Tensor hist, Tensor[] bin_edges)', variants='function')
def histogramdd(input: Tensor, bins: Any, range: Any = None,
                weight: Tensor | None = None, density: bool = False) -> Any:
    """The D-dimensional histogram of the rows of ``input`` (its last dim has the D
    coordinates): ``bins`` is a count for every dim, a count per dim or a 1-d edge tensor per
    dim; ``range`` the 2D bounds ``[min0, max0, min1, max1, ...]``; ``weight`` and ``density``
    as in :func:`histogram`. Returns ``(hist, bin_edges)``, a tuple of D edge tensors.

    >>> import jaxgrad
    >>> jaxgrad.histogramdd(jaxgrad.tensor([[0.0, 1.0], [1.0, 0.0]]), bins=2).hist
    tensor([[0., 1.],
            [1., 0.]])
    """
    require_tensors(input)
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"histogramdd\" not implemented for '{_dtypes.scalar_type_name(input.dtype)}'")
    dims = input.shape[-1]
    rows = input.reshape(-1, dims)
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            "the input tensor excluding its innermost dimension, but got input with shape "
            f"{list(input.shape)} and weight with shape {list(weight.shape)}")
    bins = [bins] * dims if isinstance(bins, int) else list(bins)
    if len(bins) != dims:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram range "
                           f"should have {2 * dims} elements, but got {len(range)}")
    edges = []
    for d, b in enumerate(bins):
        if isinstance(b, Tensor):
            edges.append(b.detach())
            continue
        if b <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for dimension "
                               f"{d}")
        edges.append(_histogram_edges(rows.detach().select(1, d), int(b),
                                      None if range is None else range[2 * d:2 * d + 2], d))
    flat = Tensor._make(jnp.concatenate([jnp.asarray(e._value, input._value.dtype)
                                         for e in edges]))
    counts = tuple(int(e.shape[0]) - 1 for e in edges)
    operands = (input,) if weight is None else (input, weight)
    row = C.HISTOGRAMDD if weight is None else C.HISTOGRAMDD_WEIGHT
    hist, *bin_edges = apply(row, *operands, aux=(flat,), counts=counts, density=bool(density))
    return return_types.histogramdd(hist, tuple(bin_edges))


def _histogram_edges(input: Tensor, bins: int, range: Any, dim: int = 0) -> Tensor:
    """torch's ``bins + 1`` equal edges: over ``range``, else the finite data's [min, max]
    ([0, 1] for no data); an empty range widened by 0.5 each side."""
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension "
                           f"{dim}")
    if range is not None:
        low, high = float(range[0]), float(range[1])
    elif input.numel():
        values = np.asarray(input.detach()._value, np.float64)
        low, high = float(np.nanmin(values)), float(np.nanmax(values))
    else:
        low, high = 0.0, 1.0
    if low > high:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {low:g} "
                           f"max {high:g} for dimension {dim}")
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histogramdd: dimension {dim}'s range [{low:g}, {high:g}] is not "
                           "finite")
    if low == high:
        low, high = low - 0.5, high + 0.5
    return linspace(low, high, bins + 1, dtype=input.dtype)
