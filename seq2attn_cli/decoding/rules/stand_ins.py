"""A span of a line read as one word, its stand-in (the word URL: urls.py; a glossary's term:
glossary.py), and written back as given where the model wrote that word.

A translation that lost the word gets the span after the target word that attends most to
it; one that wrote it more often than there are spans ("Write to URL or go on URL's URL")
gives each span the one attending most to it and leaves the others out, and a word the model
garbled it into ("Seen (RLL)."), two or more of the pieces that spell it in the source and
attending most to it, is taken for it. The translation's pieces and attention keep the
stand-in, so that their words line up with the text's (alignments, a document's tags).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..explain.alignment import WORD_START, WordAttention, group_pieces
from ..translation import Translation
from .edges import put_around

PLACEHOLDER = "URL"
WORD = re.compile(rf"\b{PLACEHOLDER}\b")
PUNCTUATION = re.compile(r"^(.*?\w)(\W*)$", re.S)  # a word and the marks after it
ENDING = ".,;:!?"  # the marks that end a clause or a sentence
LETTERS = re.compile(r"\w(?:.*\w)?")  # a word without the marks around it: "(RLL).", "U.RL"


@dataclass(frozen=True)
class StandIns:
    """A line as the model reads it, each URL and address the word URL, and what they were."""

    text: str
    # for each word URL in `text`, in order: the URL it stands for, or None for the line's own
    # word URL; empty when the line holds no URL
    kept: tuple[str | None, ...] = ()
    word: str = PLACEHOLDER  # the stand-in (rules/glossary.py reads its terms as another)
    # how many stand-ins for symbols at the line's start and end `text` leaves out (edges.py)
    lead: int = 0
    trail: int = 0

    @property
    def pattern(self) -> re.Pattern[str]:
        """The stand-in as a whole word."""
        return WORD if self.word == PLACEHOLDER else re.compile(rf"\b{re.escape(self.word)}\b")


def stand_in(text: str, spans: list[tuple[int, int, str]], word: str = PLACEHOLDER) -> StandIns:
    """`text` with each span (start, end, what to write back) read as `word`."""
    pieces, starts, at = [], {}, 0
    for start, end, kept in spans:
        pieces.append(text[at:start])
        starts[sum(map(len, pieces))] = kept
        pieces.append(word)
        at = end
    if not starts:
        return StandIns(text, word=word)
    read = "".join(pieces) + text[at:]
    pattern = StandIns(read, word=word).pattern
    return StandIns(read, tuple(starts.get(m.start()) for m in pattern.finditer(read)), word)


def written_back(t: Translation, stand_ins: StandIns) -> Translation:
    """A Translation with the spans the model read as the stand-in written back as given.

    Its pieces, attention and alignment stay the model's, the stand-in in each span's place,
    so their words line up with the text's; an alternative that lost a span is left out.
    """
    if not stand_ins.kept:
        return t
    if stand_ins.lead or stand_ins.trail:  # the symbols at the ends the model did not read
        t, stand_ins = _with_ends(t, stand_ins)
    words, source = t.text.split(), stand_ins.text.split()
    attention = _lined_up(t, words, source)
    garbled = _garbled(t, stand_ins, attention)
    text = None if garbled else put_back(t.text, stand_ins)
    if text is None:  # the model lost the word (4 of 30 sentences), wrote it twice or garbled
        t = _found_again(t, stand_ins, garbled, attention)
        text = t.text
    text = _unpossessed(text, stand_ins)
    others = [a for a in (put_back(a, stand_ins) for a in t.alternatives) if a is not None]
    return dataclasses.replace(
        _spread(t, stand_ins) if text == put_back(t.text, stand_ins) else t,
        text=text,
        alternatives=[a for a in dict.fromkeys(others) if a != text],
        dropped=[w for w in t.dropped if w != stand_ins.word],  # written, whatever the model did
    )


def _unpossessed(text: str, stand_ins: StandIns) -> str:
    """`text` without the "'s" the model wrote after a span written back that nothing follows
    but the marks that end a clause ("Press URL and URL's.": "Ctrl+V's.", "`npm start`'s.")."""
    spans = {kept or stand_ins.word for kept in stand_ins.kept}  # never empty: written_back's
    written = "|".join(re.escape(s) for s in sorted(spans, key=len, reverse=True))
    return re.sub(rf"({written})'s(?=[{ENDING}]+(?:\s|$)|$)", r"\1", text)


def _with_ends(t: Translation, stand_ins: StandIns) -> tuple[Translation, StandIns]:
    """`t` and `stand_ins` with the stand-ins for the symbols at the line's ends back in."""
    lead, trail, word = stand_ins.lead, stand_ins.trail, stand_ins.word
    t = put_around(t, lead=lead, trail=trail, word=word, source=stand_ins.text)
    whole = " ".join([word] * lead + [stand_ins.text] + [word] * trail)
    return t, dataclasses.replace(stand_ins, text=whole, lead=0, trail=0)


def _spread(t: Translation, stand_ins: StandIns) -> Translation:
    """`t` with each stand-in for a URL or term of several words ("01 23 45 67 89", "New York")
    as that many words on both sides, so that the pieces' words stay the text's (alignments, a
    document's tags): the copies of a written one attend as it does, none to the source's."""
    widths = [len(kept.split()) if kept else 1 for kept in stand_ins.kept]
    if not t.has_attention or widths == [1] * len(widths):
        return t
    src, tgt, weights = list(t.src_tokens), list(t.tgt_tokens), [list(r) for r in t.weights]
    read, written = _slots(src, stand_ins), _slots(tgt, stand_ins)
    if len(read) != len(widths) or len(written) != len(widths):
        return t
    for at, n in reversed(list(zip(read, widths, strict=True))):  # (tgt, src + copies)
        src[at:at] = [WORD_START + stand_ins.word] * (n - 1)
        weights = [row[:at] + [0.0] * (n - 1) + row[at:] for row in weights]
    for at, n in reversed(list(zip(written, widths, strict=True))):  # (tgt + copies, src)
        tgt[at:at] = [WORD_START + stand_ins.word] * (n - 1)
        weights[at:at] = [list(weights[at - 1]) for _ in range(n - 1)]
    return dataclasses.replace(t, src_tokens=src, tgt_tokens=tgt, weights=weights)


def _slots(pieces: list[str], stand_ins: StandIns) -> list[int]:
    """Where, after each stand-in word of `pieces` (its pieces and marks), copies would go."""
    words, groups = group_pieces(pieces)
    return [group[-1] + 1 for word, group in zip(words, groups, strict=True)
            if stand_ins.pattern.search(word)]  # fmt: skip


def put_back(text: str, stand_ins: StandIns) -> str | None:
    """`text` with each word URL it holds written as the URL it stands for, in order; None if
    it does not hold one for each."""
    if len(stand_ins.pattern.findall(text)) != len(stand_ins.kept):
        return None
    kept = iter(stand_ins.kept)
    return stand_ins.pattern.sub(lambda m: next(kept) or m.group(), text)


def _lined_up(t: Translation, words: list[str], source: list[str]) -> WordAttention | None:
    """`t`'s attention between words, when its words are those of the text and the source."""
    attention = t.word_attention
    if len(attention.src) == len(source) + 1 and len(attention.tgt) == len(words) + 1:
        return attention
    return None


def _garbled(t: Translation, stand_ins: StandIns, attention: WordAttention | None) -> list[int]:
    """The target words that are a stand-in the model garbled ("RLL" for URL): two or more
    of the pieces that spell it in the source, the word attending most to one."""
    if attention is None:  # without it, a word of those pieces may be one of the sentence's
        return []
    source = stand_ins.text.split()
    slots = {k for k, word in enumerate(source) if stand_ins.pattern.search(word)}
    src, tgt = group_pieces(t.src_tokens).groups, group_pieces(t.tgt_tokens).groups
    spelling = {t.src_tokens[i].removeprefix(WORD_START) for k in slots for i in src[k]}
    spelling = {piece for piece in spelling if piece and piece in stand_ins.word}
    return [
        j
        for j, word in enumerate(t.text.split())
        if not stand_ins.pattern.search(word)
        and sum(t.tgt_tokens[i].removeprefix(WORD_START) in spelling for i in tgt[j]) >= 2
        and max(range(len(source)), key=attention.weights[j].__getitem__) in slots
    ]


def _found_again(
    t: Translation, stand_ins: StandIns, garbled: list[int], attention: WordAttention | None
) -> Translation:
    """`t`, whose stand-ins are not one for each URL: each URL in the stand-in attending most
    to it, or, none left, after the target word attending most to it (a word URL added to the
    pieces, attending to the source's alone); a stand-in no URL took left out."""
    words, source = t.text.split(), stand_ins.text.split()
    slots = [k for k, word in enumerate(source) for _ in stand_ins.pattern.findall(word)]
    if not words:
        return dataclasses.replace(t, text=" ".join(url for url in stand_ins.kept if url))
    held = {j: len(stand_ins.pattern.findall(word)) for j, word in enumerate(words)}
    held = {j: n for j, n in (held | dict.fromkeys(garbled, 1)).items() if n}
    free = [j for j, n in held.items() for _ in range(n)]
    taken: dict[int, list[str | None]] = {}  # the URLs each stand-in word takes, in order
    added: dict[int, list[tuple[int, str]]] = {}  # the URLs after a word, with their slots
    for slot, url in zip(slots, stand_ins.kept, strict=True):
        if free:
            j = _target(slot, len(source), free, len(words), attention)
            free.remove(j)
            taken.setdefault(j, []).append(url)
        elif url:
            j = _target(slot, len(source), range(len(words)), len(words), attention)
            added.setdefault(j, []).append((slot, url))
    pieces, weights = list(t.tgt_tokens), list(t.weights)  # rows shared, new ones inserted
    src_groups, tgt_groups = group_pieces(t.src_tokens).groups, group_pieces(t.tgt_tokens).groups
    for j in sorted(held.keys() | added.keys(), reverse=True):
        if j in held and j not in taken:  # written more often than there are URLs: out
            if j:  # its full stop kept: "See URL for URL." -> "See https://x.fr for."
                words[j - 1] += words[j][len(words[j].rstrip(ENDING)) :]
            del words[j]
            if attention:
                del pieces[tgt_groups[j][0] : tgt_groups[j][-1] + 1]
                del weights[tgt_groups[j][0] : tgt_groups[j][-1] + 1]
            continue
        # the marks that end the word as the model wrote it, before its URLs go in: "URL,"
        # taking "{name}" and then "%s" is "{name} %s," (not "{name %s},")
        core, marks = m.groups() if (m := PUNCTUATION.match(words[j])) else (words[j], "")
        if j in taken:
            core = _taken(core, taken[j], stand_ins)
        urls = added.get(j, [])  # before the marks that end the word: "site https://x.fr."
        words[j] = core + "".join(f" {url}" for _, url in urls) + marks
        if urls and attention:
            at = tgt_groups[j][-1] + 1
            pieces[at:at] = [WORD_START + stand_ins.word] * len(urls)
            weights[at:at] = [_one_hot(len(t.src_tokens), src_groups[s][0]) for s, _ in urls]
    if not attention:
        return dataclasses.replace(t, text=" ".join(words))
    return dataclasses.replace(
        t,
        text=" ".join(words),
        tgt_tokens=pieces,
        weights=weights,
        model_tokens=t.model_tokens or t.tgt_tokens,  # the pieces the search wrote
    )


def _taken(word: str, urls: list[str | None], stand_ins: StandIns) -> str:
    """A target word holding stand-ins with `urls` in their place, in order (None: the line's
    own word URL), any left over out with the marks joining it to the one before ("URL/URL."
    -> "https://x.fr."); a garbled one ("(RLL).") is its letters."""
    if not stand_ins.pattern.search(word):
        return LETTERS.sub(lambda _: urls[0] or stand_ins.word, word, count=1)
    out, at = [], 0
    for n, m in enumerate(stand_ins.pattern.finditer(word)):
        if n < len(urls):
            out += [word[at : m.start()], m.group() if urls[n] is None else urls[n]]
        at = m.end()
    return "".join(out) + word[at:]


def _target(
    slot: int,
    sources: int,
    among: Sequence[int],
    targets: int,
    attention: WordAttention | None,
) -> int:
    """Of the target words `among`, the one attending most to source word `slot` (words of
    the text, </s> apart); without attention, the one nearest the same relative position."""
    if attention is None:
        at = slot * targets // max(sources, 1)
        return min(among, key=lambda j: abs(j - at))
    weights = attention.weights
    return max(among, key=lambda j: weights[j][slot])


def _one_hot(size: int, k: int) -> list[float]:
    """Attention on source piece k alone."""
    return [float(i == k) for i in range(size)]
