"""Numbers, amounts and degrees as French writes them and as English does: the patterns and
conversions that numbers.py's rule reads a line and writes its translation with (its
docstring has the measurements behind them).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .ordinals import ENGLISH_ORDINAL, ORDINAL, english_ordinal

# a French number: groups of three digits after spaces (35 000; not "0 800 123 456", a
# telephone number), a decimal comma (3,5), or both; not a comma before three digits alone
# ("15,000" is fifteen thousand as often as not)
GROUPED = r"[1-9]\d{0,2}(?: \d{3})+(?:,\d+)?"
FRENCH = re.compile(rf"(?<![\d,.])(?<!\d )(?:{GROUPED}|\d+,(?!\d{{3}}(?!\d))\d+)(?!\d|,\d)")


# degrees (20 °C, -5°, 21°; not n° 5, nor the law's "2° du code", a list's second point: a
# bare ° after a one-digit number alone): read as words ("20 degrés Celsius"), which the model
# knows: "20 °C" came out "20 ECC", "100 °C" "100 ability"
DEGREES = re.compile(
    r"(?<![\w,.])(?:(?P<number>\d+(?:,\d+)?) ?° ?(?P<scale>[CF])(?!\w)"
    r"|(?P<bare>(?<=-)\d|\d{2,}|\d+,\d+) ?°)(?!\d)"
)
SCALES = {"C": " Celsius", "F": " Fahrenheit", None: ""}


def read_degrees(m: re.Match[str]) -> str:
    """Degrees as words: "20 °C" -> "20 degrés Celsius", "-1°" -> "-1 degré"."""
    number = m["number"] or m["bare"]
    word = "degré" if float(number.replace(",", ".")) < 2 else "degrés"
    return f"{number} {word}{SCALES[m['scale']]}"


# a percent sign after a number, spaced off as French writes it ("25 %"): a copied line kept it
PERCENT = re.compile(r"(?<=\d) %(?!\w)")

# an amount: a number and a currency sign, after it as French writes it (12,50 €, 12€50,
# 2 € 50 where nothing follows, not 10 € 20 fois: "The coffee costs €2.") or
# before it (£12, €15,000; not $, which the model copies: "$30,000" read as "30 000 dollars"
# came out "3,000 dollars"); read as the number and the sign's word ("12,50 euros")
NUMBER = rf"{GROUPED}|\d{{1,3}}(?:[,.]\d{{3}})+(?:[,.]\d+)?|\d+(?:[,.]\d+)?"
LARGE = r"\s*(?:millions?|milliards?|mille|billions?)\b"  # "€10 millions" is not "10 euros"
# after the number before the sign: nothing more of a number (not "€2" of "€2,5 millions", "£1"
# of "£1.2bn", "€1" of "€1 200"), nor a word or a magnitude
WHOLE = rf"(?![\w-]|[,.]?\s?\d|{LARGE})"
# a price by the unit: by a word's ("9,99 €/mois") read "9,99 euros par mois" (the model wrote
# "9,99 euros/mois" as "9.99 euros/ me", "9,99 € par mois" as "€9.99 per month"); by a unit's
# symbol ("0,25 €/kWh", "2 €/h"), which English writes so, read "0,25 euros" and written
# "€0.25/kWh" ("par h" came out "by hate", "par L" "by LP9")
AMOUNT = re.compile(
    rf"(?<![\w,.])(?P<number>{NUMBER}) ?(?P<sign>[€$£])"
    r"(?:(?P<cents>\d\d)|(?: (?P<spaced>\d\d)(?!\s*[\w%€$£])))?(?![\d,.]?\d)"
    r"(?:/(?P<per>[^\W\d]\w*))?"
    rf"|(?<![\w,.€$£])(?P<before>[€£]) ?(?P<after>{NUMBER}){WHOLE}"
)
DOTTED = re.compile(r"[1-9]\d{0,2}(?:\.\d{3})+(?:,\d+)?")  # 1.234,5; not 0.125, a decimal
# such a number in a sentence, which the model copies ("1.500 euros": one and a half to an
# English reader); of the dev sets' four, three references group it (1,000), one is a name
GROUPED_BY_DOTS = re.compile(rf"(?<![\d,.]){DOTTED.pattern}(?!\d|[.,]\d)")
# the sign's word, in French as the model reads it and in English as it writes it; £ is
# "pounds" in both ("livres" came out as "books"), which the model keeps
WORDS = {"€": "euros", "$": "dollars", "£": "pounds"}
# a unit's word ("mois", "an", "j": per day), read "par mois"; not a symbol ("kg", "kWh", "min")
UNIT_WORD = re.compile(r"(?!min$)(?:an|j|[a-zéèêûôîà]{3,})")
UNIT_WORDS = {"j": "jour"}  # a word's short form, read whole
WRITTEN = {"€": "euros?", "$": "dollars?", "£": "pounds?"}


def digits(number: str) -> str:
    """A number's digits alone, however grouped: "1 234,5", "1,234.5" and "+1.234,5" -> "12345"."""
    return re.sub(r"\D", "", number)


class Amount(NamedTuple):
    """An amount of the source: its number in French form, its sign, its digits (cents too),
    and the unit it is a price of ("mois" of "9,99 €/mois"; "" if none)."""

    number: str
    sign: str
    digits: str
    per: str = ""

    @property
    def symbol(self) -> str:
        """The unit's symbol, written after the amount as given ("/kWh"), or ""."""
        return f"/{self.per}" if self.per and not UNIT_WORD.fullmatch(self.per) else ""

    @property
    def read(self) -> list[str]:
        """The words the model reads for the sign and a unit's word: "euros par mois"."""
        per = ["par", UNIT_WORDS.get(self.per, self.per)] if self.per and not self.symbol else []
        return [WORDS[self.sign], *per]


def amounts(text: str) -> list[Amount]:
    """The amounts of `text`, in order."""
    return [_amount(m) for m in AMOUNT.finditer(text)]


def _amount(m: re.Match[str]) -> Amount:
    """The amount `m` found, either way round; "12€50" is "12,50"."""
    if m["before"]:  # English order, English marks: "€15,000", "£12.50"
        return Amount(french(m["after"]), m["before"], digits(m["after"]))
    cents = m["cents"] or m["spaced"]  # French order, French marks: "1,859 €" is 1.859
    number = f"{m['number']},{cents}" if cents else m["number"]
    if DOTTED.fullmatch(number):
        number = number.replace(".", " ")
    return Amount(number, m["sign"], digits(number), m["per"] or "")


def french(number: str) -> str:
    """A number written in English order in French form: "15,000" and "15.000" -> "15 000",
    "12.50" -> "12,50"; the model read "€15,000" as "15 can euros"."""
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", number):  # 1,234.5
        return number.replace(",", " ").replace(".", ",")
    if DOTTED.fullmatch(number):
        return number.replace(".", " ")
    return number.replace(".", ",")  # 12.50; 12,50 and 1 234,5 as they are


def read_amount(m: re.Match[str]) -> str:
    """An amount as the model reads it: "12,50 €", "12€50" and "€12,50" -> "12,50 euros",
    "9,99 €/mois" -> "9,99 euros par mois"."""
    amount = _amount(m)
    return " ".join([amount.number, *amount.read])


def english(number: str) -> str:
    """A French number in English form: "1 234,5" -> "1,234.5"."""
    whole, _, decimals = number.partition(",")
    return whole.replace(" ", ",") + (f".{decimals}" if decimals else "")


def in_english(text: str, source: str) -> str:
    """`text` with each French number it copies from `source` (all of one or its end, as
    "234,56" of "1 234,56") in English form, and its ordinals (copied "2e", "2th") English."""
    text = GROUPED_BY_DOTS.sub(
        lambda m: english(m.group().replace(".", " ")) if m.group() in source else m.group(), text
    )
    text = FRENCH.sub(lambda m: english(m.group()) if m.group() in source else m.group(), text)
    text = PERCENT.sub("%", text)  # "25 %" -> "25%", as the model writes a percentage
    text = ORDINAL.sub(lambda m: english_ordinal(m) if m.group() in source else m.group(), text)
    return ENGLISH_ORDINAL.sub(english_ordinal, text)


# an amount in thousands, millions or billions written with its sign ("3,5 M€", "850 k€",
# "3 000 Md€", "12 M$"), read in words, which the model knows: it wrote "3,5 M€" as "3.5
# MEP", "850 k€" as "850 kit", "12 M$" as "12th"; "3,5 millions d'euros" as "3.5 million
# euros", "850 mille euros" as "850 thousand euros"
SCALED = re.compile(
    rf"(?<![\w,.])(?P<number>{NUMBER}) ?(?P<scale>(?i:k|m|mds?|g)) ?(?P<sign>[€$])(?![\w€$£/])"
)
# by its scale in lower case: a line in capitals is read in sentence case first ("3,5 m€")
MAGNITUDES = {"m": "million", "md": "milliard", "mds": "milliard", "g": "milliard"}
OF_SIGN = {"€": "d'euros", "$": "de dollars"}


def read_scaled(m: re.Match[str]) -> str:
    """A scaled amount in words: "3,5 M€" -> "3,5 millions d'euros", "850 k€" -> "850 mille
    euros"."""
    return " ".join([m["number"], *scaled_words(m)])


def scaled_words(m: re.Match[str]) -> list[str]:
    """The words `read_scaled` reads for the scale and sign: "millions", "d'euros"."""
    if m["scale"].lower() == "k":
        return ["mille", WORDS[m["sign"]]]
    many = "" if m["number"] in ("1", "1,0") else "s"  # "1 M€": one million
    return [MAGNITUDES[m["scale"].lower()] + many, *OF_SIGN[m["sign"]].split()]
