"""One sentence's tags moved onto its translation by attention (inline.py cuts the sentences).

Each source word is linked to target words by attention (decoding/explain/links.py).
A tag goes around the first to the last target word linked to the source words it wrapped,
clipped to its parent's words; siblings that would overlap are trimmed apart, and one left
with no word is written empty where it would start (or as its `empty` text: Markdown cannot
write `****`). So every tag appears once and they nest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..decoding.explain.links import CORE
from ..decoding.rules.urls import found


@dataclass
class Tag:
    """A tag pair over source words first..last; `outer_*`: it wraps their punctuation too."""

    first: int
    last: int
    open: str
    close: str
    parent: int | None
    outer_start: bool = False
    outer_end: bool = False
    lo: int = 0  # target words lo..hi; hi < lo: written empty, before word lo
    hi: int = -1
    empty: str | None = None  # written instead of the pair around nothing (chunks.Open)


@dataclass
class Atom:
    """Markup kept as it was, after source word `after` (-1: before the first word)."""

    after: int
    text: str
    parent: int | None
    space: bool  # a space before it in the source
    glued: bool = False  # punctuation right after it ("see <url>."): it goes before the word's
    breaks: bool = False  # a line break (<br>, a cue's): no space after it
    end: bool = False  # it follows the sentence: it goes after the last target word
    trailing: bool = False  # a space after it in the source: kept when it goes before a word


def place(
    tags: list[Tag],
    atoms: list[Atom],
    tgt: list[str],
    aligned: list[list[int]],
    escape: Callable[[str], str],
) -> str:
    """The target words with each tag around its aligned words and each atom after its own."""
    _ranges(tags, aligned, len(tgt))
    if not tgt:  # nothing came out: every tag and atom, in source order, around nothing
        return "".join(_empty(tags, atoms, None))
    before: dict[int, list[tuple[int | None, str]]] = {}
    after: dict[int, list[tuple[int | None, str, bool]]] = {}
    breaks: set[int] = set()  # target words followed by a line break
    for n, tag in enumerate(tags):
        if tag.hi < tag.lo and (tag.parent is None or tags[tag.parent].hi >= tags[tag.parent].lo):
            text = "".join(_empty(tags, atoms, n))
            if text and tag.empty is not None:  # Markdown: a link's URL, code it held, is a word
                text += " "
            before.setdefault(min(tag.lo, len(tgt) - 1), []).append((tag.parent, text))
    for atom in atoms:
        if atom.parent is not None and tags[atom.parent].hi < tags[atom.parent].lo:
            continue  # written inside its empty tag
        lo, hi = (
            (tags[atom.parent].lo, tags[atom.parent].hi)
            if atom.parent is not None
            else (0, len(tgt) - 1)
        )
        # a line break between words stays between words: at an edge it wrote an empty line,
        # and between two cues (srt.joined) a cue with no text
        between = atom.breaks and not atom.end and atom.after >= 0 and hi > lo
        if not atom.end and not between and (atom.after < 0 or not aligned[atom.after]):
            text = atom.text + (" " if atom.trailing else "")
            before.setdefault(lo, []).append((atom.parent, text))
        else:
            j = hi if atom.end else _after(atom.after, aligned, lo, hi)
            j = min(j, hi - 1) if between else j
            text = (" " if atom.space else "") + atom.text
            after.setdefault(j, []).append((atom.parent, text, atom.glued))
            breaks |= {j} if atom.breaks else set()
    words = [
        _word(k, w, tags, before.get(k, []), after.get(k, []), escape) for k, w in enumerate(tgt)
    ]
    last = len(words) - 1  # no space after a line break: the next line starts with its word
    return "".join(w + ("" if k == last or k in breaks else " ") for k, w in enumerate(words))


def _after(word: int, aligned: list[list[int]], lo: int, hi: int) -> int:
    """The target word an atom goes after: the last its source word is aligned to, or where the
    source word stood in the sentence when none is, within lo..hi."""
    if word >= 0 and aligned[word]:
        return min(max(max(aligned[word]), lo), hi)
    return min(max(lo + round((hi - lo + 1) * (word + 1) / len(aligned)) - 1, lo), hi)


def _ranges(tags: list[Tag], aligned: list[list[int]], n: int) -> None:
    """Each tag's target words: its aligned ones, within its parent's, apart from its siblings."""
    children: dict[int | None, list[int]] = {}
    for k, tag in enumerate(tags):
        children.setdefault(tag.parent, []).append(k)
    todo: list[int | None] = [None]
    while todo:
        parent = todo.pop()
        plo, phi = (0, n - 1) if parent is None else (tags[parent].lo, tags[parent].hi)
        kids = children.get(parent, [])
        for k in kids:
            tag = tags[k]
            hits = [j for i in range(tag.first, tag.last + 1) for j in aligned[i]]
            lo, hi = (min(hits), max(hits)) if hits else (plo, plo - 1)
            tag.lo, tag.hi = max(lo, plo), min(hi, phi)
            if tag.hi < tag.lo:  # nothing left within the parent: empty, at its nearest edge
                tag.lo = min(max(lo, plo), phi + 1)
                tag.hi = tag.lo - 1
        placed = sorted((k for k in kids if tags[k].hi >= tags[k].lo), key=lambda k: tags[k].lo)
        for prev, k in zip(placed, placed[1:], strict=False):
            a, b = tags[prev], tags[k]
            if b.lo > a.hi:
                continue
            if a.hi > a.lo and b.lo > a.lo:  # the earlier one gives up its overlap
                a.hi = b.lo - 1
            else:
                b.lo = a.hi + 1
                if b.hi < b.lo:
                    b.hi = b.lo - 1
        todo += kids


def _empty(tags: list[Tag], atoms: list[Atom], n: int | None) -> list[str]:
    """A tag written around nothing, with everything it held in the source, in order."""
    inside = [(t.first, 0, k) for k, t in enumerate(tags) if t.parent == n]
    inside += [(a.after + 0.5, 1, k) for k, a in enumerate(atoms) if a.parent == n]
    out: list[str] = []
    for _, kind, k in sorted(inside):
        out += _empty(tags, atoms, k) if kind == 0 else [atoms[k].text]
    if n is None:
        return out
    if tags[n].empty is not None and not "".join(out):  # nothing inside it to show
        return [tags[n].empty]
    return [tags[n].open, *out, tags[n].close]


def _within(tags: list[Tag], n: int | None, outer: int) -> bool:
    """Whether tag `n` is tag `outer` or lies inside it."""
    while n is not None:
        if n == outer:
            return True
        n = tags[n].parent
    return False


def _split(word: str) -> tuple[str, str, str]:
    """A word's leading marks, its core and its trailing marks; a URL or a mention it holds
    whole in the core, so that it is escaped as one ("@jean_dupont", not "@jean\\_dupont")."""
    lead, core, _ = CORE.match(word).groups()  # type: ignore[union-attr]
    if not core:
        return "", word, ""
    a, b = len(lead), len(lead) + len(core)
    for start, url in found(word):
        if start < b and start + len(url) > a:
            a, b = min(a, start), max(b, start + len(url))
    return word[:a], word[a:b], word[b:]


def _word(
    k: int,
    word: str,
    tags: list[Tag],
    before: list[tuple[int | None, str]],
    after: list[tuple[int | None, str, bool]],
    escape: Callable[[str], str],
) -> str:
    """Target word k with the tags that open or close on it and the atoms placed around it."""
    lead, core, trail = _split(word)
    lead, core, trail = escape(lead), escape(core), escape(trail)
    opens = sorted((n for n, t in enumerate(tags) if t.lo == k <= t.hi), key=lambda n: tags[n].lo)
    opens.sort(key=lambda n: _depth(tags, n))
    closes = sorted(
        (n for n, t in enumerate(tags) if t.lo <= t.hi == k), key=lambda n: _depth(tags, n)
    )
    out: list[str] = []
    outer, pending = True, list(before)
    for n in opens:  # outermost first
        outer = outer and tags[n].outer_start
        if not outer and lead is not None:
            out.append(lead)
            lead = None
        out += [text for parent, text in pending if not _within(tags, parent, n)]
        pending = [(p, t) for p, t in pending if _within(tags, p, n)]
        out.append(tags[n].open)
    out += [text for _, text in pending] + ([lead] if lead is not None else []) + [core]
    flags, outer = {}, True
    for n in closes:  # outermost first: a tag wraps punctuation only if its parents do
        outer = flags[n] = outer and tags[n].outer_end
    pending = list(after)
    for n in reversed(closes):  # innermost first
        if flags[n] and trail is not None:
            out += [text for _, text, glued in pending if glued] + [trail]
            pending, trail = [a for a in pending if not a[2]], None
        out += [text for parent, text, _ in pending if _within(tags, parent, n)]
        pending = [a for a in pending if not _within(tags, a[0], n)]
        out.append(tags[n].close)
    if trail is not None:
        out += [text for _, text, glued in pending if glued] + [trail]
        pending = [a for a in pending if not a[2]]
    return "".join(out + [text for _, text, _ in pending])


def _depth(tags: list[Tag], n: int) -> int:
    """How many tags hold tag n."""
    depth = 0
    while (n := tags[n].parent) is not None:  # type: ignore[assignment]
        depth += 1
    return depth
