"""A glossary: each French term read as a stand-in the model copies, written back as the
glossary's English (`s2a translate --glossary terms.tsv`, serve's "glossary" field).

Built like the URL rule (urls.py): the model reads the word Kappa in each term's place, copies
it as it copies a name, and s2a writes the glossary's English where the model wrote it, in
order; a translation that lost the word gets the term after the target word attending most to
it. Terms match whole words, case-insensitively, the longest first ("Banque centrale
européenne" before "banque"); inflection is left alone (a term "pomme" leaves "pommes" to the
model). An "a"/"an" the model wrote before the stand-in is set by the English written back, and
an English that starts a sentence of the translation of a line starting with a capital is
given one (the model drops the article before the stand-in: "Le chat dort." -> "Kappa
sleeps." -> "Kitty sleeps."), unless the user wrote a capital in it ("iPhone"). The beam's
alternatives are written back the same way.
What the model reads in a term's place (the embedded model, beam 5): on 40 news sentences with
one noun replaced, Zorg was copied once in 35, Kappa in 32, URL in 31, X in 25; on the 200 of
bench/glossary.py, every term was written either way, and BLEU fell least with Kappa (20.55 ->
19.74; Zorg 19.03, Smith 18.82, XYZ 16.95): the model reads it as a name, and drops the article.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...data.reading import normalize
from ...errors import GlossaryError
from ..translation import Translation, distinct
from .articles import wants_an
from .stand_ins import StandIns, stand_in, written_back

if TYPE_CHECKING:
    from .pipeline import Setting

STAND_IN = "Kappa"
# a full stop that ends an English sentence: not after a one-letter word ("e.g.", "p.m.",
# "U.S."), a title ("Dr."), nor in a pause ("So... apple"). parts.sentences_of cuts French and
# knows an end by the capital after it; here the word after is the term, still in lower case.
TITLES = ("Mr", "Mrs", "Ms", "Dr", "Prof", "St", "Mt", "vs", "cf", "No", "approx")
SENTENCE_END = "(?:[!?]|" + "".join(rf"(?<!\b{t})" for t in TITLES) + r"(?<!\b\w)(?<!\.\.)\.)"
SENTENCE_START = rf"(?:^|{SENTENCE_END}[\"')]?\s)\W*"  # where a sentence's first word begins
LEFT_OVER = re.compile(rf" ?\b{STAND_IN}\w*")  # what the model wrote of it, left over
ARTICLE = re.compile(rf"(?:\b(an?|An?) )?\b{STAND_IN}\b")  # a stand-in, an article before it


def terms_of(glossary: Mapping[str, str]) -> dict[str, str]:
    """A glossary's terms checked, as the rule reads them: French (normalized) -> English."""
    terms: dict[str, str] = {}
    for french, english in glossary.items():
        if not isinstance(french, str) or not isinstance(english, str):
            raise GlossaryError(f"glossary: {french!r}: terms are strings")
        read, written = normalize(french), english.strip()
        if not read or not written:
            raise GlossaryError(f"glossary: {french!r}: empty term")
        if terms.get(read.lower(), written) != written:
            raise GlossaryError(f"glossary: {french!r}: given twice, with different English")
        terms[read.lower()] = written
    return terms


def read_glossary(path: str | Path) -> dict[str, str]:
    """A glossary file: French term<TAB>English term a line ('#' lines and blank ones skipped).

    Raises GlossaryError naming the file and line of the first bad line.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:  # as --input's: "No such file or directory", not "[Errno 2] ..."
        raise GlossaryError(f"{path}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise GlossaryError(f"{path}: not UTF-8 (byte {error.start + 1})") from None
    terms: dict[str, str] = {}
    seen: dict[str, tuple[int, str]] = {}  # French as read -> its first line, its English
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        place = f"{path}:{number}"
        if "\t" not in line:
            raise GlossaryError(f"{place}: no tab between the French and the English term")
        french, english, *more = (field.strip() for field in line.split("\t"))
        if more or not french or not english:
            why = "more than two fields" if more else "empty term"
            raise GlossaryError(f"{place}: {why} (French term<TAB>English term)")
        first, before = seen.setdefault(normalize(french).lower(), (number, english))
        if before != english:
            raise GlossaryError(f"{place}: {french!r} is on line {first} already, as {before!r}")
        terms.setdefault(french, english)
    if not terms:
        raise GlossaryError(f"{path}: no terms (French term<TAB>English term a line)")
    return terms


@dataclass(frozen=True)
class Terms:
    """A line as the rule read it: its terms as stand-ins, and whether it starts with a
    capital (the stand-in may hide its first letter: "Chat noir")."""

    stand_ins: StandIns
    capital: bool


@dataclass(frozen=True)
class Glossary:
    """The rule: each glossary term read as the word Kappa, written back as its English."""

    terms: Mapping[str, str]  # French, lower-cased and normalized -> English
    pattern: re.Pattern[str]
    name: str = "glossary"
    did: str = "wrote each glossary term as the glossary's English"

    @classmethod
    def of(cls, setting: Setting) -> Glossary | None:
        """The rule for a glossary given with the line (pipeline.Setting); else None."""
        if not setting.glossary:
            return None
        terms = terms_of(setting.glossary)
        longest = sorted(terms, key=len, reverse=True)
        spaced = (r"\s+".join(map(re.escape, term.split())) for term in longest)
        pattern = re.compile(rf"(?<!\w)(?:{'|'.join(spaced)})(?!\w)", re.IGNORECASE)
        return cls(terms=terms, pattern=pattern)

    def read(self, text: str) -> tuple[str, Terms]:
        """`text` with each term the word Kappa, and the English each stands for."""
        spans = [
            (m.start(), m.end(), self.terms[" ".join(m.group().lower().split())])
            for m in self.pattern.finditer(text)
        ]
        stand_ins = stand_in(text, spans, STAND_IN)
        capital = next((c for c in text if c.isalpha()), "").isupper()
        return stand_ins.text, Terms(stand_ins, capital)

    def write(self, t: Translation, memo: Terms) -> Translation:
        """`t` and its alternatives with each term's English where the model wrote Kappa
        (stand_ins.written_back), an article before it set by that English, and a capital if it
        starts the sentence."""
        stand_ins = memo.stand_ins
        if not stand_ins.kept:
            return t
        t = _each(t, lambda text: _articles_set(text, stand_ins))
        t = written_back(t, stand_ins)
        return _each(t, lambda text: _finished(text, stand_ins, capital=memo.capital))


def _each(t: Translation, rewrite: Callable[[str], str]) -> Translation:
    """`t` with its text and each alternative rewritten (alternatives that agree kept once)."""
    text = rewrite(t.text)
    return dataclasses.replace(
        t, text=text, alternatives=distinct([rewrite(a) for a in t.alternatives], text)
    )


def _articles_set(text: str, stand_ins: StandIns) -> str:
    """`text` with each a/an just before a stand-in set by the English written in its place
    (as it is when the model wrote a stand-in per term)."""
    if len(stand_ins.pattern.findall(text)) != len(stand_ins.kept):
        return text
    kept = iter(stand_ins.kept)

    def agreed(m: re.Match[str]) -> str:
        article, english = m.group(1), next(kept)
        an = wants_an(english) if article and english else None
        if an is None or not article:
            return m.group()
        return f"{article[0]}{'n' if an else ''} {STAND_IN}"

    return ARTICLE.sub(agreed, text)


def _finished(text: str, stand_ins: StandIns, *, capital: bool) -> str:
    """`text` once the terms are written: without what is left of a stand-in inside a word
    ("Kappas"), and with the English of a term that starts a sentence capitalized if the line
    starts with a capital: the model drops the article before the stand-in ("Le chat dort."
    -> "Kappa sleeps."). A term the user wrote with a capital is written as given ("iPhone")."""
    if None not in stand_ins.kept and LEFT_OVER.search(text):
        text = LEFT_OVER.sub("", text).strip()
    for english in {e for e in stand_ins.kept if e and e.islower()} if capital else ():
        starts = re.finditer(rf"{SENTENCE_START}(?={re.escape(english)}(?!\w))", text)
        for at in [m.end() for m in starts]:
            text = text[:at] + text[at].upper() + text[at + 1 :]
    return text
