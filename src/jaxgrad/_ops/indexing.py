"""Advanced indexing: ``index`` (x[tensor]) and ``index_put`` (x[tensor] = v).

``indices`` is a tuple with one entry per leading dimension: an integer array, or None for a
dimension taken whole. JAX's advanced-indexing rules are numpy's, which are torch's.
"""

from __future__ import annotations

import jax.numpy as jnp

from ._table import Op


def _where(indices):
    return tuple(slice(None) if i is None else i for i in indices)


INDEX = Op("index", "IndexBackward0", lambda x, indices: x[_where(indices)], aux=("indices",),
           grads={"self": lambda grad, self_shape, indices: jnp.zeros(
               self_shape, grad.dtype).at[_where(indices)].add(grad)})


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
