"""Every line cleaned as training cleaned its text, and cut to the longest s2a translates.

Cleaning folds what is safe to fold (data/reading.py: NFC, typographic apostrophes and
quotes, non-breaking spaces, French spaces before ? ! : ;) and makes the line one line. The
model takes max_chars characters at a time (1,000 for the embedded one), and parts.py cuts
a line into sentences and parts of that size, so a line is cut only past LINE_LIMIT times
that, a bound on one line's work (a book's paragraph a line, of 1,151 characters, had lost
its last sentences at 1,000), and its translation says so (`truncated`). A line read whole
(`s2a align`, `inspect --target`: align/forced.py) is cut at max_chars. A line of which the
model reads nothing (emoji, a script it has no pieces for) is written back as given, with
confidence 0, rather than translated into a sentence the model made up.

A line or sentence that holds no word, only numbers and signs (a rating, a date, a table's
figure, a telephone number the URL rule stands in), is not searched either: the model wrote
"1999" as "See.", "0" as "Enjoy it.", "6" as "It's 6.", "2001." after "14 Sept." as "Go
away." and "8,97€" as "8, euros euros.". It is copied as the model reads it, each piece
attending to itself, and the rules write it back ("8,97 euros" -> "€8.97"). On the 44 French
lines of the WMT chat dev set that hold no word (embedded model, beam 5), BLEU 46.11 -> 84.55,
chrF 73.60 -> 97.81; on the 4 dev lines with such a sentence among others, 32.40 -> 32.81.
"""

from __future__ import annotations

import dataclasses
import re
from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...data.reading import normalize
from ...data.subwords import EOS_PIECE
from ..translation import Translation
from .number_forms import WORDS as SIGN_WORDS
from .stand_ins import PLACEHOLDER

if TYPE_CHECKING:
    from .pipeline import Setting


# the longest line translated, in the model's max_chars: a line's parts are joined into one
# attention matrix (target x source pieces) that confidence.py reads whole, so the cost grows
# with the square of the line (a test model: 10,000 characters 0.4 s, 100,000 38 s)
LINE_LIMIT = 10
LETTER = re.compile(r"[^\W\d_]")
STAND_INS = re.compile(rf"\b(?:{PLACEHOLDER}|{'|'.join(SIGN_WORDS.values())})\b")


def longest_line(max_chars: int) -> int:
    """The longest line translated whole by a model trained on `max_chars`, in characters."""
    return LINE_LIMIT * max_chars


@dataclass(frozen=True)
class Cleaned:
    """A line as the user gave it, cleaned: the source of its translation."""

    text: str
    truncated: bool  # it was longer than LINE_LIMIT allows, and was cut


@dataclass(frozen=True)
class Clean:
    """The rule: lines cleaned and cut; a translation given its source."""

    max_chars: int
    name: str = "clean"
    did: str = "left untranslated what holds no word to translate"

    @classmethod
    def of(cls, setting: Setting) -> Clean:
        """The rule for a model (pipeline.Setting): every model has it."""
        return cls(max_chars=longest_line(setting.max_chars))

    def read(self, text: str) -> tuple[str, Cleaned]:
        """The line cleaned and cut to max_chars (LINE_LIMIT times the model's)."""
        cleaned = clean(text, self.max_chars)
        return cleaned.text, cleaned

    def write(self, t: Translation, memo: Cleaned) -> Translation:
        """`t` with its source; the line itself where the model read none of it."""
        if not t.tgt_tokens and memo.text.strip():  # no part was searched: nothing readable
            return as_given(memo.text, truncated=memo.truncated)
        return dataclasses.replace(t, source=memo.text, truncated=memo.truncated)


def worded(read: str) -> bool:
    """Whether a part as the model reads it holds a word to translate: a letter, besides the
    words other rules read for what they write back (URL, an amount's "euros")."""
    return LETTER.search(STAND_INS.sub("", read)) is not None


def clean(text: str, max_chars: int) -> Cleaned:
    """`text` cleaned (reading.normalize) and cut to `max_chars`."""
    cleaned = normalize(text)
    return Cleaned(cleaned[:max_chars], truncated=len(cleaned) > max_chars)


def copied(text: str, pieces: list[str], *, attends: bool) -> Translation:
    """A part that holds no word (`worded`) as the model reads it (`pieces` then </s>, and the
    `text` they spell), copied piece for piece, each attending to itself as a marker does
    (markers.py): the search wrote nothing (its pieces: </s>)."""
    if attends:  # (tgt, src): the identity
        weights = [array("f", [i == j for j in range(len(pieces))]) for i in range(len(pieces))]
    else:  # --attention none: the one column of the context vector
        weights = [array("f", [1.0]) for _ in pieces]
    return Translation(
        text, text, 0.0, pieces, pieces, weights, model_tokens=[EOS_PIECE],
        changed_by=[Clean.name], attends=attends,
    )  # fmt: skip


def as_given(text: str, *, truncated: bool) -> Translation:
    """A line with nothing the model can read, written back as given; confidence 0."""
    return Translation(text, text, 0.0, [], [], [], truncated=truncated)
