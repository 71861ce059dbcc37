"""Inline markup carried over to a translation: each tag goes around the target words that
attention aligns to the source words it wrapped, as Bergamot (Firefox Translations) does.

A format module (html.py, markdown.py, srt.py) reads a document into chunks (chunks.py): text
written as it was, `Plain` runs and `Inline` runs with their `Open`/`Close` tag pairs and
`Keep` atoms. `sources` cuts each run into sentences (parts.sentences_of),
`documents.translated` translates them all in one call and `render` writes the document back.
The tags of a sentence nest as in the source, and so they do in the output: a tag's target
words lie within its parent's, siblings never overlap, and a tag whose words could not be kept
apart is written empty, never dropped or doubled (in Markdown, which cannot write empty
emphasis, as its `Open.empty` text). A run whose tags do not nest in the source keeps each
tag as a `Keep`, placed the same way.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping
from typing import Any

from ..decoding.explain.links import aligned_targets
from ..decoding.rules.parts import sentences_of, split
from .chunks import Chunk, Inline, Item, Part, Plain
from .placement import Atom, Tag, place
from .runs import Point, Run, flattened, joined

WORD = re.compile(r"\S+")
FULL_STOP = re.compile(r"[.!?…:;]\W*$")  # a source sentence that ends as a sentence does


def sources(chunks: list[Chunk], limit: int | None = None) -> list[str]:
    """Every sentence the chunks ask to translate, in order (Plain runs as one each).

    A sentence longer than `limit` characters (what the model takes) is cut into parts as
    a long line is (parts.split), unless the cut would fall inside a tag.
    """
    found = []
    for chunk in chunks:
        if isinstance(chunk, Plain):
            found.append(_clean(chunk.source))
        elif isinstance(chunk, Inline):
            run = flattened(joined(chunk))
            found += [_clean(run.text[a:b]) for a, b in _segments(run, limit)]
            found += [_clean(p.source) for p in _plains(chunk.items)]
    return [s for s in found if s]


def render(chunks: list[Chunk], done: Mapping[str, Any], limit: int | None = None) -> str:
    """The document written back, each sentence replaced by its Translation in `done`."""
    out = []
    for chunk in chunks:
        if isinstance(chunk, str):
            out.append(chunk)
        elif isinstance(chunk, Plain):
            out.append(_plain(chunk, done))
        else:
            out.append(_inline(chunk, done, limit))
    return "".join(out)


def _clean(text: str) -> str:
    """The words of a run, one space between each: what the model is given."""
    return " ".join(text.split())


def _plain(plain: Plain, done: Mapping[str, Any]) -> str:
    """A Plain run's translation, its surrounding spaces kept."""
    source = _clean(plain.source)
    if not source:
        return plain.escape(plain.source)
    lead = plain.source[: len(plain.source) - len(plain.source.lstrip())]
    trail = plain.source[len(plain.source.rstrip()) :]
    return lead + plain.escape(_unstopped(source, done[source].text)) + trail


def _unstopped(source: str, text: str) -> str:
    """`text` without the full stop, "!" or "?" the model ends a fragment with (an alt text, a
    heading, a cell: "Horaires" came out "Horary!", "Projet 🌱" "Project 🌱.") when its source
    ends with none (an ellipsis stays)."""
    if not FULL_STOP.search(source) and re.search(r"[^\s.!?…][.!?]$", text):
        return text[:-1]
    return text


def _parts(parts: tuple[Part, ...], done: Mapping[str, Any]) -> str:
    """A tag's text, with its translated attributes."""
    return "".join(p if isinstance(p, str) else _plain(p, done) for p in parts)


def _plains(items: list[Item]) -> list[Plain]:
    """The Plain runs inside an Inline's tags."""
    parts = [p for i in items if not isinstance(i, str) for p in i.parts]
    return [p for p in parts if isinstance(p, Plain)]


def _segments(run: Run, limit: int | None) -> list[tuple[int, int]]:
    """The run cut into sentences, as (start, end) characters; a tag's words stay in one."""
    starts, cursor = [], 0
    for sentence in _sentences(run.text, limit):
        cursor = run.text.find(sentence, cursor)
        starts.append(cursor)
        cursor += len(sentence)
    starts = starts[1:] + [p.pos + 1 for p in run.points if p.cuts]  # after a break's space
    cores = [_core_of(run.text, s.start, s.end) for s in run.spans]
    starts = sorted({a for a in starts if not any(cs < a < ce for cs, ce in cores)})
    bounds = [0, *starts, len(run.text)]
    # spaces between two sentences go with the next, and so does what is in them (an image
    # after a <br>): dropped, it was lost
    segments: list[tuple[int, int]] = []
    blank = None  # where such spaces start
    for a, b in zip(bounds, bounds[1:], strict=False):
        if not run.text[a:b].strip():
            blank = a if blank is None and segments else blank
            continue
        segments.append((a if blank is None else blank, b))
        blank = None
    return segments


def _sentences(text: str, limit: int | None) -> list[str]:
    """A run's sentences, one longer than `limit` characters cut where a long line is."""
    found = sentences_of(text)
    if limit is None:
        return found
    return [part for s in found for part in split(s, lambda p: len(_clean(p)) <= limit)]


def _core_of(text: str, start: int, end: int) -> tuple[int, int]:
    """text[start:end] without its surrounding spaces, as (start, end)."""
    inner = text[start:end]
    return start + len(inner) - len(inner.lstrip()), end - len(inner) + len(inner.rstrip())


def _inline(chunk: Inline, done: Mapping[str, Any], limit: int | None) -> str:
    """An Inline written back: each sentence translated, its tags placed by attention."""
    run = flattened(joined(chunk))
    segments = _segments(run, limit)
    if not segments:  # no words: nothing to translate, every tag as it was
        return "".join(
            chunk.escape(i) if isinstance(i, str) else _parts(i.parts, done) for i in chunk.items
        )
    lead = len(run.text) - len(run.text.lstrip())  # spaces before the first word
    lead = min([lead] + [p.pos for p in run.points])  # those after an atom go with it
    out = [chunk.escape(run.text[:lead])]
    for k, (a, b) in enumerate(segments):
        last = k == len(segments) - 1
        inside = [
            n for n, s in enumerate(run.spans) if a <= _core_of(run.text, s.start, s.end)[0] < b
        ]
        points = [p for p in run.points if a <= p.pos < b or (last and p.pos >= b)]
        if k == 0:
            points += [p for p in run.points if p.pos < a]
        out.append(_sentence(run, (a, b), inside, points, done, chunk.escape))
        gap = run.text[a:b][len(run.text[a:b].rstrip()) :]
        words_end = len(run.text[:b].rstrip())
        ending = [p for p in points if p.pos >= words_end]  # after the sentence's last word
        if last:  # the run's trailing spaces, those before a trailing atom written by it
            out.append(run.text[max([words_end] + [p.pos for p in ending]) :])
        elif not any(p.breaks for p in ending):
            out.append("\n" if "\n" in gap else " ")
    return _atoms_in("".join(out), run, done)


def _atoms_in(text: str, run: Run, done: Mapping[str, Any]) -> str:
    """`text` with each atom's stand-in (runs.STAND_IN) written as the atom; one the
    translation lost (never yet) written at its end, not dropped."""
    for stand_in, parts in run.atoms.items():
        atom = _parts(parts, done)
        if stand_in in text:
            text = text.replace(stand_in, atom, 1).replace(stand_in, "")
        else:
            core = text.rstrip()
            text = core + " " + atom + text[len(core) :]
    return text


def _spaced(run: Run, p: Point) -> bool:
    """Whether the source has a space right before point p: not the one a line break before
    it stands for (`_run`), nor one that an earlier point at the same place comes after."""
    if p.pos == 0 or not run.text[p.pos - 1].isspace():
        return False
    if any(q.breaks and q.pos == p.pos - 1 for q in run.points):
        return False
    return next(q for q in run.points if q.pos == p.pos) is p


def _sentence(
    run: Run,
    bounds: tuple[int, int],
    inside: list[int],
    points: list[Point],
    done: Mapping[str, Any],
    escape: Callable[[str], str],
) -> str:
    """One sentence of a run translated, its tags and atoms placed (placement.py)."""
    a, b = bounds
    matches = list(WORD.finditer(run.text, a, b))
    starts, ends = [m.start() for m in matches], [m.end() for m in matches]
    words = [m.group() for m in matches]
    index = {n: k for k, n in enumerate(inside)}
    tags = []
    for n in inside:
        span = run.spans[n]
        cs, ce = _core_of(run.text, span.start, span.end)
        first, last = bisect_right(ends, cs), bisect_left(starts, ce) - 1
        tags.append(
            Tag(
                first=first,
                last=last,
                open=_parts(span.open.parts, done),
                close=_parts(span.close, done),
                parent=index.get(span.parent) if span.parent is not None else None,
                outer_start=cs <= starts[first] and not words[first][0].isalnum(),
                outer_end=ce >= ends[last] and not words[last][-1].isalnum(),
                empty=span.open.empty,
            )
        )
    atoms = [
        Atom(
            after=bisect_left(starts, p.pos) - 1,  # the word it follows, or is inside
            text=_parts(p.parts, done),
            parent=index.get(p.parent) if p.parent is not None else None,
            space=_spaced(run, p),
            glued=p.pos < len(run.text)
            and not run.text[p.pos].isspace()
            and not run.text[p.pos].isalnum(),
            breaks=p.breaks,
            end=p.breaks and bool(ends) and p.pos >= ends[-1],  # a line break after it all
            trailing=not any(q.breaks for q in run.points if q.pos == p.pos)  # its space
            and p.pos < len(run.text)
            and run.text[p.pos].isspace(),
        )
        for p in points
    ]
    tgt, aligned = aligned_targets(words, done[" ".join(words)])
    if tgt:
        tgt[-1] = _unstopped(words[-1], tgt[-1])
    return place(tags, atoms, tgt, aligned, escape)
