"""Cut training examples into padded, length-bucketed batches, and plan each epoch's mix."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ..config import PAD


@dataclass(frozen=True)
class Batch:
    """Padded id tensors of one batch."""

    src: torch.Tensor  # (batch, src_len)
    src_lengths: torch.Tensor  # (batch,)
    tgt_in: torch.Tensor  # (batch, tgt_len)  BOS y1 .. yn
    tgt_out: torch.Tensor  # (batch, tgt_len)  y1 .. yn EOS

    @property
    def tgt_count(self) -> int:
        """Number of real (non-pad) target positions: what tokens/s counts."""
        return int((self.tgt_out != PAD).sum())


def epoch_examples(sizes: list[int], rates: list[float], *, seed: int, epoch: int) -> list[int]:
    """Indices of the examples one epoch trains on: each corpus `rate` times over (--weights).

    Corpus k holds the examples after those of corpora 0..k-1. Rate 3 takes each of its
    pairs three times; 0.25 a quarter of them, a different quarter each epoch (the corpus is
    walked in one fixed shuffled order), so a big corpus is seen whole over several epochs
    without drowning the others. Depends only on (seed, epoch): resume sees the same mix.
    """
    examples: list[int] = []
    offset = 0
    for k, (size, rate) in enumerate(zip(sizes, rates, strict=True)):
        whole = int(rate)
        examples += list(range(offset, offset + size)) * whole
        take = round((rate - whole) * size)
        if take:
            order = list(range(offset, offset + size))
            random.Random(seed * 7919 + k).shuffle(order)
            start = (epoch * take) % size
            examples += (order + order)[start : start + take]  # wraps around the corpus
        offset += size
    return examples


def batch_plan(
    src_lengths: Sequence[int],
    tgt_lengths: Sequence[int],
    examples: list[int],
    *,
    batch_tokens: int,
    seed: int,
    epoch: int,
) -> list[list[int]]:
    """Group `examples` into length-bucketed batches of about `batch_tokens` target tokens.

    Example i holds `src_lengths[i]` and `tgt_lengths[i]` pieces. The plan depends only on
    (seed, epoch), so a resumed run sees the very same batches.
    """
    rng = random.Random(seed * 100_003 + epoch)
    # Bucket by *target* length: the decoder, attention and output layer run over padded
    # target positions, while the packed encoder skips source padding (on Tatoeba, sorting
    # by source length left 37% of target positions as padding). A little noise makes the
    # buckets differ from epoch to epoch.
    order = sorted(examples, key=lambda i: (tgt_lengths[i] + rng.random() * 2, src_lengths[i]))
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for i in order:  # budget: padded target positions (target + EOS) per batch
        longest_if_added = max(longest, tgt_lengths[i] + 1)
        if current and longest_if_added * (len(current) + 1) > batch_tokens:
            batches.append(current)
            current, longest_if_added = [], tgt_lengths[i] + 1
        current.append(i)
        longest = longest_if_added
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def make_batch(
    src_ids: Sequence[list[int]],
    tgt_ids: Sequence[list[int]],
    index: list[int],
    *,
    bos: int,
    eos: int,
) -> Batch:
    """Pad the chosen examples into tensors; targets get BOS in and EOS out."""
    src = [src_ids[i] + [eos] for i in index]
    tgt = [tgt_ids[i] for i in index]
    src_len = max(len(s) for s in src)
    tgt_len = max(len(t) for t in tgt) + 1
    src_t = torch.full((len(index), src_len), PAD, dtype=torch.long)  # (batch, src_len)
    tgt_in = torch.full((len(index), tgt_len), PAD, dtype=torch.long)  # (batch, tgt_len)
    tgt_out = torch.full((len(index), tgt_len), PAD, dtype=torch.long)  # (batch, tgt_len)
    for row, (s, t) in enumerate(zip(src, tgt, strict=True)):
        src_t[row, : len(s)] = torch.tensor(s)
        tgt_in[row, : len(t) + 1] = torch.tensor([bos] + t)
        tgt_out[row, : len(t) + 1] = torch.tensor(t + [eos])
    lengths = torch.tensor([len(s) for s in src])
    return Batch(src=src_t, src_lengths=lengths, tgt_in=tgt_in, tgt_out=tgt_out)
