"""Lines cut into their sentences, and sentences longer than the model translates well into
parts, translated one by one.

The model was trained on pairs of one sentence each, mostly: given two or more, it often
translates the first and stops ("Le magasin est fermé. Revenez lundi." -> "The store is
closed."). So s2a cuts every line between its sentences, as Argos Translate and Firefox
Translations do. A news line may also hold more pieces than the model was trained on (100 at
most; 103 of the 3,000 lines of newstest2013 hold more), and the model translates sentences
of 70 pieces and more poorly, because training holds few of them: such a sentence is cut at
the clause mark (; : , and dashes) nearest the middle of a part still too long, then at the
space nearest the middle, and a run with no space (a URL) between characters. Each part is
translated as a sentence of its own, so a part's translation depends on the part alone, and
the translations are joined with spaces. The rules after this one (pipeline.RULES: quotes.py,
articles.py) read and write one part at a time: an "a" that ends a part keeps the model's
choice.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...data.subwords import EOS_PIECE
from ..translation import Translation, distinct
from .dates import dated
from .markers import MARKER, SIGNS

if TYPE_CHECKING:
    from .pipeline import Setting

# Where a sentence may end: . ! ? or … (with closing quotes or brackets), a space, then what
# can start a sentence, a dialogue's dash too ("- Bonjour. - Salut !" lost its "Bonjour"). A
# full stop after an initial, a title ("M. Dupont") or an abbreviation ("cf. Dupont") is not
# an end, nor one after a word that numbers ("p. 12", "art. 3", "vol. II") before a number:
# cut there, "Lisez la p. 12" was translated "Read the gun. 12". Of the dev sets' French
# lines, 3 are cut otherwise than without these lists ("tél. 01…", "Midoriya vs. Todoroki",
# "La juge militaire Col. Denise Lind").
SENTENCE_END = re.compile(
    rf"(\w*)[.!?…]+[\"'»”)\]]*\s+(?=[\"«“(\[A-ZÀ-Ý0-9]|[{re.escape(SIGNS)}] [\"«“A-ZÀ-Ý])"
)
TITLES = {"M", "MM", "Mme", "Mmes", "Mlle", "Mlles", "Me", "Dr", "Pr", "St", "Ste", "Mgr", "Prof",
          "Gén", "Col", "Cdt", "Lt", "Sgt", "Cne"}  # fmt: skip
ABBREVIATIONS = {"cf", "chap", "fig", "env", "éd", "vs", "coll", "réf", "tél", "av", "apr", "bd",
                 "boul"}  # fmt: skip
NUMBER = re.compile(r"\d|[IVXLCDM]+\b|[A-Z]\.")  # 12, II, L. (the article L. 121-1)
# before a number only: words too ("un vol."), names ("Al.") and smileys (":p. Mais")
NUMBERING = {"p", "pp", "art", "vol", "no", "n", "t", "ch", "ex", "sect", "ann"}
CLAUSE_MARK = re.compile(r"[;:,]\s+|\s+[-–—]\s+")
SPACE = re.compile(r"\s+")

# Longest part, in source pieces. On newstest2012 (1,000 lines, the validation set; beam 5,
# int8, the embedded model of 2026-12-01), cutting at 40 / 60 / 70 / 80 / 90 / 100 pieces
# gave BLEU 16.19 / 16.55 / 16.62 / 16.58 / 16.41 / 16.37 (100 = only what does not fit).
PART_PIECES = 70


# Every line cut at its sentence ends, not only one that does not fit: on the lines of two or
# more sentences of the dev sets (embedded model, beam 5, int8, the same lines both ways),
# BLEU whole -> cut: wmt24pp (513 lines) 18.09 -> 18.53, WMT chat (190) 19.44 -> 20.72,
# MTNT (363) 14.96 -> 15.25, XNLI (135) 17.42 -> 18.14, newstest2013 (30) 14.42 -> 15.26,
# Tatoeba test (16) 51.26 -> 62.49, ud-pud (7) 4.28 -> 10.28; wmt24pp's took 67 s, not 97.


def split(text: str, fits: Callable[[str], bool]) -> list[str]:
    """Cut `text` into its sentences, and each that does not fit at clause marks, then spaces."""
    sentences = sentences_of(text)
    if len(sentences) > 1:
        return [part for sentence in sentences for part in split(sentence, fits)]
    if fits(text):
        return [text]
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
        if m.group().startswith(f"{m.group(1)}.") and not_an_end(m.group(1), text[m.end() :]):
            continue
        if dated(text, m.start()):  # "14 sept. 2001": cut there, "2001" came out "Go away."
            continue
        if m.start() == 0 and (marker := MARKER.match(text)) and marker.end() == m.end():
            continue  # "1. Ouvrez": a list item's number (markers.py), not a sentence
        parts.append(text[start : m.end()].rstrip())
        start = m.end()
    parts.append(text[start:])
    return [p for p in parts if p]


def not_an_end(word: str, after: str) -> bool:
    """Whether a full stop after `word`, before the text `after`, is no sentence end."""
    initial = len(word) == 1 and word.isupper()
    numbered = word.lower() in NUMBERING and NUMBER.match(after) is not None
    return initial or word in TITLES or word.lower() in ABBREVIATIONS or numbered


def joined(parts: list[Translation]) -> Translation:
    """The translations of a line's parts as one: pieces end to end, attention block by block.

    A part's own </s> is not shown: its row is dropped (the last part's stays) and the weight
    on its </s> column goes to the line's </s>, so each row still sums to one.
    """
    if len(parts) < 2:
        return parts[0] if parts else Translation("", "", 0.0, [], [], [])
    src = [p for part in parts for p in part.src_tokens[:-1]] + [EOS_PIECE]
    tgt = [p for part in parts for p in part.tgt_tokens[:-1]] + [EOS_PIECE]
    searched = [p for part in parts for p in (part.model_tokens or part.tgt_tokens)[:-1]]
    searched += [EOS_PIECE]
    weights, offset = [], 0
    for k, part in enumerate(parts):
        width = len(part.src_tokens) - 1  # this part's pieces, without its </s>
        for row in part.weights[: None if k == len(parts) - 1 else -1]:
            if not part.attends:  # --attention none: one column, the context vector
                weights.append(row)
                continue
            full = array("f", [0.0]) * len(src)  # (src_len,)
            full[offset : offset + width] = array("f", row[:width])  # a row may be a list
            full[-1] = row[width]
            weights.append(full)
        offset += width
    # a piece's mean log-probability over the searched parts: a copy took no step to score
    lengths = [len(part.tgt_tokens) if part.searched else 0 for part in parts]
    text = " ".join(part.text for part in parts if part.text)
    return Translation(
        source=" ".join(part.source for part in parts),
        text=text,
        score=sum(p.score * n for p, n in zip(parts, lengths, strict=True)) / max(1, sum(lengths)),
        src_tokens=src,
        tgt_tokens=tgt,
        weights=weights,
        parts=len(parts),
        model_tokens=searched if searched != tgt else [],
        alternatives=distinct([" ".join(filter(None, texts)) for texts in by_rank(parts)], text),
        changed_by=list(dict.fromkeys(name for part in parts for name in part.changed_by)),
        attends=parts[0].attends,
    )


def by_rank(translations: list[Translation]) -> list[list[str]]:
    """For each rank k, each translation's k-th alternative (its text if it has none)."""
    most = max((len(t.alternatives) for t in translations), default=0)
    return [[(t.alternatives[k : k + 1] or [t.text])[0] for t in translations] for k in range(most)]


@dataclass(frozen=True)
class Parts:
    """The rule that cuts a line into sentences and parts (`cut`) and joins their translations."""

    limit: int  # the most pieces a part may have
    name: str = "parts"
    did: str = "translated the line in parts and joined them"

    @classmethod
    def of(cls, setting: Setting) -> Parts:
        """The rule for a model (pipeline.Setting): parts of PART_PIECES, or its own limit."""
        return cls(limit=min(setting.max_pieces, PART_PIECES))

    def cut(self, text: str, count: Callable[[str], int]) -> list[str]:
        """`text` in parts of at most `limit` pieces (`count`: a part's pieces); most: one."""
        return split(text, lambda part: count(part) <= self.limit)

    def join(self, parts: list[Translation]) -> Translation:
        """The parts' translations as one (`joined`)."""
        return joined(parts)
