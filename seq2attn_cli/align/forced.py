"""Given translations force-decoded in batches: what each decoding step attended to.

The decoder is fed the given target, piece by piece (teacher forcing, as `s2a inspect
--target` does for one sentence), and its attention over the source is kept: one row per
step, the step that writes each target piece and then the step that writes </s>. Sentences
are batched as translate batches them (decoding/search/batched.py): by attention width, which
depends on a sentence's own length, so a pair's weights never depend on the pairs beside it.
The same pass keeps the states and embeddings an alignment head (head.py) reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..config import BOS, EOS, PAD, UNK
from ..decoding.rules.clean import clean
from ..decoding.rules.pipeline import GIVEN
from ..decoding.search.batched import FULL_WIDTH, each_batch, padded, width
from ..decoding.translator import Translator


@dataclass(frozen=True)
class Side:
    """One side of a pair as the model reads or writes it."""

    pieces: list[str]  # its SentencePiece pieces, without </s>
    ids: list[int]  # their SentencePiece ids
    truncated: bool  # the line was longer than the model takes and was cut


def read(translator: Translator, texts: list[str]) -> list[Side]:
    """Lines as given with their translation (pipeline.GIVEN: cleaned, letters folded), whole:
    a line long enough to be translated in parts is force-decoded in one piece."""
    sides, rules = [], translator.pipeline(names=GIVEN)
    cleaned = [clean(text, translator.max_chars) for text in texts]  # what the model takes
    for line, given in zip(rules.read([c.text for c in cleaned]), cleaned, strict=True):
        ids = rules.whole(line)
        sides.append(Side(translator.subwords.pieces(ids), ids, given.truncated))
    return sides


def forced_sizes(src: list[list[int]], tgt: list[list[int]]) -> list[tuple[int, int]]:
    """(source, target) length of each pair as force-decoded: ids then </s> on both sides."""
    return [(len(s) + 1, len(t) + 1) for s, t in zip(src, tgt, strict=True)]


def forced_batches(sizes: list[tuple[int, int]], batch_size: int) -> list[list[int]]:
    """Pair indices in batches of one attention width each, by (source, target) length, with
    `batch_size` pairs of up to FULL_WIDTH source pieces and proportionally fewer wider ones."""
    order = sorted(range(len(sizes)), key=lambda i: (width(sizes[i][0]), sizes[i][1]))
    out: list[list[int]] = []
    for i in order:
        room = max(1, batch_size * FULL_WIDTH // max(FULL_WIDTH, width(sizes[i][0])))
        if not out or len(out[-1]) >= room or width(sizes[out[-1][0]][0]) != width(sizes[i][0]):
            out.append([])
        out[-1].append(i)
    return out


@dataclass(frozen=True)
class Forced:
    """One pair force-decoded: what each step attended to, and what the alignment head reads."""

    weights: torch.Tensor  # (tgt + 1, src + 1) attention; last row and column: </s>
    states: torch.Tensor  # (tgt + 1, hidden) decoder RNN state of each step (the last: </s>'s)
    fed: torch.Tensor  # (tgt, embed) embedding of each target piece as the decoder is fed it
    encoded: torch.Tensor  # (src + 1, hidden) encoder state of each source piece and </s>
    src_embedded: torch.Tensor  # (src + 1, embed) embedding of each source piece and </s>


def itself(index: int, pair: Forced) -> Forced:
    """The pair as force-decoded: `forced`'s default `then`."""
    return pair


def forced(
    translator: Translator,
    src: list[list[int]],
    tgt: list[list[int]],
    *,
    batch_size: int,
    then: Callable[[int, Forced], Any] = itself,
) -> list[Any]:
    """`then(i, pair)` of each pair force-decoded (by default the pair), in input order. On a
    CPU, `translator.threads` batches side by side, one thread each, `then` on their thread."""
    plan = forced_batches(forced_sizes(src, tgt), batch_size)

    def work(index: list[int]) -> list[Any]:
        found = forced_batch(translator, [src[i] for i in index], [tgt[i] for i in index])
        return [then(i, pair) for i, pair in zip(index, found, strict=True)]

    out: list[Any] = [None] * len(src)
    for index, done in zip(plan, each_batch(work, plan, threads=translator.threads), strict=True):
        for i, result in zip(index, done, strict=True):
            out[i] = result
    return out


@torch.inference_mode()
def forced_batch(
    translator: Translator, src: list[list[int]], tgt: list[list[int]]
) -> list[Forced]:
    """Force-decode one batch of pairs of source and target ids (on the CPU, float32 copies):
    one row per step that writes the target, then </s>'s."""
    model, device = translator.model, translator.device
    sizes = forced_sizes(src, tgt)
    lengths = torch.tensor([s for s, _ in sizes], device=device)
    src_batch = torch.full((len(src), int(lengths.max())), PAD, device=device)
    tgt_in = torch.full((len(src), max(t for _, t in sizes)), PAD, device=device)
    for r, (src_ids, tgt_ids) in enumerate(zip(src, tgt, strict=True)):
        src_batch[r, : len(src_ids) + 1] = torch.tensor(src_ids + [EOS], device=device)
        # pieces the model cannot write are fed as <unk>, as `inspect --target` feeds them
        fed = [BOS] + [translator.output_index.get(piece_id, UNK) for piece_id in tgt_ids]
        tgt_in[r, : len(fed)] = torch.tensor(fed, device=device)
    encoded = padded(model.encode(src_batch, lengths), width(int(lengths.max())))
    decoder = model.decoder
    # states: (batch, tgt_len + 1, hidden); weights: (batch, tgt_len + 1, width)
    states, _, weights, _ = decoder.run(tgt_in, encoded.init, encoded.states, encoded.mask)
    fed_embedded = decoder.embedding(tgt_in[:, 1:])  # (batch, tgt_len, embed)
    src_embedded = model.encoder.embedding(src_batch)  # (batch, src_len, embed)
    return [
        Forced(
            weights=weights[r, :t_len, :s_len].float().cpu(),
            states=states[r, :t_len].float().cpu(),
            fed=fed_embedded[r, : t_len - 1].float().cpu(),
            encoded=encoded.states[r, :s_len].float().cpu(),
            src_embedded=src_embedded[r, :s_len].float().cpu(),
        )
        for r, (s_len, t_len) in enumerate(sizes)
    ]
