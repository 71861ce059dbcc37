"""Greedy search: the most probable piece at every step, for a whole batch at once."""

from __future__ import annotations

import torch

from ...config import BOS, EOS, PAD
from ...model.seq2seq import Encoded, Seq2Seq, select_encoded, select_state
from .constraints import NO_REPEAT, ban_repeats_, end_at_limit_, search_step
from .hypothesis import Hypothesis, finish_hypothesis


@torch.inference_mode()
def greedy(
    model: Seq2Seq, encoded: Encoded, limits: torch.Tensor, *, no_repeat: int = NO_REPEAT
) -> list[Hypothesis]:
    """Pick the most probable piece at every step, for a whole batch at once."""
    widths = encoded.mask.sum(1).tolist()  # each sentence's source length: its attention's width
    n, src_len = len(widths), max(widths)  # history columns: the longest source, not padded `width`
    device = encoded.mask.device
    longest, soonest = int(limits.max()), int(limits.min())
    indices = torch.full((n, longest), PAD, dtype=torch.long, device=device)  # (n, longest)
    weights = torch.zeros(n, longest, src_len, device=device)  # (n, longest, src_len)
    log_probs = torch.zeros(n, device=device)
    lengths = torch.zeros(n, dtype=torch.long, device=device)
    alive = torch.arange(n, device=device)
    prev = torch.full((n,), BOS, dtype=torch.long, device=device)
    state = encoded.init
    for t in range(longest):
        step_lp, step_w, state = search_step(model, prev, state, encoded)  # (alive, vocab)
        if no_repeat and t >= no_repeat:
            ban_repeats_(step_lp, indices[alive, :t], no_repeat)
        if t + 1 >= soonest:
            end_at_limit_(step_lp, t + 1 >= limits[alive])
        best_lp, best = step_lp.max(dim=-1)  # (alive,)
        indices[alive, t] = best
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
            indices[i], weights[i, :, : widths[i]], float(log_probs[i]), int(lengths[i]), 1.0
        )
        for i in range(n)
    ]
