"""Emoji and other symbols no piece holds, glued to a word ("5🍕", "Merci😀"), and a number's
sign ("+1,2 %"): set aside in reading, and written back against the target word linked to
that word.

The model reads such a symbol as <unk>, and the word it sticks to with it: "J'ai mangé 5🍕."
came out "I ate 5,000." and "Merci😀" "Thanks for you.", the symbols lost. Read as the word
URL, spaced off (as a symbol apart from the words is: urls.py), the line gains a word, which
moved every document tag after it one word early; so the symbol is taken out of its word
instead, and the word's count stays: the model reads "J'ai mangé 5." and the symbol goes
back against the target word linked to "5" (explain/links.py, as a document's tags go), after
its letters and before its marks ("I ate 5🍕."), or before them where it came before the word.
A runner-up of the beam, which has no attention, takes it by relative position.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING

from ..explain.links import CORE, aligned_targets
from ..translation import Translation
from .number_forms import digits
from .unread import JOINERS, readable

if TYPE_CHECKING:
    from .pipeline import Setting


@dataclass(frozen=True)
class Held:
    """A symbol set aside: the source word it was glued to, and where in it: before its
    letters, after them, or after the marks that follow them ("Bonjour,🍕")."""

    word: int
    symbol: str
    before: bool = False
    after_marks: bool = False
    digits: str = ""  # a number's sign: the number's digits


@dataclass(frozen=True)
class Glued:
    """What the rule remembers of a line: the line as the model reads it, and its symbols."""

    read: str
    held: tuple[Held, ...] = ()


# a number's sign (+1,2 %, -50 %, ±3 cm; not -2° or -5 °, which numbers.py reads as degrees): the
# model lost it or read it into the number ("+1,2 %" came out "won11.2%", "+1 200 000 €"
# "$10,000", "jusqu'à -50 %" "until50%"); set aside, it goes back before the number's
# translation, after its sign ("-250 €" -> "-€250"); on the dev sets' 10 lines with one (MTNT
# and newstest2013, embedded model, beam 5) BLEU 22.00 -> 22.84, the long run's 27.24 -> 27.58
SIGNS = "+±−-"
SIGNED = re.compile(
    rf"[(\[«\"']?([{SIGNS}])\d(?:[\d,.]*\d)?(?![\d,.]*\d| ?°)(?:\s|[%),.;:!?»\"']|$)"
)


def _unheld(char: str, knows: Callable[[str], bool]) -> bool:
    """Whether a character is a symbol (or a joiner of one) that no piece holds."""
    # a keycap's U+20E3 never comes here: urls.py takes "1️⃣" whole
    symbol = char in JOINERS or unicodedata.category(char)[0] == "S"
    return symbol and not readable(char, knows)


def set_aside(text: str, knows: Callable[[str], bool]) -> Glued:
    """`text` without the symbols no piece holds that stick to a word's start or end, nor a
    number's sign, and what they were."""
    held: list[Held] = []
    out, at = [], 0
    for k, m in enumerate(re.finditer(r"\S+", text)):
        word = m.group()
        if not any(c.isalnum() for c in word):  # symbols alone: urls.py's
            continue
        letters = [i for i, c in enumerate(word) if c.isalnum()]
        sign = SIGNED.match(text, m.start())  # what follows the word too: "-5 °C"
        start = sign.start(1) - m.start() if sign else -1
        unheld = [_unheld(c, knows) or i == start for i, c in enumerate(word)]
        kept, i = [], 0
        for is_held, chars in groupby(range(len(word)), key=unheld.__getitem__):
            run = "".join(word[n] for n in chars)
            # one between letters ("t´accompagner", a typed apostrophe) stays the model's
            if is_held and not letters[0] < i < letters[-1]:
                marks = any(not _unheld(c, knows) for c in word[letters[-1] + 1 : i])
                number = digits(word) if sign else ""
                held.append(Held(k, run, before=i < letters[0], after_marks=marks, digits=number))
            else:
                kept.append(run)
            i += len(run)
        if len(kept) < len(word):
            out += [text[at : m.start()], "".join(kept)]
            at = m.end()
    if not held:
        return Glued(text)
    return Glued("".join(out) + text[at:], tuple(held))


def placed(words: list[str], held: list[tuple[int, Held]]) -> list[str]:
    """`words` with each symbol put against target word j where it was in its source word:
    before its letters, after them ("5." -> "5🍕."), or after its marks."""
    words = list(words)
    for j, h in held:
        lead, core, trail = CORE.match(words[j]).groups()  # type: ignore[union-attr]
        if h.before:
            lead += h.symbol
        elif h.after_marks:
            trail += h.symbol
        else:
            core += h.symbol
        words[j] = lead + core + trail
    return words


def by_position(h: Held, sources: int, targets: int) -> int:
    """The target word at the relative place of the start (a symbol before it) or the end of
    source word `h.word` (a runner-up of the beam has no attention)."""
    if h.before:
        return h.word * targets // max(sources, 1)
    return min(targets, -(-(h.word + 1) * targets // max(sources, 1))) - 1


@dataclass(frozen=True)
class Symbols:
    """The rule: symbols no piece holds, glued to a word, written back against its translation."""

    knows: Callable[[str], bool]  # whether the model has a piece for a character
    name: str = "symbols"
    did: str = "wrote each symbol glued to a word back against that word's translation"

    @classmethod
    def of(cls, setting: Setting) -> Symbols:
        """The rule for a model (pipeline.Setting): every model has it."""
        return cls(knows=setting.subwords.knows)

    def read(self, text: str) -> tuple[str, Glued]:
        """`text` without its glued symbols (`set_aside`)."""
        glued = set_aside(text, self.knows)
        return glued.read, glued

    def write(self, t: Translation, memo: Glued) -> Translation:
        """`t` and its runners-up with the symbols written back."""
        if not memo.held:
            return t
        sources, words = memo.read.split(), t.text.split()
        if not words:  # nothing written: the symbols, as given
            symbols = " ".join(h.symbol for h in memo.held)
            return dataclasses.replace(t, text=f"{t.text} {symbols}".strip())
        _, linked = aligned_targets(sources, t)
        spots = [(_spot(h, linked, len(sources), words), h) for h in memo.held]
        others = [_by_position(a, memo.held, len(sources)) for a in t.alternatives]
        return dataclasses.replace(t, text=" ".join(placed(words, spots)), alternatives=others)


def _spot(h: Held, linked: list[list[int]], sources: int, words: list[str]) -> int:
    """The target word a symbol goes against: the first linked to its word if it came before
    it, else the last, a number's sign the first linked that holds a digit ("-50 €" -> "is
    -from €50" else); by position where none is (`--attention none`)."""
    found = linked[h.word] if h.word < len(linked) else []
    if h.symbol in SIGNS:
        found = _numbers(found, words) or _numbers(range(len(words)), words, h.digits) or found
    if not found:
        return by_position(h, sources, len(words))
    return min(found) if h.before else max(found)


def _numbers(among: Iterable[int], words: list[str], number: str = "") -> list[int]:
    """The target words `among` that hold a digit (`number`, if given: those digits)."""
    return [j for j in among if (d := digits(words[j])) and number in d]


def _by_position(text: str, held: tuple[Held, ...], sources: int) -> str:
    """A runner-up of the beam with the symbols against the words at their relative places, a
    number's sign against the nearest word holding its number ("Sold: -until 70%" else)."""
    words = text.split()
    if not words:
        return text
    spots = []
    for h in held:
        at = by_position(h, sources, len(words))
        numbers = _numbers(range(len(words)), words, h.digits) if h.symbol in SIGNS else []
        spots.append((min(numbers, key=lambda j: abs(j - at)) if numbers else at, h))
    return " ".join(placed(words, spots))
