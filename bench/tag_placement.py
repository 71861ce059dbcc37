"""How often a tag lands on the right word: French sentences with one word in <b>...</b>,
translated as HTML with the embedded model; the tag should wrap the English word given.

    .venv/bin/python bench/tag_placement.py [--model DIR] [--beam 5] [--sure 0.5 0.7 ...]

A sentence whose translation does not hold the expected word at all cannot be judged (the
model chose another word); it is counted apart. For the rest: "exact" when the tag wraps
just that word, "wider" when it wraps it and more, "wrong" otherwise. The same sentences are
scored for a baseline that puts the tag on the target word at the source word's relative
position, to show what attention adds.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from seq2attn_cli.decoding.translator import Translator
from seq2attn_cli.documents import placement, translate_document

SET = Path(__file__).with_name("tag_placement.tsv")
TAG = re.compile(r"<b>(.*?)</b>", re.S)


def words(text: str) -> list[str]:
    """Lower-case words without the punctuation around them."""
    return [w.strip(".,;:!?\"'()«»").lower() for w in text.split() if w.strip(".,;:!?\"'()«»")]


def judge(translated: str, expected: str) -> str:
    """exact / wider / wrong / lost (the tag is not there once) / unjudged (no such word)."""
    if translated.count("<b>") != 1 or translated.count("</b>") != 1:
        return "lost"
    found = set(expected.lower().split("|")) & set(words(TAG.sub(r"\1", translated)))
    if not found:
        return "unjudged"
    inside = words(TAG.search(translated).group(1))  # type: ignore[union-attr]
    if len(inside) == 1 and inside[0] in found:
        return "exact"
    return "wider" if found & set(inside) else "wrong"


class Once:
    """A translator that translates each sentence once, however often it is asked."""

    def __init__(self, translator: Translator, beam: int) -> None:
        self.translator, self.beam, self.done = translator, beam, {}

    def translate(self, texts: list[str], *, beam: int) -> list:
        todo = [t for t in texts if t not in self.done]
        found = self.translator.translate(todo, beam=self.beam) if todo else []
        self.done.update(zip(todo, found, strict=True))
        return [self.done[t] for t in texts]


def by_position(source: str, translation: str) -> str:
    """The baseline: the tag on the target word at the tagged source word's relative place."""
    src = source.split()
    at = next(i for i, w in enumerate(src) if "<b>" in w)
    tgt = translation.split()
    j = min(len(tgt) - 1, at * len(tgt) // len(src))
    return " ".join(f"<b>{w}</b>" if k == j else w for k, w in enumerate(tgt))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="model directory (default: embedded)")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--sure", type=float, nargs="+", default=[placement.SURE])
    args = parser.parse_args()
    translator = Once(Translator.load(args.model), args.beam)
    rows = [line.split("\t") for line in SET.read_text().splitlines() if not line.startswith("#")]
    start = time.perf_counter()
    runs: dict[str, dict[str, int]] = {}
    misses = []
    for sure in args.sure:
        placement.SURE = sure
        tally = runs[f"sure {sure}"] = {}
        for source, expected in rows:
            out = translate_document(translator, source, format="html", beam=args.beam)
            verdict = judge(out, expected)
            tally[verdict] = tally.get(verdict, 0) + 1
            if verdict != "exact" and sure == args.sure[0]:
                misses.append(f"  {verdict:8} {source}  ->  {out}  (expected: {expected})")
    base = runs["by position"] = {}
    for source, expected in rows:
        plain = translator.translate([TAG.sub(r"\1", source)], beam=args.beam)[0].text
        verdict = judge(by_position(source, plain), expected)
        base[verdict] = base.get(verdict, 0) + 1
    judged = sum(base.get(k, 0) for k in ("exact", "wider", "wrong", "lost"))
    print(f"{len(rows)} sentences, {judged} judged (the others' translation lacks the word); "
          f"beam {args.beam}, {time.perf_counter() - start:.1f} s")  # fmt: skip
    for name, counts in runs.items():
        shares = ", ".join(
            f"{k} {counts.get(k, 0)} ({100 * counts.get(k, 0) / max(judged, 1):.0f}%)"
            for k in ("exact", "wider", "wrong", "lost")
        )
        print(f"{name:12} {shares}; unjudged {counts.get('unjudged', 0)}")
    print(f"not exact (sure {args.sure[0]}):", *misses, sep="\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
