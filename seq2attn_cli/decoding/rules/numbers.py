"""Numbers the model copied from French written as English writes them (3,5 -> 3.5, 35 000
-> 35,000, 2e -> 2nd), amounts signed so (12,50 € -> €12.50), ordinals, degrees and times read
as the model knows them (XIXe -> 19e, 20 °C -> 20 degrés Celsius, 14h30 -> 14:30, 14 sept.
-> 14 septembre).

The model copies most numbers piece by piece, and so keeps their French form: of the 83
decimal numbers of newstest2013's French side, the embedded model wrote 38 with their comma
("a rise of 3,5"), and all 12 numbers grouped by spaces as they were ("35 000"), where the
references write 3.5 and 35,000. In English output, a number that the translation writes as
the source does, in French form, is written in English form; one the model wrote in English
form already is not in the source as such, and is left alone. On the dev sets' lines that
hold such a number (embedded model, beam 5), BLEU without -> with: newstest2013 (45 lines)
18.24 -> 19.39, ud-pud (18) 17.11 -> 20.64, XNLI (87) 19.36 -> 21.51, wmt24pp (17) 16.91 ->
17.29, MTNT (20) 17.47 -> 17.39, WMT chat (45) 27.49 -> 26.11 (its references keep "20,00 $").

The model has pieces for € and $ but seldom wrote them: "J'ai payé 12,50 € hier." came out as
"I paid 12,50 yesterday.", "Le billet coûte 20 €." as "The ticket costs 20 scale.". It reads
an amount's sign as its word ("12,50 euros"), which it translates ("12.50 euros"), and the
sign is written back before the amount, as English writes it ("€12.50"). On the dev sets'
lines that hold an amount, BLEU without -> with: XNLI (97 lines) 23.34 -> 32.03, MTNT (35)
12.65 -> 12.97, WMT chat (37) 30.64 -> 31.09, wmt24pp (3) 13.53 -> 17.76, newstest2013 (3)
11.32 -> 21.26; writing "12.50 euros" instead gave XNLI 21.11. An amount with its sign
before it, as English writes it (£12, €15,000), is read so too, its number in French form
("15 000 euros"): the model had written "£12 000" as "$12,000" and "€15,000" as "B15,000";
on the dev lines with £ or € before a number, BLEU without -> with: MTNT (3) 17.16 -> 20.00,
WMT chat (3) 7.72 -> 16.67, ud-pud (5) 8.04 -> 8.23. The target
pieces follow the words written (`pieces_in_english`), so alignments and a document's tags
still find them.

Ordinals: a Roman one is read in digits (XIXe -> 19e: the model wrote "XIXe siècle" as "20th
century", "19e siècle" as "19th century"), and one the model copies is written in English
(2e -> 2nd). On the dev lines with an ordinal, BLEU without -> with: ud-pud (11) 23.96 ->
26.17, XNLI (40) 22.10 -> 23.03, WMT chat (10) 27.54 -> 30.88, MTNT (16) 15.34 -> 15.85,
wmt24pp (2) 15.41 -> 17.21, newstest2013 (18) 12.59 -> 12.48; chat's "3e par mois" (3 euros)
comes out "3rd per month". "First" in digits is read as its word (1er -> premier, 1re ->
première; not before a month, a date's day): the models wrote "Le 1er prix." as "The 1 is
price." and "1 prices."; on the 16 dev lines with one (MTNT, WMT chat, ud-pud), BLEU without
-> with: the embedded model 16.95 -> 18.92 (chrF 43.37 -> 46.32), the long run's epoch 9
20.32 -> 22.75 (46.89 -> 50.33).

Degrees are read as words (20 °C -> "20 degrés Celsius"; the model
wrote "20 ECC", "100 ability"): on the 25 dev lines with "°", newstest2013 (4) 6.69 -> 7.85,
XNLI (2) 14.25 -> 14.84, ud-pud (4) 12.77 -> 12.73, MTNT (8) 11.00 -> 10.77, WMT chat (7)
35.48 -> 35.48; the translation says "degrees Celsius", not the sign.

A percent sign is written against its number ("25 %" -> "25%"): the model writes it so, but a
line of numbers copied (clean.py) kept the French space.

Times of day and months written short are read as the model knows them in dates.py.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from ..explain.alignment import WORD_START, group_pieces
from ..explain.confidence import NUMBER as NUMBER_AS_WRITTEN
from ..translation import Translation
from .dates import read_months, read_times
from .number_forms import (
    AMOUNT,
    DEGREES,
    FRENCH,
    GROUPED_BY_DOTS,
    SCALED,
    SCALES,
    WRITTEN,
    Amount,
    amounts,
    digits,
    in_english,
    read_amount,
    read_degrees,
    read_scaled,
    scaled_words,
)
from .ordinals import FIRST, ROMAN, SUFFIX, english_ordinal, read_first, read_roman

if TYPE_CHECKING:
    from .pipeline import Setting


@dataclass(frozen=True)
class Numbers:
    """The rule: French numbers the translation copies written in English form."""

    name: str = "numbers"
    did: str = (
        "wrote the numbers copied from French in English form (3,5 -> 3.5, 12 € -> €12, 2e -> 2nd)"
    )

    @classmethod
    def of(cls, setting: Setting) -> Numbers | None:
        """The rule for a model from French into English; else None."""
        return cls() if setting.languages == ("fr", "en") else None

    def read(self, text: str) -> tuple[str, Source]:
        """The text with each amount's sign read as its word, Roman ordinals in digits, degrees
        in words, times as English writes them and short months whole; remembered both ways."""
        read = AMOUNT.sub(read_amount, SCALED.sub(read_scaled, text))
        read = DEGREES.sub(read_degrees, ROMAN.sub(read_roman, read))
        read = FIRST.sub(read_first, read_months(read_times(read)))
        return read, Source(given=text, read=read)

    def write(self, t: Translation, memo: Source) -> Translation:
        """`t` (and its alternatives) with the French numbers it copies in English form, and
        each amount's sign before it."""
        return dataclasses.replace(
            t,
            text=as_english(t.text, memo),
            alternatives=[as_english(a, memo) for a in t.alternatives],
            **pieces_in_english(t, memo),
        )


class Source(NamedTuple):
    """A part as given (its amounts with their signs) and as the model read it."""

    given: str
    read: str


def as_english(text: str, source: Source) -> str:
    """`text` with its numbers in English form and the source's amounts signed as given."""
    text = in_english(text, source.read)
    for amount in amounts(source.given):
        said = rf"(?<![\w,.-])({NUMBER_AS_WRITTEN.pattern}) {WRITTEN[amount.sign]}\b"
        # the first said with the amount's digits, in any case ("12.50 Euros" was left)
        found = [m for m in re.finditer(said, text, re.I) if digits(m[1]) == amount.digits]
        if m := (found[0] if found else bare(text, amount)):
            text = text[: m.start()] + amount.sign + m[1] + amount.symbol + text[m.end() :]
    return text


# a number no currency goes with (no sign or code before it, no sign's word after it), in a
# text that names none: signed where the model left the word out ("850 000 €" came out "He
# raised 850,000."); on the dev sets' 178 lines with an amount, BLEU 25.63 -> 25.71, the long
# run's 30.06 -> 30.13. Not where the text names its currency ("The 5 May, I paid five euros.")
BARE = re.compile(
    rf"(?<![\w,.€$£-])(?<!EUR )(?<!USD )(?<!GBP )({NUMBER_AS_WRITTEN.pattern})"
    r"(?![\w€$£%]|[,.]\d| ?(?:euros?|dollars?|pounds?)\b)",
    re.IGNORECASE,
)
CURRENCY = re.compile(r"\b(?:euros?|dollars?|pounds?|EUR|USD|GBP)\b|[€$£]", re.IGNORECASE)


def bare(text: str, amount: Amount) -> re.Match[str] | None:
    """The first number of `text` with the amount's digits (BARE), where `text` names no
    currency; else None."""
    if CURRENCY.search(text):
        return None
    return next((m for m in BARE.finditer(text) if digits(m[1]) == amount.digits), None)


def pieces_in_english(t: Translation, source: Source) -> dict[str, Any]:
    """`t`'s pieces and attention, their words those of `as_english` and of the source as
    given: the groups of a French number one word ("▁35 ▁000" -> "▁35 ,000"), an amount's
    sign word gone and its sign on the number ("▁20 ▁euros" -> "▁€20", the word's attention
    the number's too), the words read in the source for a sign shown as the sign ("▁euros"
    -> "▁€", "▁degrés ▁Celsius" -> "▁°C"); the model's pieces kept apart."""
    pieces, src = list(t.tgt_tokens), list(t.src_tokens)
    weights = [list(row) for row in t.weights]  # (tgt, src)
    for number in FRENCH.findall(source.read):
        found = _run(pieces, number.split(",")[0].split())
        for first in found[1:] if found else []:
            pieces[first] = "," + pieces[first].removeprefix(WORD_START)
    pieces = _dots_to_commas(pieces, GROUPED_BY_DOTS.findall(source.read))
    for amount in amounts(source.given):
        if (at := _sign_word(pieces, amount.digits, [WRITTEN[amount.sign]])) is None:
            if alone := _bare(pieces, amount):  # as as_english signs it
                pieces[alone[0]] = _signed(pieces[alone[0]], amount.sign)
                last = max(i for i in alone if any(c.isdigit() for c in pieces[i]))
                pieces[last] = re.sub(r"(\d)(?!.*\d)", rf"\1{amount.symbol}", pieces[last])
            continue
        letters, number_at = at
        pieces[number_at] = _signed(pieces[number_at], amount.sign)
        keep = number_at
        if amount.symbol:  # "▁0 .25 ▁euros" -> "▁€0 .25 /kWh", the word's rows its own
            keep, pieces[letters[0]], letters = letters[0], amount.symbol, letters[1:]
        # the word's rows into the number's (tag placement); a runner-up has none
        _into(pieces, weights if t.has_attention else None, keep, letters)
    pieces = _ordinals(pieces, weights if t.has_attention else None, source.read)
    for i in range(1, len(pieces)):  # "▁25 ▁%" -> "▁25 %", as PERCENT writes it
        if pieces[i] == WORD_START + "%" and pieces[i - 1][-1:].isdigit():
            pieces[i] = "%"
    if t.has_attention:
        src = _signs_in_source(src, weights, source.given)
    if (pieces, src) == (t.tgt_tokens, t.src_tokens):
        return {}
    kept = {"model_tokens": t.model_tokens or t.tgt_tokens}
    return {"tgt_tokens": pieces, "src_tokens": src, "weights": weights} | kept


def _signs_in_source(src: list[str], weights: list[list[float]], given: str) -> list[str]:
    """`src` with the words read for each sign of the source `given` one piece, the sign, its
    column the sum of theirs (`weights` changed in place)."""
    # "9,99 €/mois": "▁9,99 ▁euros ▁par ▁mois" -> "▁9,99 ▁€/mois"
    signs = [(f"{a.sign}/{a.per}" if a.per else a.sign, a.digits, a.read) for a in amounts(given)]
    for m in SCALED.finditer(given):  # "3,5 M€": "▁3,5 ▁millions ▁d'euros" -> "▁3,5 ▁M€"
        words = [re.escape(word) for word in scaled_words(m)]
        signs.append((m["scale"] + m["sign"], digits(m["number"]), words))
    for m in DEGREES.finditer(given):  # "20 °C": "▁20 ▁degrés ▁Celsius" -> "▁20 ▁°C"
        scale = [SCALES[m["scale"]].strip()] if m["scale"] else []
        number = digits(m["number"] or m["bare"])
        signs.append((f"°{m['scale'] or ''}", number, ["degrés?", *scale]))
    src = list(src)
    for sign, number, words in signs:
        if (at := _sign_word(src, number, words)) is not None:  # the marks between too: "d'"
            _as_one(src, weights, list(range(at[0][0], at[0][-1] + 1)), WORD_START + sign)
    read, found = [], group_pieces(src)
    for m in ROMAN.finditer(given):  # "▁19 e" -> "▁XIXe", as given
        if (roman := read_roman(m)) != m.group() and roman in found.words:
            read.append((found.groups[found.words.index(roman)], WORD_START + m.group()))
    for at, piece in sorted(read, reverse=True):
        _as_one(src, weights, at, piece)
    return src


def _as_one(src: list[str], weights: list[list[float]], at: list[int], piece: str) -> None:
    """Source pieces `at` as one `piece`, its column the sum of theirs (both changed in place)."""
    src[at[0]] = piece
    for row in weights:  # (tgt, src)
        row[at[0]] += sum(row[i] for i in at[1:])
        for i in reversed(at[1:]):
            del row[i]
    for i in reversed(at[1:]):
        del src[i]


def _dots_to_commas(pieces: list[str], numbers: list[str]) -> list[str]:
    """Target pieces with each of `numbers` (grouped by dots) they spell as a word grouped by
    commas, as `in_english` writes it: "▁1 .234 ,5," -> "▁1 ,234 .5,"."""
    pieces, (words, groups) = list(pieces), group_pieces(pieces)
    swap = str.maketrans(".,", ",.")
    for word, group in zip(words, groups, strict=True):
        start = len(word) - len(word.lstrip("(\"'"))
        if word[start:].rstrip(".,;:!?)\"'") not in numbers:
            continue
        end, at = start + len(word[start:].rstrip(".,;:!?)\"'")), 0
        for i in group:  # only the number's characters: not the comma after it
            text = pieces[i].removeprefix(WORD_START)
            lo, hi = max(start - at, 0), max(min(end - at, len(text)), 0)
            text = text[:lo] + text[lo:hi].translate(swap) + text[hi:]
            pieces[i] = (WORD_START if pieces[i].startswith(WORD_START) else "") + text
            at += len(pieces[i].removeprefix(WORD_START))
    return pieces


def _ordinals(pieces: list[str], weights: list[list[float]] | None, read: str) -> list[str]:
    """Target pieces with the ordinals `in_english` writes in English written so ("▁2 e" ->
    "▁2 nd", "▁2 th" -> "▁2 nd"), a suffix's pieces one, its rows averaged (`weights` changed in
    place; None: a runner-up, without)."""
    pieces, found = list(pieces), group_pieces(pieces)
    for word, group in reversed(list(zip(*found, strict=True))):
        m = re.fullmatch(rf"(\d+)({SUFFIX}|st|nd|rd|th)", word.strip(".,;:!?()\"'"))
        if not m or (m[2] not in ("st", "nd", "rd", "th") and m.group() not in read):
            continue  # not an ordinal, or a French one the source does not hold
        if (suffix := english_ordinal(m)[len(m[1]) :]) == m[2]:
            continue
        letters = [i for i in group if pieces[i].lstrip(WORD_START).isalpha()]
        if not letters:  # one piece holds digits and suffix: "▁2e"
            at = next(i for i in reversed(group) if pieces[i].endswith(m[2]))
            pieces[at] = pieces[at].removesuffix(m[2]) + suffix
            continue
        pieces[letters[0]] = suffix
        _into(pieces, weights, letters[0], letters[1:])
    return pieces


def _into(pieces: list[str], weights: list[list[float]] | None, keep: int, gone: list[int]) -> None:
    """Target pieces `gone` left out, their attention rows averaged into piece `keep`'s
    (both changed in place; `weights` None: a runner-up, without rows)."""
    if weights is not None and gone:
        rows = [weights[keep], *(weights[i] for i in gone)]  # (tgt, src)
        weights[keep] = [sum(column) / len(rows) for column in zip(*rows, strict=True)]
    for i in sorted(gone, reverse=True):
        del pieces[i]
        if weights is not None:
            del weights[i]


def _sign_word(pieces: list[str], number: str, words: list[str]) -> tuple[list[int], int] | None:
    """The letter pieces of the first run of sign words (`words`, patterns: "euros?", or
    "degrés?" and "Celsius") after the number of digits `number` in `pieces` (one word, or
    its groups: "1 500"; not "15" for 5), and the number's first piece; None if none is."""
    found, groups = group_pieces(pieces)
    for k in range(len(found) - len(words)):
        after = range(k + 1, k + 1 + len(words))
        if not all(re.match(word, found[n], re.I) for word, n in zip(words, after, strict=True)):
            continue
        seen = ""
        for j in range(k, -1, -1):  # the number's words, back from the last
            seen = digits(found[j]) + seen
            if seen == number:
                letters = [
                    i for n in after for i in groups[n] if pieces[i].lstrip(WORD_START).isalpha()
                ]
                return (letters, groups[j][0]) if letters else None
            if not number.endswith(seen) or not seen:
                break
    return None


def _bare(pieces: list[str], amount: Amount) -> list[int]:
    """The pieces of the word of `pieces` that `bare` finds for the amount ([] if none)."""
    words, groups = group_pieces(pieces)
    text = " ".join(words)
    return groups[text[: m.start()].count(" ")] if (m := bare(text, amount)) else []


def _signed(piece: str, sign: str) -> str:
    """A number's first piece with the sign before it: "▁12" -> "▁€12"."""
    return WORD_START + sign + piece.lstrip(WORD_START)


def _run(pieces: list[str], words: list[str]) -> list[int]:
    """The first piece of each word of the first run of `words` in `pieces` ([] if none)."""
    found, groups = group_pieces(pieces)
    found = [word.strip(".,;:!?()\"'") for word in found]  # "35 000," is "35", "000"
    for k in range(len(found) - len(words) + 1):
        if found[k : k + len(words)] == words:
            return [groups[k + n][0] for n in range(len(words))]
    return []
