"""Search: greedy and beam agree where they must, and return ranked, well-formed hypotheses."""

from __future__ import annotations

import itertools
import math

import torch
from model_util import small, sources

from seq2attn_cli.checkpoint import load_model
from seq2attn_cli.config import BOS, EOS
from seq2attn_cli.decoding.search import batched
from seq2attn_cli.decoding.search.batched import batches, translate_ids
from seq2attn_cli.decoding.search.beam import beam_search
from seq2attn_cli.decoding.search.constraints import NO_REPEAT, ban_repeats_, max_lengths
from seq2attn_cli.decoding.search.greedy import greedy
from seq2attn_cli.model.int8 import quantize
from seq2attn_cli.model.seq2seq import Seq2Seq, output_log_probs

_HAS_AMX = batched._has_amx  # the real check, before a test replaces it


def encode(model, subwords, texts):
    ids = [x + [3] for x in subwords.encode(texts)]
    lengths = torch.tensor([len(x) for x in ids])
    src = torch.zeros(len(ids), int(lengths.max()), dtype=torch.long)
    for i, x in enumerate(ids):
        src[i, : len(x)] = torch.tensor(x)
    return model.encode(src, lengths), lengths


TEXTS = ["je mange pain", "il voit grand chat rouge", "nous", "elle aime eau chien petit maison"]


def test_beam_of_one_equals_greedy(tiny_model):
    model, subwords, _ = load_model(tiny_model)
    encoded, lengths = encode(model, subwords, TEXTS)
    limits = max_lengths(lengths)
    g = greedy(model, encoded, limits)
    b = beam_search(model, encoded, limits, beam=1)
    for gh, (bh,) in zip(g, b, strict=True):
        assert gh.indices == bh.indices
        assert math.isclose(gh.score, bh.score, rel_tol=1e-5, abs_tol=1e-5)


def test_beams_come_finished_sorted_best_first_and_beat_greedy(tiny_model):
    model, subwords, _ = load_model(tiny_model)
    encoded, lengths = encode(model, subwords, TEXTS)
    limits = max_lengths(lengths)
    beams = beam_search(model, encoded, limits, beam=4)
    for hyps, limit in zip(beams, limits.tolist(), strict=True):
        scores = [h.score for h in hyps]
        assert scores == sorted(scores, reverse=True) and 1 <= len(hyps) <= 4
        best, *others = hyps  # it ended with </s>: one attention row more than pieces
        assert len(best.weights) == len(best.indices) + 1 <= limit
        assert all(len(h.indices) + 1 <= limit and not h.weights for h in others)
    for g, hyps in zip(greedy(model, encoded, limits), beams, strict=True):
        assert hyps[0].score >= g.score - 1e-5


def test_batching_does_not_change_translations(tiny_model):
    model, subwords, _ = load_model(tiny_model)
    ids = subwords.encode(TEXTS * 3)
    together = translate_ids(model, ids, beam=3, batch_size=64)
    alone = [translate_ids(model, [x], beam=3, batch_size=1)[0] for x in ids]
    assert [h.indices for h in together] == [h.indices for h in alone]
    runners_up = [[r.indices for r in h.runners_up] for h in together]
    assert runners_up == [[r.indices for r in h.runners_up] for h in alone]


def test_batches_searched_side_by_side_translate_as_one_thread_does(tiny_model):
    model, subwords, _ = load_model(tiny_model)
    ids = subwords.encode(TEXTS * 3)
    one = translate_ids(model, ids, beam=3, batch_size=4)
    three = translate_ids(model, ids, beam=3, batch_size=12, threads=3)  # 4 a batch, as one
    assert [(h.indices, h.score, h.weights) for h in three] == [
        (h.indices, h.score, h.weights) for h in one
    ]
    assert [[r.indices for r in h.runners_up] for h in three] == [
        [r.indices for r in h.runners_up] for h in one
    ]


def test_long_sentences_decode_in_smaller_batches_each_line_once():
    lengths = [5] * 40 + [30] * 40 + [60] * 40 + [200] * 40
    cut = batches(lengths, 32)
    assert sorted(i for batch in cut for i in batch) == list(range(len(lengths)))
    biggest = {n: max(len(b) for b in cut if lengths[b[0]] == n) for n in (5, 30, 60, 200)}
    assert biggest == {5: 32, 30: 32, 60: 16, 200: 4}  # widths 8, 32, 64, 256
    assert max(len(b) for b in batches([500, 600], 1)) == 1  # never fewer than one


def test_a_translation_carries_the_beams_runners_up_best_first(tiny_model):
    model, subwords, _ = load_model(tiny_model)
    ids = subwords.encode(TEXTS)
    found = translate_ids(model, ids, beam=4, batch_size=8)
    for hyp in found:
        scores = [hyp.score, *(r.score for r in hyp.runners_up)]
        assert scores == sorted(scores, reverse=True) and len(scores) <= 4
        assert not any(r.runners_up for r in hyp.runners_up)
        assert len(hyp.weights) == len(hyp.indices) + 1
        assert not any(r.weights for r in hyp.runners_up)  # only the best keeps its attention
    assert any(h.runners_up for h in found)
    assert not any(h.runners_up for h in translate_ids(model, ids, beam=1, batch_size=8))


def test_attention_rows_are_distributions_over_the_source(tiny_model):
    model, subwords, _ = load_model(tiny_model)
    for hyp, ids in zip(
        translate_ids(model, subwords.encode(TEXTS), beam=5, batch_size=2),
        subwords.encode(TEXTS),
        strict=True,
    ):
        assert len(hyp.weights) == len(hyp.indices) + 1  # one row per piece, plus </s>
        for row in hyp.weights:
            assert math.isclose(sum(row), 1.0, abs_tol=1e-3)
            assert all(w == 0 for w in row[len(ids) + 1 :])  # padding gets nothing


def test_output_length_is_bounded_by_the_source(tiny_model):
    model, subwords, _ = load_model(tiny_model)
    encoded, lengths = encode(model, subwords, TEXTS)
    limits = torch.ones_like(lengths) * 2
    for hyp in greedy(model, encoded, limits):
        assert len(hyp.indices) <= 1  # the last step allowed writes </s>


def test_a_translation_cut_at_the_length_limit_still_ends_with_its_eos_attention_row():
    torch.manual_seed(0)
    model = Seq2Seq(small()).eval()  # untrained: it would rarely write </s> by itself
    src, lengths = sources()
    encoded = model.encode(src, lengths)
    limits = torch.tensor([4, 6, 3])
    found = [[h] for h in greedy(model, encoded, limits)]
    found += beam_search(model, encoded, limits, beam=3)
    for hyps, limit in zip(found, limits.tolist() * 2, strict=True):
        assert len(hyps[0].weights) == len(hyps[0].indices) + 1 <= limit
        assert all(EOS not in h.indices and len(h.indices) + 1 <= limit for h in hyps)


def test_input_fed_beams_score_what_forced_decoding_of_them_scores():
    """Beams reorder the fed-back vector with the rest of their state, int8 or not."""
    ended = 0
    for cell, layers, attention, int8 in itertools.product(
        ("gru", "lstm"), (1, 2), ("general", "none"), (False, True)
    ):
        torch.manual_seed(1)
        config = small(cell=cell, layers=layers, attention=attention, input_feed=True)
        model = Seq2Seq(config).eval()
        with torch.no_grad():  # larger weights: the feed changes what the beams choose
            for p in model.parameters():
                p.mul_(3)
            model.decoder.out.bias[EOS] += 4  # and some beams end before the length limit
        model = quantize(model) if int8 else model
        src, lengths = sources()
        encoded = model.encode(src, lengths)
        beams = beam_search(model, encoded, max_lengths(lengths), beam=4, no_repeat=0)
        for i, hyps in enumerate(beams):
            for h in hyps:
                tgt = torch.tensor([[BOS, *h.indices]])  # (1, len + 1)
                with torch.no_grad():
                    logits, _ = model(src[i : i + 1, : lengths[i]], lengths[i : i + 1], tgt)
                forced = output_log_probs(logits)[0]  # (len + 1, vocab)
                pieces = h.indices + [EOS]  # every beam ends with </s>, at the limit too
                expected = sum(float(forced[t, p]) for t, p in enumerate(pieces)) / len(pieces)
                assert math.isclose(h.score, expected, abs_tol=1e-4), (cell, layers, attention)
                ended += len(pieces) < int(max_lengths(lengths)[i])  # ended before the limit
    assert ended > 0


def test_the_best_beam_keeps_the_attention_of_its_own_steps():
    """Beams are reordered at every step; the attention shown is still that of the
    translation's own steps, as forced decoding of it gives."""
    longer = 0
    for cell, int8 in itertools.product(("gru", "lstm"), (False, True)):
        torch.manual_seed(2)
        model = Seq2Seq(small(cell=cell, input_feed=True)).eval()
        with torch.no_grad():  # sharper attention, so that beams attend differently
            for p in model.parameters():
                p.mul_(3)
        model = quantize(model) if int8 else model
        src, lengths = sources()
        beams = beam_search(model, model.encode(src, lengths), max_lengths(lengths), beam=4)
        for i, hyps in enumerate(beams):
            best = hyps[0]
            tgt = torch.tensor([[BOS, *best.indices]])  # (1, len + 1)
            with torch.no_grad():
                _, weights = model(src[i : i + 1, : lengths[i]], lengths[i : i + 1], tgt)
            got = torch.tensor(best.weights)  # (len + 1, source length)
            longer += len(best.indices) > 3
            assert torch.allclose(got, weights[0], atol=1e-5), (cell, i)
    assert longer > 4  # translations long enough for the beams to have been reordered


def _repeated(indices: list[int], n: int) -> bool:
    grams = [tuple(indices[i : i + n]) for i in range(len(indices) - n + 1)]
    return len(grams) != len(set(grams))


def test_repeats_bans_the_piece_that_would_repeat_an_ngram():
    history = torch.tensor([[5, 6, 7, 5, 6], [5, 6, 7, 8, 9]])  # only row 0 ends as it began
    scores = ban_repeats_(torch.zeros(2, 10), history, 3)
    assert (scores[0] == -math.inf).nonzero().flatten().tolist() == [7]
    assert (scores[1] == 0).all()
    twice = torch.tensor([[5, 6, 8, 6, 5]])  # 6 followed 5 (banned) and followed 8 (not)
    assert (ban_repeats_(torch.zeros(1, 10), twice, 2) == -math.inf).nonzero()[:, 1].tolist() == [6]


def test_no_repeat_translations_never_repeat_a_run_of_pieces(tiny_model):
    model, subwords, _ = load_model(tiny_model)
    with torch.no_grad():  # a model stuck on one piece: it says "X X X ..." to the limit
        model.decoder.out.bias[5] = 100.0
    ids = subwords.encode(TEXTS)
    for beam in (1, 4):
        stuck = translate_ids(model, ids, beam=beam, batch_size=8, no_repeat=0)
        assert all(_repeated(hyp.indices, 2) for hyp in stuck)
        for hyp in translate_ids(model, ids, beam=beam, batch_size=8, no_repeat=2):
            assert not _repeated(hyp.indices, 2), hyp.indices
        for hyp in translate_ids(model, ids, beam=beam, batch_size=8):  # s2a's default
            assert not _repeated(hyp.indices, NO_REPEAT), hyp.indices


def test_two_threads_search_two_batches_side_by_side_but_one_inside_the_ops_with_amx(monkeypatch):
    before = torch.get_num_threads()
    try:
        monkeypatch.setattr(batched, "_has_amx", lambda: False)
        assert (batched.side_by_side(2), torch.get_num_threads()) == (2, 1)
        monkeypatch.setattr(batched, "_has_amx", lambda: True)
        assert (batched.side_by_side(2), torch.get_num_threads()) == (1, 2)
        monkeypatch.delattr(torch.cpu, "_is_amx_tile_supported", raising=False)
        monkeypatch.setattr(batched, "_has_amx", _HAS_AMX)  # torch without the check: no AMX
        assert (batched.side_by_side(2), torch.get_num_threads()) == (2, 1)
    finally:
        torch.set_num_threads(before)


def test_threads_0_means_the_cores_however_often_a_translator_is_loaded(monkeypatch):
    before = torch.get_num_threads()
    try:
        monkeypatch.setattr(batched, "TORCH_THREADS", 2)  # s2a serve --compare loads two
        monkeypatch.setattr(batched, "_has_amx", lambda: False)
        assert [batched.side_by_side(0) for _ in range(2)] == [2, 2]
        monkeypatch.setattr(batched, "_has_amx", lambda: True)
        assert [batched.side_by_side(0) for _ in range(2)] == [1, 1]
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
