"""Word alignments for translations that already exist: pairs in, links between words out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..decoding.alignment import merge, pharaoh
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
    if translator.config.model.attention == "none":
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
        if n not in found:
            out.append(Alignment(words(s), words(t), [], [[0.0] * len(words(s))] * len(words(t))))
            continue
        out.append(_aligned(s, t, src[n], tgt[n], found[n].tolist(), method))
    return out


def _aligned(
    s: str, t: str, src: Side, tgt: Side, rows: list[list[float]], method: Method
) -> Alignment:
    """One pair's Alignment from its piece-level weights (last row and column: </s>)."""
    src_groups, tgt_groups = groups(s, src.pieces), groups(t, tgt.pieces)
    writing = merge(rows[:-1], src_groups, tgt_groups)  # the steps that write each word
    reading = merge(rows[1:], src_groups, tgt_groups)  # the steps fed each word
    return Alignment(
        src=words(s),
        tgt=words(t),
        links=sorted(method(writing, reading)),
        weights=writing,
        truncated=src.truncated or tgt.truncated,
    )
