"""The input-feeding loop (model/recurrence.py) is the same network as nn.GRU / nn.LSTM.

Each test runs the same weights twice: through the hand-written loop, and through torch's own
modules one step at a time (`rnn_step`, what decoding runs). Outputs and every gradient must
agree, in fp32 to float rounding, and in bf16 as closely to fp32 as torch's own modules do.
"""

from __future__ import annotations

import itertools

import pytest
import torch

from seq2attn_cli.config import ModelConfig
from seq2attn_cli.model.seq2seq import Seq2Seq

CONFIGS = list(itertools.product(("gru", "lstm"), ("general", "dot", "none"), (True,)))


def _model(cell: str, attention: str, input_feed: bool) -> Seq2Seq:
    torch.manual_seed(1)
    config = ModelConfig(src_vocab=50, tgt_vocab=40, embed=16, hidden=24, layers=1, cell=cell,
                         attention=attention, dropout=0.0, input_feed=input_feed)  # fmt: skip
    return Seq2Seq(config)


def _run(model: Seq2Seq, *, loop: bool, bf16: bool = False) -> list[torch.Tensor]:
    """h, attentional vectors, weights and every parameter's gradient, by either decoder path.

    The encoder is torch's packed nn.GRU / nn.LSTM in both.
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


@pytest.mark.parametrize("cell,attention,input_feed", CONFIGS[::2])
def test_in_bf16_the_loop_is_as_close_to_fp32_as_torchs_own_modules(cell, attention, input_feed):
    model = _model(cell, attention, input_feed)
    exact = _run(model, loop=False)
    ours = _worst(_run(model, loop=True, bf16=True), exact)
    torchs = _worst(_run(model, loop=False, bf16=True), exact)
    assert ours < max(2 * torchs, 0.02), (ours, torchs)
