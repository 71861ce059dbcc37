"""Decoding: what greedy and beam search (beam.py) share, and greedy search itself.

Both run a whole batch of sentences in one tensor (batched.py makes the batches), drop a
sentence from the batch as soon as it is finished, so the work per step shrinks as sentences
end, and keep every step's attention weights so heatmaps and alignments show exactly what
produced each translation.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

import torch

from ..config import BOS, EOS, PAD, UNK
from ..model.seq2seq import Encoded, Seq2Seq, select_encoded, select_state


@dataclass(frozen=True)
class Hypothesis:
    """One translation: output indices (EOS excluded), score, and attention per output step."""

    tokens: list[int]  # output-vocabulary indices; map with model.tgt_pieces
    score: float  # log-probability per piece (EOS included): length-normalised
    weights: list[array]  # (len(tokens) + 1) float32 rows over the source pieces (+ EOS row)
    # the beam's other finished hypotheses, best first (beam search only; none of their own),
    # without attention: 500 newstest2013 lines at beam 5 peaked at 520 MB with it, 450 without
    runners_up: list[Hypothesis] = field(default_factory=list)


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


def normalised(log_prob: float, length: int, alpha: float) -> float:
    """A hypothesis's score: its log-probability per piece, length**alpha as the divisor."""
    return log_prob / max(length, 1) ** alpha


def finish_hypothesis(
    tokens: torch.Tensor, weights: torch.Tensor | None, log_prob: float, length: int, alpha: float
) -> Hypothesis:
    """Build one hypothesis from its rows of the history tensors (weights None: keep none)."""
    toks = tokens[:length].tolist()
    if toks and toks[-1] == EOS:
        toks = toks[:-1]
    return Hypothesis(
        tokens=toks,
        score=normalised(log_prob, length, alpha),
        # float32 rows (4 bytes a weight, not a list's 8-byte pointer + 24-byte float): the
        # rows of a 512-line chunk are held at once; 2,000 newstest2013 lines, beam 5:
        # peak RSS 400-409 -> 380-385 MB (a #26 candidate, 1 thread), CPU time the same
        weights=[] if weights is None else [array("f", row) for row in weights[:length].tolist()],
    )


def search_step(model: Seq2Seq, prev: torch.Tensor, state, encoded: Encoded):
    """model.step for search: never <unk>, which prints as nothing and alignments counted as a
    word (the embedded model wrote it in 119 of 2,000 newstest2013 lines, e.g. for "(";
    BLEU 16.56 -> 16.52)."""
    step_lp, step_w, state = model.step(prev, state, encoded)  # (rows, vocab)
    step_lp[:, UNK] = -float("inf")
    return step_lp, step_w, state


@torch.inference_mode()
def greedy(
    model: Seq2Seq, encoded: Encoded, limits: torch.Tensor, *, no_repeat: int = NO_REPEAT
) -> list[Hypothesis]:
    """Pick the most probable piece at every step, for a whole batch at once."""
    own = encoded.mask.sum(1).tolist()  # each sentence's source length: its attention's width
    n, src_len = len(own), max(own)  # history columns: the longest source, not padded `width`
    device = encoded.mask.device
    longest, soonest = int(limits.max()), int(limits.min())
    tokens = torch.full((n, longest), PAD, dtype=torch.long, device=device)  # (n, longest)
    weights = torch.zeros(n, longest, src_len, device=device)  # (n, longest, src_len)
    log_probs = torch.zeros(n, device=device)
    lengths = torch.zeros(n, dtype=torch.long, device=device)
    alive = torch.arange(n, device=device)
    prev = torch.full((n,), BOS, dtype=torch.long, device=device)
    state = encoded.init
    for t in range(longest):
        step_lp, step_w, state = search_step(model, prev, state, encoded)  # (alive, vocab)
        if no_repeat and t >= no_repeat:
            ban_repeats_(step_lp, tokens[alive, :t], no_repeat)
        if t + 1 >= soonest:
            end_at_limit_(step_lp, t + 1 >= limits[alive])
        best_lp, best = step_lp.max(dim=-1)  # (alive,)
        tokens[alive, t] = best
        weights[alive, t] = step_w[:, :src_len].float()
        log_probs[alive] += best_lp
        lengths[alive] = t + 1
        keep = (best != EOS) & (t + 1 < limits[alive])
        if not keep.any():
            break
        if not keep.all():  # drop finished sentences from the batch
            index = keep.nonzero().squeeze(1)  # (still_alive,)
            alive, best = alive[index], best[index]
            state, encoded = select_state(state, index), select_encoded(encoded, index)
        prev = best
    return [
        finish_hypothesis(
            tokens[i], weights[i, :, : own[i]], float(log_probs[i]), int(lengths[i]), 1.0
        )
        for i in range(n)
    ]
