"""One translated sentence: its text and everything needed to show how it was made."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..data.subwords import EOS_PIECE
from .explain.alignment import WordAttention, word_alignment, word_level


@dataclass(frozen=True)
class Translation:
    """One translated sentence, with everything needed to show how it was made."""

    source: str
    text: str
    score: float  # log-probability per output piece
    src_tokens: list[str]  # source pieces, then </s>
    tgt_tokens: list[str]  # output pieces, then </s>
    # attention: one row per target piece, one column per source piece (float32 arrays: search/)
    weights: list[Sequence[float]]
    truncated: bool = False  # longer than s2a translates (rules/clean.py): cut
    # the model's own pieces, when a rule after the search changed them (rules/articles.py:
    # a/an; rules/letters.py: letters written back, so tgt_tokens may hold pieces the
    # vocabulary lacks); the weights are from the model's pieces; else empty
    model_tokens: list[str] = field(default_factory=list)
    parts: int = 1  # a long line is translated in parts, joined (rules/parts.py)
    # the beam's next-best translations, best first, after the same rules; none equal to
    # `text` or to each other (empty for greedy search)
    alternatives: list[str] = field(default_factory=list)
    confidence: float = 0.0  # how sure the model is of it, in [0, 1] (explain/confidence.py)
    dropped: list[str] = field(default_factory=list)  # source words it may have left out
    # the names of the rules whose write changed its text or pieces, in the order they wrote
    # (rules/pipeline.py); the model's own text is that of model_tokens, or of tgt_tokens
    changed_by: list[str] = field(default_factory=list)
    # False for an `--attention none` model: its one column is the single context vector
    attends: bool = True

    @property
    def has_attention(self) -> bool:
        """Whether it has attention over its source pieces to show (`attends`, and weights)."""
        return self.attends and bool(self.weights)

    @property
    def searched(self) -> bool:
        """Whether the search wrote it: not a line written back as given, nor one copied
        (rules/clean.py), whose model_tokens are only </s>."""
        return bool(self.tgt_tokens) and self.model_tokens != [EOS_PIECE]

    @property
    def alignment(self) -> list[tuple[int, int]]:
        """Word alignment: (source word, target word) index pairs, in Pharaoh order."""
        if not self.has_attention:
            return []
        return word_alignment(self.src_tokens, self.tgt_tokens, self.weights)

    @property
    def word_attention(self) -> WordAttention:
        """Attention between words, not pieces: (source words, target words, weights)."""
        if not self.has_attention:
            return WordAttention([], [], [])
        return word_level(self.src_tokens, self.tgt_tokens, self.weights)

    def as_dict(self) -> dict[str, Any]:
        """The JSON-ready form written by `--format jsonl`."""
        return {
            "source": self.source,
            "translation": self.text,
            "score": round(self.score, 4),
            "src_tokens": self.src_tokens,
            "tgt_tokens": self.tgt_tokens,
            "attention": [[round(w, 4) for w in row] for row in self.weights],
            "model_tokens": self.model_tokens,
            "parts": self.parts,
            "confidence": round(self.confidence, 4),
            "dropped": self.dropped,
        }


def distinct(texts: list[str], best: str) -> list[str]:
    """Texts in their order, each once, without `best`: alternatives to it."""
    return [t for t in dict.fromkeys(texts) if t != best]
