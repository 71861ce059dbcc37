"""Which language a column of sentences is in, cheaply: stop words and scripts (torch-free).

Enough to catch a corpus or test file read with its columns the wrong way round: a few
hundred sentences of running text name their language by their commonest short words
(Latin-script languages) or by their script (the others). Unsure means None, never a guess.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence

NAMES = {
    "en": "English", "fr": "French", "de": "German", "es": "Spanish", "it": "Italian",
    "pt": "Portuguese", "nl": "Dutch",
}  # fmt: skip
# the commonest function words of each language, from frequency lists of running text
STOP_WORDS = {
    "en": "the a an of and or to in on at is are was were be been it i you he she we they "
    "this that these not no do does did have has had my your his her with for from what",
    "fr": "le la les l un une des du de d et ou à au aux est sont était je j tu il elle nous "
    "vous ils elles ce c cette ces ne n pas que qu qui dans pour sur avec mon ma mes son sa "
    "avons avez ont été être avait avaient",
    "de": "der die das den dem des ein eine einen und oder zu im in ist sind war ich du er "
    "sie wir ihr es nicht kein mit für von auf dass was wie mein dein sein",
    "es": "el la los las un una unos y o a al de del en es son está era yo tú él ella "
    "nosotros ellos no que qué con para por mi su se lo le me",
    "it": "il lo la i gli le un una e o a al di del della in è sono era io tu lui lei noi "
    "voi loro non che con per mio mia suo sua ho ha",
    "pt": "o a os as um uma e ou ao de do da dos das em no na é são era eu tu ele ela nós "
    "eles não que com para por meu minha seu sua",
    "nl": "de het een en of te in op is zijn was ik jij je hij zij wij we niet geen dat wat "
    "met voor van aan mijn jouw zijn haar er",
}
STOP_SETS = {lang: frozenset(words.split()) for lang, words in STOP_WORDS.items()}
# Unicode name prefix of a letter -> the script it names (Latin letters go by stop words)
SCRIPTS = (
    "CYRILLIC", "GREEK", "ARABIC", "HEBREW", "CJK", "HIRAGANA", "KATAKANA", "HANGUL",
    "DEVANAGARI", "THAI", "GEORGIAN", "ARMENIAN", "BENGALI", "TAMIL", "ETHIOPIC",
)  # fmt: skip
WORD = re.compile(r"[^\W\d_]+")  # runs of letters: "l'homme" -> "l", "homme"
MIN_SHARE, MIN_RATIO = 0.08, 2.0  # a guess needs 8% stop words, twice the runner-up's


def name(code: str | None) -> str:
    """A language or script code as a reader knows it: 'fr' -> 'French'."""
    if code is None:
        return "unknown"
    return NAMES.get(code, f"{code.title()}-script")


def _script(texts: Sequence[str]) -> str | None:
    """The non-Latin script at least half of the letters are in, if there is one."""
    counts: Counter[str] = Counter()
    letters = 0
    for text in texts:
        for char in text:
            if char.isalpha():
                letters += 1
                kind = unicodedata.name(char, "").split(" ")[0]
                if kind in SCRIPTS:
                    counts[kind] += 1
    if not letters or not counts:
        return None
    script, n = counts.most_common(1)[0]
    return script.lower() if n >= letters / 2 else None


def guess_language(texts: Sequence[str]) -> str | None:
    """The language of some sentences ('en', 'fr', ... or a script: 'cyrillic'); None if unsure."""
    script = _script(texts)
    if script:
        return script
    words = [w for text in texts for w in WORD.findall(text.lower())]
    if not words:
        return None
    shares = {lang: sum(w in stop for w in words) / len(words) for lang, stop in STOP_SETS.items()}
    ranked = sorted(shares, key=shares.__getitem__, reverse=True)
    best, second = shares[ranked[0]], shares[ranked[1]]
    return ranked[0] if best >= MIN_SHARE and best >= MIN_RATIO * second else None


def sample(lines: Sequence[str], size: int = 300) -> list[str]:
    """Up to `size` lines spread evenly over the file: the same lines on every run."""
    step = max(len(lines) // size, 1)
    return list(lines[::step][:size])


def column_problem(
    sources: Sequence[str],
    targets: Sequence[str],
    *,
    src_col: int,
    tgt_col: int,
    expected: tuple[str | None, str | None] = (None, None),
    output_share: Callable[[Sequence[str]], float] | None = None,
) -> str | None:
    """What looks wrong with the column order, naming the fix; None if it looks right or is unclear.

    `expected` is the (source, target) language the columns should be in, when known;
    `output_share(texts)` is the share of the texts' subword pieces a model can output: a
    model's own target language scores ~1.0, its source language clearly less.
    """
    src, tgt = sample(sources), sample(targets)
    src_lang, tgt_lang = guess_language(src), guess_language(tgt)
    fix = f"swap them with --src-col {tgt_col} --tgt-col {src_col} (or --no-check-columns)"
    looks = f"column {src_col} looks {name(src_lang)} and column {tgt_col} {name(tgt_lang)}"
    want_src, want_tgt = expected
    if want_src and src_lang and src_lang != want_src:
        if tgt_lang == want_src or (want_tgt and src_lang == want_tgt):
            return f"{looks}, but the source should be {name(want_src)}: {fix}"
        return (
            f"{looks}, but the source should be {name(want_src)} "
            "(--no-check-columns to go on anyway)"
        )
    if want_tgt and tgt_lang and src_lang == want_tgt and tgt_lang != want_tgt:
        return f"{looks}, but the target should be {name(want_tgt)}: {fix}"
    if output_share is not None and src and tgt:
        src_share, tgt_share = output_share(src), output_share(tgt)
        if src_share > tgt_share + 0.1:  # measured: ~1.0 for the target side, 0.65-0.77 source
            which = f"{looks}: " if src_lang and tgt_lang else ""
            return (
                f"{which}the columns are the wrong way round for this model (it writes "
                f"{src_share:.0%} of column {src_col}'s pieces, {tgt_share:.0%} of column "
                f"{tgt_col}'s): {fix}"
            )
    return None
