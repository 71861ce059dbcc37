"""Letters the model has no piece for: read as their base letter, written back as given.

A vocabulary trained on French and English text has no piece for the "á" of Sánchez or the
"č" of Čapek (90 of the 3,000 lines of newstest2013 hold such a letter, nearly all in
names), and SentencePiece reads a letter without a piece as <unk>, which the model drops:
"Sánchez" came out as "Snchez". s2a reads such a letter as its base letter (the model sees
"Sanchez", which it can copy), and writes the given letters back into any output word that
copies a source word it changed. Each letter becomes one letter, so positions line up.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

WORD = re.compile(r"\w+")
# letters Unicode does not write as a base letter plus accents
UNDECOMPOSED = {"Ł": "L", "ł": "l", "Ø": "O", "ø": "o", "Đ": "D", "đ": "d", "Ħ": "H", "ħ": "h"}


def base_letter(char: str) -> str | None:
    """The letter under the accents of `char` (á -> a, Š -> S), or None if it has none."""
    if char in UNDECOMPOSED:
        return UNDECOMPOSED[char]
    bare = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    return bare if len(bare) == 1 and bare != char else None


def fold(text: str, known: Callable[[str], bool]) -> tuple[str, dict[str, str]]:
    """`text` with each letter not `known` read as its base letter, if that one is known.

    Returns the folded text and, for each word it changed, folded word -> word as given.
    """
    read = {c: b for c in set(text) if not known(c) and (b := base_letter(c)) and known(b)}
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
