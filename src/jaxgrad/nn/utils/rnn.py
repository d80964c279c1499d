"""``jaxgrad.nn.utils.rnn``: packed and padded batches of variable-length sequences, as
``torch.nn.utils.rnn``.

A ``PackedSequence`` holds the steps of sorted sequences one after the other (at each step the
sequences still running), with ``batch_sizes``, the number of them per step; the recurrent
layers (``nn.RNN``, ``nn.LSTM``, ``nn.GRU``) take and return one. Packing goes through the
``_pack_padded_sequence`` row (``PackPaddedSequenceBackward0``); padding is torch's composite:
``full`` of the padding value, then ``copy_`` into slices of it (``CopySlices``), so graphs,
values and gradients are torch's.

Lengths and batch sizes are shapes: they are read on the host, as torch reads them, and must
be concrete. Under ``jaxgrad.compile`` a step that packs, pads or runs a recurrent layer on a
packed batch reads them while traced, so ``compile`` runs that signature eagerly (with its
warning; ``fullgraph=True`` raises ``GraphBreak``): keep packing and the recurrent layers on
packed batches out of compiled steps.

>>> import jaxgrad
>>> from jaxgrad.nn.utils.rnn import pack_sequence, pad_packed_sequence
>>> packed = pack_sequence([jaxgrad.tensor([1, 2, 3]), jaxgrad.tensor([4, 5])])
>>> packed.data, packed.batch_sizes
(tensor([1, 4, 2, 5, 3]), tensor([2, 2, 1]))
>>> pad_packed_sequence(packed, batch_first=True)
(tensor([[1, 2, 3],
        [4, 5, 0]]), tensor([3, 2]))
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any, NamedTuple

from ..._core import dtypes
from ..._core.tensor import Tensor
from ..._engine.dispatch import apply as _apply
from ..._functions.creation import arange, as_tensor, empty, empty_like, tensor
from ..._ops import nn_packed as P

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


class PackedSequence_(NamedTuple):
    """The four fields of a ``PackedSequence``."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _bind(optional: Any, fn: Any) -> Any:
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """The data and ``batch_sizes`` of a packed batch of sequences, and the permutation
    (``sorted_indices``, its inverse ``unsorted_indices``) that sorted the batch by length.
    Made by ``pack_padded_sequence``/``pack_sequence``, not by hand.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils.rnn import pack_sequence
    >>> p = pack_sequence([jaxgrad.tensor([1.0]), jaxgrad.tensor([2.0, 3.0])],
    ...                   enforce_sorted=False)
    >>> p.data, p.sorted_indices, p.unsorted_indices
    (tensor([2., 1., 3.]), tensor([1, 0]), tensor([1, 0]))
    >>> p.double().data.dtype
    jaxgrad.float64
    """

    def __new__(
        cls,
        data: Any,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        return super().__new__(
            cls, *_packed_sequence_init_args(data, batch_sizes, sorted_indices, unsorted_indices)
        )

    def pin_memory(self) -> PackedSequence:
        """The data and indices in pinned memory (``batch_sizes`` stays as it is)."""
        return type(self)(
            self.data.pin_memory(),
            self.batch_sizes,
            _bind(self.sorted_indices, lambda t: t.pin_memory()),
            _bind(self.unsorted_indices, lambda t: t.pin_memory()),
        )

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data.to(*args, **kwargs)``, the indices moved to the data's device; ``self``
        when the data does not change (``batch_sizes`` always stays on the CPU)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        non_blocking = kwargs.get("non_blocking", False)

        def call_to(t: Tensor) -> Tensor:
            return t.to(data.device, non_blocking=non_blocking)

        return type(self)(
            data,
            self.batch_sizes,
            _bind(self.sorted_indices, call_to),
            _bind(self.unsorted_indices, call_to),
        )

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """The packed sequence on a CUDA device (as ``Tensor.cuda``)."""
        ex = tensor((), dtype=self.data.dtype, device=self.data.device).to(*args, **kwargs)
        if ex.is_cuda:
            return self.to(*args, **kwargs)
        kwargs["device"] = "cuda"
        return self.to(*args, **kwargs)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """The packed sequence on the CPU."""
        ex = tensor((), dtype=self.data.dtype, device=self.data.device).to(*args, **kwargs)
        if ex.device.type == "cpu":
            return self.to(*args, **kwargs)
        kwargs["device"] = "cpu"
        return self.to(*args, **kwargs)

    def double(self) -> PackedSequence:
        """The data as float64."""
        return self.to(dtype=dtypes.float64)

    def float(self) -> PackedSequence:
        """The data as float32."""
        return self.to(dtype=dtypes.float32)

    def half(self) -> PackedSequence:
        """The data as float16."""
        return self.to(dtype=dtypes.float16)

    def long(self) -> PackedSequence:
        """The data as int64."""
        return self.to(dtype=dtypes.int64)

    def int(self) -> PackedSequence:
        """The data as int32."""
        return self.to(dtype=dtypes.int32)

    def short(self) -> PackedSequence:
        """The data as int16."""
        return self.to(dtype=dtypes.int16)

    def char(self) -> PackedSequence:
        """The data as int8."""
        return self.to(dtype=dtypes.int8)

    def byte(self) -> PackedSequence:
        """The data as uint8."""
        return self.to(dtype=dtypes.uint8)

    @property
    def is_cuda(self) -> bool:
        """Whether the data is on a CUDA device."""
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        """Whether the data is in pinned memory."""
        return self.data.is_pinned()


def _packed_sequence_init_args(
    data: Any,
    batch_sizes: Tensor | None,
    sorted_indices: Tensor | None,
    unsorted_indices: Tensor | None,
) -> tuple:
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
            )
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a 1-D permutation (None for None).

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils.rnn import invert_permutation
    >>> invert_permutation(jaxgrad.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    output = empty_like(permutation)
    output.scatter_(0, permutation, arange(0, permutation.numel(), device=permutation.device))
    return output


def _check_lengths(lengths: Tensor) -> None:
    if lengths.dim() != 1 or lengths.device.type != "cpu" or lengths.dtype != dtypes.int64:
        raise RuntimeError(
            "'lengths' argument should be a 1D CPU int64 tensor, but got "
            f"{lengths.dim()}D {lengths.device.type} {_scalar_name(lengths.dtype)} tensor"
        )


def _scalar_name(dtype: Any) -> str:
    """c10's ScalarType name (``Long``, ``Float``) of a dtype."""
    return dtype._legacy.removesuffix("Tensor")


def _pack_padded(input: Tensor, lengths: Tensor, batch_first: bool) -> tuple[Tensor, Tensor]:
    """torch's ``_pack_padded_sequence``: (data, batch_sizes) of sorted padded sequences."""
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    steps_first = input.transpose(0, 1) if batch_first else input
    _check_lengths(lengths)
    batch_size = steps_first.size(1)
    values = [int(v) for v in lengths.tolist()]
    if len(values) != batch_size:
        raise RuntimeError(
            "Expected `len(lengths)` to be equal to batch_size, but got "
            f"{len(values)} (batch_size={batch_size})"
        )
    if values[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an "
            "element in 'lengths' that is <= 0"
        )
    if any(a < b for a, b in itertools.pairwise(values)):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
            "to sidestep this requirement if you do not need ONNX exportability."
        )
    batch_sizes = [sum(1 for v in values if v > t) for t in range(values[0])]
    data = _apply(
        P.PACK_PADDED_SEQUENCE, input, lengths=tuple(values), batch_first=bool(batch_first)
    )
    return data, tensor(batch_sizes, dtype=dtypes.int64)


def pack_padded_sequence(
    input: Tensor,
    lengths: Tensor | list[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Pack a padded batch (``T x B x *``, ``B x T x *`` with ``batch_first``) of sequences
    of the given ``lengths``; with ``enforce_sorted=False`` the batch is sorted by decreasing
    length first (the permutation is kept in the result).

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils.rnn import pack_padded_sequence
    >>> seq = jaxgrad.tensor([[1, 2, 0], [3, 0, 0], [4, 5, 6]])
    >>> p = pack_padded_sequence(seq, [2, 1, 3], batch_first=True, enforce_sorted=False)
    >>> p.data, p.batch_sizes, p.sorted_indices
    (tensor([4, 1, 3, 5, 2, 6]), tensor([3, 2, 1]), tensor([2, 0, 1]))
    """
    if not isinstance(lengths, Tensor):
        lengths = as_tensor(lengths, dtype=dtypes.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=dtypes.int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = lengths.sort(descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _full(shape: tuple, value: Any, like: Tensor) -> Tensor:
    """torch's ``at::full`` called inside a composite: ``empty`` then ``fill_`` (version 1)."""
    return empty(shape, dtype=like.dtype, device=like.device).fill_(value)


def _pad_packed(
    data: Tensor, batch_sizes: Tensor, batch_first: bool, padding_value: Any, total_length: int
) -> tuple[Tensor, Tensor]:
    """torch's ``_pad_packed_sequence``: a tensor of the padding value, each block of equal
    batch size copied into a slice of it; and the sorted lengths."""
    sizes = [int(v) for v in batch_sizes.tolist()]
    max_batch = sizes[0]
    steps = len(sizes)
    max_steps = max(total_length, steps) if total_length > 0 else steps
    output = _full((max_steps, max_batch, *data.shape[1:]), padding_value, data)
    lengths = [0] * max_batch
    offset, prev_size, prev_i = 0, max_batch, 0
    for i in range(steps + 1):
        size = sizes[i] if i != steps else 0
        if size != prev_size:
            count = prev_size * (i - prev_i)
            block = data[offset : offset + count].view(i - prev_i, prev_size, *data.shape[1:])
            output.narrow(0, prev_i, i - prev_i).narrow(1, 0, prev_size).copy_(block)
            offset += count
            prev_i = i
            for j in range(size, prev_size):
                lengths[j] = i
        prev_size = size
    if batch_first:
        output = output.transpose(0, 1)
    return output, tensor(lengths, dtype=dtypes.int64)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Pad a packed batch back to ``T x B x *`` (``B x T x *`` with ``batch_first``), in the
    batch's original order; returns it and the lengths. ``total_length`` pads to that many
    steps.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> p = pack_sequence([jaxgrad.tensor([1.0]), jaxgrad.tensor([2.0, 3.0])],
    ...                   enforce_sorted=False)
    >>> pad_packed_sequence(p, total_length=3, padding_value=-1.0)
    (tensor([[ 1.,  2.],
            [-1.,  3.],
            [-1., -1.]]), tensor([1, 2]))
    """
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_seq_length}"
            )
        max_seq_length = total_length
    padded_output, lengths = _pad_packed(
        sequence.data, sequence.batch_sizes, batch_first, padding_value, max_seq_length
    )
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        return (
            padded_output.index_select(batch_dim, unsorted_indices),
            lengths[unsorted_indices.cpu()],
        )
    return padded_output, lengths


def pad_sequence(
    sequences: Tensor | list[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack sequences of sizes ``L_i x *`` into ``T x B x *`` (``B x T x *`` with
    ``batch_first``), each padded to the longest with ``padding_value`` on ``padding_side``.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils.rnn import pad_sequence
    >>> pad_sequence([jaxgrad.ones(3), jaxgrad.ones(1)], batch_first=True, padding_side="left")
    tensor([[1., 1., 1.],
            [0., 0., 1.]])
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg of "
            f"type: {type(sequences)}"
        )
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    if first.dim() == 0:
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    max_len = max(s.size(0) for s in sequences)
    count = len(sequences)
    dims = (count, max_len) if batch_first else (max_len, count)
    out = _full((*dims, *first.shape[1:]), padding_value, first)
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    for i, seq in enumerate(sequences):
        length = seq.size(0)
        start = max_len - length if padding_side == "left" else 0
        if batch_first:
            out.select(0, i).narrow(0, start, length).copy_(seq)
        else:
            out.narrow(0, start, length).select(1, i).copy_(seq)
    return out


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False
) -> list[Tensor]:
    """Split a padded batch back into its sequences of the given lengths. As torch, a
    steps-first batch is transposed *in place* first.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils.rnn import unpad_sequence
    >>> unpad_sequence(jaxgrad.tensor([[1, 2], [3, 0]]), jaxgrad.tensor([2, 1]),
    ...                batch_first=True)
    [tensor([1, 2]), tensor([3])]
    """
    unpadded_sequences = []
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    max_length = padded_sequences.shape[1]
    idx = arange(max_length, device=lengths.device)
    for seq, length in zip(padded_sequences, lengths, strict=True):
        mask = idx < length
        unpadded_sequences.append(seq[mask])
    return unpadded_sequences


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences of sizes ``L_i x *`` (``pad_sequence`` then
    ``pack_padded_sequence``).

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils.rnn import pack_sequence
    >>> p = pack_sequence([jaxgrad.tensor([1, 2, 3]), jaxgrad.tensor([4, 5]), jaxgrad.tensor([6])])
    >>> p.data, p.batch_sizes, p.sorted_indices
    (tensor([1, 4, 6, 2, 5, 3]), tensor([3, 2, 1]), None)
    """
    lengths = as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a ``PackedSequence`` holds, in their original order.

    >>> import jaxgrad
    >>> from jaxgrad.nn.utils.rnn import pack_sequence, unpack_sequence
    >>> unpack_sequence(pack_sequence([jaxgrad.tensor([1, 2]), jaxgrad.tensor([3])]))
    [tensor([1, 2]), tensor([3])]
    """
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
