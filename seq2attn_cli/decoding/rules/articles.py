"""English a/an: the indefinite article as the word after it wants, chosen once that word exists.

A left-to-right decoder writes the article before the word that decides it: translating "une
pomme rouge" it writes *an* while attending to *une* and expecting "apple", then writes "red"
(`s2a inspect ... --target` shows the scores; the guide's step 6 walks through it). English
picks *a* or *an* by the sound of the next word, which is only known one step later, so s2a
sets the article after the search, from the words the model wrote. Only the article's piece
changes: scores and attention rows stay the model's, `Translation.model_tokens` keeps the
pieces it wrote, and `s2a inspect` shows both texts.

The rule goes by spelling, with the common exceptions: *an hour*, *a university*, *a one-way
street*. Where spelling cannot tell (acronyms, numbers, letters, *herb*/*hotel*/*historic*,
which English writes both ways) the model's article stays, as it does where the vocabulary
splits the article itself into pieces. Checked on English written by people, the training
data's: it changes 2 of 136,132 Tatoeba sentences, both typos ("a excellent", "an
universal"), and 10 of 10,068 in WMT news 2008-2011, 9 of them typos.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...data.subwords import Subwords
from ..translation import Translation

if TYPE_CHECKING:
    from .pipeline import Setting

ARTICLES = {"▁a": "▁an", "▁an": "▁a", "▁A": "▁An", "▁An": "▁A"}  # each piece and its other form

# vowel letters, consonant sounds: "a university", "a one-way ticket", "a European"
YOU_OR_WON = (
    "eu", "ewe", "one", "once", "ouija", "ubiq", "uef", "ufo", "uga", "uig", "ukr", "uku", "unan",
    "unesco", "uni", "ura", "ure", "uri", "uro", "uru", "usa", "use", "usu", "uta", "ute", "uti",
    "uto", "uzb",
)  # fmt: skip
# ... but "an onerous task", "an unidentified man", "an unimportant one", "an uninvited guest"
NOT_YOU_OR_WON = ("oner", "unescort", "unident", "unim", "unin")
# a silent h: "an hour", "an honest man", "an heirloom"
SILENT_H = ("heir", "honest", "honor", "honour", "hour")
# words English writes with either article
EITHER = {"habitual", "herb", "herbal", "herbs", "historian", "historic", "historical", "hotel"}
# vowel-initial words that never follow an article: before them "a" is a letter ("a is", "A
# equals B", "paragraph a above") or French ("il a un")
NEVER_AFTER = {
    "a", "above", "after", "again", "against", "also", "am", "an", "and", "any", "are", "as",
    "at", "each", "either", "else", "equals", "even", "ever", "every", "if", "in", "into", "is",
    "it", "its", "itself", "of", "off", "on", "onto", "or", "our", "ours", "un", "une", "unless",
    "until", "up", "upon", "us",
}  # fmt: skip
LEADING_LETTERS = re.compile(r"[^\W\d_]+")
SENTENCE_END = (".", "!", "?", ":", '"', "“", "”")  # a capital A after these is an article


def wants_an(word: str) -> bool | None:
    """True if `word` takes "an", False if "a", None where its spelling does not tell."""
    letters = LEADING_LETTERS.match(word)  # "hour's" -> hour, "one-way" -> one, "apple." -> apple
    stem = letters.group(0).lower() if letters else ""
    if len(stem) < 2 or not stem.isascii() or _said_as_letters(word) or stem[0] == "x":
        return None  # letters, numbers, foreign words: "an FBI agent", "an Xbox", "a été"
    if stem in EITHER or stem in NEVER_AFTER:
        return None
    if stem.startswith(SILENT_H):
        return True
    if stem.startswith(YOU_OR_WON) and not stem.startswith(NOT_YOU_OR_WON):
        return False
    return stem[0] in "aeiou"


def _said_as_letters(word: str) -> bool:
    """True for acronyms and codes ("UN", "mRNA", "MSc", "mp3"), which are not said as spelled."""
    return any(c.isdigit() for c in word) or any(c.isupper() for c in word[1:].split("-")[0])


def agree(pieces: list[str]) -> list[str]:
    """The pieces with each indefinite article made to agree with the word after it."""
    out = list(pieces)
    for i, piece in enumerate(pieces):
        if piece not in ARTICLES or i + 1 == len(pieces) or not pieces[i + 1].startswith("▁"):
            continue  # not a whole word ("▁a" + "bout"), or nothing after it
        if piece[1] == "A" and i > 0 and not pieces[i - 1].endswith(SENTENCE_END):
            continue  # a capital A inside a sentence is the letter: "plan A is"
        an = wants_an(_word_at(pieces, i + 1))
        if an is not None and an != piece.lower().endswith("an"):
            out[i] = ARTICLES[piece]
    return out


def _word_at(pieces: list[str], start: int) -> str:
    """The whole word whose first piece is pieces[start] (pieces up to the next '▁')."""
    end = start + 1
    while end < len(pieces) and not pieces[end].startswith("▁"):
        end += 1
    return "".join(pieces[start:end]).lstrip("▁")


@dataclass(frozen=True)
class Articles:
    """The rule, for English output: each a/an set by the word the model wrote after it."""

    subwords: Subwords  # to write the agreed pieces as text
    name: str = "articles"
    did: str = "set a/an by the next word"

    @classmethod
    def of(cls, setting: Setting) -> Articles | None:
        """The rule for a model (pipeline.Setting) that writes English; else None."""
        return cls(subwords=setting.subwords) if setting.languages[1] == "en" else None

    def read(self, text: str) -> tuple[str, None]:
        """The line as it is: the article is the model's to write."""
        return text, None

    def write(self, t: Translation, memo: None) -> Translation:
        """`t` with its articles agreeing, its text written from the agreed pieces."""
        pieces = t.tgt_tokens[:-1]  # without </s>
        agreed = agree(pieces)
        if agreed == pieces:
            return t
        return dataclasses.replace(
            t,
            text=self.subwords.text(agreed),
            tgt_tokens=agreed + t.tgt_tokens[-1:],
            model_tokens=t.model_tokens or t.tgt_tokens,
        )
