"""Recurrent layers ``RNN``, ``LSTM``, ``GRU`` and their single-step cells ``RNNCell``,
``LSTMCell``, ``GRUCell``.

The recurrences are composed from jaxgrad ops in the order of torch's CPU kernels
(aten/src/ATen/native/RNN.cpp): a layer projects the whole sequence with ``linear(input, w_ih,
b_ih)`` once, unbinds it into steps, and each step adds ``linear(h, w_hh, b_hh)``; the step
outputs are stacked, the two directions of a bidirectional layer concatenated, the final
states stacked. So values match torch's and so do the graph's node names, except where torch
runs a fused kernel (float32 ``LSTM`` goes through oneDNN, ``MkldnnRnnLayerBackward0``).
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from typing import Any

from ..._core.tensor import Tensor
from ..._functions import joins
from ..._functions.creation import empty, zeros
from .. import functional, init
from .._functional.recurrent_cells import gru_step as _gru_step
from .._functional.recurrent_cells import lstm_step as _lstm_step
from .._functional.recurrent_cells import simple_step as _simple_step
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# --- one step of each cell (torch's SimpleCell / LSTMCell / GRUCell structs) -----------------


def _step(mode: str, x: Tensor, hidden: Any, w: tuple, projected: bool) -> Any:
    if mode == "LSTM":
        return _lstm_step(x, hidden, w, projected, w[4])
    if mode == "GRU":
        return _gru_step(x, hidden, w, projected)
    return _simple_step(x, hidden, w, mode == "RNN_RELU", projected)


def _run_direction(mode: str, inputs: Tensor, hidden: Any, w: tuple,
                   reverse: bool) -> tuple[Tensor, Any]:
    """torch's FullLayer / ReversedFullLayer on CPU: project the whole sequence once, then
    recur over its steps; returns the stacked outputs and the final hidden state."""
    steps = functional.linear(inputs, w[0], w[2]).unbind(0)
    order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
    outputs: list[Tensor | None] = [None] * len(steps)
    for t in order:
        hidden = _step(mode, steps[t], hidden, w, True)
        outputs[t] = hidden[0] if mode == "LSTM" else hidden
    return joins.stack(outputs), hidden


def _hidden_slice(hidden: Any, start: int, end: int) -> Any:
    """torch's ``hidden_slice``: rows ``start:end`` of a state (both of an LSTM's)."""
    if isinstance(hidden, tuple):
        return tuple(h.narrow(0, start, end - start) for h in hidden)
    return hidden.narrow(0, start, end - start)


def _hidden_concat(hiddens: list) -> Any:
    """torch's ``hidden_concat``: states stacked back along the batch (``cat``)."""
    if isinstance(hiddens[0], tuple):
        return tuple(joins.cat([h[i] for h in hiddens], 0) for i in range(len(hiddens[0])))
    return joins.cat(hiddens, 0)


def _run_packed_direction(mode: str, data: Tensor, hidden: Any, w: tuple, reverse: bool,
                          batch_sizes: tuple[int, ...]) -> tuple[Tensor, Any]:
    """torch's PackedLayer / ReversedPackedLayer on CPU: the packed data projected once, then
    each step on the sequences still running. Forward, a sequence's final state is split off
    the batch at its last step; reversed, sequences join the batch as the steps go back."""
    projected = functional.linear(data, w[0], w[2])
    outputs: list[Tensor] = []
    if not reverse:
        finals: list = []
        offset, last = 0, batch_sizes[0]
        for size in batch_sizes:
            step = projected.narrow(0, offset, size)
            offset += size
            if size < last:
                finals.append(_hidden_slice(hidden, size, last))
                hidden = _hidden_slice(hidden, 0, size)
            last = size
            hidden = _step(mode, step, hidden, w, True)
            outputs.append(hidden[0] if mode == "LSTM" else hidden)
        finals.append(hidden)
        return joins.cat(outputs, 0), _hidden_concat(finals[::-1])
    initial = hidden
    offset, last = data.size(0), batch_sizes[-1]
    hidden = _hidden_slice(initial, 0, last)
    for size in reversed(batch_sizes):
        if size > last:
            hidden = _hidden_concat([hidden, _hidden_slice(initial, last, size)])
        step = projected.narrow(0, offset - size, size)
        offset -= size
        last = size
        hidden = _step(mode, step, hidden, w, True)
        outputs.append(hidden[0] if mode == "LSTM" else hidden)
    return joins.cat(outputs[::-1], 0), hidden


def _layer_stack(mode: str, input: Tensor, hx: Any, weights: list[tuple], num_layers: int,
                 dropout: float, train: bool, bidirectional: bool, run: Any) -> tuple:
    """torch's ``_rnn_impl``: the layers one after the other (dropout between them), each
    layer's one or two directions (``run``: a full or a packed layer); returns the top layer's
    output and the stacked final states."""
    directions = 2 if bidirectional else 1
    if mode == "LSTM":
        hs, cs = hx[0].unbind(0), hx[1].unbind(0)
        hiddens: list = list(zip(hs, cs))
    else:
        hiddens = list(hx.unbind(0))
    finals: list = []
    layer_input = input
    for layer in range(num_layers):
        outs = []
        for d in range(directions):
            index = layer * directions + d
            out, final = run(mode, layer_input, hiddens[index], weights[index], d == 1)
            outs.append(out)
            finals.append(final)
        layer_output = outs[0] if directions == 1 else joins.cat(outs, outs[0].ndim - 1)
        if dropout != 0 and train and layer < num_layers - 1:
            layer_output = functional.dropout(layer_output, dropout, True)
        layer_input = layer_output
    if mode == "LSTM":
        return layer_input, (joins.stack([h for h, _ in finals]),
                             joins.stack([c for _, c in finals]))
    return layer_input, joins.stack(finals)


def _rnn(mode: str, input: Tensor, hx: Any, weights: list[tuple], num_layers: int,
         dropout: float, train: bool, bidirectional: bool, batch_first: bool) -> tuple:
    """A padded batch through the layers (batch_first: transposed in and out)."""
    if batch_first:
        input = input.transpose(0, 1)
    output, hidden = _layer_stack(mode, input, hx, weights, num_layers, dropout, train,
                                  bidirectional, _run_direction)
    if batch_first:
        output = output.transpose_(0, 1)  # in place, as torch
    return output, hidden


def _rnn_packed(mode: str, data: Tensor, batch_sizes: Tensor, hx: Any, weights: list[tuple],
                num_layers: int, dropout: float, train: bool, bidirectional: bool) -> tuple:
    """A packed batch's data through the layers; the batch sizes are read on the host."""
    sizes = tuple(int(v) for v in batch_sizes.tolist())
    return _layer_stack(mode, data, hx, weights, num_layers, dropout, train, bidirectional,
                        functools.partial(_run_packed_direction, batch_sizes=sizes))


# --- the multi-layer modules ------------------------------------------------------------------


def _batch_size(input: Tensor, batch_sizes: Any, batch_first: bool) -> int:
    if batch_sizes is not None:
        return int(batch_sizes[0])
    return input.size(0) if batch_first else input.size(1)


class RNNBase(Module):
    """Parameters, checks and repr shared by ``RNN``, ``LSTM`` and ``GRU``: per layer and
    direction ``weight_ih_l{k}``, ``weight_hh_l{k}`` (and ``bias_ih_l{k}``, ``bias_hh_l{k}``,
    ``weight_hr_l{k}`` for a projected LSTM; ``_reverse`` for the second direction), all drawn
    from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

    >>> import jaxgrad
    >>> rnn = jaxgrad.nn.modules.rnn.RNNBase("GRU", 2, 3)
    >>> [name for name, _ in rnn.named_parameters()]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int),
                                  ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                                f"{type(value).__name__}")
            if kind is int and value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                shapes = [("weight_ih_l{}{}", (gate_size, layer_input)),
                          ("weight_hh_l{}{}", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for pattern, shape in shapes:
                    name = pattern.format(layer, suffix)
                    setattr(self, name, Parameter(empty(shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """Nothing to do: torch compacts the weights for cuDNN only, and jaxgrad reads them
        by name on each call.

        >>> import jaxgrad
        >>> jaxgrad.nn.GRU(2, 3).flatten_parameters() is None
        True
        """

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters grouped per layer and direction, in torch's order.

        >>> import jaxgrad
        >>> [[w.shape for w in ws] for ws in jaxgrad.nn.RNN(2, 3, bias=False).all_weights]
        [[jaxgrad.Size([3, 2]), jaxgrad.Size([3, 3])]]
        """
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def _weights(self) -> list[tuple]:
        """Per layer and direction: (w_ih, w_hh, b_ih, b_hh, w_hr), None where absent."""
        out = []
        for names in self._all_weights:
            layer = names[0][len("weight_ih_"):]
            out.append(tuple(getattr(self, f"{kind}_{layer}", None)
                             for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh",
                                          "weight_hr")))
        return out

    def check_input(self, input: Tensor, batch_sizes: Any) -> None:
        """torch's checks of the input's dtype, rank and feature size."""
        weight = self._flat_weights[0]
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Any) -> tuple[int, int, int]:
        """(layers * directions, batch, proj_size or hidden_size); the batch is the first
        batch size of a packed input."""
        batch = _batch_size(input, batch_sizes, self.batch_first)
        directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * directions, batch, size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        """torch's check of a given initial state's shape."""
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Any) -> None:
        """The input's and the initial state's checks."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def _zeros(self, input: Tensor, size: int) -> Tensor:
        directions = 2 if self.bidirectional else 1
        batch = input.size(0) if self.batch_first else input.size(1)
        return zeros(self.num_layers * directions, batch, size, dtype=input.dtype,
                     device=input.device)

    def _prepare(self, input: Tensor, hx: Tensor | None, name: str) -> tuple:
        """The ``RNN``/``GRU`` forward's shape handling: returns (input, hx, batched)."""
        if input.dim() not in (2, 3):
            article = "RNN" if name == "RNN" else name
            tail = " tensor instead" if name == "RNN" else " instead"
            raise ValueError(f"{article}: Expected input to be 2D or 3D, got {input.dim()}D"
                             f"{tail}")
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError("For unbatched 2-D input, hx should also be 2-D but got "
                                       f"{hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        elif hx is not None and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                               f"{hx.dim()}-D tensor")
        if hx is None:
            hx = self._zeros(input, self.hidden_size)
        self.check_forward_args(input, hx, None)
        return input, hx, batched

    def _run(self, input: Tensor, hx: Any) -> tuple:
        return _rnn(self.mode, input, hx, self._weights(), self.num_layers, self.dropout,
                    self.training, self.bidirectional, self.batch_first)

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        """``hx`` with its batch (dim 1) reordered by ``permutation`` (None: unchanged): how a
        packed batch's given and final states follow its sorting by length."""
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    def _forward_packed(self, input: PackedSequence, hx: Any) -> tuple:
        """torch's forward of a ``PackedSequence``: zeros (for the largest batch) or the given
        states in the sorted order, the packed layers, then the final states back in the
        batch's order. torch checks the states' shapes for ``RNN``/``GRU``, not for ``LSTM``."""
        data, batch_sizes, sorted_indices, unsorted_indices = input
        directions = 2 if self.bidirectional else 1
        batch = int(batch_sizes[0])
        if hx is None:
            real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
            h = zeros(self.num_layers * directions, batch, real_hidden, dtype=data.dtype,
                      device=data.device)
            hx = h if self.mode != "LSTM" else (h, zeros(
                self.num_layers * directions, batch, self.hidden_size, dtype=data.dtype,
                device=data.device))
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        if self.mode != "LSTM":
            self.check_forward_args(data, hx, batch_sizes)
        output, hidden = _rnn_packed(self.mode, data, batch_sizes, hx, self._weights(),
                                     self.num_layers, self.dropout, self.training,
                                     self.bidirectional)
        return (PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices),
                self.permute_hidden(hidden, unsorted_indices))

    def extra_repr(self) -> str:
        """Sizes and the arguments that differ from their defaults, as shown in the repr.

        >>> import jaxgrad
        >>> jaxgrad.nn.LSTM(2, 4, num_layers=2, batch_first=True, proj_size=3)
        LSTM(2, 4, proj_size=3, num_layers=2, batch_first=True)
        """
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ``relu``),
    over (L, N, H_in) input ((N, L, H_in) with ``batch_first``, (L, H_in) unbatched); returns
    the top layer's outputs and the final hidden states of every layer and direction.

    >>> import jaxgrad
    >>> rnn = jaxgrad.nn.RNN(3, 4, num_layers=2, nonlinearity="relu")
    >>> rnn
    RNN(3, 4, num_layers=2)
    >>> out, h = rnn(jaxgrad.randn(5, 2, 3))
    >>> out.shape, h.shape
    (jaxgrad.Size([5, 2, 4]), jaxgrad.Size([2, 2, 4]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        """(output, h_n) of ``input`` from the initial state ``hx`` (zeros by default); a
        ``PackedSequence`` input gives a ``PackedSequence`` output."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        input, hx, batched = self._prepare(input, hx, "RNN")
        output, hidden = self._run(input, hx)
        if not batched:
            return output.squeeze(0 if self.batch_first else 1), hidden.squeeze(1)
        return output, hidden


class GRU(RNNBase):
    """Gated recurrent unit (reset, update and new gates, in torch's order), over (L, N, H_in)
    input ((N, L, H_in) with ``batch_first``, (L, H_in) unbatched).

    >>> import jaxgrad
    >>> gru = jaxgrad.nn.GRU(3, 4, bidirectional=True, batch_first=True)
    >>> out, h = gru(jaxgrad.randn(2, 5, 3))
    >>> out.shape, h.shape
    (jaxgrad.Size([2, 5, 8]), jaxgrad.Size([2, 2, 4]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        """(output, h_n) of ``input`` from the initial state ``hx`` (zeros by default); a
        ``PackedSequence`` input gives a ``PackedSequence`` output."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        input, hx, batched = self._prepare(input, hx, "GRU")
        output, hidden = self._run(input, hx)
        if not batched:
            return output.squeeze(0 if self.batch_first else 1), hidden.squeeze(1)
        return output, hidden


class LSTM(RNNBase):
    """Long short-term memory (input, forget, cell and output gates, in torch's order; with
    ``proj_size`` the hidden state is projected by ``weight_hr``), over (L, N, H_in) input.

    >>> import jaxgrad
    >>> lstm = jaxgrad.nn.LSTM(3, 4, num_layers=2)
    >>> out, (h, c) = lstm(jaxgrad.randn(5, 2, 3))
    >>> out.shape, h.shape, c.shape
    (jaxgrad.Size([5, 2, 4]), jaxgrad.Size([2, 2, 4]), jaxgrad.Size([2, 2, 4]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Any) -> tuple[int, int, int]:
        """(layers * directions, batch, hidden_size)."""
        batch = _batch_size(input, batch_sizes, self.batch_first)
        return (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: Any,  # type: ignore[override]
                           batch_sizes: Any) -> None:
        """The input's and both initial states' checks."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        """Both states with their batch (dim 1) reordered by ``permutation``."""
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input: Any,
                hx: tuple[Tensor, Tensor] | None = None) -> tuple[Any, tuple[Tensor, Tensor]]:
        """(output, (h_n, c_n)) of ``input`` from ``hx = (h_0, c_0)`` (zeros by default); a
        ``PackedSequence`` input gives a ``PackedSequence`` output."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        if input.dim() not in (2, 3):
            raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        if hx is None:
            real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
            hx = (self._zeros(input, real_hidden), self._zeros(input, self.hidden_size))
        else:
            rank = 3 if batched else 2
            if hx[0].dim() != rank or hx[1].dim() != rank:
                kind = "batched 3-D input" if batched else "unbatched 2-D input"
                raise RuntimeError(f"For {kind}, hx and cx should also be {rank}-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            if not batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx, None)
        output, (h, c) = self._run(input, hx)
        if not batched:
            return output.squeeze(0 if self.batch_first else 1), (h.squeeze(1), c.squeeze(1))
        return output, (h, c)


# --- the cells --------------------------------------------------------------------------------


class RNNCellBase(Module):
    """``weight_ih``, ``weight_hh`` (and ``bias_ih``, ``bias_hh``) of a single-step cell with
    ``num_chunks`` gates, from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

    >>> import jaxgrad
    >>> jaxgrad.nn.GRUCell(2, 3).weight_ih.shape
    jaxgrad.Size([9, 2])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), device=device,
                                         dtype=dtype))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size),
                                         device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        """Sizes, and ``bias``/``nonlinearity`` where not the default.

        >>> import jaxgrad
        >>> jaxgrad.nn.RNNCell(2, 3, bias=False, nonlinearity="relu")
        RNNCell(2, 3, bias=False, nonlinearity=relu)
        """
        s = f"{self.input_size}, {self.hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += f", bias={self.bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        """Every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _weights(self) -> tuple:
        return (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, None)

    def _batch(self, name: str, input: Tensor, hx: Any, hidden_name: str) -> tuple:
        """torch's rank checks, the batch dim added to unbatched input, zeros for no state."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        states = hx if isinstance(hx, tuple) else (hx,)
        for idx, value in enumerate(states):
            if value is not None and value.dim() not in (1, 2):
                label = f"hx[{idx}]" if isinstance(hx, tuple) else "hidden"
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {value.dim()}D "
                                 "instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            states = tuple(s if s is None else s.unsqueeze(0) for s in states)
        if self.input_size != input.size(1):
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                               f"expected {self.input_size}")
        for i, s in enumerate(states):
            if s is None:
                continue
            label = i if isinstance(hx, tuple) else 0
            if input.size(0) != s.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match "
                                   f"hidden{label} batch size {s.size(0)}")
            if s.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got "
                                   f"{s.size(1)}, expected {self.hidden_size}")
        return input, states, batched

    def _zeros(self, input: Tensor) -> Tensor:
        return zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ``relu``).

    >>> import jaxgrad
    >>> cell = jaxgrad.nn.RNNCell(3, 4)
    >>> cell(jaxgrad.randn(2, 3)).shape
    jaxgrad.Size([2, 4])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """The next hidden state from ``input`` and ``hx`` (zeros by default)."""
        input, (h,), batched = self._batch("RNNCell", input, hx, "hidden")
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        h = self._zeros(input) if h is None else h
        out = _simple_step(input, h, self._weights(), self.nonlinearity == "relu", False)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns ``(h', c')`` from ``input`` and ``hx = (h, c)``.

    >>> import jaxgrad
    >>> h, c = jaxgrad.nn.LSTMCell(3, 4)(jaxgrad.randn(3))
    >>> h.shape, c.shape
    (jaxgrad.Size([4]), jaxgrad.Size([4]))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input: Tensor,
                hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        """``(h', c')``; ``hx`` defaults to zeros."""
        input, states, batched = self._batch("LSTMCell", input,
                                             tuple(hx) if hx is not None else None, "hx")
        if hx is None:
            zero = self._zeros(input)
            states = (zero, zero)
        h, c = _lstm_step(input, states, self._weights(), False)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step from ``input`` and ``hx`` (zeros by default).

    >>> import jaxgrad
    >>> jaxgrad.nn.GRUCell(3, 4)(jaxgrad.randn(2, 3)).shape
    jaxgrad.Size([2, 4])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """The next hidden state."""
        input, (h,), batched = self._batch("GRUCell", input, hx, "hidden")
        h = self._zeros(input) if h is None else h
        out = _gru_step(input, h, self._weights(), False)
        return out if batched else out.squeeze(0)
