"""French ordinals as the model knows them and as English writes them (numbers.py's rule):
a Roman one in digits (XIXe -> 19e), "first" in digits as its word (1er -> premier), and one
the model copies in English (2e -> 2nd). The figures behind each are in numbers.py.
"""

from __future__ import annotations

import re

from .dates import MONTH_NAMES
from .parts import NUMBERING

# a Roman ordinal (XIXe, VIe, XXème): up to 39, as no French word is ("Le", "Ce", "De" would
# be L, C, D); read in digits, which the model knows: "XIXe siècle" came out "20th century",
# "VIIIe siècle" "VIIIINIII", and "19e siècle" "19th century"
SUFFIX = "e|è|ème|eme"  # a French ordinal's ending; English ones: st, nd, rd, th
ROMAN = re.compile(rf"\b(?=[IVX])(X{{0,3}})(IX|IV|V?I{{0,3}})(?:{SUFFIX})\b")
ONES = ["", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"]


# a French ordinal in digits (2e, 21ème), which the model may copy: written 2nd, 21st; and an
# English one it wrote with another's ending ("2ème étage" came out "2th floor")
ORDINAL = re.compile(rf"(?<![\w,.])(\d+)(?:{SUFFIX})\b")
ENGLISH_ORDINAL = re.compile(r"(?<![\w,.])(\d+)(?:st|nd|rd|th)\b")


def read_roman(m: re.Match[str]) -> str:
    """A Roman ordinal in digits: "XIXe" -> "19e"; "Ie" as given."""
    value = 10 * len(m[1]) + ONES.index(m[2])
    return f"{value}e" if value > 1 else m.group()


# "first" in digits (1er, 1re, 1ère), read as its word, which both models know ("Le premier
# prix." -> "The first prize."): they wrote "Le 1er prix." as "The 1 is price." and "1 prices.",
# "la 1re fois" as "1 times"; before a month it is a date's day, which they write ("1 January"),
# and after a law's numbering word a number ("L'article 1er" is section 1: "Article 1 applies")
FIRST = re.compile(rf"(?<![\w,.])1(er|re|ère|ere)\b(?!\.?\s+(?:{MONTH_NAMES})\b)", re.IGNORECASE)
WORDS_THAT_NUMBER = "article|paragraphe|alinéa|chapitre|titre|livre|section|annexe|tome"
NUMBERED = re.compile(  # the word, or its short form as parts.py knows it ("art.", "ch.")
    rf"\b(?:(?:{WORDS_THAT_NUMBER})s?|(?:{'|'.join(sorted(NUMBERING))})\.)\s*$", re.IGNORECASE
)


def read_first(m: re.Match[str]) -> str:
    """ "1er" -> "premier", "1re" -> "première"; "article 1er" as given."""
    if NUMBERED.search(m.string, 0, m.start()):
        return m.group()
    return "premier" if m[1].lower() == "er" else "première"


def english_ordinal(m: re.Match[str]) -> str:
    """A French ordinal in English: "2e" -> "2nd", "11e" -> "11th", "21ème" -> "21st"."""
    n = int(m[1])
    return m[1] + (
        "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    )
