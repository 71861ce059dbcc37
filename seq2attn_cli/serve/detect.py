"""Which language a text is in: lingua's detector over the languages s2a names and the model's.

Lingua's high-accuracy models of all its 75 languages take ~900 MB and 30 s to load; of the
seven languages s2a names (data.languages.NAMES) ~210 MB and ~5 s (measured in `s2a serve`
on a shared 2-core machine; 35 s when it was loaded 7-fold). Its low-accuracy mode takes
12 MB but called "il voit grand chat rouge" English. So the detector knows those seven,
at high accuracy, and `s2a serve` loads it in a thread at start-up: the page asks for
`"source": "auto"` every time, and its first translation should not wait for the load.
"""

from __future__ import annotations

import threading
from typing import Any

from ..data.languages import NAMES

UNDETERMINED = "und"  # ISO 639's code for a language not known
# a share of the detector's confidence above which `auto` refuses another language: of 1,200
# French dev lines (MTNT, WMT chat, XNLI, Tatoeba, news), 0.5 refused 8, 6 of them French with
# English names in them ("Je ne supporte pas les Black Eyed Peas." at 61%); 0.8 refuses one,
# English ("How to Cook everything", 90%), and lets 513 of their 1,200 English sides through
# where 0.5 let 228: a text the model reads as French costs less than French refused
SURE = 0.8
# ...in a text of at least this many different words: lingua took the French "Non", "OK" and
# "Le weekend" for Italian or Dutch at 51-53%, no 3-word French phrase we tried, and forty
# lines of "Il pleut." for German at 55%
MIN_WORDS = 3


class Detector:
    """Lingua's detector over the languages s2a names and `also`, loaded once per process."""

    def __init__(self, *, also: tuple[str, ...] = ()) -> None:
        self.codes = tuple(sorted({*NAMES, *also} - {UNDETERMINED}))

    def load(self) -> None:
        """Load lingua's models now (it takes seconds): detections wait for this."""
        lingua_detector(self.codes)

    def detect(self, text: str) -> list[dict[str, Any]]:
        """LibreTranslate's /detect answer: languages with confidence 0-100, likeliest first."""
        values = lingua_detector(self.codes).compute_language_confidence_values(text)
        found = [
            {
                "confidence": round(v.value * 100, 2),
                "language": v.language.iso_code_639_1.name.lower(),
            }
            for v in values
            if v.value > 0
        ]
        return found or [{"confidence": 0.0, "language": UNDETERMINED}]

    def detect_each(self, texts: list[str]) -> list[list[dict[str, Any]]]:
        """Each text's /detect answer, the text detected on its own."""
        return [self.detect(text) for text in texts]


_loaded: dict[tuple[str, ...], Any] = {}  # read-only models: one load serves every app
_loading = threading.Lock()


def lingua_detector(codes: tuple[str, ...]) -> Any:
    """Lingua's detector of the languages it knows among `codes`, built once per process."""
    with _loading:  # two first requests at once build one detector
        if codes not in _loaded:
            from lingua import IsoCode639_1, LanguageDetectorBuilder

            known = [c.upper() for c in codes if hasattr(IsoCode639_1, c.upper())]
            isos = [getattr(IsoCode639_1, c) for c in known]
            builder = LanguageDetectorBuilder.from_iso_codes_639_1(*isos)
            _loaded[codes] = builder.with_preloaded_language_models().build()
        return _loaded[codes]


def source_of(found: list[dict[str, Any]], source: str, *, text: str) -> dict[str, Any]:
    """The language a model of `source` takes `text` to be in (`found`: what /detect says).

    The detector's pick if it is `source`, or if the detector is sure of it and the text
    long enough to be sure of; else `source`, with the confidence the detector gave it.
    """
    best, words = found[0], len(set(text.lower().split()))  # "Il pleut." x 40: 2 words
    if best["language"] == source or (best["confidence"] >= SURE * 100 and words >= MIN_WORDS):
        return best
    mine = next((f for f in found if f["language"] == source), None)
    return mine or {"confidence": 0.0, "language": source}
