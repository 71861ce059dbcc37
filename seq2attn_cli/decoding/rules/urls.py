"""URLs, e-mail addresses and emoji: read by the model as the word URL, written back as given.

The model has pieces for few of a URL's characters and none for "@", and translated one as
words: "Voir https://www.example.com/page.html pour les détails." came out as "Vottps:/wwwwell/
wwith/wwele.com/paged for details.". s2a reads each URL (scheme://, www. or a bare domain such
as service-public.fr) and e-mail address as the word URL, which the model copies as it
copies a name, and writes it back where the model wrote that word. What the model reads in a
URL's place, on 30 French sentences with one or two at the start, middle or end (the embedded
model, beam 5): the word URL was copied once for each in 26, X in 22; Wikipédia came out
mangled ("Wikipeddia"); nothing at all (as documents leave out inline code, put back after the
target word aligned to the source word before it; 15 sentences) placed 8 well and lost the
words around it ("Take <url> the detail for details."). Where the model lost, doubled or
garbled the word, stand_ins.py finds where the URL goes.

A placeholder a program fills in (%s, %(name)s, {name}, {{ name }}, ${NAME}, and WMT chat's
anonymized #PRS_ORG#) is read the same way: the model garbled them ("Bienvenue {name} !" ->
"Welcome to a lot.", "#PRS_ORG#" -> "EPRICORGG"); on the 2,178 lines of the WMT chat dev set
that hold one (embedded model, beam 5), BLEU 15.77 -> 46.51. So are a section sign with its
number (§ 3) and a telephone number (01 23 45 67 89), whose groups the model dropped or
garbled, a mention or a hashtag (@jean_dupont, #vacances; the dev sets' 83 lines that hold
one: BLEU 15.83 -> 22.23), and a file's or a forum's path (/etc/hosts, ~/notes.txt,
/r/france, /u/name; "Ouvrez le fichier /etc/hosts." came out "Open up the file/hosts."; the
53 dev lines with one, mostly MTNT's: BLEU 25.51 -> 28.27, chrF 57.57 -> 58.80, the long
run's epoch 9 31.14 -> 33.28). So is a unit's symbol after a number (25 mm, 45 m², 200 g,
3 kWh), which English writes as French does: "Le volume est de 3 m³." came out "The volume is
33.", "45 m²" "45 mold", "1,85 m et pèse 78 kg" "1.8 kg"; on the dev sets' 48 lines with one
(newstest2013, MTNT, XNLI, WMT chat, wmt24pp), BLEU 17.54 -> 19.50 (chrF 41.75 -> 43.40), the
long run's step 6,089 23.69 -> 24.06 (chrF 47.49 -> 47.41).

An emoji or other symbol the model has no piece for, standing apart from the words, is read
the same way: the model read one as <unk> and made a word up for it ("J'aime les 🍕 et les
🍔." -> "I like the clock and the clock."; "Je bois du ☕ le matin." -> "I drink the morning
in the morning."); read as URL, "I like 🍕 and 🍔." and "I drink ☕ the morning.". A line of
nothing else is written back as given (clean.py); one glued to a word is symbols.py's, one
after an elision ("l'🍕") the word itself. A word of symbols ("^_^"), or in a script other
than Latin with a letter the model has no piece for ("東京", "Иван": it knows "а"), a name
it can only copy, is read the same way ("J'habite à 東京." -> "I live in a hurry.", now "I
live in 東京."; the dev sets' 11 lines, mostly MTNT's faces and a Japanese address: BLEU
19.54 -> 26.18). So is a keyboard shortcut (keys.py: Ctrl+C, Alt + F4, Maj+F10).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..translation import Translation
from .edges import peeled
from .keys import shortcuts
from .stand_ins import StandIns, stand_in, written_back
from .unread import unread_runs

if TYPE_CHECKING:
    from .pipeline import Setting

# the endings of bare domains ("service-public.fr"): common ones that are no French or English
# word, in lower case, so that a typo such as "fin.De plus" or "point.Com" is no domain
DOMAINS = "com|org|net|edu|gov|info|io|eu|fr|ch|ca|lu|uk"
FOUND = re.compile(
    r"\b(?:[a-z][a-z0-9+.-]*://|www\.)[^\s<>\"]+"  # a URL, to the next space or quote
    rf"|(?<![\w@./+-])(?:[a-z][a-z0-9-]*\.)+(?-i:{DOMAINS})(?![\w@-])(?:/[^\s<>\"]*)?"  # bare
    r"|(?<![\w.+-])(?:mailto:)?[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # an e-mail address
    # a placeholder a program fills in: printf's %s, %.2f and %(name)s (not "50 % d'entre"),
    # Python's {} and {name}, Jinja's {{ name }}, the shell's ${NAME} and $NAME, and WMT chat's
    # anonymized #NAME#: the model garbled them ("Bienvenue {name} !" -> "Welcome to a lot.")
    r"|(?<![\w%])%(?:\(\w+\))?[-+0]*\d*(?:\.\d+)?[sdifuxegcr](?![a-z])"
    r"|\{\{[^{}]*\}\}|\$?\{[#\w.:,!\[\]-]*\}|\$[a-z_]\w*|#[a-z][a-z_]*#"
    # a section sign and its number: read as the sign alone, the model dropped the number
    # ("Voir le § 3 du contrat." -> "Seening the § of the contract.")
    r"|§+\s?\d+(?:\.\d+)*"
    # a telephone number, French (01 23 45 67 89, 0 800 123 456) or international (+33 1 23
    # 45 67 89): the model dropped or garbled its groups ("Call up 23 45 67 89.", "EC3315 67 89")
    r"|(?<![\w+])(?:0\s?\d|\+\d{1,3}[\s.-]?\(?\d{1,4}\)?)(?:[\s.-]?\d{2,4}){3,4}(?!\w)"
    # a mention or a hashtag (@jean_dupont, #vacances): "Thanks for the harvejedupont", and
    # hashtags left out without a word
    r"|(?<![\w.@#&])[@#][^\W\d]\w*"
    # a file's path or a forum's (/etc/hosts, ~/notes.txt, /r/france, /u/name, the "/s" of a
    # joke): "Ouvrez le fichier /etc/hosts." came out "Open up the file/hosts."
    # a unit's symbol after a number (25 mm, 45 m², 200 g, 3 kWh), which English writes so
    r"|(?<=\d )(?-i:[kcmdµ]?m[²³]?|[kmµ]?g|[cmd]?[lL]|km/h|m/s|[kMG]?Wh?|[kMG]?Hz|ha)(?![\w/²³'’])"
    # (not a price's unit: "€/mois", read by numbers.py)
    r"|(?<![\w/.:~<+€$£-])(?:~|\.{1,2})?/(?:[\w.@-]+/)*[\w.@-]*[\w@-]",
    re.IGNORECASE,
)
# what ends a sentence or a quote rather than a URL ("voir https://x.fr/a."), as GitHub's
# autolinks read it; a closing bracket only when the URL opens none (wiki/Paris_(France))
TRAILING = ".,;:!?'\"*~"
OPENING = {")": "(", "]": "[", "}": "{"}


def stand_in_urls(text: str, knows: Callable[[str], bool] | None = None) -> StandIns:
    """`text` with each URL and e-mail address read as the word URL, and each run of symbols
    no piece holds (`knows`: whether one does) when the line has words besides."""
    spans = [(start, start + len(url), url) for start, url in found(text)]
    spans = sorted(spans + [k for k in shortcuts(text) if not _overlaps(k, spans)])
    if knows is None:
        return stand_in(text, spans)
    stand_ins = stand_in(text, sorted(spans + unread_runs(text, knows, spans)))
    read, lead, trail = peeled(stand_ins.text, stand_ins.kept, stand_ins.word)
    return dataclasses.replace(stand_ins, text=read, lead=lead, trail=trail)


def _overlaps(span: tuple[int, int, str], spans: list[tuple[int, int, str]]) -> bool:
    """Whether `span` shares a character with one of `spans`."""
    return any(start < span[1] and span[0] < end for start, end, _ in spans)


def found(text: str) -> Iterator[tuple[int, str]]:
    """Each URL and e-mail address in `text`, where it starts, without the marks after it."""
    for m in FOUND.finditer(text):
        url = _trimmed(m.group())
        # "https://." is no URL once its full stop is off (a unit's lookbehind needs its number)
        if url == m.group() or FOUND.fullmatch(url):
            yield m.start(), url


def around(text: str, other: Callable[[str], str], url: Callable[[str], str]) -> str:
    """`text` with `url` applied to each URL and e-mail address and `other` to what is between."""
    out, at = [], 0
    for start, link in found(text):
        out += [other(text[at:start]), url(link)]
        at = start + len(link)
    return "".join(out) + other(text[at:])


def _trimmed(url: str) -> str:
    """A URL without the punctuation that follows it in the sentence."""
    while url:
        last = url[-1]
        unopened = last in OPENING and url.count(last) > url.count(OPENING[last])
        if last not in TRAILING and not unopened:
            break
        url = url[:-1]
    return url


@dataclass(frozen=True)
class Urls:
    """The rule: URLs and addresses read as the word URL, written back as given."""

    knows: Callable[[str], bool]  # whether the model has a piece for a character
    name: str = "urls"
    did: str = "wrote back each URL as given"

    @classmethod
    def of(cls, setting: Setting) -> Urls:
        """The rule for a model (pipeline.Setting): every model has it."""
        return cls(knows=setting.subwords.knows)

    def read(self, text: str) -> tuple[str, StandIns]:
        """`text` with each URL, e-mail address and unknown symbol the word URL."""
        stand_ins = stand_in_urls(text, self.knows)
        return stand_ins.text, stand_ins

    def write(self, t: Translation, memo: StandIns) -> Translation:
        """`t` with the URLs written back (stand_ins.written_back)."""
        return written_back(t, memo)
