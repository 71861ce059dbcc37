"""Alignment error rate (Och & Ney 2003) against hand-made links, with precision and recall.

Gold links come in the format of the HLT-NAACL 2003 word alignment task (the shared set's
ABOUT.txt): one link a line, `SENTENCE TARGET_POSITION SOURCE_POSITION [S|P]`, positions
from 1 (English before French in the French-English set), S sure and P possible (a link
without a mark is sure). Alignments are Pharaoh lines, `source-target` from 0, one a
sentence. Plain text in, numbers out: no torch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

Link = tuple[int, int]  # (source word, target word), from 0


@dataclass(frozen=True)
class Gold:
    """One sentence's hand-made links: the sure ones and the possible ones (sure included)."""

    sure: frozenset[Link]
    possible: frozenset[Link]


@dataclass(frozen=True)
class Score:
    """AER, precision and recall over a set of sentences, and what they were counted on."""

    aer: float
    precision: float
    recall: float
    sentences: int
    links: int  # links proposed
    sure: int  # sure gold links


def read_gold(lines: Iterable[str], *, name: str = "gold") -> dict[int, Gold]:
    """Gold links by sentence number (from 1), from lines in the NAACL 2003 format."""
    sure: dict[int, set[Link]] = {}
    possible: dict[int, set[Link]] = {}
    for n, line in enumerate(lines, 1):
        fields = line.split()
        if not fields:
            continue
        try:
            sentence, tgt, src = (int(f) for f in fields[:3])
            mark = fields[3] if len(fields) > 3 else "S"
            if len(fields) < 3 or mark not in ("S", "P") or min(sentence, tgt, src) < 1:
                raise ValueError
        except ValueError:
            raise ValueError(
                f"{name}: line {n}: not a link: expected SENTENCE TARGET_POSITION "
                f"SOURCE_POSITION [S|P], positions from 1, not {line.strip()[:60]!r}"
            ) from None
        link = (src - 1, tgt - 1)
        possible.setdefault(sentence, set()).add(link)
        if mark == "S":
            sure.setdefault(sentence, set()).add(link)
    return {
        k: Gold(frozenset(sure.get(k, set())), frozenset(links)) for k, links in possible.items()
    }


def read_pharaoh(line: str, *, place: str = "alignment") -> set[Link]:
    """The links of one Pharaoh line: '0-0 1-2' -> {(0, 0), (1, 2)}."""
    links = set()
    for pair in line.split():
        src, dash, tgt = pair.partition("-")
        if not (dash and src.isdigit() and tgt.isdigit()):
            raise ValueError(f"{place}: {pair!r} is not a link: expected SOURCE-TARGET, as 0-1")
        links.add((int(src), int(tgt)))
    return links


def score(found: list[set[Link]], gold: dict[int, Gold]) -> Score:
    """AER, precision and recall of the links found for sentences 1, 2, ... against `gold`."""
    if gold and max(gold) > len(found):
        raise ValueError(
            f"the gold links go to sentence {max(gold)}, the alignments hold {len(found)}"
        )
    proposed = sure = hits_sure = hits_possible = 0
    empty = Gold(frozenset(), frozenset())
    for k, links in enumerate(found, 1):
        g = gold.get(k, empty)
        proposed += len(links)
        sure += len(g.sure)
        hits_sure += len(links & g.sure)
        hits_possible += len(links & (g.possible | g.sure))
    return Score(
        aer=1 - (hits_sure + hits_possible) / (proposed + sure) if proposed + sure else 0.0,
        precision=hits_possible / proposed if proposed else 0.0,
        recall=hits_sure / sure if sure else 0.0,
        sentences=len(found),
        links=proposed,
        sure=sure,
    )
