"""int8 inference on CPU whose output for a sentence never depends on the rest of its batch.

torch's dynamic quantisation scales each layer's input by the largest value in the whole
batch, so a sentence's translation changed with the lines beside it (39 of 2,000 test
lines). Here each layer's input scale is fixed, from a bound the model itself implies:
RNN states, tanh outputs and contexts (weighted sums of encoder states) lie in [-1, 1],
and an embedding never exceeds the largest value of its table. Weights are int8 per output
channel; the integer matmul is exact, so every row's result is the same in any batch.
The RNN runs its time loop here, on those layers (torch's int8 RNN has no fixed scale).
"""

from __future__ import annotations

import warnings

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from .seq2seq import Seq2Seq

# inputs become unsigned 7-bit codes around zero point 64: fbgemm's int16 sums never saturate
LEVELS = 63


def _quiet(op, *args):
    """Call a torch.ops.quantized op without its deprecation warnings (it works and pays)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return op(*args)


class Int8Linear(nn.Module):
    """y = W x + b with int8 W (per output channel) and x quantised on a fixed scale."""

    def __init__(self, *, weight: torch.Tensor, bias: torch.Tensor | None, bound: float) -> None:
        super().__init__()
        weight = weight.detach().float()
        scales = (weight.abs().amax(dim=1) / 127).clamp(min=1e-12).double()  # (out,)
        zeros = torch.zeros(weight.size(0), dtype=torch.long)
        qweight = _quiet(torch.quantize_per_channel, weight, scales, zeros, 0, torch.qint8)
        b = None if bias is None else bias.detach().float()
        self.packed = _quiet(torch.ops.quantized.linear_prepack, qweight, b)
        self.scale = max(bound, 1e-12) / LEVELS
        self.out_features = weight.size(0)

    @classmethod
    def of(cls, linear: nn.Linear, *, bound: float) -> Int8Linear:
        """The int8 version of a float Linear whose input never leaves [-bound, bound]."""
        return cls(weight=linear.weight, bias=linear.bias, bound=bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the layer to the last dimension of x."""
        rows = x.reshape(-1, x.size(-1)).float().contiguous()  # (rows, in)
        op = torch.ops.quantized.linear_with_input_q_dq_qweight_dq_output_fp32
        y = op(rows, self.scale, LEVELS + 1, self.packed)  # (rows, out)
        return y.view(*x.shape[:-1], self.out_features)  # (..., out)


class Int8Split(nn.Module):
    """W [x; feed] + b as two Int8Linear layers, each part of the input on its own bound."""

    def __init__(
        self, *, weight: torch.Tensor, bias: torch.Tensor, split: int, bounds: tuple[float, float]
    ) -> None:
        super().__init__()
        self.split = split
        self.first = Int8Linear(weight=weight[:, :split], bias=bias, bound=bounds[0])
        self.second = Int8Linear(weight=weight[:, split:], bias=None, bound=bounds[1])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the layer to the last dimension of x."""
        return self.first(x[..., : self.split]) + self.second(x[..., self.split :])


class Int8RNN(nn.Module):
    """A GRU or LSTM (batch_first, any layers, uni- or bidirectional) on Int8Linear layers."""

    def __init__(self, rnn: nn.GRU | nn.LSTM, *, input_bound: float, fed: int = 0) -> None:
        """`fed`: how many of the last input columns are a fed-back tanh output, in [-1, 1]."""
        super().__init__()
        self.lstm = isinstance(rnn, nn.LSTM)
        self.layers, self.hidden = rnn.num_layers, rnn.hidden_size
        self.directions = 2 if rnn.bidirectional else 1
        self.ih, self.hh = nn.ModuleList(), nn.ModuleList()
        for layer in range(self.layers):
            for direction in range(self.directions):
                name = f"_l{layer}" + ("_reverse" if direction else "")
                bound = input_bound if layer == 0 else 1.0  # later layers read RNN states
                weight, bias = getattr(rnn, "weight_ih" + name), getattr(rnn, "bias_ih" + name)
                if layer == 0 and fed:  # input feeding: [embedding; attentional vector]
                    split, bounds = weight.size(1) - fed, (bound, 1.0)
                    self.ih.append(Int8Split(weight=weight, bias=bias, split=split, bounds=bounds))
                else:
                    self.ih.append(Int8Linear(weight=weight, bias=bias, bound=bound))
                weight, bias = getattr(rnn, "weight_hh" + name), getattr(rnn, "bias_hh" + name)
                self.hh.append(Int8Linear(weight=weight, bias=bias, bound=1.0))

    def forward(self, x: torch.Tensor | PackedSequence, state=None):
        """As nn.GRU / nn.LSTM with batch_first=True: (outputs, final state)."""
        lengths = None
        if isinstance(x, PackedSequence):
            x, lengths = pad_packed_sequence(x, batch_first=True)  # (batch, T, in)
        if state is None:
            zeros = x.new_zeros(self.layers * self.directions, x.size(0), self.hidden)
            state = (zeros, zeros) if self.lstm else zeros
        h0, c0 = state if self.lstm else (state, state)
        reverse = None if self.directions == 1 else _reversal(lengths, x.shape[:2])
        finals_h, finals_c = [], []
        for layer in range(self.layers):
            outputs = []
            for d in range(self.directions):
                i = layer * self.directions + d
                seq = x if d == 0 else _take(x, reverse)  # (batch, T, in)
                out, c = self._run(i, seq, h0[i], c0[i])  # (batch, T, hidden)
                finals_h.append(_last(out, lengths))
                if self.lstm:
                    finals_c.append(_last(c, lengths))
                outputs.append(out if d == 0 else _take(out, reverse))
            x = torch.cat(outputs, dim=-1) if self.directions == 2 else outputs[0]
        h = torch.stack(finals_h)  # (layers * directions, batch, hidden)
        final = (h, torch.stack(finals_c)) if self.lstm else h
        if lengths is not None:
            x = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        return x, final

    def _run(self, i: int, seq: torch.Tensor, h: torch.Tensor, c: torch.Tensor):
        """One direction of one layer over every step: (outputs, cell states)."""
        gates_x = self.ih[i](seq)  # (batch, T, gates * hidden): all steps in one matmul
        size = self.hidden
        outputs, cells = [], []
        for t in range(seq.size(1)):
            gates = self.hh[i](h)  # (batch, gates * hidden)
            if self.lstm:
                gates = gates + gates_x[:, t]
                i_f = torch.sigmoid(gates[:, : 2 * size])  # input and forget gates
                c = torch.addcmul(
                    i_f[:, size:] * c, i_f[:, :size], torch.tanh(gates[:, 2 * size : 3 * size])
                )
                h = torch.sigmoid(gates[:, 3 * size :]) * torch.tanh(c)
                cells.append(c)
            else:  # r, z from both; n = tanh(x_n + r * h_n); h = (1 - z) * n + z * h
                r_z = torch.sigmoid(gates_x[:, t, : 2 * size] + gates[:, : 2 * size])
                n = torch.tanh(
                    torch.addcmul(gates_x[:, t, 2 * size :], r_z[:, :size], gates[:, 2 * size :])
                )
                h = torch.lerp(n, h, r_z[:, size:])
            outputs.append(h)
        if len(outputs) == 1:  # a decoding step: no stacking
            return outputs[0][:, None], (cells[0][:, None] if self.lstm else None)
        out = torch.stack(outputs, dim=1)  # (batch, T, hidden)
        return out, (torch.stack(cells, dim=1) if self.lstm else out)


def _reversal(lengths: torch.Tensor | None, shape: torch.Size) -> torch.Tensor:
    """For each row, the index of its steps reversed within its own length: (batch, T)."""
    batch, steps = shape
    t = torch.arange(steps)
    if lengths is None:
        return (steps - 1 - t).expand(batch, steps)
    return torch.where(t < lengths[:, None], lengths[:, None] - 1 - t, t)  # an involution


def _last(out: torch.Tensor, lengths: torch.Tensor | None) -> torch.Tensor:
    """Each row's output at its last real step: (batch, hidden)."""
    if lengths is None:
        return out[:, -1]
    return out[torch.arange(out.size(0)), lengths - 1]


def _take(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """x's steps in the order index gives, row by row: (batch, T, features)."""
    return x.gather(1, index.to(x.device)[..., None].expand_as(x))


def is_quantized(model: Seq2Seq) -> bool:
    """True for a model quantize() has swapped to int8."""
    return isinstance(model.decoder.out, Int8Linear)


def quantize(model: Seq2Seq) -> Seq2Seq:
    """Swap the Linear and RNN layers for int8 ones in place (CPU inference only)."""
    encoder, decoder, attention = model.encoder, model.decoder, model.decoder.attention
    bound = float(encoder.embedding.weight.detach().abs().max())
    encoder.rnn = Int8RNN(encoder.rnn, input_bound=bound)
    bound = float(decoder.embedding.weight.detach().abs().max())
    fed = decoder.rnn.hidden_size if decoder.input_feed else 0  # the attentional vector fed back
    # Not folded into a table of gates (embedding @ W_ih per piece, looked up): that saved 3%
    # of beam-5 time but cost vocabulary x 3 x hidden floats, 41 MB on 6,733 target pieces
    decoder.rnn = Int8RNN(decoder.rnn, input_bound=bound, fed=fed)
    model.bridge = Int8Linear.of(model.bridge, bound=1.0)  # reads RNN states
    decoder.combine = Int8Linear.of(decoder.combine, bound=1.0)  # [h_t; c_t]
    decoder.out = Int8Linear.of(decoder.out, bound=1.0)  # a tanh's output
    for name in ("W", "W_q", "W_k", "v"):  # states, encoder states, a tanh's output
        if hasattr(attention, name):
            setattr(attention, name, Int8Linear.of(getattr(attention, name), bound=1.0))
    return model
