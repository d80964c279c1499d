"""Packed sequences: ``_pack_padded_sequence``, the op behind
``nn.utils.rnn.pack_padded_sequence`` (torch's ``PackPaddedSequenceBackward0``).

The lengths are static (a tuple of Python ints): they decide the packed data's shape, as torch
reads them on the host. The rows of the packed data are, step by step, the batch entries still
running at that step, torch's order (aten/src/ATen/native/PackedSequence.cpp).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ._table import Op


def packed_positions(lengths: tuple[int, ...], steps: int) -> tuple[np.ndarray, np.ndarray]:
    """The (time, batch) position of each packed row, for ``lengths`` sorted in decreasing
    order over a padded input of ``steps`` time steps. torch slices the input in blocks of
    equal batch size, so a length past ``steps`` is clamped to it (torch's slice does).

    >>> from jaxgrad._ops.nn_packed import packed_positions
    >>> [p.tolist() for p in packed_positions((3, 1), 3)]
    [[0, 0, 1, 2], [0, 1, 0, 0]]
    """
    times: list[int] = []
    batch: list[int] = []
    size = len(lengths)
    prev = 0
    for i in range(size):
        length = lengths[size - 1 - i]
        if length > prev:
            running = size - i
            for t in range(prev, min(length, steps)):
                times.extend([t] * running)
                batch.extend(range(running))
            prev = length
    return np.asarray(times, dtype=np.int64), np.asarray(batch, dtype=np.int64)


def _pack(x, lengths, batch_first):
    if batch_first:
        x = jnp.swapaxes(x, 0, 1)
    times, batch = packed_positions(lengths, x.shape[0])
    return x[times, batch]


def _pack_backward(grad, input_shape, lengths, batch_first):
    """torch's ``_pack_padded_sequence_backward``: the packed gradient scattered into zeros of
    the padded input's shape."""
    shape = tuple(input_shape)
    if batch_first:
        shape = (shape[1], shape[0], *shape[2:])
    if max(lengths) > shape[0]:  # torch's ``grad_input[i]`` for a step past the padded ones
        raise IndexError(
            f"select(): index {shape[0]} out of range for tensor of size "
            f"{list(shape)} at dimension 0"
        )
    times, batch = packed_positions(lengths, shape[0])
    out = jnp.zeros(shape, grad.dtype).at[times, batch].set(grad)
    return jnp.swapaxes(out, 0, 1) if batch_first else out


PACK_PADDED_SEQUENCE = Op(
    "_pack_padded_sequence",
    "PackPaddedSequenceBackward0",
    _pack,
    inputs=("input",),
    grads={"input": _pack_backward},
    # torch's backward: zeros (a zero_), then one copy_ per time step; with batch_first its
    # result is a transposed view, which AccumulateGrad copies (new_empty_strided + copy_: 1)
    grad_version=lambda lengths, batch_first: 1 if batch_first else 1 + max(lengths),
    grad_nodes={"input": lambda batch_first: "TransposeBackward0" if batch_first else "CopySlices"},
)
