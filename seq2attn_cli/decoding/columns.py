"""A line's columns: the text between its tabs, each translated as a line of its own, the tabs
and the spaces before each column's first word written back as given (a blank column stays
empty, as a blank line does).

A tab in a line is no space between words: it is a table's column break (a TSV piped through
`s2a translate`, "id<TAB>phrase"), or indentation. Read as a space, as cleaning read every
space, "Bonjour.<TAB>Merci." came out "Good morning. Thanks." and "  Le chat dort." lost its
indentation: the columns were lost to whoever read the output. A line without a tab or
leading space comes out exactly as before.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .rules.parts import by_rank, joined
from .translation import Translation, distinct


@dataclass(frozen=True)
class Column:
    """One column of a line: the spaces before its first word, and its text."""

    lead: str
    text: str


def columns_of(line: str) -> list[Column]:
    """`line` cut at its tabs, each column's leading spaces set apart."""
    cells = line.split("\t")
    return [Column(cell[: len(cell) - len(cell.lstrip())], cell.lstrip()) for cell in cells]


def in_columns(columns: list[Column], done: list[Translation]) -> Translation:
    """The translations of a line's columns (`done`, one each) as the line's translation."""
    if len(columns) == 1 and not columns[0].lead:  # nearly every line: as the rules wrote it
        return done[0]
    words = [t for t in done if t.src_tokens]  # a blank column has no pieces to join
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
