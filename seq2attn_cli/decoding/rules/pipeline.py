"""The rules around the search, listed once: each reads a line before the search, and writes
the translation back after it, in the reverse order (OpenNMT-py's transforms, lighter).

A rule is a small object built for one model (`of`, None where it does not apply): its
`name`, what `s2a inspect` says it `did`, `read` (a line -> the line as the next rule takes
it, and what the rule must remember of it) and `write` (a translation and that memo -> the
translation). One rule cuts a line into parts (parts.py: `cut` and `join`): the rules before
it read the whole line and write the joined translation, the rules after it read and write
each part, and each of the beam's runners-up. A translation records the names of the rules
whose `write` changed its text or pieces (`Translation.changed_by`), in the order they wrote.
A new rule is one file and one line in RULES.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ...config import ConfidenceConfig
from ...data.subwords import Subwords
from ..explain.confidence import Judge
from ..translation import Translation, distinct
from .articles import Articles
from .capitals import Capitals
from .clean import Clean
from .glossary import Glossary
from .letters import Letters
from .markers import Markers
from .numbers import Numbers
from .parts import Parts
from .quotes import Quotes
from .symbols import Symbols
from .urls import Urls

# In the order they read a line; translations are written back from the last to the first.
# The confidence is judged where the letters are written back and the URLs not yet.
RULES: tuple[Any, ...] = (
    Clean,
    Urls,
    Symbols,
    Capitals,
    Glossary,
    Judge,
    Letters,
    Parts,
    Markers,
    Quotes,
    Articles,
    Numbers,
)
# a line given with its translation (`s2a align`, `inspect --target`), read as the model reads
# it whole: nothing set aside or stood in that the given translation keeps as it is (read as
# the word URL, "01 23 45 67 89" aligned by its first group alone)
SET_ASIDE = ("markers", "urls", "symbols", "capitals", "numbers")
GIVEN = tuple(kind.name for kind in RULES if kind.name not in SET_ASIDE)
# validation scores what `s2a translate` writes from the ids the corpus was encoded to
VALIDATION = ("quotes", "articles")
# a target given to `s2a inspect --target`, read as the model would write it, and rated
FORCED = ("confidence", "letters", "quotes")
# a text as the model's pieces spell it, nothing else changed: the model's own words on the
# /walk page, and `s2a evaluate`'s check of a test file's columns
SPELLING = ("quotes",)


@dataclass(frozen=True, kw_only=True)
class Setting:
    """What the rules know of the model they are built for (and of the glossary asked for)."""

    subwords: Subwords
    languages: tuple[str | None, str | None]  # (source, target), as config.json has them
    spaced_quotes: bool  # the model reads and writes opening quotes spaced off
    max_chars: int  # the longest line it takes
    max_pieces: int  # the longest source in pieces it was trained on
    confidence: ConfidenceConfig = dataclasses.field(default_factory=ConfidenceConfig)
    glossary: Mapping[str, str] | None = None  # French term -> English (rules/glossary.py)


class Rule(Protocol):
    """A rule around the search: a line read before it, a translation written after it."""

    name: str
    did: str  # what `s2a inspect` says it did: "set a/an by the next word"

    def read(self, text: str) -> tuple[str, Any]: ...
    def write(self, t: Translation, memo: Any) -> Translation: ...


class Cut(Protocol):
    """The rule that cuts a line into parts, each searched alone, and joins them back."""

    name: str
    did: str

    def cut(self, text: str, count: Callable[[str], int]) -> list[str]: ...
    def join(self, parts: list[Translation]) -> Translation: ...


@dataclass(frozen=True)
class Part:
    """A line, or one part of a long one, as the model reads it."""

    text: str  # as the rules before the cut read it
    read: str  # as all the rules read it: what the model reads
    ids: list[int]  # its SentencePiece ids, of `read`
    memos: list[Any]  # what each rule after the cut remembers of it


@dataclass(frozen=True)
class Line:
    """One input line as the rules read it: what the rules before the cut remember of it,
    and its parts (most lines: one)."""

    memos: list[Any]
    parts: list[Part]


class Pipeline:
    """The rules of RULES that apply to one model (or the named ones), ready to run."""

    def __init__(self, *, setting: Setting, names: Sequence[str] | None = None) -> None:
        if unknown := set(names or ()) - {kind.name for kind in RULES}:
            raise ValueError(f"no rule named {', '.join(sorted(unknown))}")
        built = [rule for kind in RULES if (rule := kind.of(setting)) is not None]
        self.rules = [rule for rule in built if names is None or rule.name in names]
        self.subwords = setting.subwords
        at = next((k for k, rule in enumerate(self.rules) if hasattr(rule, "cut")), None)
        self.cut: Cut | None = None if at is None else self.rules[at]
        self.before: list[Rule] = self.rules if at is None else self.rules[:at]
        self.after: list[Rule] = [] if at is None else self.rules[at + 1 :]

    def said(self, names: list[str]) -> list[str]:
        """What `s2a inspect` says each named rule did."""
        did = {rule.name: rule.did for rule in self.rules}
        return [did[name] for name in names]

    def read(self, texts: list[str]) -> list[Line]:
        """Each line as the rules read it, its parts in SentencePiece ids."""
        lines = [_read(self.before, text) for text in texts]
        wholes = [_read(self.after, text) for text, _ in lines]
        # one call for all: SentencePiece spends ~60 us per call on 1-line batches
        encoded = self.subwords.encode([read for read, _ in wholes])
        return [
            Line(memos=memos, parts=self._parts(text, Part(text, read, ids, memos=after)))
            for (text, memos), (read, after), ids in zip(lines, wholes, encoded, strict=True)
        ]

    def _parts(self, text: str, whole: Part) -> list[Part]:
        """`text` (read whole: `whole`) in the parts the cut makes of it."""
        if self.cut is None:
            return [whole]

        def count(part: str) -> int:
            return len(whole.ids) if part == text else len(self.encode(part))

        parts = self.cut.cut(text, count)
        if parts == [text]:
            return [whole]
        reads = [_read(self.after, part) for part in parts]
        encoded = self.subwords.encode([read for read, _ in reads])
        return [
            Part(part, read, ids, memos)
            for part, (read, memos), ids in zip(parts, reads, encoded, strict=True)
        ]

    def whole(self, line: Line) -> list[int]:
        """The ids of a line read whole, its parts as one (a target given for all of it)."""
        if len(line.parts) == 1:
            return line.parts[0].ids
        return self.encode(" ".join(part.text for part in line.parts))

    def encode(self, part: str) -> list[int]:
        """The ids of a line or part as the rules after the cut read it."""
        return self.subwords.encode([_read(self.after, part)[0]])[0]

    def write_part(self, part: Part, best: Translation, others: list[Translation]) -> Translation:
        """A part's translation (and the beam's runners-up, as its alternatives) written back
        by the rules after the cut."""
        best = _write(self.after, part.memos, best)
        texts = [_write(self.after, part.memos, t).text for t in others]
        return dataclasses.replace(best, alternatives=distinct(texts, best.text))

    def rewrite(self, t: Translation) -> Translation:
        """`t` written back by rules that remember nothing of the line (VALIDATION, WALK)."""
        return _write(self.rules, [None] * len(self.rules), t)

    def write(self, line: Line, parts: list[Translation]) -> Translation:
        """A line's translation: its parts' joined by the cut, written back by the rules
        before it."""
        if self.cut is None:
            (t,) = parts
        else:
            t = self.cut.join(parts)
            if len(parts) > 1:
                t = dataclasses.replace(t, changed_by=[*t.changed_by, self.cut.name])
        return _write(self.before, line.memos, t)


def _read(rules: list[Rule], text: str) -> tuple[str, list[Any]]:
    """`text` read by each rule in turn, and what each remembers of it."""
    memos = []
    for rule in rules:
        text, memo = rule.read(text)
        memos.append(memo)
    return text, memos


def _write(rules: list[Rule], memos: list[Any], t: Translation) -> Translation:
    """`t` written back by each rule, the last first, each that changed it recorded."""
    for rule, memo in zip(reversed(rules), reversed(memos), strict=True):
        written = rule.write(t, memo)
        if (written.text, written.tgt_tokens) != (t.text, t.tgt_tokens):
            written = dataclasses.replace(written, changed_by=[*t.changed_by, rule.name])
        t = written
    return t
