"""Letters the model has no piece for: read as their base letter, written back as given.

A vocabulary trained on French and English text has no piece for the "á" of Sánchez or the
"č" of Čapek (90 of the 3,000 lines of newstest2013 hold such a letter, nearly all in
names), and SentencePiece reads a letter without a piece as <unk>, which the model drops:
"Sánchez" came out as "Snchez". s2a reads such a letter as its base letter (the model sees
"Sanchez", which it can copy), and writes the given letters back into any output word that
copies a source word it changed. Each letter becomes one letter, so positions line up.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..translation import Translation

if TYPE_CHECKING:
    from .pipeline import Setting

WORD = re.compile(r"\w+")
# letters Unicode does not write as a base letter plus accents
UNDECOMPOSED = {"Ł": "L", "ł": "l", "Ø": "O", "ø": "o", "Đ": "D", "đ": "d", "Ħ": "H", "ħ": "h"}


def base_letter(char: str) -> str | None:
    """The character under the accents or width of `char` (á -> a, Š -> S, ² -> 2, ？ -> ?), or
    None if it has none ("¯" is a space under a macron: none, it is no space)."""
    if char in UNDECOMPOSED:
        return UNDECOMPOSED[char]
    bare = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    return bare if len(bare) == 1 and bare != char and not bare.isspace() else None


def read_as(char: str, known: Callable[[str], bool]) -> str | None:
    """What the model reads for `char`: itself if `known` (a piece holds it), else its base
    letter if that one is, else None: the one definition of a character the model can read."""
    if known(char):
        return char
    base = base_letter(char)
    return base if base is not None and known(base) else None


def fold(text: str, known: Callable[[str], bool]) -> tuple[str, dict[str, str]]:
    """`text` with each letter not `known` read as its base letter, if that one is known.

    Returns the folded text and, for each word it changed, folded word -> word as given.
    """
    read = {c: b for c in set(text) if (b := read_as(c, known)) not in (c, None)}
    if not read:  # nearly every line: each distinct character is looked up once
        return text, {}
    folded = "".join(read.get(c, c) for c in text)
    given: dict[str, str] = {}
    kept = set()  # words the source has as the model reads them: never written back
    for m in WORD.finditer(folded):
        word, as_given = m.group(), text[m.start() : m.end()]
        if word == as_given or len(word) < 2 or given.get(word, as_given) != as_given:
            kept.add(word)  # unchanged; one letter ("a" from "á"); or two spellings
        else:
            given[word] = as_given
    return folded, {word: as_given for word, as_given in given.items() if word not in kept}


def write_back(text: str, given: dict[str, str]) -> str:
    """`text` with each word that is a folded source word written as the source gave it."""
    if not given:
        return text
    return WORD.sub(lambda m: given.get(m.group(), m.group()), text)


def write_back_pieces(pieces: list[str], given: dict[str, str]) -> list[str]:
    """write_back over the words that pieces spell, keeping each piece's length and place."""
    if not given:
        return pieces
    joined = write_back("".join(pieces), given)  # same length: each letter became one letter
    out, start = [], 0
    for piece in pieces:
        out.append(joined[start : start + len(piece)])
        start += len(piece)
    return out


@dataclass(frozen=True)
class Letters:
    """The rule: letters without a piece read as base letters, and written back."""

    known: Callable[[str], bool]  # whether the model has a piece for a character
    name: str = "letters"
    did: str = "wrote back the letters it read as base letters"

    @classmethod
    def of(cls, setting: Setting) -> Letters:
        """The rule for a model (pipeline.Setting): its pieces say which letters it knows."""
        return cls(known=setting.subwords.knows)

    def read(self, text: str) -> tuple[str, dict[str, str]]:
        """`text` folded, and each word it changed (`fold`)."""
        return fold(text, self.known)

    def write(self, t: Translation, memo: dict[str, str]) -> Translation:
        """`t`, its pieces and its alternatives with the folded words written as given."""
        if not memo:
            return t
        pieces = write_back_pieces(t.tgt_tokens, memo)
        return dataclasses.replace(
            t,
            text=write_back(t.text, memo),
            tgt_tokens=pieces,
            alternatives=[write_back(a, memo) for a in t.alternatives],
            model_tokens=t.model_tokens or (t.tgt_tokens if pieces != t.tgt_tokens else []),
        )
