"""Channel shuffle: ``channel_shuffle`` (its backward is the inverse shuffle, another
``channel_shuffle``) and ``native_channel_shuffle`` (no derivative in torch).
"""

from __future__ import annotations

import jax.numpy as jnp

from ._table import Op


def _shuffle(x, groups):
    """(N, C, *) -> channels regrouped as (C / groups, groups), read group-major."""
    n, c = x.shape[:2]
    split = x.reshape((n, groups, c // groups, *x.shape[2:]))
    return jnp.swapaxes(split, 1, 2).reshape(x.shape)


def _native_not_implemented(grad):
    raise RuntimeError("derivative for aten::native_channel_shuffle is not implemented")


CHANNEL_SHUFFLE = Op(
    "channel_shuffle", "ChannelShuffleBackward0", _shuffle,
    grads={"self": lambda grad, groups: _shuffle(grad, grad.shape[1] // groups)},
    grad_nodes={"self": "ChannelShuffleBackward0"})
NATIVE_CHANNEL_SHUFFLE = Op("native_channel_shuffle", "NotImplemented", _shuffle,
                            grads={"self": _native_not_implemented})
