"""Word alignments for translations that already exist: pairs in, links between words out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from ..decoding.explain.alignment import pharaoh
from ..decoding.translator import Translator
from .forced import Side, forced_weights, read
from .methods import DEFAULT, METHODS, Matrix, Method
from .words import groups, words


@dataclass(frozen=True)
class Alignment:
    """One pair's words as given, the links between them and the attention they come from."""

    src: list[str]  # the source words as given (whitespace-separated)
    tgt: list[str]  # the target words as given
    links: list[tuple[int, int]]  # (source word, target word), sorted
    weights: Matrix  # attention of the steps that write each target word, over source words
    truncated: bool = False  # a side was longer than the model takes: its end is not aligned

    def pharaoh(self) -> str:
        """The links as a Pharaoh line, as fast_align writes it: '0-0 1-2 2-1'."""
        return pharaoh(self.links)

    def as_dict(self) -> dict[str, Any]:
        """The JSON-ready form written by `s2a align --format jsonl`."""
        return {
            "alignment": self.pharaoh(),
            "src": self.src,
            "tgt": self.tgt,
            "weights": [[round(w, 4) for w in row] for row in self.weights],
            "truncated": self.truncated,
        }


def align(
    translator: Translator,
    pairs: list[tuple[str, str]],
    *,
    method: Method = METHODS[DEFAULT],
    batch_size: int = 32,
) -> list[Alignment]:
    """Align each (source, target) pair by force-decoding the target after the source; a pair
    with an empty side gets no links. A pair's links never depend on the pairs beside it."""
    if not translator.config.model.attends:
        raise ValueError("the model has no attention (--attention none): it cannot align words")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    src = read(translator, [s for s, _ in pairs])
    tgt = read(translator, [t for _, t in pairs])
    todo = [n for n, (s, t) in enumerate(zip(src, tgt, strict=True)) if s.ids and t.ids]
    weights = forced_weights(
        translator, [src[n].ids for n in todo], [tgt[n].ids for n in todo], batch_size=batch_size
    )
    found = dict(zip(todo, weights, strict=True))
    out = []
    for n, (s, t) in enumerate(pairs):
        if n not in found:  # a side with nothing to read: no links, no attention
            zeros = [[0.0] * len(words(s)) for _ in words(t)]
            out.append(
                Alignment(words(s), words(t), [], zeros, src[n].truncated or tgt[n].truncated)
            )
            continue
        out.append(_aligned(s, t, src[n], tgt[n], found[n], method))
    return out


def _aligned(
    s: str, t: str, src: Side, tgt: Side, weights: torch.Tensor, method: Method
) -> Alignment:
    """One pair's Alignment from its piece-level weights (last row and column: </s>)."""
    writing, reading = word_weights(weights, groups(s, src.pieces), groups(t, tgt.pieces))
    return Alignment(
        src=words(s),
        tgt=words(t),
        links=sorted(method(writing, reading)),
        weights=writing,
        truncated=src.truncated or tgt.truncated,
    )


def word_weights(
    weights: torch.Tensor, src_groups: list[list[int]], tgt_groups: list[list[int]]
) -> tuple[Matrix, Matrix]:
    """Piece weights (last row and column: </s>) over the given words: the attention of the
    steps that write each target word, and of the steps fed it (rows: target words)."""
    sums = _over(src_groups, weights.size(1)).T  # (src pieces + 1, src words)
    means = _over(tgt_groups, weights.size(0) - 1)  # (tgt words, tgt pieces)
    means = means / means.sum(dim=1, keepdim=True).clamp(min=1)
    return (means @ weights[:-1] @ sums).tolist(), (means @ weights[1:] @ sums).tolist()


def _over(groups: list[list[int]], pieces: int) -> torch.Tensor:
    """(words, pieces): 1 where a word holds a piece. Over it, attention sums source pieces
    and averages target pieces, as decoding/explain/alignment.py's word_level does."""
    matrix = torch.zeros(len(groups), pieces)
    rows = [w for w, group in enumerate(groups) for _ in group]
    matrix[rows, [p for group in groups for p in group]] = 1.0
    return matrix
