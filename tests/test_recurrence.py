"""The fast training loops (model/recurrence.py) are the same network as nn.GRU / nn.LSTM.

Each test runs the same weights twice: through the hand-written loops, and through torch's
own modules (a packed nn.GRU/nn.LSTM for the encoder, `rnn_step` one step at a time for the
decoder: what decoding runs). Outputs and every gradient must agree, in fp32 to float
rounding, and in bf16 as closely to fp32 as torch's own modules do.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from seq2attn_cli.config import ModelConfig
from seq2attn_cli.model.recurrence import rnn_over
from seq2attn_cli.model.seq2seq import Seq2Seq


@pytest.mark.parametrize(
    "cell,bidirectional,layers",
    [(c, b, n) for c in (nn.GRU, nn.LSTM) for b, n in ((True, 2), (False, 1))],
)
def test_the_loop_is_nn_rnn_over_padded_rows_in_value_and_gradient(cell, bidirectional, layers):
    torch.manual_seed(0)
    rnn = cell(8, 6, num_layers=layers, batch_first=True, bidirectional=bidirectional)
    x = torch.randn(4, 7, 8, requires_grad=True)
    lengths = torch.tensor([7, 3, 5, 1])
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    out, final = rnn(packed)
    want, _ = pad_packed_sequence(out, batch_first=True, total_length=7)
    want_final = final if isinstance(final, tuple) else (final,)
    zeros = torch.zeros(layers * (2 if bidirectional else 1), 4, 6)
    got, got_final = rnn_over(rnn, x, (zeros,) * len(want_final), lengths)

    assert torch.allclose(got, want, atol=1e-6)
    for g, w in zip(got_final, want_final, strict=True):
        assert torch.allclose(g, w, atol=1e-6)
    assert _grads(rnn, x, got, got_final) == pytest.approx(
        _grads(rnn, x, want, want_final), abs=1e-5
    )


def _grads(rnn: nn.Module, x: torch.Tensor, out: torch.Tensor, final: tuple) -> list[float]:
    """Every gradient of a loss that reads all outputs and the final states, flattened."""
    loss = (out**2).sum() + sum((f**3).sum() for f in final)
    grads = torch.autograd.grad(loss, [x, *rnn.parameters()], retain_graph=True)
    return torch.cat([g.flatten() for g in grads]).tolist()


CONFIGS = list(itertools.product(("gru", "lstm"), ("general", "dot", "none"), (True, False)))


def _model(cell: str, attention: str, input_feed: bool) -> Seq2Seq:
    torch.manual_seed(1)
    config = ModelConfig(src_vocab=50, tgt_vocab=40, embed=16, hidden=24, layers=1, cell=cell,
                         attention=attention, dropout=0.0, input_feed=input_feed)  # fmt: skip
    return Seq2Seq(config)


def _run(model: Seq2Seq, *, loop: bool, bf16: bool = False) -> list[torch.Tensor]:
    """h, attentional vectors, weights and every parameter's gradient, by either decoder path.

    The encoder is the loop in both (the test above holds it to nn.GRU / nn.LSTM).
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


@pytest.mark.parametrize("cell,attention,input_feed", CONFIGS[::3])
def test_in_bf16_the_loop_is_as_close_to_fp32_as_torchs_own_modules(cell, attention, input_feed):
    model = _model(cell, attention, input_feed)
    exact = _run(model, loop=False)
    ours = _worst(_run(model, loop=True, bf16=True), exact)
    torchs = _worst(_run(model, loop=False, bf16=True), exact)
    assert ours < max(2 * torchs, 0.02), (ours, torchs)
