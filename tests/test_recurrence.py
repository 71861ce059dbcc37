"""The hand-written loops are the same networks as nn.GRU / nn.LSTM.

The input-feeding decoder's loop (model/recurrence.py) against torch's own modules one step at
a time (`rnn_step`, what decoding runs); the encoder's loop over packed sequences
(model/packed.py) against torch's module reading the same packed sequence. Outputs and every
gradient must agree, in fp32 to float rounding, and in bf16 as closely to fp32 as torch's own
modules do.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from seq2attn_cli.config import ModelConfig
from seq2attn_cli.model.packed import packed_rnn
from seq2attn_cli.model.seq2seq import Seq2Seq
from seq2attn_cli.training.run import bf16_helps

CONFIGS = list(itertools.product(("gru", "lstm"), ("general", "dot", "none"), (True,)))


def _model(cell: str, attention: str, input_feed: bool) -> Seq2Seq:
    torch.manual_seed(1)
    config = ModelConfig(src_vocab=50, tgt_vocab=40, embed=16, hidden=24, layers=1, cell=cell,
                         attention=attention, dropout=0.0, input_feed=input_feed)  # fmt: skip
    return Seq2Seq(config)


def _run(model: Seq2Seq, *, loop: bool, bf16: bool = False) -> list[torch.Tensor]:
    """h, attentional vectors, weights and every parameter's gradient, by either decoder path.

    The encoder is the same in both (packed.py's loop: grad is enabled on CPU).
    """
    torch.manual_seed(2)  # the same inputs for both paths
    lengths = torch.tensor([9, 4, 6, 2, 9])
    src, tgt_in = torch.randint(4, 50, (5, 9)), torch.randint(4, 40, (5, 7))
    src[torch.arange(9)[None] >= lengths[:, None]] = 0
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        encoded = model.encode(src, lengths)
        decoder = model.decoder
        if loop:
            h, attentional, weights, _ = decoder.run(
                tgt_in, encoded.init, encoded.states, encoded.mask
            )
        else:  # torch's own GRU/LSTM, one step at a time, as decoding runs it
            embedded = decoder.embedding(tgt_in)
            h, attentional, weights, _ = decoder._run_steps(
                embedded, encoded.init, encoded.states, encoded.mask
            )
        logits = decoder.out(attentional)
    # a loss that reads h, the attentional vectors (via the logits) and the weights
    loss = (logits.float() ** 2).mean() + (weights.float()[..., 0] ** 2).mean() + h.float().sum()
    grads = torch.autograd.grad(loss, list(model.parameters()), allow_unused=True)
    return [x.detach().float() for x in (h, attentional, weights)] + [
        torch.zeros_like(p) if g is None else g.float()
        for p, g in zip(model.parameters(), grads, strict=True)
    ]


def _worst(got: list[torch.Tensor], want: list[torch.Tensor]) -> float:
    """The largest difference, relative to each tensor's largest value."""
    return max(
        float((g - w).abs().max() / (w.abs().max() + 1e-12)) for g, w in zip(got, want, strict=True)
    )


@pytest.mark.parametrize("cell,attention,input_feed", CONFIGS)
def test_the_decoder_loop_is_the_step_by_step_decoder_in_value_and_gradient(
    cell, attention, input_feed
):
    model = _model(cell, attention, input_feed)
    got, want = _run(model, loop=True), _run(model, loop=False)
    assert _worst(got, want) < 1e-5


# where the CPU has no native bf16, s2a trains in fp32 (training/run.py's bf16_helps), and
# torch's own LSTM refuses bf16 there (oneDNN: "could not create a primitive descriptor")
NO_BF16 = pytest.mark.skipif(
    not bf16_helps(torch.device("cpu")), reason="this CPU has no native bf16: s2a uses fp32"
)


@NO_BF16
@pytest.mark.parametrize("cell,attention,input_feed", CONFIGS[::2])
def test_in_bf16_the_loop_is_as_close_to_fp32_as_torchs_own_modules(cell, attention, input_feed):
    model = _model(cell, attention, input_feed)
    exact = _run(model, loop=False)
    ours = _worst(_run(model, loop=True, bf16=True), exact)
    torchs = _worst(_run(model, loop=False, bf16=True), exact)
    assert ours < max(2 * torchs, 0.02), (ours, torchs)


def _run_packed(rnn: torch.nn.RNNBase, *, loop: bool, bf16: bool = False) -> list[torch.Tensor]:
    """Every state, the final states and every gradient of a packed batch in unsorted order."""
    torch.manual_seed(3)
    lengths = torch.tensor([3, 7, 1, 7, 5, 2])  # unsorted, with ties: packing sorts the rows
    x = torch.randn(6, 7, 6, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        states, final = packed_rnn(rnn, packed) if loop else rnn(packed)
        states, _ = pad_packed_sequence(states, batch_first=True)  # (rows, steps, 2 hidden)
    finals = final if isinstance(final, tuple) else (final,)
    weighting = [torch.randn(f.shape) for f in finals]  # every final row counts differently
    loss = (states.float() ** 2).sum()
    loss = loss + sum((f.float() * w).sum() for f, w in zip(finals, weighting, strict=True))
    grads = torch.autograd.grad(loss, [x, *rnn.parameters()])
    return [states.detach().float(), *(f.detach().float() for f in finals), *grads]


PACKED = list(itertools.product((torch.nn.GRU, torch.nn.LSTM), (1, 2)))


@pytest.mark.parametrize("kind,layers", PACKED)
def test_the_encoder_loop_is_torchs_packed_rnn_in_value_and_gradient(kind, layers):
    torch.manual_seed(1)
    rnn = kind(6, 5, num_layers=layers, batch_first=True, bidirectional=True)
    assert _worst(_run_packed(rnn, loop=True), _run_packed(rnn, loop=False)) < 1e-5


@pytest.mark.parametrize("kind,layers", PACKED)
def test_in_bf16_the_encoder_loop_is_as_close_to_fp32_as_torchs_own_module(kind, layers):
    torch.manual_seed(1)
    rnn = kind(6, 5, num_layers=layers, batch_first=True, bidirectional=True)
    exact = _run_packed(rnn, loop=False)
    ours = _worst(_run_packed(rnn, loop=True, bf16=True), exact)
    torchs = _worst(_run_packed(rnn, loop=False, bf16=True), exact)
    assert ours < max(2 * torchs, 0.02), (ours, torchs)


def test_training_on_cpu_runs_the_encoder_loop_and_translating_runs_torchs_module(monkeypatch):
    import seq2attn_cli.model.encoder as encoder

    calls = []
    monkeypatch.setattr(encoder, "packed_rnn", lambda rnn, packed: calls.append(1) or rnn(packed))
    model = _model("gru", "general", True)
    src, lengths = torch.randint(4, 50, (2, 5)), torch.tensor([5, 5])
    model.encode(src, lengths)
    assert calls == [1]
    with torch.no_grad():
        model.encode(src, lengths)
    assert calls == [1]


@pytest.mark.parametrize("kind", [torch.nn.GRU, torch.nn.LSTM])
def test_the_encoder_loop_is_torchs_for_one_direction_sorted_rows_of_one_length(kind):
    torch.manual_seed(1)
    rnn = kind(6, 5, batch_first=True)
    x = torch.randn(3, 4, 6)
    runs = []
    for loop in (True, False):
        packed = pack_padded_sequence(x, torch.tensor([4, 4, 4]), batch_first=True)
        states, final = packed_rnn(rnn, packed) if loop else rnn(packed)
        h = final if isinstance(final, torch.Tensor) else final[0]  # the encoder reads h only
        grads = torch.autograd.grad(h.sum(), list(rnn.parameters()))
        runs.append([states.data.detach(), h.detach(), *grads])
    assert _worst(*runs) < 1e-5
