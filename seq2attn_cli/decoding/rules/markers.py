"""A list marker or a dialogue dash that starts a sentence, set aside and written back
before its translation.

The model saw few sentences that start so, and drops or garbles what starts them: "- Ouvrez
le fichier." -> "Open the file." (the dash lost), "• Ouvrez le fichier." -> "•'s file.". This
rule reads each sentence (parts.py cuts a line into them: "- Bonjour. - Salut !" is two)
without its marker (- * • – — → > 1. 1) a) and a space) and writes the marker back before
its translation, as a document's list items are translated without theirs. On the dev sets'
lines that start so (embedded model, beam 5), BLEU without -> with: newstest2013 (37 lines)
17.58 -> 20.84, MTNT (45) 17.21 -> 19.82, WMT chat (106) 26.75 -> 26.91, wmt24pp (7) 33.59 ->
40.88, XNLI (4) 7.40 -> 5.28. A symbol that is a sentence's marker is this rule's, not a
stand-in (urls.py asks `starts_a_sentence`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..explain.alignment import WORD_START
from ..translation import Translation

if TYPE_CHECKING:
    from .pipeline import Setting

# a bullet, a dash, a quote mark or a number of up to three digits ("2019. Ils" is a year), then
# a space and what it marks; a letter only with a bracket ("a)"): "A. Dupont" is an initial
SIGNS = "-–—*•‣◦▪⁃→>·"
MARKER = re.compile(rf"\s*(?:[{SIGNS}]|\d{{1,3}}[.)]|[a-zA-Z]\))\s+(?=\S)")


def starts_a_sentence(text: str, at: int) -> bool:
    """Whether a marker starts a sentence of `text` at `at` (urls.py leaves it to this rule)."""
    before = text[:at].rstrip()
    return MARKER.match(text, at) is not None and (not before or before[-1] in ".!?…")


@dataclass(frozen=True)
class Markers:
    """The rule: a line's marker set aside in reading, written back before its translation."""

    name: str = "markers"
    did: str = "wrote the line's list marker or dash back before its translation"

    @classmethod
    def of(cls, setting: Setting) -> Markers:
        """The rule for a model (pipeline.Setting): every model has it."""
        return cls()

    def read(self, text: str) -> tuple[str, str]:
        """The line without the marker that starts it, and the marker ('' if none)."""
        m = MARKER.match(text)
        return (text[m.end() :], m.group().strip()) if m else (text, "")

    def write(self, t: Translation, memo: str) -> Translation:
        """`t` (and its alternatives) with the marker before it, a word of its own on both
        sides, attending to itself: the words of the pieces stay those of the text."""
        if not memo or not t.tgt_tokens:
            return t
        piece = WORD_START + memo
        if t.has_attention:  # one column more, the marker's; a row for it, all on it
            weights = [[1.0] + [0.0] * len(t.src_tokens)]
            weights += [[0.0, *row] for row in t.weights]  # (tgt + 1, src + 1)
            src = [piece, *t.src_tokens]
        else:  # --attention none: its one column stays; a runner-up has no weights
            weights, src = t.weights[:1] + list(t.weights), t.src_tokens
        return dataclasses.replace(
            t,
            text=f"{memo} {t.text}",
            alternatives=[f"{memo} {a}" for a in t.alternatives],
            src_tokens=src,
            tgt_tokens=[piece, *t.tgt_tokens],
            weights=weights,
            model_tokens=t.model_tokens or t.tgt_tokens,
        )
