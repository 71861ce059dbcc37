"""The encoder's RNN over packed sequences, with a hand-written backward, for training on CPU.

torch's CPU nn.GRU/nn.LSTM runs a packed sequence as one autograd op per step, each reading a
slice of the input projection of all steps; in the backward every slice's gradient becomes a
zero-filled tensor of the whole projection, added to the rest: work that grows with the
square of the length. On the real mix (Europarl sentences of up to 150 pieces) that was a
quarter of a training step (encoder forward + backward 165 of 654 ms; `add_` of whole
projections 41 ms and `fill_` 9 ms of it; AVX-512 BF16 host, 1 thread, bf16 autocast).

Here each direction of each layer is one autograd node, as the decoder's loop in
recurrence.py: the input projection of every step is one matmul before the loop, the steps
run on the rows still reading (rows sorted by length, as packing leaves them), and the
backward computes every weight gradient as one matmul over all steps. The weights stay
nn.GRU/nn.LSTM's own, so models load, quantize and translate as before; decoding keeps
torch's module (its C++ loop has no backward to pay for).
"""

from __future__ import annotations

import itertools
from typing import Any

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence

from .cells import CELLS, RNNState, Tensors, cell_of
from .recurrence import _back, _mm, _weight_grad, compute_dtype

_PARAMETERS = ("weight_ih", "bias_ih", "weight_hh", "bias_hh")  # per layer and direction


class _PackedRecurrence(torch.autograd.Function):
    """One direction of one layer over packed sequences: (every step's h, final state)."""

    @staticmethod
    def forward(ctx, cell: str, gi, sizes: list[int], reverse: bool, w_hh, b_hh, *init):
        # gi: (tokens, gates * hidden), time-major as packed; sizes: rows reading each step
        # (packed.batch_sizes); init: each (rows, hidden)
        Cell, dt = CELLS[cell], compute_dtype(w_hh)
        ctx.set_materialize_grads(False)
        ctx.dtypes = (gi.dtype, w_hh.dtype)
        starts = list(itertools.accumulate(sizes, initial=0))[:-1]  # where each step begins
        steps = list(zip(starts, sizes, strict=True))[:: -1 if reverse else 1]  # (start, rows)
        with torch.autocast(gi.device.type, enabled=False):
            w, b = w_hh.detach().to(dt), b_hh.detach().to(dt)
            gi, init = gi.float(), tuple(s.float() for s in init)
            live, done = tuple(s[:0] for s in init), []
            read, saved, outputs = {}, {}, {}  # by step start: packed order whatever the direction
            for start, n in steps:
                live = _resize(live, n, init, done)  # the rows reading this step
                read[start] = live[0]
                gh = _mm(live[0], w.t(), b)  # (n, gates * hidden)
                live, saved[start] = Cell.forward(gi[start : start + n], gh, live)
                outputs[start] = live[0]
            saved = tuple(torch.cat(kind) for kind in zip(*_in_order(saved), strict=True))
            ctx.factors = Cell.factors(saved)  # each (tokens, .)
        ctx.cell, ctx.w, ctx.steps = Cell, w, steps
        ctx.save_for_backward(torch.cat(_in_order(read)))  # (tokens, hidden): the h each read
        return (torch.cat(_in_order(outputs)), *_finish(live, done))  # (tokens, H), (rows, H)

    @staticmethod
    def backward(ctx, d_out, *d_final):
        (h_read,) = ctx.saved_tensors
        Cell, w, f = ctx.cell, ctx.w, ctx.factors
        zeros = h_read.new_zeros(max(n for _, n in ctx.steps), h_read.size(1))  # (rows, hidden)
        d_init = tuple(zeros if d is None else d.float() for d in d_final)
        d_out = None if d_out is None else d_out.float()
        live, done = tuple(d[:0] for d in d_init), []
        dgi = h_read.new_empty(h_read.size(0), w.size(0))  # (tokens, gates * hidden)
        dgh = torch.empty_like(dgi)
        for start, n in reversed(ctx.steps):
            live = _resize(live, n, d_init, done)
            now = slice(start, start + n)
            if d_out is not None:
                live = (live[0] + d_out[now], *live[1:])
            dgi[now], dgh[now], to_prev = Cell.backward(live, tuple(x[now] for x in f))
            live = (to_prev[0] + _back(dgh[now], w), *to_prev[1:])
        ctx.factors = ctx.w = None
        d_w = _weight_grad(dgh, h_read, w.dtype).to(ctx.dtypes[1])  # (gates * hidden, hidden)
        d_b = dgh.sum(0).to(ctx.dtypes[1])
        return (None, dgi.to(ctx.dtypes[0]), None, None, d_w, d_b, *_finish(live, done))


def _in_order(by_start: dict[int, Any]) -> list[Any]:
    """Each step's values in packed (time-major) order, whichever way the steps ran."""
    return [by_start[start] for start in sorted(by_start)]


def _resize(live: Tensors, n: int, init: Tensors, done: list[Tensors]) -> Tensors:
    """The state of the first n rows: rows past n leave for `done`, rows joining start from init."""
    # rows are sorted by length: only a step where sentences end (or, read backwards, begin)
    # copies anything
    have = live[0].size(0)
    if n < have:
        done.append(tuple(s[n:] for s in live))
        return tuple(s[:n] for s in live)
    if n > have:
        return tuple(torch.cat([s, i[have:n]]) for s, i in zip(live, init, strict=True))  # (n, H)
    return live


def _finish(live: Tensors, done: list[Tensors]) -> Tensors:
    """Every row's last state: the rows still live, then those that left, back in row order."""
    if not done:
        return live
    left = zip(*done[::-1], strict=True)  # per state tensor: the parts that left, in row order
    return tuple(torch.cat([s, *parts]) for s, parts in zip(live, left, strict=True))  # (rows, H)


def packed_rnn(rnn: nn.RNNBase, packed: PackedSequence) -> tuple[PackedSequence, RNNState]:
    """What `rnn(packed)` returns (zero initial state), computed by _PackedRecurrence."""
    cell, sizes = cell_of(rnn), packed.batch_sizes.tolist()
    x, finals = packed.data, []  # x: (tokens, features)
    for layer in range(rnn.num_layers):
        if layer:
            x = nn.functional.dropout(x, rnn.dropout, rnn.training)
        outputs = []
        for suffix in ("", "_reverse")[: 1 + rnn.bidirectional]:
            w_ih, b_ih, w_hh, b_hh = (getattr(rnn, f"{k}_l{layer}{suffix}") for k in _PARAMETERS)
            zeros = x.new_zeros(sizes[0], rnn.hidden_size, dtype=torch.float32)  # (rows, hidden)
            init = [zeros] * (1 + (cell == "lstm"))  # h, and c for an LSTM
            out, *final = _PackedRecurrence.apply(
                cell, nn.functional.linear(x, w_ih, b_ih), sizes, bool(suffix), w_hh, b_hh, *init
            )  # fmt: skip
            outputs.append(out)
            finals.append(final)
        x = torch.cat(outputs, dim=1)  # (tokens, directions * hidden)
    # per state tensor: (layers * directions, rows, hidden), back in the caller's row order
    final = [torch.stack(kind) for kind in zip(*finals, strict=True)]
    if packed.unsorted_indices is not None:
        final = [s.index_select(1, packed.unsorted_indices) for s in final]
    states = PackedSequence(x, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
    return states, (final[0] if cell == "gru" else tuple(final))
