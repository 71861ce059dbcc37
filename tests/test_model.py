"""The network (model/): the encoder, each kind of attention, the decoder with and without
input feeding, and the size of a model's state."""

from __future__ import annotations

import itertools
import time

import pytest
import torch
from model_util import small, sources

from seq2attn_cli.config import ATTENTIONS, ModelConfig
from seq2attn_cli.model.attention import Attention
from seq2attn_cli.model.seq2seq import Seq2Seq, output_log_probs, state_size

ARCHITECTURES = list(itertools.product(("gru", "lstm"), (1, 2)))


@pytest.mark.parametrize("cell,layers", ARCHITECTURES)
def test_the_encoder_keeps_one_state_per_piece_whatever_the_padding(cell, layers):
    torch.manual_seed(0)
    encoder = Seq2Seq(small(cell=cell, layers=layers)).eval().encoder
    src, lengths = sources()
    src[torch.arange(7)[None] >= lengths[:, None]] = 0  # PAD after each sentence
    with torch.no_grad():
        states, final = encoder(src, lengths)
        for i, n in enumerate(lengths.tolist()):
            alone, alone_final = encoder(src[i : i + 1, :n], lengths[i : i + 1])
            assert torch.allclose(states[i, :n], alone[0], atol=1e-6)
            assert torch.allclose(final[:, i], alone_final[:, 0], atol=1e-6)
            assert not states[i, n:].any()  # padding has no state
    assert states.shape == (3, 7, 16)  # both directions: hidden // 2 each
    assert final.shape == (layers, 3, 16)
    # the summary is the forward direction's last real state and the backward's first
    assert torch.allclose(final[-1, 1, :8], states[1, 4, :8], atol=1e-6)
    assert torch.allclose(final[-1, 1, 8:], states[1, 0, 8:], atol=1e-6)


@pytest.mark.parametrize("kind", [k for k in ATTENTIONS if k != "none"])
def test_each_attention_weighs_the_real_source_pieces_and_sums_them(kind):
    torch.manual_seed(0)
    attention = Attention(kind=kind, hidden=16)
    keys, query = torch.randn(2, 5, 16), torch.randn(2, 3, 16)  # (batch, src, H), (batch, tgt, H)
    mask = torch.tensor([[True] * 5, [True, True, True, False, False]])
    with torch.no_grad():
        context, weights = attention(query, keys, mask)
    assert weights.shape == (2, 3, 5) and context.shape == (2, 3, 16)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 3))
    assert not weights[1, :, 3:].any()  # padding gets nothing
    assert torch.allclose(context, weights @ keys, atol=1e-6)  # the weighted sum of the states
    assert not torch.allclose(weights[0, 0], weights[0, 1])  # the query decides the weights


def test_without_attention_the_decoder_reads_one_vector_at_every_step():
    torch.manual_seed(0)
    model = Seq2Seq(small(attention="none")).eval()
    src, lengths = sources()
    with torch.no_grad():
        encoded = model.encode(src, lengths)
        _, weights = model(src, lengths, torch.randint(4, 40, (3, 4)))
    assert encoded.states.shape == (3, 1, 16) and encoded.mask.all()
    assert torch.equal(weights, torch.ones(3, 4, 1))  # weight 1 on the single context vector


@pytest.mark.parametrize("cell,input_feed", list(itertools.product(("gru", "lstm"), (False, True))))
def test_the_decoder_decodes_step_by_step_exactly_as_it_trains(cell, input_feed):
    torch.manual_seed(0)
    model = Seq2Seq(small(cell=cell, input_feed=input_feed)).eval()
    src, lengths = sources()
    tgt_in = torch.randint(4, 40, (3, 6))
    with torch.no_grad():
        logits, weights = model(src, lengths, tgt_in)  # teacher forcing, as in training
        encoded, steps = model.encode(src, lengths), []
        state = encoded.init
        for t in range(tgt_in.size(1)):
            log_probs, w, state = model.step(tgt_in[:, t], state, encoded)
            steps.append((log_probs, w))
    expected = output_log_probs(logits)
    for t, (log_probs, w) in enumerate(steps):
        assert torch.allclose(log_probs, expected[:, t], atol=1e-5), (cell, t)
        assert torch.allclose(w, weights[:, t], atol=1e-6), (cell, t)


def test_input_feeding_feeds_each_step_the_last_steps_attentional_vector():
    torch.manual_seed(0)
    model = Seq2Seq(small(input_feed=True)).eval()
    src, lengths = sources()
    prev = torch.randint(4, 40, (3,))
    with torch.no_grad():
        encoded = model.encode(src, lengths)
        assert not encoded.init.feed.any()  # nothing attended before the first step
        logits, _, state = model.decoder.step(prev, encoded.init, encoded.states, encoded.mask)
        # the vector fed to the next step is the one the output layer read
        assert torch.allclose(model.decoder.out(state.feed[0]), logits, atol=1e-6)
        fed = model.step(prev, state, encoded)[0]
        unfed = model.step(prev, state._replace(feed=torch.zeros_like(state.feed)), encoded)[0]
    assert not torch.allclose(fed, unfed)  # and the next step reads it


@pytest.mark.parametrize(
    "cell,layers,input_feed", list(itertools.product(("gru", "lstm"), (1, 2), (False, True)))
)
def test_the_decoder_state_holds_h_c_for_an_lstm_and_feed_with_input_feeding(
    cell, layers, input_feed
):
    model = Seq2Seq(small(cell=cell, layers=layers, input_feed=input_feed)).eval()
    src, lengths = sources()
    with torch.no_grad():
        encoded = model.encode(src, lengths)
        _, _, state = model.step(torch.randint(4, 40, (3,)), encoded.init, encoded)
    for s in (encoded.init, state):
        assert s.h.shape == (layers, 3, 16)
        assert (s.c is not None) == (cell == "lstm") and (s.c is None or s.c.shape == s.h.shape)
        assert (s.feed is not None) == input_feed
        assert s.feed is None or s.feed.shape == (1, 3, 16)


def test_state_size_counts_every_number_of_every_architecture():
    for cell, attention, layers, input_feed in itertools.product(
        ("gru", "lstm"), ATTENTIONS, (1, 2), (False, True)
    ):
        config = small(cell=cell, attention=attention, layers=layers, input_feed=input_feed)
        real = sum(t.numel() for t in Seq2Seq(config).state_dict().values())
        assert state_size(config) == real, (cell, attention, layers, input_feed)


def test_state_size_of_a_huge_config_allocates_nothing():
    # 3.1 trillion numbers (12 TB in float32): counted from shapes alone, on the meta device
    config = ModelConfig(src_vocab=10**7, tgt_vocab=10**7, embed=100_000, hidden=100_000)
    start = time.monotonic()
    assert state_size(config) == 3_145_021_400_000
    assert time.monotonic() - start < 10  # built for real, it would need 12 TB
