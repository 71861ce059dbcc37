"""Decoding: greedy and beam search, batched over sentences and beams in one tensor.

Both drop a sentence from the batch as soon as it is finished, so the work per step
shrinks as sentences end, and both keep every step's attention weights so heatmaps and
alignments show exactly what produced each translation.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field, replace

import torch
from torch import nn

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

# A batch's memory grows with its sentences times their width (encoder states, attention
# history), so wider sources decode in proportionally smaller batches: 2,000 newstest2013
# lines peaked at 394 MB instead of 416 in the same CPU time (6,736 target pieces, beam 5)
FULL_WIDTH = 32


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


def _finish(
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


def _step(model: Seq2Seq, prev: torch.Tensor, state, encoded: Encoded):
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
        step_lp, step_w, state = _step(model, prev, state, encoded)  # (alive, vocab)
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
        _finish(tokens[i], weights[i, :, : own[i]], float(log_probs[i]), int(lengths[i]), 1.0)
        for i in range(n)
    ]


@torch.inference_mode()
def beam_search(
    model: Seq2Seq,
    encoded: Encoded,
    limits: torch.Tensor,
    *,
    beam: int,
    alpha: float = 1.0,
    no_repeat: int = NO_REPEAT,
) -> list[list[Hypothesis]]:
    """Beam search for a batch of sentences; returns each sentence's finished beams, best first
    (only the best with its attention weights).

    A sentence is done once its best finished beam scores at least as well as any live
    beam would if it ended at the next step. On Tatoeba, waiting for every beam to end was
    17% slower for 0.03 BLEU more; stopping when the top beam ends (OpenNMT-py) lost 0.45.
    """
    own = encoded.mask.sum(1).tolist()  # each sentence's source length: its attention's width
    n, src_len = len(own), max(own)  # history columns: the longest source, not padded `width`
    device = encoded.mask.device
    k, inf = beam, float("inf")
    longest, soonest = int(limits.max()), int(limits.min())
    expand = torch.arange(n, device=device).repeat_interleave(k)  # (n * k,)
    state = select_state(encoded.init, expand)  # k beams per sentence; states stay one each
    scores = torch.full((n, k), -inf, device=device)  # (n, k)
    scores[:, 0] = 0.0  # all beams start equal: only the first may expand at step 0
    finished = torch.zeros(n, k, dtype=torch.bool, device=device)  # (n, k)
    lengths = torch.zeros(n, k, dtype=torch.long, device=device)  # (n, k)
    tokens = torch.full((n, k, longest), PAD, dtype=torch.long, device=device)  # (n, k, T)
    # each step's attention stays where it was written, with a pointer to the beam it extends:
    # copying the whole history at every step, as tokens are, cost 5-8% of the CPU time
    # (2,000 newstest2013 lines, beam 5: 31.0-31.9 -> 28.5-29.9 s, training beside)
    weights = torch.zeros(n, k, longest, src_len, device=device)  # (n, k, T, src_len)
    origins = torch.zeros(n, k, longest, dtype=torch.long, device=device)  # (n, k, T)
    prev = torch.full((n * k,), BOS, dtype=torch.long, device=device)
    alive = torch.arange(n, device=device)  # sentence numbers still in the batch
    results: list[list[Hypothesis]] = [[] for _ in range(n)]
    for t in range(longest):
        m = alive.numel()
        step_lp, step_w, state = _step(model, prev, state, encoded)  # (m * k, vocab)
        vocab = step_lp.size(-1)
        last = t + 1 >= limits[alive] if t + 1 >= soonest else None  # (m,) at their limit
        candidates = _candidates(step_lp, scores, finished, tokens[:, :, :t], last, no_repeat)
        scores, flat = candidates.view(m, k * vocab).topk(k, dim=-1)  # (m, k) best first
        origin, token = flat // vocab, flat % vocab  # (m, k) beam each came from, its piece
        was_finished = finished.gather(1, origin)  # (m, k)
        finished = was_finished | (token == EOS)
        lengths = lengths.gather(1, origin) + (~was_finished).long()
        tokens = tokens.gather(1, origin[..., None].expand_as(tokens))  # (m, k, T)
        tokens[:, :, t] = token
        rows = (torch.arange(m, device=device)[:, None] * k + origin).view(-1)  # (m * k,)
        step_w = step_w[:, :src_len].index_select(0, rows).view(m, k, -1)  # (m, k, src_len)
        weights[alive, :, t] = step_w.float() * (~was_finished)[..., None]
        origins[alive, :, t] = origin
        state = select_state(state, rows)
        done = _settled(scores, lengths, finished, alpha) | (t + 1 >= limits[alive])  # (m,)
        for row in done.nonzero().squeeze(1).tolist():
            i = int(alive[row])
            history = _traced(weights[i, :, : t + 1, : own[i]], origins[i, :, : t + 1].tolist())
            results[i] = _ranked(
                tokens[row], history, scores[row], lengths[row], finished[row], alpha
            )
        if done.all():
            break
        prev = token.view(-1)
        if done.any():  # drop finished sentences from the batch
            keep = (~done).nonzero().squeeze(1)  # (m_next,)
            rows = (keep[:, None] * k + torch.arange(k, device=device)).view(-1)  # (m_next * k,)
            alive, scores, finished, lengths, tokens = (
                x[keep] for x in (alive, scores, finished, lengths, tokens)
            )
            prev, state, encoded = (
                prev[rows],
                select_state(state, rows),
                select_encoded(encoded, keep),
            )
    return results


def _settled(
    scores: torch.Tensor, lengths: torch.Tensor, finished: torch.Tensor, alpha: float
) -> torch.Tensor:
    """(m,) True where a finished beam beats any live beam ending next; (m, k) inputs."""
    inf = float("inf")
    ended = torch.where(finished, scores / lengths.clamp(min=1) ** alpha, -inf)  # (m, k)
    if_ended_next = torch.where(finished, -inf, scores / (lengths + 1) ** alpha)  # (m, k)
    return ended.amax(1) >= if_ended_next.amax(1)


def _candidates(
    step_lp: torch.Tensor,
    scores: torch.Tensor,
    finished: torch.Tensor,
    history: torch.Tensor,
    last: torch.Tensor | None,
    no_repeat: int,
) -> torch.Tensor:
    """Score of every (beam, next piece) pair: banned repeats, and pieces past a limit, -inf.

    step_lp: (m * k, vocab); scores, finished: (m, k); history: (m, k, t); last: (m,) or None.
    A finished beam may only extend with PAD, keeping its score.
    """
    m, k = scores.shape
    candidates = scores[..., None] + step_lp.view(m, k, -1)  # (m, k, vocab)
    if no_repeat and history.size(-1) >= no_repeat:
        ban_repeats_(candidates, history, no_repeat)
    if last is not None:  # before finished beams get PAD back
        end_at_limit_(candidates, last)
    if finished.any():
        candidates.masked_fill_(finished[..., None], -float("inf"))
        candidates[..., PAD] = torch.where(finished, scores, candidates[..., PAD])
    return candidates


def _traced(weights: torch.Tensor, origins: list[list[int]]) -> torch.Tensor:
    """Each final beam's attention history, followed back through the beams it extended.

    weights: (k, steps, src_len), row [j, s] written for beam j of step s; origins[j][s]:
    the beam of step s - 1 that beam j of step s extended. Returns (k, steps, src_len).
    """
    k, steps = len(origins), len(origins[0])
    path = [[0] * steps for _ in range(k)]
    for j in range(k):  # plain lists: a tensor op per step cost ~1 ms a sentence
        beam = j
        for step in range(steps - 1, -1, -1):
            path[j][step] = beam
            beam = origins[beam][step]
    at = torch.tensor(path, device=weights.device)  # (k, steps): the beam each was at
    return weights[at, torch.arange(steps, device=weights.device)]  # (k, steps, src_len)


def _ranked(
    tokens: torch.Tensor,
    weights: torch.Tensor,
    scores: torch.Tensor,
    lengths: torch.Tensor,
    finished: torch.Tensor,
    alpha: float,
) -> list[Hypothesis]:
    """One sentence's finished beams (every beam if none finished), best score first; only
    the best keeps its attention."""
    done = [b for b, f in enumerate(finished.tolist()) if f] or range(len(finished))
    totals, sizes = scores.tolist(), lengths.tolist()
    ranked = sorted(
        (b for b in done if totals[b] > float("-inf")),
        key=lambda b: normalised(totals[b], sizes[b], alpha),
        reverse=True,
    )
    return [
        _finish(tokens[b], weights[b] if rank == 0 else None, totals[b], sizes[b], alpha)
        for rank, b in enumerate(ranked)
    ]


def width(length: int) -> int:
    """Attention width for a source of `length` pieces: the next power of two, at least 8.

    Matmuls and softmaxes over rows of different widths round differently, so a sentence
    padded to the longest of its batch got attention that changed with its neighbours.
    """
    return max(8, 1 << (length - 1).bit_length())


def batches(lengths: list[int], batch_size: int) -> list[list[int]]:
    """Indices by increasing length, cut into batches of one attention width each, with
    `batch_size` sentences of up to FULL_WIDTH pieces and proportionally fewer wider ones."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    out: list[list[int]] = []
    for i in order:
        room = max(1, batch_size * FULL_WIDTH // max(FULL_WIDTH, width(lengths[i])))
        if not out or len(out[-1]) >= room or width(lengths[out[-1][0]]) != width(lengths[i]):
            out.append([])
        out[-1].append(i)
    return out


def padded(encoded: Encoded, size: int) -> Encoded:
    """Encoder states and mask padded with zeros and False to `size` source positions."""
    extra = size - encoded.mask.size(1)
    if extra <= 0 or encoded.states.size(1) == 1:  # attention "none": one state, no padding
        return encoded
    states = nn.functional.pad(encoded.states, (0, 0, 0, extra))  # (batch, size, hidden)
    mask = nn.functional.pad(encoded.mask, (0, extra), value=False)  # (batch, size)
    return Encoded(states=states, mask=mask, init=encoded.init)


def translate_ids(
    model: Seq2Seq,
    src_ids: list[list[int]],
    *,
    beam: int,
    batch_size: int,
    eos: int = EOS,
    no_repeat: int = NO_REPEAT,
) -> list[Hypothesis]:
    """Translate id sequences, returning hypotheses in input order, each with its runners-up.

    A sentence's hypothesis does not depend on the others: batches are sorted by length (for
    speed) and padded to a width that depends on the sentence alone (see `width`).
    """
    device = model.tgt_pieces.device
    results: list[Hypothesis | None] = [None] * len(src_ids)
    for index in batches([len(ids) + 1 for ids in src_ids], batch_size):
        rows = [src_ids[i] + [eos] for i in index]
        lengths = torch.tensor([len(r) for r in rows], device=device)
        src = torch.full((len(rows), int(lengths.max())), PAD, dtype=torch.long, device=device)
        for r, ids in enumerate(rows):
            src[r, : len(ids)] = torch.tensor(ids, device=device)  # (batch, src_len)
        with torch.inference_mode():
            encoded = padded(model.encode(src, lengths), width(int(lengths.max())))
            limits = max_lengths(lengths)
            if beam <= 1:
                hyps = greedy(model, encoded, limits, no_repeat=no_repeat)
            else:
                found = beam_search(model, encoded, limits, beam=beam, no_repeat=no_repeat)
                hyps = [replace(beams[0], runners_up=beams[1:]) for beams in found]
        for i, hyp in zip(index, hyps, strict=True):
            results[i] = hyp
    return results  # type: ignore[return-value]
