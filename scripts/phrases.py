"""Short phrase pairs read off word alignments, for a model that translates a word or a label.

Usage: python scripts/phrases.py --pairs CORPUS LINKS SRC_COL TGT_COL [--pairs ...]
       [--min-count 3] [--min-share 0.3] > OUT    (OUT: source<TAB>target lines)

LINKS holds `s2a align CORPUS`'s Pharaoh lines, one a pair, source word - target word.

Both fr-en models translated a word alone poorly: of mozilla-web's 195 lines of one or two
French words (UI labels), 10 came out right with the embedded model and 12 with the long run's
epoch 7 ("Réseau" -> "Reswer.", "Mémoire" -> "Thanks for me.", "chat" -> "Check out!"). Their
training holds few pairs that short but laws' headings ("Présomption", "Restriction"), and
epoch 7 answered in their words ("Bureau" -> "Officers", "Aide" -> "Administration").

This reads every phrase pair consistent with a pair's links (Och and Ney 2004; Koehn et al.
2003: no link leaves the two spans) and with every word of both linked, of 1 to 3 source words
and 1 to 4 target words, and a whole pair that short as one, linked or not; the marks around
them stripped, a sentence's first word in lower case where the corpus writes it so elsewhere.
It keeps each source phrase's most frequent target phrase: of its readings as a whole pair if
it has one, else one seen `--min-count` times and in `--min-share` of its readings, both sides
bounded by words that are no function words; neither side may hold a digit or a mark inside.
Each kept pair is written as found and capitalised (a heading, a label).

A/B at equal time (from epoch 7, the everyday mix without Europarl, laws and the Bible, lr
2.5e-4, 25 minutes an arm side by side, 1 thread each, AVX-512 BF16 host; B adds 50,848 lines
of this script's first form, before whole pairs, at weight 0.5), A -> B: the card's twenty
words 7 -> 12 right, mozilla-web's short lines 21 -> 23, twenty phrases 7 -> 5 ("Bonjour !"
-> "Goodjour!": "Bon" -> "Good" was a pair), newstest2013 22.02 -> 22.41, Tatoeba test 48.42
-> 48.48, Multi30k val 44.37 -> 44.36.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from itertools import zip_longest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from seq2attn_cli.data.languages import STOP_SETS  # noqa: E402

MARKS = ".,;:!?\"'«»“”‘’()[]{}¿¡…-–—*/"  # stripped around a phrase
INSIDE = set(MARKS) - set("'’-")  # "l'homme", "don't" and "peut-être" are words
MAX_SRC, MAX_TGT = 3, 4  # words
# A phrase ends on a word that is no function word ("filles dans un" -> "girls in a", "femmes
# prennent" -> "women are" were read off Multi30k), and starts on one only if it is a
# determiner ("un tabouret" -> "a stool"), not "du" or "des", which hold "de" ("du jardin" was
# read "the garden"); English's only where French has one too ("sweat rayé" -> "a striped").
# The stop words, and the function words they lack.
DETERMINERS = {
    "fr": set("le la les l un une mon ma mes ton ta tes son sa ses notre nos votre vos "
              "leur leurs ce cet cette ces".split()),
    "en": set("the a an some my your his her its our their this that these those".split()),
}  # fmt: skip
FUNCTION_WORDS = {
    "fr": STOP_SETS["fr"] | DETERMINERS["fr"] | set(
        "par en vers sous chez comme mais puis lors tandis sans entre près devant derrière "
        "contre se s me m te t y lui on quand si car donc ni dont où moi toi eux".split()
    ),
    "en": STOP_SETS["en"] | DETERMINERS["en"] | set(
        "by as but while into onto there who which will would can could up out over under "
        "through between about than then so if when".split()
    ),
}  # fmt: skip


def spans(
    links: set[tuple[int, int]], src_len: int, tgt_len: int
) -> Iterator[tuple[int, int, int, int]]:
    """Each (src start, src end, tgt start, tgt end) span pair consistent with `links`
    (ends exclusive), the source span at most MAX_SRC words and the target MAX_TGT; a whole
    short pair is one, its words linked or not ("Bonsoir !" -> "Good evening!", "evening"
    unlinked, was read "Good")."""
    if src_len <= MAX_SRC and tgt_len <= MAX_TGT and links:
        yield 0, src_len, 0, tgt_len
        return
    for start in range(src_len):
        for end in range(start + 1, min(start + MAX_SRC, src_len) + 1):
            linked = [t for s, t in links if start <= s < end]
            if not linked:
                continue
            first, last = min(linked), max(linked) + 1
            if last - first > MAX_TGT:
                continue
            if any(first <= t < last and not start <= s < end for s, t in links):
                continue  # a target word inside is linked outside the source span
            if {s for s, _ in links if start <= s < end} != set(range(start, end)):
                continue  # a source word unlinked: "chien brun saute" -> "dog is jumping"
            if set(range(first, last)) <= {t for _, t in links}:
                yield start, end, first, last


def phrase(words: list[str], *, lowered: set[str]) -> str | None:
    """The words as one phrase, marks around it stripped, its first word lowered where the
    corpus writes it so; None if a mark or digit is left inside or nothing is."""
    text = " ".join(words).strip(MARKS + " ")
    if not text or any(c in INSIDE or c.isdigit() for c in text):
        return None
    first, _, rest = text.partition(" ")
    if first[0].isupper() and first.lower() in lowered:
        text = " ".join(filter(None, [first.lower(), rest]))
    return text


def read(
    corpus: Path, links: Path, src_col: int, tgt_col: int
) -> Iterator[tuple[list[str], list[str], set[tuple[int, int]]]]:
    """Each pair's source words, target words and links (source index, target index)."""
    with corpus.open(encoding="utf-8") as pairs, links.open(encoding="utf-8") as found:
        for number, (line, linked) in enumerate(zip_longest(pairs, found), 1):
            if line is None or linked is None:
                sys.exit(f"{links}: {number - 1:,} lines, not one a pair of {corpus}")
            cols = line.rstrip("\r\n").split("\t")
            if len(cols) < max(src_col, tgt_col):
                sys.exit(f"{corpus}: line {number}: fewer than {max(src_col, tgt_col)} columns")
            pair = {tuple(int(i) for i in link.split("-")) for link in linked.split()}
            yield cols[src_col - 1].split(), cols[tgt_col - 1].split(), pair


def lowered_words(sources: list[tuple[Path, Path, int, int]]) -> tuple[set[str], set[str]]:
    """The words each side writes in lower case more often than not after a sentence's first
    word ("i" in a chat line does not make "I" one)."""
    counts: list[Counter[str]] = [Counter(), Counter()]
    for corpus, links, src_col, tgt_col in sources:
        for src_words, tgt_words, _ in read(corpus, links, src_col, tgt_col):
            for side, words in zip(counts, (src_words, tgt_words), strict=True):
                side.update(w.strip(MARKS) for w in words[1:] if w[:1].isalpha())
    src, tgt = (
        {w for w, n in side.items() if w[:1].islower() and n > side[w[:1].upper() + w[1:]]}
        for side in counts
    )
    return src, tgt


Readings = dict[str, Counter[str]]  # source phrase -> how often each target phrase was read


def counted(sources: list[tuple[Path, Path, int, int]]) -> tuple[Readings, Readings]:
    """Each source phrase's readings, all of them and those of a whole short pair alone."""
    src_lowered, tgt_lowered = lowered_words(sources)
    found: Readings = defaultdict(Counter)
    alone: Readings = defaultdict(Counter)
    for corpus, links, src_col, tgt_col in sources:
        for src_words, tgt_words, pair in read(corpus, links, src_col, tgt_col):
            if any(s >= len(src_words) or t >= len(tgt_words) for s, t in pair):
                sys.exit(f"{links}: links past the words of {corpus}'s pair: {sorted(pair)}")
            for start, end, first, last in spans(pair, len(src_words), len(tgt_words)):
                src = phrase(src_words[start:end], lowered=src_lowered)
                tgt = phrase(tgt_words[first:last], lowered=tgt_lowered)
                if src and tgt:
                    found[src][tgt] += 1
                    if (end - start, last - first) == (len(src_words), len(tgt_words)):
                        alone[src][tgt] += 1
    return found, alone


def bounded(text: str, lang: str) -> bool | None:
    """Whether a phrase ends on a word that is no function word and starts on one or on a
    determiner; None if not, else whether it starts on a determiner."""
    words = re.split(r"[\s'’]+", text.lower().strip("'’"))
    if words[-1] in FUNCTION_WORDS[lang]:
        return None
    if words[0] in DETERMINERS[lang]:
        return True
    return None if words[0] in FUNCTION_WORDS[lang] else False


def kept(
    found: Readings, alone: Readings, *, min_count: int, min_share: float
) -> list[tuple[str, str]]:
    """Each French phrase with its most frequent English one: of its readings as a whole pair
    if it has one (a person's translation, no aligner's: "Excusez-moi." was linked to "me."
    alone), else of those seen `min_count` times and in `min_share` of its readings, bounded by
    words that are no function words; never the same text."""
    pairs = []
    for src, targets in sorted(found.items()):
        translated = Counter({t: n for t, n in alone[src].items() if t.lower() != src.lower()})
        if translated:  # "Merci !" is "Thank you!", where "Merci pour" linked "Thank"
            tgt = translated.most_common(1)[0][0]
        else:  # never alone, or alone only as a copy ("Chat !" -> "Chat!" in a caption set)
            tgt, count = targets.most_common(1)[0]
            if count < min_count or count < min_share * sum(targets.values()):
                continue
            src_det, tgt_det = bounded(src, "fr"), bounded(tgt, "en")
            if src_det is None or tgt_det is None or (tgt_det and not src_det):
                continue
        if src.lower() != tgt.lower():  # a copy ("Market" in a French caption) teaches none
            pairs.append((src, tgt))
    return pairs


def main() -> None:
    """Write the kept phrase pairs, as found and capitalised, as source<TAB>target lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pairs", nargs=4, action="append", required=True,
        metavar=("CORPUS", "LINKS", "SRC_COL", "TGT_COL"),
    )  # fmt: skip
    parser.add_argument("--min-count", type=int, default=3)
    parser.add_argument("--min-share", type=float, default=0.3)
    args = parser.parse_args()
    sources = [(Path(c), Path(links), int(s), int(t)) for c, links, s, t in args.pairs]
    if any(min(s, t) < 1 for *_, s, t in sources):
        sys.exit("columns count from 1")
    pairs = kept(*counted(sources), min_count=args.min_count, min_share=args.min_share)
    written: set[tuple[str, str]] = set()
    for src, tgt in pairs:
        for pair in ((src, tgt), (src[0].upper() + src[1:], tgt[0].upper() + tgt[1:])):
            if pair not in written:
                written.add(pair)
                print(*pair, sep="\t")
    print(f"{len(pairs):,} phrase pairs, {len(written):,} lines", file=sys.stderr)


if __name__ == "__main__":
    main()
