"""Emoji and other symbols at a line's start or end, apart from its words ("⚠️ Attention :
route barrée", "Merci pour tout ❤️"), and mentions and hashtags there: urls.py's stand-ins,
taken off what the model reads and put back around its translation, their words still
counted on both sides.

Read as the word URL there, the stand-in took words with it: "Merci pour tout ❤️" came out
"Thank you for all ❤️." ("Merci pour tout": "Thanks for everything."), "C'est génial 👍"
"It's 👍.", "⚠️ Attention : route barrée" "URLbention ⚠️: roads to Monday.". The model reads
the line without them; the word URL goes back at the line's start or end, before the marks
that end the translation where the source has none before it ("Thanks for everything URL."),
its source column added with no attention and its target row all on it, so that the
alignment, a document's tags and urls.py's write-back count it as they count any stand-in.
On the dev sets' 160 lines with such a symbol (mostly MTNT's and WMT chat's; embedded model,
beam 5), BLEU 23.51 -> 23.59 and chrF 45.05 -> 45.22; the long run's step 6,089 27.29 -> 27.35
and 48.48 -> 48.76.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata

from ..explain.alignment import WORD_START
from ..translation import Translation

ENDING = re.compile(r"[.!?…]+$")  # the marks that end a translation
# a mention or a hashtag there too ("@marie merci !", "… #vacances #Bretagne"): on the dev
# sets' 57 lines with one, BLEU 22.23 -> 23.06 (chrF 45.28 -> 45.74), the long run's step
# 6,089 22.77 -> 22.94 (46.93 -> 47.55)
TAG = re.compile(r"[#@][^\W\d]\w*")
# the French words a noun follows: after one, a symbol or tag at the end is that noun
# ("J'adore la #Bretagne" came out "I love here #Bretagne.", "Merci à @marie" "Thanks for it
# @marie.", "J'aime les 🍕" would be "I like them 🍕")
LEADING_WORDS = frozenset(
    "à au aux de du des la le les un une pour par sur sous chez avec sans vers dans en et ou "
    "mon ma mes ton ta tes son sa ses notre nos votre vos leur leurs ce cet cette ces".split()
)


def _symbol(kept: str) -> bool:
    """Whether a stand-in's run is symbols: no letter or digit, and no private use character
    (a document's inline code, documents/runs.STAND_IN, or an icon font's: read in place)."""
    return not any(c.isalnum() or unicodedata.category(c) == "Co" for c in kept)


def peeled(read: str, kept: tuple[str | None, ...], word: str) -> tuple[str, int, int]:
    """`read` without the stand-ins `word` for symbols (a `kept` run with no letter or digit),
    mentions and hashtags at its start and end (not one after a word a noun follows), and how
    many were taken from each."""
    words = read.split(" ")
    symbols = [k is not None and (_symbol(k) or bool(TAG.fullmatch(k))) for k in kept]
    lead = 0
    while lead < len(symbols) and symbols[lead] and words[lead] == word:
        lead += 1
    trail = 0
    while (
        trail < len(symbols) - lead
        and symbols[-1 - trail]
        and words[-1 - trail] == word
        and words[-2 - trail].lower() not in LEADING_WORDS  # "J'adore la #Bretagne": a noun
    ):
        trail += 1
    rest = words[lead : len(words) - trail]
    if not any(any(c.isalnum() for c in w) and w != word for w in rest):
        return read, 0, 0  # nothing else to translate: as it was
    return " ".join(rest), lead, trail


def put_around(t: Translation, *, lead: int, trail: int, word: str, source: str) -> Translation:
    """`t` with `lead` words `word` before it and `trail` after it (before the marks that end
    it when `source`, the line as the model read it, ends without them), its pieces and
    attention too (no attention to the added source pieces but their own)."""
    if not lead and not trail:
        return t
    before = not ENDING.search(source)

    def around(text: str) -> str:
        """`text` with the words added."""
        end = ENDING.search(text) if before else None
        cut = end.start() if end else len(text)
        return " ".join([word] * lead + [text[:cut]] + [word] * trail) + text[cut:]

    done = dataclasses.replace(
        t, text=around(t.text), alternatives=[around(a) for a in t.alternatives]
    )
    if not t.has_attention:
        return done
    return dataclasses.replace(done, **_pieces(t, lead, trail, word, before=before))


def _pieces(t: Translation, lead: int, trail: int, word: str, *, before: bool) -> dict:
    """`t`'s pieces and attention with the words added at both ends."""
    piece = WORD_START + word
    src = [piece] * lead + t.src_tokens[:-1] + [piece] * trail + t.src_tokens[-1:]
    n = len(t.src_tokens) - 1  # the source pieces before </s>
    tgt_end = len(t.tgt_tokens) - 1  # where the trailing words go: before </s> ...
    while before and tgt_end > 0 and ENDING.fullmatch(t.tgt_tokens[tgt_end - 1]):
        tgt_end -= 1  # ... and before the marks that end it (glued: no word start)
    rows = [[0.0] * lead + list(r[:n]) + [0.0] * trail + list(r[n:]) for r in t.weights]
    added = [[float(j == k) for j in range(len(src))] for k in range(lead)]
    added_end = [[float(j == lead + n + k) for j in range(len(src))] for k in range(trail)]
    tgt = [piece] * lead + t.tgt_tokens[:tgt_end] + [piece] * trail + t.tgt_tokens[tgt_end:]
    weights = added + rows[:tgt_end] + added_end + rows[tgt_end:]  # (tgt, src)
    return {
        "src_tokens": src,
        "tgt_tokens": tgt,
        "weights": weights,
        "model_tokens": t.model_tokens or t.tgt_tokens,  # the pieces the search wrote
    }
