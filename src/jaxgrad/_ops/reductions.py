"""Reductions, normalisations and joins: sum, mean, prod, amax/amin, max/min, var/std,
softmax/log_softmax, cat/stack/unbind. ``dim`` is always a tuple of non-negative ints here.
"""

from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core import jax_compat as compat
from ._table import Op, sgn
from .half_precision import HALF_DTYPES, in_float32


def _expand_back(grad, self_shape, dim, keepdim):
    """Broadcast a reduced gradient back over the reduced dims."""
    if not keepdim and dim:
        grad = jnp.expand_dims(grad, dim)
    return jnp.broadcast_to(grad, self_shape)


def _count(self_shape, dim):
    return math.prod(self_shape[d] for d in dim) if dim else math.prod(self_shape)


SUM = Op("sum", "SumBackward0", lambda x, dtype: jnp.sum(x, dtype=dtype), grad_layout="expand",
         grads={"self": lambda grad, self_shape: jnp.broadcast_to(grad, self_shape)},
         grad_nodes={"self": "ExpandBackward0"})
def _cumsum(x, dim, dtype):
    """The running sums; of half-precision values accumulated in float32, each sum rounded to
    the result's dtype (torch's CPU kernel)."""
    out_dtype = dtype if dtype is not None else x.dtype
    wide = jnp.float32 if jnp.dtype(out_dtype) in HALF_DTYPES else out_dtype
    out = jnp.cumsum(x.reshape(-1) if x.ndim == 0 else x, axis=dim, dtype=wide)
    return out.reshape(x.shape).astype(out_dtype)


def _reverse_cumsum(grad, dim):
    """cumsum's backward: the gradient summed from the end along ``dim`` (a 0-d one as is)."""
    if grad.ndim == 0:
        return grad
    return jnp.flip(jnp.cumsum(jnp.flip(grad, dim), axis=dim), dim)


def _one_step(shape, dim, **_):
    """A cumulative op over at most one element per row: torch's backward returns ``grad``."""
    return math.prod(shape) <= 1 or shape[dim] == 1


CUMSUM = Op("cumsum", "CumsumBackward0", _cumsum,
            grads={"self": in_float32(_reverse_cumsum)},
            identity_when=_one_step, grad_nodes={"self": "FlipBackward0"})
SUM_DIM = Op("sum", "SumBackward1",
             lambda x, dim, keepdim, dtype: jnp.sum(x, axis=dim, keepdims=keepdim, dtype=dtype),
             grads={"self": _expand_back}, grad_layout="expand",
             grad_nodes={"self": "ExpandBackward0"})
MEAN = Op("mean", "MeanBackward0", lambda x, dtype: jnp.mean(x, dtype=dtype),
          grads={"self": lambda grad, self_shape: jnp.broadcast_to(
              grad / max(math.prod(self_shape), 1) if math.prod(self_shape) else grad * jnp.nan,
              self_shape)}, grad_nodes={"self": "DivBackward1"})
MEAN_DIM = Op("mean", "MeanBackward1",
              lambda x, dim, keepdim, dtype: jnp.mean(x, axis=dim, keepdims=keepdim, dtype=dtype),
              grads={"self": lambda grad, self_shape, dim, keepdim: _expand_back(
                  grad / _count(self_shape, dim), self_shape, dim, keepdim)},
              grad_nodes={"self": "DivBackward1"})


def _prod_grad(grad, self, result, dim, keepdim):
    """torch's prod_backward: ``grad * result / self`` without zeros in a slice; with one zero,
    that element's gradient is the product of the others; with two or more, 0."""
    if not keepdim and dim is not None:
        grad, result = jnp.expand_dims(grad, dim), jnp.expand_dims(result, dim)
    zero = self == 0
    zeros = jnp.sum(zero, axis=dim, keepdims=True)
    others = jnp.prod(jnp.where(zero, jnp.ones((), self.dtype), self), axis=dim, keepdims=True)
    factor = jnp.where(zeros == 0, result / jnp.where(zero, jnp.ones((), self.dtype), self),
                       jnp.where((zeros == 1) & zero, others, jnp.zeros((), self.dtype)))
    return grad * jnp.conj(factor)


PROD = Op("prod", "ProdBackward0", lambda x, dtype: jnp.prod(x, dtype=dtype), saves=("result",),
          grads={"self": lambda grad, self, result: _prod_grad(grad, self, result, None, False)},
          grad_nodes={"self": "MulBackward0"})
PROD_DIM = Op("prod", "ProdBackward1",
              lambda x, dim, keepdim, dtype: jnp.prod(x, axis=dim, keepdims=keepdim, dtype=dtype),
              saves=("result",), grads={"self": _prod_grad}, grad_nodes={"self": "MulBackward0"})


def _evenly_distribute(grad, self, result, dim, keepdim):
    """Gradient of max/min/amax/amin split evenly among the tied extreme elements."""
    expanded = result if keepdim or dim is None else jnp.expand_dims(result, dim)
    mask = self == expanded
    count = mask.sum(axis=dim, keepdims=True)
    g = grad if keepdim or dim is None else jnp.expand_dims(grad, dim)
    return jnp.where(mask, g / count.astype(grad.dtype), jnp.zeros((), grad.dtype))


def _evenly_distribute_nan(grad, self, result):
    """torch's evenly_distribute_backward: ``grad`` shared by the elements equal to ``result``
    (by the NaNs when ``result`` is NaN)."""
    if jnp.issubdtype(self.dtype, jnp.floating):
        mask = jnp.where(jnp.isnan(result), jnp.isnan(self), self == result)
    else:
        mask = self == result
    return jnp.where(mask, grad / mask.sum().astype(grad.dtype), jnp.zeros((), grad.dtype))


AMAX = Op("amax", "AmaxBackward0", lambda x, dim, keepdim: jnp.max(x, axis=dim, keepdims=keepdim),
          grads={"self": _evenly_distribute}, grad_nodes={"self": "MulBackward0"})
AMIN = Op("amin", "AminBackward0", lambda x, dim, keepdim: jnp.min(x, axis=dim, keepdims=keepdim),
          grads={"self": _evenly_distribute})
MAX_ALL = Op("max", "MaxBackward1", jnp.max, grads={"self": _evenly_distribute_nan},
             grad_version=1)
MIN_ALL = Op("min", "MinBackward1", jnp.min, grads={"self": _evenly_distribute_nan},
             grad_version=1)


def _select_back(grad, indices, self_shape, dim, keepdim):
    """Scatter a gradient into the positions ``indices`` chose along ``dim``."""
    if not dim:  # a 0-d input
        return grad
    d = dim[0]
    if not keepdim:
        grad, indices = jnp.expand_dims(grad, d), jnp.expand_dims(indices, d)
    iota_shape = [1] * len(self_shape)
    iota_shape[d] = self_shape[d]
    hit = jnp.arange(self_shape[d]).reshape(iota_shape) == indices
    return jnp.where(hit, grad, jnp.zeros((), grad.dtype))


def _max_dim(x, dim, keepdim):
    if not dim:  # a 0-d input is its own maximum, at index 0
        return x, jnp.zeros((), jnp.int64)
    return (jnp.max(x, axis=dim[0], keepdims=keepdim),
            compat.argmax(x, dim[0], keepdim))


def _min_dim(x, dim, keepdim):
    if not dim:
        return x, jnp.zeros((), jnp.int64)
    return (jnp.min(x, axis=dim[0], keepdims=keepdim),
            compat.argmin(x, dim[0], keepdim))


MAX_DIM = Op("max", "MaxBackward0", _max_dim, outputs=("values", "indices"), nondiff_outputs=(1,),
             grads={"self": _select_back}, grad_version=2, grad_nodes={"self": "ScatterBackward0"})
MIN_DIM = Op("min", "MinBackward0", _min_dim, outputs=("values", "indices"), nondiff_outputs=(1,),
             grads={"self": _select_back}, grad_version=2)
ARGMAX = Op("argmax", None, lambda x, dim, keepdim: compat.argmax(
    x.reshape(-1) if dim is None else x, dim, keepdim))
ARGMIN = Op("argmin", None, lambda x, dim, keepdim: compat.argmin(
    x.reshape(-1) if dim is None else x, dim, keepdim))
ANY = Op("any", None, lambda x, dim, keepdim: jnp.any(x, axis=dim, keepdims=keepdim))
ALL = Op("all", None, lambda x, dim, keepdim: jnp.all(x, axis=dim, keepdims=keepdim))


def _var(x, dim, correction, keepdim):
    # torch divides by max(N - correction, 0): inf (or nan for 0 / 0) when no dof are left
    centred = x - jnp.mean(x, axis=dim, keepdims=True)
    squares = jnp.real(centred * jnp.conj(centred))
    return jnp.sum(squares, axis=dim, keepdims=keepdim) / max(_count(x.shape, dim) - correction, 0)


def _var_grad(grad, self, dim, correction, keepdim):
    dof = _count(self.shape, dim) - correction
    mean = jnp.mean(self, axis=dim, keepdims=True)
    if dim is None and dof <= 0:  # torch: nan where self == mean, else inf
        return grad * jnp.where(self == mean, jnp.nan, jnp.inf).astype(self.dtype)
    g = grad if keepdim or dim is None else jnp.expand_dims(grad, dim)
    return g * (2.0 / jnp.asarray(dof, self.dtype)) * (self - mean)


def _var_grad_of_std(grad, result):
    """std_backward's gradient of the variance: ``grad / (2 * result)``, 0 where the std is 0
    (torch's ``masked_fill_(result == 0, 0)``: a constant slice has no NaN gradient)."""
    return jnp.where(result == 0, jnp.zeros((), grad.dtype), grad / (2 * result))


def _std_tangent(self_t, self, result, dim, correction, keepdim):
    """torch's forward formula: ``var_jvp / (2 * result)``, masked to 0 where the std is 0."""
    centred = self - jnp.mean(self, axis=dim, keepdims=True)
    dof = jnp.asarray(max(_count(self.shape, dim) - correction, 0), result.dtype)
    var_t = jnp.real(jnp.sum(jnp.conj(self_t) * centred, axis=dim, keepdims=keepdim)) * (2 / dof)
    return jnp.where(result == 0, jnp.zeros((), result.dtype), var_t / (2 * result))


VAR = Op("var", "VarBackward0", _var, grads={"self": _var_grad},
         grad_nodes={"self": "MulBackward0"})
STD = Op("std", "StdBackward0", lambda x, dim, correction, keepdim: jnp.sqrt(
    _var(x, dim, correction, keepdim)), grads={
    "self": lambda grad, self, result, dim, correction, keepdim: _var_grad(
        _var_grad_of_std(grad, result), self, dim, correction, keepdim)},
    tangent=_std_tangent, grad_nodes={"self": "MulBackward0"})


def _vector_norm(x, ord, dim, keepdim, dtype):
    """torch's linalg_vector_norm (``dtype``: the dtype it computes and returns in)."""
    if dtype is not None:
        x = x.astype(dtype)
    if x.dtype in HALF_DTYPES:  # (torch accumulates half precision in float32, rounds once)
        return jnp.linalg.vector_norm(x.astype(jnp.float32), ord=ord, axis=dim,
                                      keepdims=keepdim).astype(x.dtype)
    return jnp.linalg.vector_norm(x, ord=ord, axis=dim, keepdims=keepdim)


def _vector_norm_grad(grad, self, result, ord, dim, keepdim):
    """torch's linalg_vector_norm_backward (ord 0 has no gradient: torch leaves it undefined)."""
    if ord == 0:
        return None
    grad = _expand_back(grad, self.shape, dim, keepdim)
    result = _expand_back(result, self.shape, dim, keepdim)
    if ord == 1:
        return sgn(self) * grad
    if ord == 2:
        return self * jnp.where(result == 0, 0, grad / jnp.where(result == 0, 1, result))
    if math.isinf(ord):
        at_extreme = (jnp.abs(self) == result).astype(self.dtype)
        count = _expand_back(jnp.sum(at_extreme, axis=dim, keepdims=keepdim), self.shape, dim,
                             keepdim)
        return sgn(self) * grad * at_extreme / count
    if ord < 1:
        scaled = sgn(self) * jnp.where(self == 0, 0, jnp.abs(self) ** (ord - 1))
        return scaled * grad * result ** (1 - ord)
    scaled = (sgn(self) * jnp.abs(self) ** (ord - 1) if ord < 2
              else self * jnp.abs(self) ** (ord - 2))
    return scaled * jnp.where(result == 0, 0, grad / jnp.where(result == 0, 1, result) ** (ord - 1))


VECTOR_NORM = Op("linalg_vector_norm", "LinalgVectorNormBackward0", _vector_norm,
                 promote="float", grads={"self": _vector_norm_grad},
                 grad_nodes={"self": "MulBackward0"})


# (half precision: torch's CPU kernels compute in float32 and round once, forward and backward)
SOFTMAX = Op("softmax", "SoftmaxBackward0",
             in_float32(lambda x, dim: jax.nn.softmax(x, axis=dim)), promote="float",
             grads={"self": in_float32(lambda grad, result, dim: result * (
                 grad - jnp.sum(grad * result, axis=dim, keepdims=True)))},
             grad_nodes={"self": "SoftmaxBackwardDataBackward0"})
LOG_SOFTMAX = Op("log_softmax", "LogSoftmaxBackward0",
                 in_float32(lambda x, dim: jax.nn.log_softmax(x, axis=dim)), promote="float",
                 grads={"self": in_float32(lambda grad, result, dim: grad - jnp.exp(
                     result) * jnp.sum(grad, axis=dim, keepdims=True))},
                 grad_nodes={"self": "LogSoftmaxBackwardDataBackward0"})


def _split_back(grad, in_shapes, dim):
    bounds, acc = [], 0
    for shape in in_shapes[:-1]:
        acc += shape[dim]
        bounds.append(acc)
    return tuple(jnp.split(grad, bounds, axis=dim))


CAT = Op("cat", "CatBackward0", lambda *xs, dim: jnp.concatenate(xs, axis=dim), inputs=None,
         promote="common", variadic=_split_back, grad_layout="slices",
         grad_nodes={"*": "SliceBackward0"})
STACK = Op("stack", "StackBackward0", lambda *xs, dim: jnp.stack(xs, axis=dim), inputs=None,
           promote="common",
           variadic=lambda grad, dim, in_shapes: tuple(
               jnp.squeeze(g, dim) for g in jnp.split(grad, len(in_shapes), axis=dim)),
           grad_layout="slices", grad_nodes={"*": "SelectBackward0"})


def _split(x, split_sizes, dim, self_sym_sizes):
    starts = np.cumsum((0, *split_sizes))
    return tuple(jax.lax.slice_in_dim(x, int(a), int(b), axis=dim)
                 for a, b in itertools.pairwise(starts))


# split/split_with_sizes: one node for all the views; torch saves the input's sizes, the dim and
# the split size(s) (``split_size`` for split, only there to be saved)
def split_sizes(split_size: int, size: int) -> list[int]:
    """The sizes torch's split cuts a dimension of ``size`` into (the last may be smaller)."""
    count = max((size + split_size - 1) // split_size, 1) if split_size else 1
    return [split_size] * (count - 1) + [size - split_size * (count - 1)]


def _split_by_size(x, split_size, dim, self_sym_sizes):
    return _split(x, split_sizes(split_size, self_sym_sizes[dim]), dim, self_sym_sizes)


SPLIT = Op("split", "SplitBackward0", _split_by_size,
           grads={"self": lambda grads, dim: jnp.concatenate(grads, axis=dim)})
SPLIT_WITH_SIZES = Op("split_with_sizes", "SplitWithSizesBackward0", _split,
                      grads={"self": lambda grads, dim: jnp.concatenate(grads, axis=dim)})
# unsafe_split/unsafe_split_with_sizes: the same pieces, sharing the input's storage but neither
# views for autograd nor sharing its version counter
UNSAFE_SPLIT = Op("unsafe_split", "UnsafeSplitBackward0", _split_by_size,
                  grads={"self": lambda grads, dim: jnp.concatenate(grads, axis=dim)})
UNSAFE_SPLIT_WITH_SIZES = Op("unsafe_split_with_sizes", "UnsafeSplitWithSizesBackward0", _split,
                             grads={"self": lambda grads, dim: jnp.concatenate(grads, axis=dim)})
UNBIND = Op("unbind", "UnbindBackward0",
            lambda x, dim: tuple(jnp.moveaxis(x, dim, 0)), outputs=("result",),
            grads={"self": lambda grads, dim: jnp.stack(grads, axis=dim)},
            grad_nodes={"self": "StackBackward0"})


# --- sorting: sort, topk (values and int64 indices; stable, NaN sorts as the largest) ---------

def _sort(x, dim, descending):
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    indices = jnp.argsort(x, axis=dim, descending=descending, stable=True)
    return jnp.take_along_axis(x, indices, axis=dim), indices.astype(jnp.int64)


def _topk(x, k, dim, largest, sorted):
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    values, indices = _sort(x, dim, largest)
    return lax.slice_in_dim(values, 0, k, axis=dim), lax.slice_in_dim(indices, 0, k, axis=dim)


def _put_back(grad, indices, self_shape, dim):
    """The gradient of values picked by ``indices`` along ``dim``, back in ``self``'s shape
    (torch's value_selecting_reduction_backward)."""
    if not self_shape:
        return grad
    return _scatter_along(jnp.zeros(self_shape, grad.dtype), indices, dim, grad)


def _scatter_along(base, indices, dim, values):
    grids = list(jnp.indices(indices.shape, sparse=True))
    grids[dim] = indices
    return base.at[tuple(grids)].add(values)


SORT = Op("sort", "SortBackward0", _sort, outputs=("values", "indices"), nondiff_outputs=(1,),
          grads={"self": _put_back}, grad_version=2)
SORT_STABLE = Op("sort", "SortBackward1", _sort, outputs=("values", "indices"),
                 nondiff_outputs=(1,), grads={"self": _put_back}, grad_version=2)
TOPK = Op("topk", "TopkBackward0", _topk, outputs=("values", "indices"), nondiff_outputs=(1,),
          grads={"self": _put_back}, grad_version=2, grad_nodes={"self": "ScatterBackward0"})
ARGSORT = Op("argsort", None, lambda x, dim, descending: _sort(x, dim, descending)[1])


# --- more reductions: logsumexp, cumulative ops, median/kthvalue/mode, nansum,
# var_mean/std_mean, aminmax, cdist -------------------------------------------------------------

def _logsumexp(x, dim, keepdim):
    if x.ndim == 0:
        return x
    return jax.nn.logsumexp(x, axis=dim, keepdims=keepdim)


LOGSUMEXP = Op("logsumexp", "LogsumexpBackward0", _logsumexp, promote="float", grads={
    "self": lambda grad, self, result, dim, keepdim: _expand_back(
        grad, self.shape, dim, keepdim) * jnp.exp(self - _expand_back(
            result, self.shape, dim, keepdim))}, grad_nodes={"self": "MulBackward0"})


def _along(fn, x, dim):
    """``fn`` along ``dim`` (a 0-d input as a 1-element vector)."""
    if x.ndim == 0:
        return fn(x.reshape(1), 0).reshape(())
    return fn(x, dim)


def _cumprod(x, dim, dtype):
    return _along(lambda a, d: jnp.cumprod(a, axis=d, dtype=dtype), x, dim)


def _vjp_grad(forward):
    """A formula taking the vector-Jacobian product of ``forward(self, dim)`` (exact at zeros,
    where torch's cumprod_backward takes care of them too)."""

    def formula(grad, self, result, dim):
        _, pullback = compat.torch_vjp(lambda a: forward(a, dim), self)
        return pullback(grad.astype(self.dtype))[0]

    return formula


CUMPROD = Op("cumprod", "CumprodBackward0", _cumprod, grads={
    "self": _vjp_grad(lambda a, dim: _cumprod(a, dim, None))}, identity_when=_one_step,
             grad_nodes={"self": "DivBackward0"})


def _logcumsumexp(x, dim):
    return _along(lambda a, d: lax.cumlogsumexp(a, axis=d), x, dim)


LOGCUMSUMEXP = Op("logcumsumexp", "LogcumsumexpBackward0", _logcumsumexp, promote="float",
                  grads={"self": _vjp_grad(_logcumsumexp)}, grad_nodes={"self": "SubBackward0"})


def _cum_extreme(x, dim, later_wins):
    """Running max/min with torch's indices: a later equal value (or a NaN) takes over."""
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    shape = [1] * x.ndim
    shape[dim] = x.shape[dim]
    positions = jnp.broadcast_to(jnp.arange(x.shape[dim], dtype=jnp.int64).reshape(shape),
                                 x.shape)

    def combine(a, b):
        take = later_wins(b[0], a[0])
        if jnp.issubdtype(x.dtype, jnp.floating):
            take = take | jnp.isnan(b[0])
        return jnp.where(take, b[0], a[0]), jnp.where(take, b[1], a[1])

    return lax.associative_scan(combine, (x, positions), axis=dim)


CUMMAX = Op("cummax", "CummaxBackward0", lambda x, dim: _cum_extreme(x, dim, jnp.greater_equal),
            outputs=("values", "indices"), nondiff_outputs=(1,), grad_version=2,
            grads={"self": lambda grad, self, indices, dim: _put_back(
                grad, indices, self.shape, dim)}, grad_nodes={"self": "ScatterAddBackward0"})
CUMMIN = Op("cummin", "CumminBackward0", lambda x, dim: _cum_extreme(x, dim, jnp.less_equal),
            outputs=("values", "indices"), nondiff_outputs=(1,), grad_version=2,
            grads={"self": lambda grad, self, indices, dim: _put_back(
                grad, indices, self.shape, dim)})


def _nan_last_order(x, axis):
    """Stable sorting order of ``x`` along ``axis`` with NaN as the largest value."""
    return jnp.argsort(x, axis=axis, stable=True)


def _pick_sorted(x, dim, keepdim, position):
    """``(values, indices)``: along ``dim``, the element at ``position(sorted, nans)`` of the
    stably sorted row (``nans``: how many NaNs the row holds)."""
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    order = _nan_last_order(x, dim)
    ordered = jnp.take_along_axis(x, order, axis=dim)
    nans = (jnp.isnan(x).sum(axis=dim, keepdims=True) if jnp.issubdtype(x.dtype, jnp.floating)
            else jnp.zeros_like(order.sum(axis=dim, keepdims=True)))
    k = position(x.shape[dim], nans)
    values = jnp.take_along_axis(ordered, k, axis=dim)
    indices = jnp.take_along_axis(order, k, axis=dim).astype(jnp.int64)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return values, indices


def _median_position(n, nans):
    """torch's median: the lower middle, or the first NaN of a row that has one."""
    return jnp.where(nans > 0, n - nans, (n - 1) // 2)


def _nanmedian_position(n, nans):
    """torch's nanmedian: the lower middle of the non-NaN values (the first NaN if all are)."""
    return jnp.maximum((n - nans - 1) // 2, 0)


def _median_all(x, position):
    flat = x.reshape(-1)
    if flat.size == 0:
        return jnp.asarray(jnp.nan, x.dtype)
    return _pick_sorted(flat, 0, False, position)[0]


MEDIAN_ALL = Op("median", "MedianBackward0", lambda x: _median_all(x, _median_position),
                grads={"self": _evenly_distribute_nan}, grad_version=1)
NANMEDIAN_ALL = Op("nanmedian", "NanmedianBackward0",
                   lambda x: _median_all(x, _nanmedian_position),
                   grads={"self": _evenly_distribute_nan}, grad_version=1)


def _select_back_along(grad, indices, self_shape, dim, keepdim):
    """torch's value_selecting_reduction_backward for one ``dim`` (an int)."""
    return _select_back(grad, indices, self_shape, (dim,) if self_shape else (), keepdim)


def _value_selecting(name, node, forward):
    """A ``(values, indices)`` reduction along one dim whose backward puts ``grad`` back at
    ``indices`` (torch fills zeros, then scatters: version 2)."""
    return Op(name, node, forward, outputs=("values", "indices"), nondiff_outputs=(1,),
              grad_version=2, grads={"self": _select_back_along},
              grad_nodes={"self": "ScatterBackward0"})


MEDIAN_DIM = _value_selecting("median", "MedianBackward1", lambda x, dim, keepdim: _pick_sorted(
    x, dim, keepdim, _median_position))
NANMEDIAN_DIM = _value_selecting(
    "nanmedian", "NanmedianBackward1",
    lambda x, dim, keepdim: _pick_sorted(x, dim, keepdim, _nanmedian_position))
KTHVALUE = _value_selecting("kthvalue", "KthvalueBackward0", lambda x, k, dim, keepdim: (
    _pick_sorted(x, dim, keepdim, lambda n, nans: jnp.full_like(nans, k - 1))))


def _mode(x, dim, keepdim):
    """torch's mode: the most frequent value (the smallest of equally frequent ones) and the
    last position holding it."""
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    a = jnp.moveaxis(x, dim, -1)
    counts = (a[..., :, None] == a[..., None, :]).sum(-1)
    best = counts == counts.max(-1, keepdims=True)
    big = jnp.asarray(jnp.inf if jnp.issubdtype(a.dtype, jnp.inexact) else jnp.iinfo(a.dtype).max,
                      a.dtype) if a.dtype != jnp.bool_ else jnp.asarray(True)
    value = jnp.where(best, a, big).min(-1, keepdims=True)
    n = a.shape[-1]
    index = jnp.where(a == value, jnp.arange(n), -1).max(-1, keepdims=True).astype(jnp.int64)
    value, index = jnp.moveaxis(value, -1, dim), jnp.moveaxis(index, -1, dim)
    if not keepdim:
        value, index = value.squeeze(dim), index.squeeze(dim)
    return value, index


MODE = _value_selecting("mode", "ModeBackward0", _mode)


def _nansum(x, dim, keepdim, dtype):
    if jnp.issubdtype(x.dtype, jnp.inexact):
        x = jnp.where(jnp.isnan(x), jnp.zeros((), x.dtype), x)
    return jnp.sum(x, axis=dim, keepdims=keepdim, dtype=dtype)


NANSUM = Op("nansum", "NansumBackward0", _nansum, grads={
    "self": lambda grad, self, dim, keepdim: jnp.where(
        jnp.isnan(self), jnp.zeros((), grad.dtype),
        _expand_back(grad, self.shape, dim or (), keepdim or dim is None))})


def _var_mean(x, dim, correction, keepdim):
    return _var(x, dim, correction, keepdim), jnp.mean(x, axis=dim, keepdims=keepdim)


def _mean_back(grad, self, dim, keepdim):
    dims = tuple(range(self.ndim)) if dim is None else dim
    return _expand_back(grad / _count(self.shape, dim), self.shape, dims, keepdim)


VAR_MEAN = Op("var_mean", "VarMeanBackward0", _var_mean, outputs=("result0", "result1"),
              grads={"self": lambda grads, self, dim, correction, keepdim: _var_grad(
                  grads[0], self, dim, correction, keepdim) + _mean_back(
                  grads[1], self, dim, keepdim)}, grad_nodes={"self": "AddBackward0"})
STD_MEAN = Op("std_mean", "StdMeanBackward0", lambda x, dim, correction, keepdim: (
    jnp.sqrt(_var(x, dim, correction, keepdim)), jnp.mean(x, axis=dim, keepdims=keepdim)),
    outputs=("result0", "result1"),
    grads={"self": lambda grads, self, result0, dim, correction, keepdim: _var_grad(
        _var_grad_of_std(grads[0], result0), self, dim, correction, keepdim) + _mean_back(
        grads[1], self, dim, keepdim)}, grad_nodes={"self": "AddBackward0"})


def _aminmax(x, dim, keepdim):
    return (jnp.min(x, axis=dim, keepdims=keepdim), jnp.max(x, axis=dim, keepdims=keepdim))


def _aminmax_grad(grads, self, min, max, dim, keepdim):
    dims = tuple(range(self.ndim)) if dim is None else dim
    keep = keepdim or not dims
    return (_evenly_distribute(grads[0], self, min, dims, keep)
            + _evenly_distribute(grads[1], self, max, dims, keep))


AMINMAX = Op("aminmax", "AminmaxBackward0", _aminmax, outputs=("min", "max"),
             grads={"self": _aminmax_grad}, grad_nodes={"self": "AddBackward0"})
COUNT_NONZERO = Op("count_nonzero", None, lambda x, dim: jnp.count_nonzero(
    x, axis=dim).astype(jnp.int64))
