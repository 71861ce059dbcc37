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
words around it ("Take <url> the detail for details."). A translation that lost the word gets
the URL after the target word that attends most to it; one that wrote it more often than there
are URLs ("Write to URL or go on URL's URL") gives each URL the one attending most to it and
leaves the others out, and a word the model garbled it into ("Seen (RLL)."), two or more of
the pieces that spell it in the source and attending most to it, is taken for it.

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
19.54 -> 26.18).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..explain.alignment import WORD_START, WordAttention, group_pieces
from ..translation import Translation
from .edges import peeled, put_around
from .unread import unread_runs

if TYPE_CHECKING:
    from .pipeline import Setting

PLACEHOLDER = "URL"
WORD = re.compile(rf"\b{PLACEHOLDER}\b")
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
PUNCTUATION = re.compile(r"^(.*?\w)(\W*)$", re.S)  # a word and the marks after it
ENDING = ".,;:!?"  # the marks that end a clause or a sentence
LETTERS = re.compile(r"\w(?:[\w']*\w)?")  # a word without the marks around it: "(RLL)."


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


def stand_in_urls(text: str, knows: Callable[[str], bool] | None = None) -> StandIns:
    """`text` with each URL and e-mail address read as the word URL, and each run of symbols
    no piece holds (`knows`: whether one does) when the line has words besides."""
    spans = [(start, start + len(url), url) for start, url in found(text)]
    if knows is None:
        return stand_in(text, spans)
    stand_ins = stand_in(text, sorted(spans + unread_runs(text, knows, spans)))
    read, lead, trail = peeled(stand_ins.text, stand_ins.kept, stand_ins.word)
    return dataclasses.replace(stand_ins, text=read, lead=lead, trail=trail)


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


def with_urls(t: Translation, stand_ins: StandIns) -> Translation:
    """A Translation with the URLs the model read as the word URL written back as given.

    Its pieces, attention and alignment stay the model's, the word URL in each URL's place,
    so their words line up with the text's; an alternative that lost a URL is left out.
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
    others = [a for a in (put_back(a, stand_ins) for a in t.alternatives) if a is not None]
    return dataclasses.replace(
        _spread(t, stand_ins) if text == put_back(t.text, stand_ins) else t,
        text=text,
        alternatives=[a for a in dict.fromkeys(others) if a != text],
        dropped=[w for w in t.dropped if w != stand_ins.word],  # written, whatever the model did
    )


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
        """`t` with the URLs written back (`with_urls`)."""
        return with_urls(t, memo)
