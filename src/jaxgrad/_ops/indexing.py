"""Advanced indexing: ``index`` (x[tensor]) and ``index_put`` (x[tensor] = v).

``indices`` is a tuple with one entry per leading dimension: an integer array, or None for a
dimension taken whole. JAX's advanced-indexing rules are numpy's, which are torch's.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from ._table import Op, identity_grad


def _where(indices):
    return tuple(slice(None) if i is None else i for i in indices)


INDEX = Op("index", "IndexBackward0", lambda x, indices: x[_where(indices)], aux=("indices",),
           grads={"self": lambda grad, self_shape, indices: jnp.zeros(
               self_shape, grad.dtype).at[_where(indices)].add(grad)}, grad_version=1,
           grad_nodes={"self": "IndexPutImplBackward0"})


def _index_put(x, values, indices, accumulate):
    values = jnp.asarray(values, x.dtype)
    at = x.at[_where(indices)]
    return at.add(values) if accumulate else at.set(values)


INDEX_PUT = Op(
    "index_put", "IndexPutBackward0", _index_put, inputs=("self", "values"), aux=("indices",),
    grads={
        "self": lambda grad, indices, accumulate: grad if accumulate else grad.at[
            _where(indices)].set(0),
        "values": lambda grad, indices: grad[_where(indices)],
    }, overlap="warn",  # (accumulate: torch hands grad on, which this node cannot name)
    grad_nodes={"self": lambda accumulate: None if accumulate else "IndexPutBackward0",
                "values": "IndexBackward0"})


# --- index_put with a lone bool mask and a value without the count dim: masked_fill-like -------
# ``x[mask] = v`` where ``v`` broadcasts without the masked count: a ``where`` over the mask,
# whose shapes (the mask's, not its count's) stay the same as the count changes, so a new count
# compiles no new kernel; torch's node and formulas, as INDEX_PUT's.

def _mask_at(mask, dim, ndim):
    """``mask`` (over dims ``dim`` on of an ``ndim``-d tensor) shaped to broadcast against it."""
    return mask.reshape((1,) * dim + mask.shape + (1,) * (ndim - dim - mask.ndim))


def _mask_put(x, values, mask, dim, value_shape, count_is_one):
    """``x`` with ``values`` (seen in ``value_shape``: 1 along the mask's dims) where ``mask``
    holds. (``count_is_one`` only names the value's gradient: torch's is ``grad[mask]``, which
    needs no ``sum_to`` to a value of its rank when one element is masked.)"""
    values = jnp.asarray(values, x.dtype).reshape(value_shape)
    return jnp.where(_mask_at(mask, dim, x.ndim), values, x)


def _mask_put_values_grad(grad, mask, dim):
    """``grad[mask]`` summed over the masked count (kept as a dim of size 1): the engine's
    ``sum_to`` takes it on to the value's shape."""
    picked = jnp.where(_mask_at(mask, dim, grad.ndim), grad, jnp.zeros((), grad.dtype))
    summed = picked.sum(axis=tuple(range(dim, dim + mask.ndim)))
    return jnp.expand_dims(summed, dim)


INDEX_PUT_MASK = Op(
    "index_put", "IndexPutBackward0", _mask_put, inputs=("self", "values"), aux=("mask",),
    grads={
        "self": lambda grad, mask, dim: jnp.where(_mask_at(mask, dim, grad.ndim),
                                                  jnp.zeros((), grad.dtype), grad),
        "values": _mask_put_values_grad,
    }, overlap="warn", grad_nodes={
        "self": "IndexPutBackward0",
        "values": lambda count_is_one: "IndexBackward0" if count_is_one else "SumBackward1"})


# --- gather / scatter along a dim (torch's index tensors; ``index`` is a traced aux operand) ---

def along(index, dim):
    """The full index tuple that picks ``index[i...]`` along ``dim`` at position ``i...``
    elsewhere (torch's gather/scatter addressing, for any index no larger than the tensor)."""
    grids = list(jnp.indices(index.shape, sparse=True)) if index.ndim else []
    if not grids:
        return (index,)
    grids[dim] = index
    return tuple(grids)


def _src_part(src, index):
    """The leading ``index.shape`` block of ``src`` (scatter reads only that much of it)."""
    if src.ndim == 0:
        return src
    return src[tuple(slice(0, n) for n in index.shape)]


def _gather(x, index, dim, sparse_grad=False):
    if x.ndim == 0:  # torch treats a 0-d input as 1-d of size 1 here
        return x.reshape(1)[index]
    return x[along(index, dim)]


def _scatter_into(base, index, dim, values, how="set"):
    """``base`` with ``values`` written (or added, multiplied) at torch's scatter positions."""
    if base.ndim == 0:
        at = base.reshape(1).at[index.reshape(-1)]
        values = jnp.asarray(values).reshape(-1) if jnp.ndim(values) else values
        return getattr(at, how)(values).reshape(())
    return getattr(base.at[along(index, dim)], how)(values)


def _gather_back(grad, self, index, dim):
    """gather's backward: the gradient added into zeros of ``self``'s shape."""
    return _scatter_into(jnp.zeros(self.shape, grad.dtype), index, dim, grad, "add")


def _scatter_src(x, src, index, dim):
    return _scatter_into(x, index, dim, _src_part(src, index).astype(x.dtype))


def _scatter_value(x, index, value, dim):
    return _scatter_into(x, index, dim, jnp.asarray(value, x.dtype))


def _scatter_add(x, src, index, dim):
    return _scatter_into(x, index, dim, _src_part(src, index).astype(x.dtype), "add")


def _src_grad(node):
    """The gradient of scatter's ``src``: grad gathered at the written positions. It has the
    index's shape; torch's check of it then fails for a ``src`` larger than the index."""

    def formula(grad, index, dim, src_shape):
        if tuple(index.shape) != tuple(src_shape) and (index.ndim or src_shape != (1,)):
            raise RuntimeError(
                f"Function {node} returned an invalid gradient at index 1 - got "
                f"{list(index.shape)} but expected shape compatible with {list(src_shape)}")
        return _gather(grad, index, dim).reshape(src_shape)

    return formula


def _zero_scattered(grad, index, dim):
    return _scatter_into(grad, index, dim, jnp.zeros((), grad.dtype))


GATHER = Op("gather", "GatherBackward0",
            lambda x, index, dim, sparse_grad: _gather(x, index, dim), inputs=("self",),
            aux=("index",), grads={"self": _gather_back}, grad_version=1,
            grad_nodes={"self": "ScatterAddBackward0"})
SCATTER_SRC = Op("scatter", "ScatterBackward0", _scatter_src, inputs=("self", "src"),
                 aux=("index",), grads={"self": _zero_scattered,
                                         "src": _src_grad("ScatterBackward0")},
                 grad_nodes={"self": "ScatterBackward1", "src": "GatherBackward0"})
SCATTER_VALUE = Op("scatter", "ScatterBackward1", _scatter_value, inputs=("self",),
                   aux=("index", "value"), grads={"self": _zero_scattered},
                   grad_nodes={"self": "ScatterBackward1"})
SCATTER_ADD = Op("scatter_add", "ScatterAddBackward0", _scatter_add, inputs=("self", "src"),
                 aux=("index",), grads={"self": identity_grad,
                                         "src": _src_grad("ScatterAddBackward0")},
                 grad_nodes={"src": "GatherBackward0"})


def _not_implemented(name):
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return formula


def _scatter_reduce_src(x, src, index, dim, reduce):
    return _scatter_into(x, index, dim, _src_part(src, index).astype(x.dtype),
                         "add" if reduce == "add" else "multiply")


def _scatter_reduce_value(x, index, value, dim, reduce):
    return _scatter_into(x, index, dim, jnp.asarray(value, x.dtype),
                         "add" if reduce == "add" else "multiply")


# scatter's reduce= forms: torch records a NotImplemented node whose backward raises; one row
# per form (out of place, in place), as the message names aten::scatter or aten::scatter_
SCATTER_REDUCE_SRC = tuple(
    Op("scatter", "NotImplemented", _scatter_reduce_src, inputs=("self", "src"), aux=("index",),
       grads={"self": _not_implemented(name), "src": _not_implemented(name)})
    for name in ("scatter", "scatter_"))
SCATTER_REDUCE_VALUE = tuple(
    Op("scatter", "NotImplemented", _scatter_reduce_value, inputs=("self",),
       aux=("index", "value"), grads={"self": _not_implemented(name)})
    for name in ("scatter", "scatter_"))


def _index_select(x, index, dim):
    if x.ndim == 0:
        return x.reshape(1)[index.reshape(-1)].reshape(())
    return jnp.take(x, index.reshape(-1), axis=dim)


def _index_select_back(grad, index, dim, self_shape):
    if not self_shape:
        return grad.reshape(())
    where = [slice(None)] * len(self_shape)
    where[dim] = index.reshape(-1)
    return jnp.zeros(self_shape, grad.dtype).at[tuple(where)].add(grad)


INDEX_SELECT = Op("index_select", "IndexSelectBackward0", _index_select, inputs=("self",),
                  aux=("index",), grads={"self": _index_select_back}, grad_version=1,
                  grad_nodes={"self": "IndexAddBackward0"})


# --- masked and indexed writes: masked_select/masked_scatter, index_add/copy/fill, take,
# scatter_reduce --------------------------------------------------------------------------------

def _masked_select(x, mask, _count):
    """The elements of ``x`` (broadcast with ``mask``) where ``mask`` holds; ``_count`` (how
    many do) is static, so the kernel has a fixed output size."""
    x, mask = jnp.broadcast_arrays(x, mask)
    (where,) = jnp.nonzero(mask.reshape(-1), size=_count)
    return x.reshape(-1)[where]


def _spread(values, mask, fill):
    """The inverse of masked_select: ``values`` laid out, in order, where ``mask`` holds
    (``fill`` elsewhere)."""
    flat, fill = mask.reshape(-1), jnp.broadcast_to(fill, mask.shape).reshape(-1)
    if values.size == 0:
        return fill.reshape(mask.shape)
    positions = jnp.clip(jnp.cumsum(flat) - 1, 0, values.size - 1)
    return jnp.where(flat, values.reshape(-1)[positions], fill).reshape(mask.shape)


MASKED_SELECT = Op("masked_select", "MaskedSelectBackward0", _masked_select, aux=("mask",),
                   grad_version=1, grads={"self": lambda grad, self, mask: _spread(
                       grad, jnp.broadcast_to(mask, jnp.broadcast_shapes(self.shape, mask.shape)),
                       jnp.zeros((), grad.dtype))}, grad_nodes={"self": "MaskedScatterBackward0"})


def _masked_scatter(x, source, mask):
    x, mask = jnp.broadcast_arrays(x, mask)
    return _spread(source.astype(x.dtype), mask, x)


def _masked_scatter_source_grad(grad, mask, source_shape):
    """torch's masked_scatter_backward: the selected gradient, zero-padded to ``source``."""
    mask = jnp.broadcast_to(mask, grad.shape).reshape(-1)
    size = math.prod(source_shape)
    positions = jnp.where(mask, jnp.cumsum(mask) - 1, size)
    out = jnp.zeros(size, grad.dtype).at[positions].add(grad.reshape(-1), mode="drop")
    return out.reshape(source_shape)


MASKED_SCATTER = Op(
    "masked_scatter", "MaskedScatterBackward0", _masked_scatter, inputs=("self", "source"),
    aux=("mask",), grads={
        "self": lambda grad, mask: jnp.where(mask, jnp.zeros((), grad.dtype), grad),
        "source": _masked_scatter_source_grad},
    grad_nodes={"self": "MaskedFillBackward0", "source": "MaskedScatterBackwardBackward0"})


def _at_index(x, index, dim):
    """``x.at[...]`` addressing the positions ``index`` along ``dim`` (a 0-d ``x`` as 1-d)."""
    if x.ndim == 0:
        return x.reshape(1).at[index.reshape(-1)]
    where = [slice(None)] * x.ndim
    where[dim] = index.reshape(-1)
    return x.at[tuple(where)]


def _selected_shape(shape, index, dim):
    out = list(shape) or [1]
    out[dim] = index.size
    return tuple(out)


def _index_add(x, source, index, alpha, dim):
    values = (source * jnp.asarray(alpha, source.dtype)).astype(x.dtype)
    out = _at_index(x, index, dim).add(values.reshape(_selected_shape(x.shape, index, dim)))
    return out.reshape(x.shape)


def _index_select_grad(grad, index, dim, source):
    """``grad.index_select(dim, index)`` in ``source``'s shape."""
    return _at_index(grad, index, dim).get().reshape(source.shape)


def _index_zeroed(grad, index, dim):
    """``grad.index_fill(dim, index, 0)``."""
    return _at_index(grad, index, dim).set(jnp.zeros((), grad.dtype)).reshape(grad.shape)


INDEX_ADD = Op("index_add", "IndexAddBackward0", _index_add, inputs=("self", "source"),
               aux=("index", "alpha"), grads={
                   "self": identity_grad,
                   "source": lambda grad, index, dim, source, alpha: _index_select_grad(
                       grad, index, dim, source) * jnp.asarray(alpha, grad.dtype)},
               grad_nodes={"source": lambda alpha: "ExpandBackward0" if alpha == 1
                           else "MulBackward1"})


def _index_copy(x, source, index, dim):
    values = source.astype(x.dtype).reshape(_selected_shape(x.shape, index, dim))
    return _at_index(x, index, dim).set(values).reshape(x.shape)


INDEX_COPY = Op("index_copy", "IndexCopyBackward0", _index_copy, inputs=("self", "source"),
                aux=("index",), grads={"self": _index_zeroed, "source": _index_select_grad},
                grad_nodes={"self": "IndexFillBackward0", "source": "ExpandBackward0"})


def _index_fill(x, index, value, dim):
    return _at_index(x, index, dim).set(jnp.asarray(value, x.dtype)).reshape(x.shape)


def _index_fill_value_grad(grad, index, dim):
    """``grad.index_select(dim, unique(index)).sum()``: each selected slice counted once."""
    if grad.ndim == 0:
        return grad
    hit = jnp.zeros(grad.shape[dim], bool).at[index.reshape(-1)].set(True)
    shape = [1] * grad.ndim
    shape[dim] = grad.shape[dim]
    return jnp.where(hit.reshape(shape), grad, jnp.zeros((), grad.dtype)).sum()


INDEX_FILL = Op("index_fill", "IndexFillBackward0", _index_fill, aux=("index", "value"),
                grads={"self": _index_zeroed}, overlap="warn",
                grad_nodes={"self": "IndexFillBackward0"})
INDEX_FILL_TENSOR = Op(
    "index_fill", "IndexFillBackward1",
    lambda x, value, index, dim: _index_fill(x, index, value, dim), inputs=("self", "value"),
    aux=("index",), grads={"self": _index_zeroed, "value": _index_fill_value_grad},
    overlap="warn", grad_nodes={"self": "IndexFillBackward0"})


def _take_grad(grad, self, index):
    flat = jnp.zeros(self.size, grad.dtype).at[index.reshape(-1)].add(grad.reshape(-1))
    return flat.reshape(self.shape)


TAKE = Op("take", "TakeBackward0", lambda x, index: x.reshape(-1)[index], aux=("index",),
          grad_version=1, grads={"self": _take_grad}, grad_nodes={"self": "PutBackward0"})


def _put(x, source, index, accumulate):
    at = x.reshape(-1).at[index.reshape(-1)]
    values = source.reshape(-1).astype(x.dtype)
    return (at.add(values) if accumulate else at.set(values)).reshape(x.shape)


def _put_self_grad(grad, index, accumulate):
    if accumulate:
        return grad
    return grad.reshape(-1).at[index.reshape(-1)].set(0).reshape(grad.shape)


PUT = Op("put", "PutBackward0", _put, inputs=("self", "source"), aux=("index",), grads={
    "self": _put_self_grad,
    "source": lambda grad, index, source: grad.reshape(-1)[index.reshape(-1)].reshape(
        source.shape)})


def _lowest(dtype, largest):
    if jnp.issubdtype(dtype, jnp.floating):
        return jnp.asarray(jnp.inf if largest else -jnp.inf, dtype)
    if dtype == jnp.bool_:
        return jnp.asarray(largest)
    info = jnp.iinfo(dtype)
    return jnp.asarray(info.max if largest else info.min, dtype)


_REDUCE_HOW = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "max", "amin": "min"}
_REDUCE_START = {"sum": lambda d: jnp.zeros((), d), "mean": lambda d: jnp.zeros((), d),
                 "prod": lambda d: jnp.ones((), d), "amax": lambda d: _lowest(d, False),
                 "amin": lambda d: _lowest(d, True)}


def _scatter_reduce_two(x, src, index, dim, reduce, include_self):
    """torch's scatter_reduce.two: ``src`` combined into ``x`` at the scatter positions."""
    src = _src_part(src, index).astype(x.dtype)
    base = x if include_self else _scatter_into(x, index, dim, _REDUCE_START[reduce](x.dtype))
    out = _scatter_into(base, index, dim, src, _REDUCE_HOW[reduce])
    if reduce != "mean":
        return out
    count = _scatter_into(jnp.full(x.shape, 1 if include_self else 0, x.dtype), index, dim,
                          jnp.ones((), x.dtype), "add")
    count = jnp.where(count == 0, jnp.ones((), x.dtype), count)
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return out / count
    return jnp.floor_divide(out, count)


def _scatter_prod(base, src, index, dim, include_self):
    """scatter_reduce's "prod" by dense products (no scatter-multiply, whose JAX gradient needs
    unique indices): what the backward formulas use, so they can be differentiated again."""
    shape = base.shape
    base, index, src = (jnp.atleast_1d(base), jnp.atleast_1d(index),
                        jnp.atleast_1d(_src_part(src, index)))
    n = base.shape[dim]
    hit = jnp.moveaxis(index, dim, -1)[..., :, None] == jnp.arange(n)
    factors = jnp.where(hit, jnp.moveaxis(src, dim, -1)[..., :, None].astype(base.dtype),
                        jnp.ones((), base.dtype)).prod(-2)
    touched = hit.any(-2)
    whole = [slice(0, m) for m in factors.shape]
    moved = jnp.moveaxis(base, dim, -1)
    factors = jnp.ones(moved.shape, base.dtype).at[tuple(whole)].set(factors)
    touched = jnp.zeros(moved.shape, bool).at[tuple(whole)].set(touched)
    start = moved if include_self else jnp.where(touched, jnp.ones((), base.dtype), moved)
    return jnp.moveaxis(start * factors, -1, dim).reshape(shape)


def _scatter_reduce_grads(grad, self, src, index, result, dim, reduce, include_self):
    """torch's scatter_reduce_backward: ``(grad_self, grad_src)``."""
    src = _src_part(src, index)
    zero, one = jnp.zeros((), grad.dtype), jnp.ones((), grad.dtype)
    if reduce == "sum":
        grad_self, grad_src = grad, _gather(grad, index, dim)
    elif reduce == "prod":
        masked_self = jnp.where(self == 0, one, self)
        grad_self = grad * _scatter_prod(masked_self, src, index, dim,
                                         include_self) / masked_self
        src_zero = src == 0
        zeros_there = _gather(_scatter_into(jnp.zeros(self.shape, grad.dtype), index, dim,
                                            src_zero.astype(grad.dtype), "add"), index, dim)
        single_zero = src_zero & (zeros_there == 1)
        masked_src_result = _scatter_prod(self, jnp.where(single_zero, one, src), index, dim,
                                          include_self)
        grad_src = jnp.where(single_zero, _gather(grad * masked_src_result, index, dim),
                             _gather(grad * result, index, dim) / jnp.where(src_zero, one, src))
    elif reduce == "mean":
        count = _scatter_into(jnp.full(self.shape, 1 if include_self else 0, grad.dtype), index,
                              dim, one, "add")
        count = jnp.where(count == 0, one, count)
        grad_self = grad / count
        grad_src = _gather(grad, index, dim) / _gather(count, index, dim)
    else:
        value = _gather(result, index, dim)
        self_is = (self == result).astype(grad.dtype)
        src_is = (src == value).astype(grad.dtype)
        spread = grad / _scatter_into(self_is, index, dim, src_is, "add")
        grad_self = self_is * spread
        grad_src = src_is * _gather(spread, index, dim)
    if not include_self:
        grad_self = _scatter_into(grad_self, index, dim, zero)
    return grad_self, grad_src


def _scatter_reduce_src_grad(grad, self, src, index, result, dim, reduce, include_self):
    if tuple(index.shape) != tuple(src.shape) and (index.ndim or src.shape != (1,)):
        raise RuntimeError(
            "Function ScatterReduceBackward0 returned an invalid gradient at index 1 - got "
            f"{list(index.shape)} but expected shape compatible with {list(src.shape)}")
    return _scatter_reduce_grads(grad, self, src, index, result, dim, reduce,
                                 include_self)[1].reshape(src.shape)


def _zeros_meet(self, src, index, dim, reduce, **_):
    """Whether "prod" scatters more than one zero of ``src`` to one position of ``self``: torch's
    gradient for ``src`` there is not differentiable again."""
    if reduce != "prod":
        return False
    src_zero = (_src_part(src, index) == 0).astype(jnp.int32)
    return (_scatter_into(jnp.zeros(self.shape, jnp.int32), index, dim, src_zero, "add") > 1).any()


def _double_backward_error(name: str, src: str) -> str:
    return (f"{name}(): Double backward is unsupported for {src} when >1 zeros in {src} are "
            "scattered to the same position in self")


_SCATTER_REDUCE_SRC = {"sum": "GatherBackward0", "prod": "WhereBackward0", "mean": "DivBackward0",
                       "amax": "MulBackward0", "amin": "MulBackward0"}


def _scatter_reduce_self_node(reduce, include_self):
    """torch's ``scatter_reduce_backward`` for ``self``: masked by a scatter without
    ``include_self``; else ``grad`` itself for a sum (handed on: not nameable here)."""
    if not include_self:
        return "ScatterBackward1"
    return {"prod": "DivBackward0", "mean": "DivBackward0", "amax": "MulBackward0",
            "amin": "MulBackward0"}.get(reduce)


SCATTER_REDUCE_TWO = Op(
    "scatter_reduce", "ScatterReduceBackward0", _scatter_reduce_two, inputs=("self", "src"),
    aux=("index",), saves=("self", "src", "result"), grads={
        "self": lambda grad, self, src, index, result, dim, reduce, include_self:
        _scatter_reduce_grads(grad, self, src, index, result, dim, reduce, include_self)[0],
        "src": _scatter_reduce_src_grad},
    grad_nodes={"self": _scatter_reduce_self_node,
                "src": lambda reduce: _SCATTER_REDUCE_SRC[reduce]},
    delayed_errors={"src": (_zeros_meet, _double_backward_error("scatter_reduce", "src"))})


# --- index_reduce: scatter_reduce with each index repeated across the source's other dims ------

def _spread_index(index, source_shape, dim):
    """``index`` (a vector along ``dim``) broadcast to ``source_shape``: scatter's index."""
    if not source_shape:
        return index.reshape(())
    shape = [1] * len(source_shape)
    shape[dim] = -1
    return jnp.broadcast_to(index.reshape(shape), source_shape)


def _index_reduce(x, source, index, dim, reduce, include_self):
    return _scatter_reduce_two(x, source, _spread_index(index, source.shape, dim), dim, reduce,
                               include_self)


def _index_reduce_grads(grad, self, source, index, result, dim, reduce, include_self):
    """torch's index_reduce_backward, which is scatter_reduce's on the spread index."""
    return _scatter_reduce_grads(grad, self, source, _spread_index(index, source.shape, dim),
                                 result, dim, reduce, include_self)


INDEX_REDUCE = Op(
    "index_reduce", "IndexReduceBackward0", _index_reduce, inputs=("self", "source"),
    aux=("index",), saves=("self", "source", "result"), grads={
        "self": lambda grad, self, source, index, result, dim, reduce, include_self:
        _index_reduce_grads(grad, self, source, index, result, dim, reduce, include_self)[0],
        "source": lambda grad, self, source, index, result, dim, reduce, include_self:
        _index_reduce_grads(grad, self, source, index, result, dim, reduce,
                            include_self)[1].reshape(source.shape)},
    delayed_errors={"source": (
        lambda self, source, index, dim, reduce, **_: _zeros_meet(
            self, source, _spread_index(index, source.shape, dim), dim, reduce),
        _double_backward_error("index_reduce", "source"))})


# --- unique: the distinct values (or slices along a dim), picked from the input ---------------
# Which elements survive depends on the values, so the caller finds them on the host and the
# row only gathers them (``picks``, a traced operand): one kernel per output size. torch has no
# derivative for any of these ops; its nodes raise when the backward reaches them.

def _no_derivative(name: str):
    def formula(grad):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return formula


def _pick_flat(x, picks):
    return x.reshape(-1)[picks]


def _pick_along(x, picks, dim):
    return jnp.take(x, picks, axis=dim)


def _unique_row(name: str, node: str, forward) -> Op:
    return Op(name, node, forward, inputs=("self",), aux=("picks",),
              grads={"self": _no_derivative(name)})


UNIQUE = _unique_row("_unique", "UniqueBackward0", _pick_flat)
UNIQUE2 = _unique_row("_unique2", "Unique2Backward0", _pick_flat)
UNIQUE_DIM = _unique_row("unique_dim", "UniqueDimBackward0", _pick_along)
UNIQUE_CONSECUTIVE = _unique_row("unique_consecutive", "UniqueConsecutiveBackward0", _pick_flat)
UNIQUE_CONSECUTIVE_DIM = _unique_row("unique_consecutive", "UniqueConsecutiveBackward0",
                                     _pick_along)
