"""Advanced indexing: ``index`` (x[tensor]) and ``index_put`` (x[tensor] = v).

``indices`` is a tuple with one entry per leading dimension: an integer array, or None for a
dimension taken whole. JAX's advanced-indexing rules are numpy's, which are torch's.
"""

from __future__ import annotations

import jax.numpy as jnp

from ._table import Op, identity_grad


def _where(indices):
    return tuple(slice(None) if i is None else i for i in indices)


INDEX = Op("index", "IndexBackward0", lambda x, indices: x[_where(indices)], aux=("indices",),
           grads={"self": lambda grad, self_shape, indices: jnp.zeros(
               self_shape, grad.dtype).at[_where(indices)].add(grad)}, grad_version=1)


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
    })


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
            aux=("index",), grads={"self": _gather_back}, grad_version=1)
SCATTER_SRC = Op("scatter", "ScatterBackward0", _scatter_src, inputs=("self", "src"),
                 aux=("index",), grads={"self": _zero_scattered,
                                         "src": _src_grad("ScatterBackward0")})
SCATTER_VALUE = Op("scatter", "ScatterBackward1", _scatter_value, inputs=("self",),
                   aux=("index", "value"), grads={"self": _zero_scattered})
SCATTER_ADD = Op("scatter_add", "ScatterAddBackward0", _scatter_add, inputs=("self", "src"),
                 aux=("index",), grads={"self": identity_grad,
                                         "src": _src_grad("ScatterAddBackward0")})


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
                  aux=("index",), grads={"self": _index_select_back}, grad_version=1)
