"""One step of each recurrent cell, torch's ``SimpleCell``/``LSTMCell``/``GRUCell`` structs
(aten/src/ATen/native/RNN.cpp), composed from jaxgrad ops in torch's order, and the top-level
forms ``jaxgrad.lstm_cell``, ``gru_cell``, ``rnn_tanh_cell``, ``rnn_relu_cell`` with torch's
native signatures and checks. ``nn.RNNCell``/``LSTMCell``/``GRUCell`` and the multi-layer
modules run the same steps.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._core.tensor import Tensor
from ..._engine.dispatch import apply as _apply
from ..._ops import nn as N
from .convolution import linear


def _unsafe_chunk(t: Tensor, chunks: int) -> tuple[Tensor, ...]:
    """torch's ``unsafe_chunk`` along dim 1: equal parts that are not views (the gates)."""
    return _apply(
        N.UNSAFE_SPLIT, t, split_size=t.shape[1] // chunks, dim=1, self_sym_sizes=tuple(t.shape)
    )


def simple_step(x: Tensor, h: Tensor, w: tuple, relu: bool, projected: bool) -> Tensor:
    gates = linear(h, w[1], w[3]).add_(x if projected else linear(x, w[0], w[2]))
    return gates.relu() if relu else gates.tanh()


def lstm_step(
    x: Tensor, hc: tuple[Tensor, Tensor], w: tuple, projected: bool, w_hr: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    h, c = hc
    gates = linear(h, w[1], w[3]).add_(x if projected else linear(x, w[0], w[2]))
    ingate, forgetgate, cellgate, outgate = _unsafe_chunk(gates, 4)
    ingate, forgetgate = ingate.sigmoid_(), forgetgate.sigmoid_()
    cellgate, outgate = cellgate.tanh_(), outgate.sigmoid_()
    cy = (forgetgate * c).add_(ingate * cellgate)
    hy = outgate * cy.tanh()
    if w_hr is not None:
        hy = hy.matmul(w_hr.t())
    return hy, cy


def gru_step(x: Tensor, h: Tensor, w: tuple, projected: bool) -> Tensor:
    igates = _unsafe_chunk(x if projected else linear(x, w[0], w[2]), 3)
    hgates = _unsafe_chunk(linear(h, w[1], w[3]), 3)
    reset_gate = hgates[0].add_(igates[0]).sigmoid_()
    input_gate = hgates[1].add_(igates[1]).sigmoid_()
    new_gate = igates[2].add(hgates[2].mul_(reset_gate)).tanh_()
    return (h - new_gate).mul_(input_gate).add_(new_gate)


# --- the top-level functional forms -----------------------------------------------------------


def _check_input(input: Tensor, input_size: int) -> None:
    if input.size(1) != input_size:
        raise RuntimeError(
            f"input has inconsistent input_size: got {input.size(1)} expected {input_size}"
        )


def _check_hidden(input: Tensor, hx: Tensor, hidden_size: int, label: int) -> None:
    if input.size(0) != hx.size(0):
        raise RuntimeError(
            f"Input batch size {input.size(0)} doesn't match hidden{label} batch size {hx.size(0)}"
        )
    if hx.size(1) != hidden_size:
        raise RuntimeError(
            f"hidden{label} has inconsistent hidden_size: got {hx.size(1)}, expected {hidden_size}"
        )


def lstm_cell(
    input: Tensor,
    hx: Sequence[Tensor],
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """One LSTM step, torch's ``lstm_cell``: ``(h', c')`` from ``input`` (N, H_in) and
    ``hx = (h, c)``.

    >>> import jaxgrad
    >>> h, c = jaxgrad.lstm_cell(jaxgrad.ones(2, 3), (jaxgrad.zeros(2, 4), jaxgrad.zeros(2, 4)),
    ...                          jaxgrad.ones(16, 3), jaxgrad.ones(16, 4))
    >>> h.shape, c.shape
    (jaxgrad.Size([2, 4]), jaxgrad.Size([2, 4]))
    """
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    _check_input(input, w_ih.size(1))
    _check_hidden(input, hx[0], w_hh.size(1), 0)
    _check_hidden(input, hx[1], w_hh.size(1), 1)
    return lstm_step(input, (hx[0], hx[1]), (w_ih, w_hh, b_ih, b_hh), False)


def _single(
    kind: str,
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None,
    b_hh: Tensor | None,
) -> Tensor:
    _check_input(input, w_ih.size(1))
    _check_hidden(input, hx, w_hh.size(1), 0)
    w = (w_ih, w_hh, b_ih, b_hh)
    if kind == "gru":
        return gru_step(input, hx, w, False)
    return simple_step(input, hx, w, kind == "relu", False)


def gru_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """One GRU step, torch's ``gru_cell``.

    >>> import jaxgrad
    >>> jaxgrad.gru_cell(jaxgrad.ones(2, 3), jaxgrad.zeros(2, 4), jaxgrad.ones(12, 3),
    ...                  jaxgrad.ones(12, 4)).shape
    jaxgrad.Size([2, 4])
    """
    return _single("gru", input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_tanh_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """One Elman step, torch's ``rnn_tanh_cell``: ``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``.

    >>> import jaxgrad
    >>> jaxgrad.rnn_tanh_cell(jaxgrad.ones(1, 2), jaxgrad.zeros(1, 1), jaxgrad.ones(1, 2),
    ...                       jaxgrad.ones(1, 1))
    tensor([[0.9640]])
    """
    return _single("tanh", input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """One Elman step with ``relu``, torch's ``rnn_relu_cell``.

    >>> import jaxgrad
    >>> jaxgrad.rnn_relu_cell(jaxgrad.ones(1, 2), jaxgrad.zeros(1, 1), jaxgrad.ones(1, 2),
    ...                       jaxgrad.ones(1, 1))
    tensor([[2.]])
    """
    return _single("relu", input, hx, w_ih, w_hh, b_ih, b_hh)
