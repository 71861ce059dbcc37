"""An `Inline` run flattened for placement (inline.py): its text, the tag pairs over it as
character spans, and its kept atoms as points; a tag pair around no word (an image's link, a
citation's "[1]") folded into one atom first, and atoms joined by marks alone into one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice

from .chunks import Close, Inline, Item, Keep, Open, Part

# what the model reads in an atom's place, one character a run's atom (U+100000, U+100001...):
# private use, which no font draws and no piece holds, so that it is read as the word URL and
# written back where the model put it (urls.py). Left out of what the model read instead, the
# atom was placed after the word aligned to the one before it: on the 30 sentences of
# bench/url_placeholder.txt with inline code for their URLs (embedded model, beam 5), 11 came
# out better read so, 4 worse ("Write if `make test` you have questions", "(b`git pull`)",
# "our new website is! `...`")
STAND_IN = 0x100000
ATOMS = 0xFFFE  # as many as plane 16 holds; a run's next ones are placed as an image is
MAX_DEPTH = 32  # tags nested deeper than this in one run are kept as they were, not placed
# a reference mark, all that a tag holds: a citation's [1] or [12a], a note's [a], [iv] or
# [n 3]; not a label's word ("[Attention]", "[modifier]": translated)
REFERENCE = re.compile(r"\[(?:(?:n(?:ote)?[ \u00a0]?)?\d{1,4}[a-z]?|[a-zA-Z]|[ivxlc]{1,6})\]")


def without_stand_ins(text: str) -> str:
    """`text` without the atoms' stand-ins: what the user wrote, for a warning to name (a
    line of inline code alone warned of "\U00100000", a character no one typed)."""
    return "".join(c for c in text if not STAND_IN <= ord(c) < STAND_IN + ATOMS).strip()


@dataclass
class Span:
    """A tag pair over text[start:end] (characters), inside span `parent`."""

    start: int
    end: int
    open: Open
    close: tuple[Part, ...]
    parent: int | None


@dataclass
class Point:
    """A Keep at text[pos], inside span `parent`."""

    pos: int
    parts: tuple[Part, ...]
    parent: int | None
    breaks: bool = False
    cuts: bool = False


@dataclass
class Run:
    """An Inline flattened: its text, its tag pairs and its kept atoms."""

    text: str
    spans: list[Span] = field(default_factory=list)
    points: list[Point] = field(default_factory=list)
    atoms: dict[str, tuple[Part, ...]] = field(default_factory=dict)  # stand-in -> its atom


def _nested(items: list[Item]) -> list[Item] | None:
    """Items with each tag pair that wraps no word, or a reference mark, folded into one Keep;
    None if tags do not nest.

    (`<a href><img></a>` has no word to follow: it stays where it is, whole; nor has a
    citation's `<sup><a href="#n1">[1]</a></sup>`: read as words, it came out "milk.1]" and
    took the words around it into its link.)
    """
    stack: list[list[Item]] = [[]]
    for item in items:
        if isinstance(item, Open):
            stack.append([item])
            if len(stack) > MAX_DEPTH:
                return None
        elif isinstance(item, Close):
            if len(stack) == 1 or stack[-1][0].name != item.name:  # type: ignore[union-attr]
                return None
            group = stack.pop()
            words = "".join(i for i in group[1:] if isinstance(i, str)).strip()
            if words and not REFERENCE.fullmatch(words):
                stack[-1] += [*group, item]
                continue
            parts: list[Part] = [*group[0].parts]  # type: ignore[union-attr]
            for inner in group[1:]:
                parts += [inner] if isinstance(inner, str) else inner.parts
            stack[-1].append(Keep((*parts, *item.parts)))
        else:
            stack[-1].append(item)
    return stack[0] if len(stack) == 1 else None


def joined(chunk: Inline) -> list[Item]:
    """An Inline's items with atoms joined by marks alone into one ("<kbd>Ctrl</kbd>+<kbd>C</kbd>",
    "`a` / `b`"): placed apart, the model dropped the "+" and the keys came out swapped."""
    out: list[Item] = []
    for item in chunk.items:
        if isinstance(item, Keep) and not item.breaks and len(out) > 1 and _mark(out[-1]):
            before = out[-2]
            if isinstance(before, Keep) and not before.breaks:
                mark = chunk.escape(out.pop())  # type: ignore[arg-type]
                out[-1] = Keep((*before.parts, mark, *item.parts), word=before.word and item.word)
                continue
        out.append(item)
    return out


def _read_in_place(item: Item, run: Run, before: list[str], after: Iterable[Item]) -> bool:
    """Whether an atom is read as a word in its place: a word of the sentence (inline code),
    apart from the words around it, no letter or digit against it (a glued one, "`git`s", is
    placed after the word it follows, as an image is)."""
    if not isinstance(item, Keep) or not item.word or item.breaks or len(run.atoms) >= ATOMS:
        return False
    ahead = next((i for i in after if not isinstance(i, Open | Close)), "")
    last = next((t[-1] for t in reversed(before) if t), " ")
    first = ahead[0] if isinstance(ahead, str) and ahead else " "
    return not last.isalnum() and not first.isalnum()


def _mark(item: Item) -> bool:
    """Whether an item is text of marks alone, spaced or not ("+", " + ", "/"), on one line."""
    if not isinstance(item, str) or not item.strip() or "\n" in item:
        return False
    return not any(c.isalnum() for c in item)


def flattened(items: list[Item]) -> Run:
    """Flatten an Inline's items; tags that do not nest are all kept as they were."""
    nested = _nested(items)
    if nested is None:
        nested = [Keep(i.parts) if isinstance(i, Open | Close) else i for i in items]
    run = Run(text="")
    text: list[str] = []
    length, stack = 0, []
    for k, item in enumerate(nested):
        parent = stack[-1] if stack else None
        if _read_in_place(item, run, text, islice(nested, k + 1, None)):
            item = chr(STAND_IN + len(run.atoms))
            run.atoms[item] = nested[k].parts  # type: ignore[union-attr]
        if isinstance(item, str):
            text.append(item)
            length += len(item)
        elif isinstance(item, Open):
            stack.append(len(run.spans))
            run.spans.append(Span(length, -1, item, (), parent))
        elif isinstance(item, Close):
            span = run.spans[stack.pop()]
            span.end, span.close = length, item.parts
        else:
            run.points.append(Point(length, item.parts, parent, item.breaks, item.cuts))
            if item.breaks:
                text.append(" ")
                length += 1
    run.text = "".join(text)
    return run
