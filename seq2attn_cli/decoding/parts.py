"""Lines longer than the model translates well, cut into parts it translates one by one.

A news line often holds more pieces than the model was trained on (100 at most; 103 of the
3,000 lines of newstest2013 hold more), and the model translates sentences of 70 pieces and
more poorly, because training holds few of them. Rather than translate the first part only,
s2a cuts such a line where a translator would: between its sentences first, then at the
clause mark (; : , and dashes) nearest the middle of a part still too long, then at the
space nearest the middle, and a run with no space (a URL) between characters. Each part is
translated as a sentence of its own, so a part's translation depends on the part alone, and
the translations are joined with spaces. The rules after the search (articles.py,
letters.py) see one part at a time: an "a" that ends a part keeps the model's choice.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Where a sentence may end: . ! ? or … (with closing quotes or brackets), a space, then what
# can start a sentence. A full stop after an initial or a title ("M. Dupont") is not an end.
SENTENCE_END = re.compile(r"(\w*)[.!?…]+[\"'»”)\]]*\s+(?=[\"«“(\[A-ZÀ-Ý0-9])")
TITLES = {"M", "MM", "Mme", "Mmes", "Mlle", "Mlles", "Me", "Dr", "Pr", "St", "Ste", "Mgr"}
CLAUSE_MARK = re.compile(r"[;:,]\s+|\s+[-–—]\s+")
SPACE = re.compile(r"\s+")

# Longest part, in source pieces. On newstest2012 (1,000 lines, the validation set; beam 5,
# int8, the embedded model of 2026-12-01), cutting at 40 / 60 / 70 / 80 / 90 / 100 pieces
# gave BLEU 16.19 / 16.55 / 16.62 / 16.58 / 16.41 / 16.37 (100 = only what does not fit).
PART_PIECES = 70


def split(text: str, fits: Callable[[str], bool]) -> list[str]:
    """Cut `text` into parts that each fit: at sentence ends, then clause marks, then spaces."""
    if fits(text):
        return [text]
    sentences = sentences_of(text)
    if len(sentences) > 1:
        return [part for sentence in sentences for part in split(sentence, fits)]
    for boundary in (CLAUSE_MARK, SPACE):
        cuts = [m.end() for m in boundary.finditer(text) if 0 < m.start() and m.end() < len(text)]
        if cuts:
            middle = min(cuts, key=lambda c: abs(2 * c - len(text)))
            return split(text[:middle].rstrip(), fits) + split(text[middle:], fits)
    if len(text) < 2:  # one character that does not fit: nothing smaller to cut it into
        return [text]
    half = len(text) // 2  # a run without spaces (a URL, a hash): cut between characters
    return split(text[:half], fits) + split(text[half:], fits)


def sentences_of(text: str) -> list[str]:
    """`text` cut after every sentence end, the spaces of each cut dropped."""
    parts, start = [], 0
    for m in SENTENCE_END.finditer(text):
        word = m.group(1)
        initial = len(word) == 1 and word.isupper()
        if m.group().startswith(f"{word}.") and (initial or word in TITLES):
            continue
        parts.append(text[start : m.end()].rstrip())
        start = m.end()
    parts.append(text[start:])
    return [p for p in parts if p]
