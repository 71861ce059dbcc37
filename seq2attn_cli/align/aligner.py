"""Word alignments for translations that already exist: pairs in, links between words out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..config import DECODE
from ..decoding.explain.alignment import pharaoh
from ..decoding.translator import Translator
from .forced import Forced, Side, forced, read
from .head import AlignHead, links
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
    probabilities: Matrix | None = None  # the alignment head's, over words (None: no head)

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
        } | (
            {"probabilities": [[round(p, 4) for p in row] for row in self.probabilities]}
            if self.probabilities is not None
            else {}
        )


def align(
    translator: Translator,
    pairs: list[tuple[str, str]],
    *,
    method: str = DEFAULT,
    head: AlignHead | None = None,
    batch_size: int = DECODE.align_batch_size,
) -> list[Alignment]:
    """Align each (source, target) pair by force-decoding the target after the source: links
    off the attention by `method`, or off the alignment `head` when one is given; a pair with
    an empty side gets no links. A pair's links never depend on the pairs beside it."""
    _check_pairs(pairs)
    if not translator.config.model.attends:
        raise ValueError("the model has no attention (--attention none): it cannot align words")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    src = read(translator, [s for s, _ in pairs])
    tgt = read(translator, [t for _, t in pairs])
    todo = [n for n, (s, t) in enumerate(zip(src, tgt, strict=True)) if s.ids and t.ids]

    def aligned(k: int, pair: Forced) -> Alignment:  # on the batch's thread (forced.py)
        n = todo[k]
        return _aligned(*pairs[n], src[n], tgt[n], pair, METHODS[method], head)

    done = forced(
        translator,
        [src[n].ids for n in todo],
        [tgt[n].ids for n in todo],
        batch_size=batch_size,
        then=aligned,
    )
    found = dict(zip(todo, done, strict=True))
    out = []
    for n, (s, t) in enumerate(pairs):
        if n not in found:  # a side with nothing to read: no links, no attention
            zeros = [[0.0] * len(words(s)) for _ in words(t)]
            out.append(
                Alignment(words(s), words(t), [], zeros, src[n].truncated or tgt[n].truncated)
            )
            continue
        out.append(found[n])
    return out


def _check_pairs(pairs: Any) -> None:
    """A list of (source, target) pairs of str, else a TypeError naming the first bad item."""
    if isinstance(pairs, str | bytes) or not isinstance(pairs, Sequence):
        raise TypeError(
            f"align() takes a list of (source, target) pairs, not {type(pairs).__name__}"
        )
    for n, pair in enumerate(pairs):
        if (
            not isinstance(pair, tuple | list)
            or len(pair) != 2
            or not all(isinstance(side, str) for side in pair)
        ):
            raise TypeError(f"align() takes pairs of two str; pair {n} is {pair!r:.60}")


def _aligned(
    s: str, t: str, src: Side, tgt: Side, pair: Forced, method: Method, head: AlignHead | None
) -> Alignment:
    """One pair's Alignment from its forced decoding (piece level, last row and column: </s>)."""
    src_groups, tgt_groups = groups(s, src.pieces), groups(t, tgt.pieces)
    writing, reading = word_weights(pair.weights, src_groups, tgt_groups)
    probabilities = None
    if head is None:
        found = method(writing, reading)
    else:
        probabilities = over_words(head.probabilities(pair), src_groups, tgt_groups)
        found = links(probabilities)
    return Alignment(
        src=words(s),
        tgt=words(t),
        links=sorted(found),
        weights=writing,
        truncated=src.truncated or tgt.truncated,
        probabilities=probabilities,
    )


def word_weights(
    weights: torch.Tensor, src_groups: list[list[int]], tgt_groups: list[list[int]]
) -> tuple[Matrix, Matrix]:
    """Piece weights (last row and column: </s>) over the given words: the attention of the
    steps that write each target word, and of the steps fed it (rows: target words)."""
    return (
        over_words(weights[:-1], src_groups, tgt_groups),
        over_words(weights[1:], src_groups, tgt_groups),
    )


def over_words(
    pieces: torch.Tensor, src_groups: list[list[int]], tgt_groups: list[list[int]]
) -> Matrix:
    """A (target pieces, source pieces + 1) matrix over the given words, </s> left out:
    rows averaged over each target word's pieces, columns summed over each source word's."""
    sums = _over(src_groups, pieces.size(1)).T  # (src pieces + 1, src words)
    means = _over(tgt_groups, pieces.size(0))  # (tgt words, tgt pieces)
    means = means / means.sum(dim=1, keepdim=True).clamp(min=1)
    return (means @ pieces @ sums).tolist()


def _over(groups: list[list[int]], pieces: int) -> torch.Tensor:
    """(words, pieces): 1 where a word holds a piece. Over it, attention sums source pieces
    and averages target pieces, as decoding/explain/alignment.py's word_level does."""
    matrix = torch.zeros(len(groups), pieces)
    rows = [w for w, group in enumerate(groups) for _ in group]
    matrix[rows, [p for group in groups for p in group]] = 1.0
    return matrix
