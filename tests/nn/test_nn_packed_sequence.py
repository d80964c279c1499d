"""``nn.utils.rnn`` against torch: PackedSequence, pack/pad in both layouts, sorted and unsorted
batches, total_length and padding values, pad_sequence on both sides, unpad/unpack round trips,
invert_permutation; values, gradients (first and second order), graphs, versions and errors. The
recurrent layers on packed input (final states at each sequence's last step, hx permuted) are in
the second half."""

from __future__ import annotations

import numpy as np
import pytest

from differential import (
    grad_of,
    next_functions,
    ok,
    param_grads,
    raises,
    set_weights,
    val,
    weighted,
)


def _rnn_utils(T):
    return T.nn.utils.rnn


def _padded(T, shape=(4, 3, 2), seed=0, dtype="float64"):
    values = np.random.RandomState(seed).randn(*shape)
    return T.tensor(values, dtype=getattr(T, dtype), requires_grad=True)


# --- pack_padded_sequence / pad_packed_sequence -----------------------------------------------

PACK_CASES = {
    "sorted": ([4, 2, 1], False, True),
    "all_full": ([4, 4, 4], False, True),
    "unsorted": ([1, 4, 2], False, False),
    "unsorted_ties": ([2, 4, 2], False, False),
    "batch_first_unsorted": ([1, 3, 2, 3], True, False),
    "tensor_lengths_int32": ("int32", False, False),
}


@pytest.mark.parametrize("key", list(PACK_CASES))
def test_pack_pad_round_trip(key):
    lengths, batch_first, enforce_sorted = PACK_CASES[key]

    def program(T):
        R = _rnn_utils(T)
        x = _padded(T)
        lens = T.tensor([3, 1, 4], dtype=T.int32) if lengths == "int32" else lengths
        p = R.pack_padded_sequence(x, lens, batch_first=batch_first, enforce_sorted=enforce_sorted)
        out, out_lengths = R.pad_packed_sequence(p, batch_first=batch_first)
        loss = weighted(T, p.data.pow(3)) + weighted(T, out.sin())
        (g,) = T.autograd.grad(loss, x, create_graph=True)
        (gg,) = T.autograd.grad(weighted(T, g), x)
        return (
            list(p),
            type(p).__name__,
            out,
            out_lengths,
            val(g),
            val(gg),
            next_functions(p.data.grad_fn),
            next_functions(out.grad_fn),
        )

    ok(program)


def test_pack_lengths_past_steps():
    """A length past the padded steps: torch's slices clamp, the batch sizes do not (and its
    backward indexes past the steps)."""
    ok(lambda T: list(_rnn_utils(T).pack_padded_sequence(_padded(T), [5, 2, 1])))
    raises(
        lambda T: weighted(
            T, _rnn_utils(T).pack_padded_sequence(_padded(T), [5, 2, 1]).data
        ).backward()
    )


def test_pack_backward_graph_and_version():
    """The packed gradient scattered back: one copy_ per step into zeros (version, also under
    create_graph), a CopySlices (TransposeBackward0 over it with batch_first) under
    create_graph."""

    def program(T):
        R = _rnn_utils(T)
        results = []
        for batch_first in (False, True):
            x = _padded(T, (3, 3, 2))
            p = R.pack_padded_sequence(x, [3, 2, 2], batch_first=batch_first)
            (g,) = T.autograd.grad((p.data**2).sum(), x, create_graph=True)
            plain = _padded(T, (3, 3, 2))
            R.pack_padded_sequence(plain, [3, 1, 1], batch_first=batch_first).data.sum().backward()
            results += [val(g), type(g.grad_fn).__name__, plain.grad, plain.grad._version]
            if not batch_first:  # (see the README: torch's transposed view of that tensor)
                results.append(g._version)
        return results

    ok(program)


@pytest.mark.parametrize(("batch_first", "enforce_sorted"), [(False, True), (True, False)])
def test_pad_packed_total_length_and_padding(batch_first, enforce_sorted):
    def program(T):
        R = _rnn_utils(T)
        x = _padded(T, (3, 4, 2), seed=1)
        lengths = [3, 3, 2, 1] if enforce_sorted else [2, 3, 1, 3]
        if batch_first:
            x = x.transpose(0, 1)
        p = R.pack_padded_sequence(x, lengths, batch_first, enforce_sorted)
        out, lens = R.pad_packed_sequence(p, batch_first, padding_value=-2.5, total_length=5)
        weighted(T, out).backward()
        return out, lens, grad_of(x) if x.is_leaf else None, next_functions(out.grad_fn)

    ok(program)


def test_pack_integer_data_and_trailing_dims():
    def program(T):
        R = _rnn_utils(T)
        ints = T.arange(24).view(3, 2, 4)
        p = R.pack_padded_sequence(ints, [3, 1])
        scalars = T.arange(6.0).view(3, 2)
        q = R.pack_padded_sequence(scalars, T.tensor([1.0, 3.0]), enforce_sorted=False)
        return (
            list(p),
            R.pad_packed_sequence(p, padding_value=7.9),
            list(q),
            R.pad_packed_sequence(q, batch_first=True),
        )

    ok(program)


PACK_ERRORS = {
    "too_many_lengths": lambda T, R, x: R.pack_padded_sequence(x, [4, 2]),
    "zero_length": lambda T, R, x: R.pack_padded_sequence(x, [4, 2, 0]),
    "negative_unsorted": lambda T, R, x: R.pack_padded_sequence(
        x, [4, -2, 1], enforce_sorted=False
    ),
    "not_sorted": lambda T, R, x: R.pack_padded_sequence(x, [2, 4, 1]),
    "lengths_2d": lambda T, R, x: R.pack_padded_sequence(x, T.tensor([[4, 2, 1]])),
    "empty": lambda T, R, x: R.pack_padded_sequence(T.zeros(0, 3), [4, 2, 1]),
    "one_dim_batch_first": lambda T, R, x: R.pack_padded_sequence(T.zeros(4), [4], True),
    "one_dim": lambda T, R, x: R.pack_padded_sequence(T.zeros(4), [4]),
    "total_length_short": lambda T, R, x: R.pad_packed_sequence(
        R.pack_padded_sequence(x, [4, 2, 1]), total_length=3
    ),
    "pad_empty_list": lambda T, R, x: R.pad_sequence([]),
    "pad_bad_side": lambda T, R, x: R.pad_sequence([x[0]], padding_side="middle"),
    "pad_not_iterable": lambda T, R, x: R.pad_sequence(3),
    "pad_trailing_mismatch": lambda T, R, x: R.pad_sequence([x[0], x[1, :, 0]]),
    "pad_scalars": lambda T, R, x: R.pad_sequence([T.tensor(1.0), T.tensor(2.0)]),
    "unpad_leaf_in_place": lambda T, R, x: R.unpad_sequence(x, T.tensor([4, 2, 1])),
    "unpad_wrong_count": lambda T, R, x: R.unpad_sequence(
        x.detach(), T.tensor([4, 2]), batch_first=True
    ),
    "unpad_list_lengths": lambda T, R, x: R.unpad_sequence(x.detach(), [4, 2, 1]),
    "pad_lengths_past_steps": lambda T, R, x: R.pad_packed_sequence(
        R.pack_padded_sequence(x, [5, 2, 1])
    ),
    "packed_from_one_tensor": lambda T, R, x: R.PackedSequence(x),
}


@pytest.mark.parametrize("key", list(PACK_ERRORS))
def test_errors(key):
    raises(lambda T: PACK_ERRORS[key](T, _rnn_utils(T), _padded(T)))


# --- pad_sequence / unpad_sequence / pack_sequence / unpack_sequence -----------------------------


@pytest.mark.parametrize(("batch_first", "side"), [(False, "right"), (True, "left")])
def test_pad_sequence(batch_first, side):
    def program(T):
        R = _rnn_utils(T)
        x = _padded(T, (4, 3, 2))
        seqs = [x[:2, 0], x[:, 1], x[:3, 2]]
        out = R.pad_sequence(seqs, batch_first=batch_first, padding_value=0.5, padding_side=side)
        weighted(T, out.exp()).backward()
        mixed = R.pad_sequence([T.ones(2, dtype=T.float64), T.arange(3)])
        rows = R.pad_sequence(x[0])
        return out, grad_of(x), next_functions(out.grad_fn), mixed, rows, out._version

    ok(program)


@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_pack_unpack_sequence_round_trip(enforce_sorted):
    def program(T):
        R = _rnn_utils(T)
        x = _padded(T, (4, 3, 2), seed=2)
        seqs = [x[:, 0], x[:3, 1], x[:1, 2]] if enforce_sorted else [x[:1, 0], x[:, 1], x[:3, 2]]
        p = R.pack_sequence(seqs, enforce_sorted=enforce_sorted)
        back = R.unpack_sequence(p)
        weighted(T, T.cat(back).cos()).backward()
        return list(p), back, grad_of(x), [next_functions(t.grad_fn) for t in back]

    ok(program)


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence(batch_first):
    """Steps-first input is transposed in place (its version and shape change)."""

    def program(T):
        R = _rnn_utils(T)
        x = _padded(T, (3, 4, 2) if batch_first else (4, 3, 2))
        padded = x * 1
        parts = R.unpad_sequence(padded, T.tensor([1, 3, 2]), batch_first=batch_first)
        weighted(T, T.cat(parts)).backward()
        return parts, padded, grad_of(x), next_functions(parts[0].grad_fn)

    ok(program)


def test_invert_permutation_and_packed_sequence_methods():
    def program(T):
        R = _rnn_utils(T)
        perm = R.invert_permutation(T.tensor([2, 0, 3, 1]))
        p = R.pack_sequence([T.tensor([1.5, 2.5]), T.tensor([3.5, 4.5, 5.5])], enforce_sorted=False)
        converted = [
            list(getattr(p, name)())
            for name in ("double", "float", "half", "long", "int", "short", "char", "byte")
        ]
        built = R.PackedSequence((p.data, p.batch_sizes), sorted_indices=T.tensor([1, 0]))
        return (
            perm,
            perm._version,
            R.invert_permutation(None),
            converted,
            p.to(T.float32) is p,
            p.to(T.float64).data.dtype,
            p.to("cpu") is p,
            p.cpu() is p,
            p.is_cuda,
            p.is_pinned(),
            list(built),
            type(built).__name__,
            p._fields,
            isinstance(p, tuple),
            repr(p),
        )

    ok(program)


# --- recurrent layers on packed input ----------------------------------------------------------

# (module, kwargs, enforce_sorted, given states, batch_first); lengths [3, 3, 1] or their
# permutation [3, 1, 3]: batch sizes [3, 2, 2], a sequence ends after the first step
PACKED_RNN_CASES = {
    "rnn_sorted": ("RNN", {}, True, False, False),
    "rnn_relu_2layers_unsorted_state": (
        "RNN",
        {"nonlinearity": "relu", "num_layers": 2},
        False,
        True,
        False,
    ),
    "gru_2layers_bidir_unsorted_state": (
        "GRU",
        {"num_layers": 2, "bidirectional": True},
        False,
        True,
        False,
    ),
    "lstm_2layers_sorted": ("LSTM", {"num_layers": 2}, True, False, False),
    "lstm_proj_bidir_batch_first_unsorted_state": (
        "LSTM",
        {"proj_size": 2, "bidirectional": True},
        False,
        True,
        True,
    ),
}


def _packed_rnn_program(key):
    cls, kw, enforce_sorted, with_state, batch_first = PACKED_RNN_CASES[key]

    def program(T):
        R = _rnn_utils(T)
        rs = np.random.RandomState(4)
        m = set_weights(T, getattr(T.nn, cls)(2, 3, batch_first=batch_first, **kw), scale=0.7)
        x = T.tensor(rs.randn(3, 3, 2), dtype=T.float64, requires_grad=True)
        padded = x.transpose(0, 1) if batch_first else x
        lengths = [3, 3, 1] if enforce_sorted else [3, 1, 3]
        packed = R.pack_padded_sequence(padded, lengths, batch_first, enforce_sorted)
        layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
        leaves: list = []
        hx = None
        if with_state:
            leaves = [
                T.tensor(
                    rs.randn(layers, 3, kw.get("proj_size") or 3),
                    dtype=T.float64,
                    requires_grad=True,
                )
            ]
            if cls == "LSTM":
                leaves.append(T.tensor(rs.randn(layers, 3, 3), dtype=T.float64, requires_grad=True))
            hx = tuple(leaves) if cls == "LSTM" else leaves[0]
        out, state = m(packed, hx)
        states = list(state) if isinstance(state, tuple) else [state]
        unpacked, out_lengths = R.pad_packed_sequence(out, batch_first=batch_first)
        (weighted(T, unpacked) + sum(weighted(T, s) for s in states)).backward()
        return (
            type(out).__name__,
            list(out),
            unpacked,
            out_lengths,
            states,
            grad_of(x),
            [grad_of(t) for t in leaves],
            param_grads(m),
        )

    return program


@pytest.mark.parametrize("key", list(PACKED_RNN_CASES))
def test_recurrent_layers_on_packed_input(key):
    """Outputs, final states (each sequence's state at its last step, in the batch's order),
    and the gradients of the input, the given states and the parameters."""
    ok(_packed_rnn_program(key))


def test_recurrent_packed_graph():
    def program(T):
        R = _rnn_utils(T)
        m = set_weights(T, T.nn.RNN(2, 3, bidirectional=True))
        x = _padded(T, (2, 2, 2))
        out, h = m(R.pack_padded_sequence(x, [2, 1]))
        return next_functions(out.data.grad_fn), next_functions(h.grad_fn)

    ok(program)


PACKED_RNN_ERRORS = {
    "gru_state_batch": lambda T, m, p: m(p, T.zeros(1, 2, 3, dtype=T.float64)),
    "input_size": lambda T, m, p: T.nn.GRU(3, 3).double()(p),
    "dtype": lambda T, m, p: m(p.float()),
}


@pytest.mark.parametrize("key", list(PACKED_RNN_ERRORS))
def test_recurrent_packed_errors(key):
    def program(T):
        R = _rnn_utils(T)
        m = set_weights(T, T.nn.GRU(2, 3))
        return PACKED_RNN_ERRORS[key](T, m, R.pack_padded_sequence(_padded(T), [4, 2, 1]))

    raises(program)
