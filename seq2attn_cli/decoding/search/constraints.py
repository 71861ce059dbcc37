"""What both searches (greedy.py, beam.py) must keep to: no repeated runs, an end at the
length limit, never <unk>."""

from __future__ import annotations

import torch

from ...config import EOS, UNK
from ...model.seq2seq import Encoded, Seq2Seq

# A translation may not repeat a run of this many pieces (fairseq's --no-repeat-ngram-size).
# Looping is how this model fails on long news sentences: 758 of 3,000 newstest2013
# translations repeated a 3-word run (28 of the references). Banning 4-piece repeats:
# newstest2013 11.48 -> 11.89 BLEU, Multi30k val 44.53 -> 44.52, Tatoeba test 50.25 -> 50.22
# (3 pieces: 11.71; 6: 11.84); beam 5, int8, the embedded model of 2026-11-30.
NO_REPEAT = 4


def max_lengths(src_lengths: torch.Tensor, *, ratio: float = 2.0, extra: int = 10) -> torch.Tensor:
    """Longest output allowed for each source: a multiple of its length plus a margin."""
    return (src_lengths.float() * ratio).long() + extra  # (batch,)


def ban_repeats_(scores: torch.Tensor, history: torch.Tensor, n: int) -> torch.Tensor:
    """Set to -inf, in place, the next pieces that would repeat an n-gram of each row's history.

    scores: (..., vocab); history: (..., t). A row whose last n-1 pieces occurred before may
    not continue the way it did then. Only the banned entries are written, not a mask over
    the whole vocabulary: that mask cost 5% of beam-5 decoding (profiled on Tatoeba).
    """
    t = history.size(-1)
    if n < 2 or t < n:
        return scores
    last = history[..., t - n + 1 :]  # (..., n-1)
    starts = history[..., : t - 1].unfold(-1, n - 1, 1)  # (..., t-n+1, n-1)
    seen = (starts == last[..., None, :]).all(-1)  # (..., t-n+1)
    following = history[..., n - 1 :]  # (..., t-n+1): the piece that followed each
    where = seen.nonzero(as_tuple=True)  # one index tensor per dimension, each (bans,)
    scores[(*where[:-1], following[where])] = -float("inf")  # a piece banned twice: same value
    return scores


def end_at_limit_(scores: torch.Tensor, last: torch.Tensor) -> torch.Tensor:
    """Leave only </s> open, in place, in the rows at their last allowed step.

    scores: (rows, ..., vocab); last: (rows,). A translation cut at the length limit ends
    with </s> like any other (as in fairseq), so it has its </s> attention row too.
    """
    if last.any():
        others = torch.arange(scores.size(-1), device=scores.device) != EOS  # (vocab,)
        shape = (-1,) + (1,) * (scores.dim() - 1)
        scores.masked_fill_(last.view(shape) & others, -float("inf"))
    return scores


def search_step(model: Seq2Seq, prev: torch.Tensor, state, encoded: Encoded):
    """model.step for search: never <unk>, which prints as nothing and alignments counted as a
    word (the embedded model wrote it in 119 of 2,000 newstest2013 lines, e.g. for "(";
    BLEU 16.56 -> 16.52)."""
    step_lp, step_w, state = model.step(prev, state, encoded)  # (rows, vocab)
    step_lp[:, UNK] = -float("inf")
    return step_lp, step_w, state
