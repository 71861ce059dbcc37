"""A line in capitals: read as a sentence, its translation written in capitals.

Training text is nearly all in sentence case, and the model read a line in capitals as strange
pieces: "ATTENTION : NE PAS OUVRIR." came out as "ATTION: NE PAS OUVIRIR.". s2a reads such a
line (two words or one of four letters, no small letter) in lower case with a capital where
each sentence starts, and writes its translation in capitals. The stand-ins of the rules before
it (the word URL) are read as they are. Each word is read in the case the vocabulary spells in
the fewest pieces, so that names and acronyms keep theirs ("TOM" as "Tom", "OTAN" as "OTAN"):
read all in lower case, "UE ET OTAN" came out as "USE AND OKAY.". Embedded model, beam 5,
source and reference in capitals, BLEU without -> with: Tatoeba test (1,000 lines) 0.25 ->
57.01 (57.62 read as given; 57.39 all in lower case), Multi30k val (500) 0.05 -> 49.34 (49.54),
newstest2013 (500) 0.85 -> 28.61 (29.72); the 85 lines in capitals of the dev sets as they come
(WMT chat, MTNT, wmt24pp, XNLI) 29.92 -> 41.87; with lines of one word of four letters or more
too, 136 lines, 34.75 -> 43.97.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..translation import Translation
from .stand_ins import PLACEHOLDER

if TYPE_CHECKING:
    from .pipeline import Setting

LETTERS = re.compile(r"[^\W\d_]+")  # a run of letters
# a Roman number, or ordinal, in capitals (XIV, XIXE): kept so, its ending in small letters
# for numbers.py ("LE XIXE SIÈCLE" read as "Le Xixe siècle" came out "THE TWENTYTH CENTURY");
# not VIE, which is "vie" far more often than "VIe", nor one letter and its ending ("VE",
# véhicule électrique)
ROMAN_IN_CAPITALS = re.compile(r"(?!VIE$|[IVX]E)(?=[IVX])(X{0,3}(?:IX|IV|V?I{0,3}))(E|È|ÈME|EME)?")
STARTS = re.compile(r"(^|[.!?…]\s+)(\W*)(\w)")  # where a sentence starts, and its first letter


def in_capitals(text: str) -> bool:
    """Whether `text` holds no small letter and two words of two letters or more, or one of
    four ("ATTENTION !" came out as "ATTION!"; "OK" and "ONU" are no shouting)."""
    words = [w for w in LETTERS.findall(text) if w != PLACEHOLDER]
    long_enough = sum(len(w) > 1 for w in words) >= 2 or any(len(w) >= 4 for w in words)
    return long_enough and not any(c.islower() for w in words for c in w)


def sentence_case(text: str, cased: Callable[[str], str]) -> str:
    """`text` with each word `cased`, each sentence starting with a capital, stand-ins as
    they are."""
    read = re.sub(rf"\b(?!{PLACEHOLDER}\b)\w+", lambda m: cased(m.group()), text)
    return STARTS.sub(lambda m: m.group(1) + m.group(2) + m.group(3).upper(), read)


@dataclass(frozen=True)
class Capitals:
    """The rule: a line in capitals read in sentence case, its translation in capitals."""

    encode: Callable[[list[str]], list[list[int]]]  # the vocabulary's pieces of words
    name: str = "capitals"
    did: str = "wrote the translation of a line in capitals in capitals"

    @classmethod
    def of(cls, setting: Setting) -> Capitals:
        """The rule for a model (pipeline.Setting): every model has it."""
        return cls(encode=setting.subwords.encode)

    def read(self, text: str) -> tuple[str, bool]:
        """The line in sentence case if it is in capitals, and whether it was."""
        if not in_capitals(text):
            return text, False
        return sentence_case(text, self.cased), True

    def cased(self, word: str) -> str:
        """A word in capitals as the vocabulary knows it best: in lower case ("ouvrir"), with
        a capital ("Tom") or in capitals ("OTAN"), whichever takes the fewest pieces (the
        first of them on a tie), and in capitals where all take as many, more than one ("UE")."""
        if roman := ROMAN_IN_CAPITALS.fullmatch(word):
            return roman[1] + (roman[2] or "").lower()
        forms = [word.lower(), word.capitalize(), word]
        counts = [len(ids) for ids in self.encode(forms)]
        if len(set(counts)) == 1 and counts[0] > 1:
            return word
        return forms[counts.index(min(counts))]

    def write(self, t: Translation, memo: bool) -> Translation:
        """`t` (and its alternatives) in capitals if the line was."""
        if not memo:
            return t
        return dataclasses.replace(
            t, text=t.text.upper(), alternatives=[a.upper() for a in t.alternatives]
        )
