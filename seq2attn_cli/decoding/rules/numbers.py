"""Numbers the model copied from French written as English writes them: 3,5 -> 3.5, 35 000
-> 35,000.

The model copies most numbers piece by piece, and so keeps their French form: of the 83
decimal numbers of newstest2013's French side, the embedded model wrote 38 with their comma
("a rise of 3,5"), and all 12 numbers grouped by spaces as they were ("35 000"), where the
references write 3.5 and 35,000. In English output, a number that the translation writes as
the source does, in French form, is written in English form; one the model wrote in English
form already is not in the source as such, and is left alone. On the dev sets' lines that
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
        """The text as it is, remembered: the numbers it holds."""
        return text, text

    def write(self, t: Translation, memo: str) -> Translation:
        """`t` (and its alternatives) with the French numbers it copies in English form."""
        return dataclasses.replace(
            t,
            text=in_english(t.text, memo),
            alternatives=[in_english(a, memo) for a in t.alternatives],
        )
