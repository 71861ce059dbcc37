"""Fitting an alignment head (head.py) on word links of given pairs, the model frozen.

Each example is a force-decoded pair with the pieces of its linked words: the loss is, for
each target piece with a link, -log of the probability mass the head puts on the source
pieces linked to it (unlinked target pieces are left out: aiming them at </s> measured no
better, 17.2 against 15.8 AER after 3 minutes on 30k pairs). Run by scripts/fit_align_head.py.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .forced import Forced
from .head import AlignHead, batch_of


@dataclass(frozen=True)
class Example:
    """One pair to learn from: its forced decoding and its links between pieces."""

    pair: Forced
    links: list[tuple[int, int]]  # (target piece, source piece)


def piece_links(
    links: set[tuple[int, int]], src_groups: list[list[int]], tgt_groups: list[list[int]]
) -> list[tuple[int, int]]:
    """Word links (source word, target word) as links between every pair of their pieces
    (target piece, source piece); a word the model did not read links nothing."""
    return sorted(
        {
            (t, s)
            for i, j in links
            if i < len(src_groups) and j < len(tgt_groups)
            for t in tgt_groups[j]
            for s in src_groups[i]
        }
    )


def loss_of(head: AlignHead, examples: list[Example]) -> torch.Tensor:
    """The mean over linked target pieces of -log the mass on their linked source pieces."""
    b = batch_of([x.pair for x in examples])
    target = torch.zeros(b.weights.size(0), b.fed.size(1), b.weights.size(2), dtype=torch.bool)
    for r, x in enumerate(examples):
        for t, s in x.links:
            target[r, t, s] = True
    log_p = head(b).log_softmax(-1)  # (batch, tgt, src + 1)
    linked = target.any(-1) & b.tgt_mask  # (batch, tgt)
    mass = log_p.masked_fill(~target, float("-inf")).logsumexp(-1)  # (batch, tgt)
    return -mass[linked].mean()


def _batches(examples: list[Example], size: int, rng: random.Random) -> list[list[Example]]:
    """Batches of like target lengths (little padding), in random order."""
    order = sorted(range(len(examples)), key=lambda i: (examples[i].pair.fed.size(0), rng.random()))
    out = [[examples[i] for i in order[k : k + size]] for k in range(0, len(order), size)]
    rng.shuffle(out)
    return out


def fit(
    head: AlignHead,
    examples: list[Example],
    *,
    minutes: float,
    seed: int,
    batch_size: int = 32,
    lr: float = 1e-3,
    epochs: int = 100,
    progress: Callable[[int, float], None] = lambda seen, loss: None,
) -> int:
    """Train `head` on `examples` for `minutes` (or `epochs` passes, whichever ends first);
    calls `progress(pairs seen, last loss)` after each epoch; returns the pairs seen."""
    torch.manual_seed(seed)
    rng = random.Random(seed)
    opt = torch.optim.Adam(head.parameters(), lr=lr)
    head.train()
    started, seen, loss = time.monotonic(), 0, torch.tensor(0.0)
    for _ in range(epochs):
        for batch in _batches([x for x in examples if x.links], batch_size, rng):
            if time.monotonic() - started > minutes * 60:
                head.eval()
                return seen
            loss = loss_of(head, batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen += len(batch)
        progress(seen, float(loss))
    head.eval()
    return seen
