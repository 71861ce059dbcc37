"""A line's columns: the text between its tabs, each translated as a line of its own, the tabs
and the spaces before each column's first word written back as given (a column of spaces
alone comes out empty, as a blank line does).

A tab in a line is no space between words: it is a table's column break (a TSV piped through
`s2a translate`, "id<TAB>phrase"), or indentation. Read as a space, as cleaning read every
space, "Bonjour.<TAB>Merci." came out "Good morning. Thanks." and "  Le chat dort." lost its
indentation: the columns were lost to whoever read the output. A line without a tab or
leading space comes out exactly as before, and so does one with no word in any column (a blank
line) or one longer than s2a translates (cut, as any: the columns' attention is joined into
one matrix, whose size the line limit bounds). A tab between two words of one sentence (text
copied out of a PDF) cuts it as well: s2a cannot tell it from a column's end.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..data.subwords import EOS_PIECE
from .explain.alignment import WORD_START
from .rules.clean import copied
from .rules.parts import by_rank, joined
from .translation import Translation, distinct


@dataclass(frozen=True)
class Column:
    """One column of a line: the spaces before its first word, and its text."""

    lead: str
    text: str


def columns_of(line: str, longest: int) -> list[Column]:
    """`line` cut at its tabs, each column's leading spaces (" ": indentation, no other
    blank) set apart; one column, the line, if it is longer than `longest` characters
    (rules/clean.py cuts it)."""
    if not line.startswith(" ") and "\t" not in line or len(line) > longest:
        return [Column("", line)]
    cells = line.split("\t")
    return [Column(cell[: len(cell) - len(cell.lstrip(" "))], cell.lstrip(" ")) for cell in cells]


def in_columns(columns: list[Column], done: list[Translation]) -> Translation:
    """The translations of a line's columns (`done`, one each) as the line's translation."""
    if len(columns) == 1 and not columns[0].lead or not any(t.text for t in done):
        return done[0]  # nearly every line: as the rules wrote it; or blank
    attends = next((t.attends for t in done if t.src_tokens), True)
    words = [_as_words(t, attends) for t in done if t.text]  # a blank column: nothing to join
    whole = joined(words) if words else done[0]
    leads = [c.lead for c in columns]
    text = "\t".join(map(_led, leads, [t.text for t in done]))
    ranked = ["\t".join(map(_led, leads, texts)) for texts in by_rank(done)]
    return dataclasses.replace(
        whole,
        source="\t".join(map(_led, leads, [t.source for t in done])),
        text=text,
        alternatives=distinct(ranked, text),
        truncated=any(t.truncated for t in done),
        parts=sum(t.parts for t in words) or 1,
        confidence=min((t.confidence for t in words), default=whole.confidence),
        dropped=[word for t in done for word in t.dropped],
        changed_by=list(dict.fromkeys(name for t in done for name in t.changed_by)),
    )


def _led(lead: str, text: str) -> str:
    """`text` after its column's leading spaces; a blank column: nothing."""
    return lead + text if text else ""


def _as_words(t: Translation, attends: bool) -> Translation:
    """`t`, or if it was written back as given (the model reads nothing of it: "☃"), its words
    as pieces that each attend to themselves: left out of the join, the words after it were
    numbered one short in alignments."""
    if t.src_tokens:
        return t
    pieces = [WORD_START + word for word in t.text.split()]
    return dataclasses.replace(copied(t.text, [*pieces, EOS_PIECE], attends=attends), score=0.0)
