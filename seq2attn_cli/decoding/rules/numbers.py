"""Numbers the model copied from French written as English writes them: 3,5 -> 3.5, 35 000
-> 35,000, and amounts: 12,50 € -> €12.50.

The model copies most numbers piece by piece, and so keeps their French form: of the 83
decimal numbers of newstest2013's French side, the embedded model wrote 38 with their comma
("a rise of 3,5"), and all 12 numbers grouped by spaces as they were ("35 000"), where the
references write 3.5 and 35,000. In English output, a number that the translation writes as
the source does, in French form, is written in English form; one the model wrote in English
form already is not in the source as such, and is left alone.

The model has pieces for € and $ but seldom wrote them: "J'ai payé 12,50 € hier." came out as
"I paid 12,50 yesterday.", "Le billet coûte 20 €." as "The ticket costs 20 scale.". It reads
an amount's sign as its word ("12,50 euros"), which it translates ("12.50 euros"), and the
sign is written back before the amount, as English writes it ("€12.50"). On the dev sets'
lines that hold an amount, BLEU without -> with: XNLI (97 lines) 23.34 -> 32.03, MTNT (35)
12.65 -> 12.97, WMT chat (37) 30.64 -> 31.09, wmt24pp (3) 13.53 -> 17.76, newstest2013 (3)
11.32 -> 21.26. On the dev sets' lines that
hold such a number (embedded model, beam 5), BLEU without -> with: newstest2013 (45 lines)
18.24 -> 19.39, ud-pud (18) 17.11 -> 20.64, XNLI (87) 19.36 -> 21.51, wmt24pp (17) 16.91 ->
17.29, MTNT (20) 17.47 -> 17.39, WMT chat (45) 27.49 -> 26.11 (its references keep "20,00 $").
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..translation import Translation

if TYPE_CHECKING:
    from .pipeline import Setting

# a French number: groups of three digits after spaces (35 000), a decimal comma (3,5), or
# both; not a comma before three digits alone ("15,000" is fifteen thousand as often as not)
FRENCH = re.compile(r"(?<![\d,.])(?:\d{1,3}(?: \d{3})+(?:,\d+)?|\d+,(?!\d{3}(?!\d))\d+)(?![\d,])")


# an amount: a number, then a currency sign; read as the number and the sign's word
AMOUNT = re.compile(r"(?<![\w,.])(\d{1,3}(?: \d{3})+(?:,\d+)?|\d+(?:[,.]\d+)?) ?([€$])")
WORDS = {"€": "euros", "$": "dollars"}  # not £: the model read "livres" as "books"
WRITTEN = {"€": "euros?", "$": "dollars?"}  # the sign's word in English


def english(number: str) -> str:
    """A French number in English form: "1 234,5" -> "1,234.5"."""
    whole, _, decimals = number.partition(",")
    return whole.replace(" ", ",") + (f".{decimals}" if decimals else "")


def in_english(text: str, source: str) -> str:
    """`text` with each French number it copies from `source` (all of one or its end, as
    "234,56" of "1 234,56") in English form."""
    return FRENCH.sub(lambda m: english(m.group()) if m.group() in source else m.group(), text)


@dataclass(frozen=True)
class Numbers:
    """The rule: French numbers the translation copies written in English form."""

    name: str = "numbers"
    did: str = "wrote the numbers copied from French in English form (3,5 -> 3.5)"

    @classmethod
    def of(cls, setting: Setting) -> Numbers | None:
        """The rule for a model from French into English; else None."""
        return cls() if setting.languages == ("fr", "en") else None

    def read(self, text: str) -> tuple[str, str]:
        """The text with each amount's sign read as its word; remembered as given."""
        return AMOUNT.sub(lambda m: f"{m.group(1)} {WORDS[m.group(2)]}", text), text

    def write(self, t: Translation, memo: str) -> Translation:
        """`t` (and its alternatives) with the French numbers it copies in English form, and
        each amount's sign before it."""
        return dataclasses.replace(
            t,
            text=as_english(t.text, memo),
            alternatives=[as_english(a, memo) for a in t.alternatives],
        )


def as_english(text: str, source: str) -> str:
    """`text` with its numbers in English form and the source's amounts signed as given."""
    text = in_english(text, source)
    for number, sign in AMOUNT.findall(source):
        said = re.compile(rf"(?<![\w,.]){re.escape(english(number))} {WRITTEN[sign]}\b")
        text = said.sub(f"{sign}{english(number)}", text, count=1)
    return text
