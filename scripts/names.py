"""Copies of Tatoeba's Tom and Mary sentences with other first names, for a corpus of names.

Usage: python scripts/names.py CORPUS [--copies 2] [--seed 1] [--src-col 1] [--tgt-col 2] > OUT

Tatoeba writes nearly every person as Tom (13,879 of 157,298 French-English pairs) or Mary
(French "Marie" or "Mary"), so a model trained on it knows those two and reads other names as
words: "Je m'appelle Pierre." came out "I'm calling for Pierre.". Each pair where Tom, or
Mary, occurs as often on both sides is written again `--copies` times with a name drawn per
copy (one for Tom, another for Mary), the same on both sides; a pair without them is left out.
Only names written alike in French and English text are drawn, and men's names replace Tom and
women's Mary, so that French agreement ("Tom est fatigué") stays right.
"""

from __future__ import annotations

import argparse
import random
import re
import sys

MEN = (
    "Pierre Paul Lucas Thomas Nicolas Hugo Louis Antoine Julien Marc Mathieu Luc Olivier "
    "Vincent Ahmed Karim Yann Théo Maxime Jacques François Michel Philippe Alain Bernard Éric "
    "Laurent David Daniel Martin Simon Alexandre Benoît Romain Sébastien Nathan Léo Gabriel "
    "Arthur Jules Adam Mohamed Samuel Victor Omar Mehdi Kevin Bruno Patrick"
).split()
WOMEN = (
    "Sophie Julie Camille Léa Emma Chloé Claire Sarah Nathalie Isabelle Anne Émilie Céline "
    "Sylvie Fatima Inès Manon Zoé Laura Alice Louise Juliette Charlotte Lucie Élise Hélène "
    "Amélie Margaux Aurélie Caroline Nadia Yasmine Amina Jeanne Eva Lina Mélanie Pauline Anaïs"
).split()
TOM = re.compile(r"\bTom\b")
MARY_FR = re.compile(r"\b(?:Marie|Mary)\b")  # French Tatoeba writes Mary either way
MARY_EN = re.compile(r"\bMary\b")


def renamed(src: str, tgt: str, rng: random.Random) -> tuple[str, str] | None:
    """The pair with Tom and Mary given other names, or None if it names neither alike."""
    tom = len(TOM.findall(src)) == len(TOM.findall(tgt)) > 0
    mary = len(MARY_FR.findall(src)) == len(MARY_EN.findall(tgt)) > 0
    if not (tom or mary):
        return None
    if tom:
        man = rng.choice(MEN)
        src, tgt = TOM.sub(man, src), TOM.sub(man, tgt)
    if mary:
        woman = rng.choice(WOMEN)
        src, tgt = MARY_FR.sub(woman, src), MARY_EN.sub(woman, tgt)
    return src, tgt


def main() -> None:
    """Write the renamed copies of CORPUS's pairs to stdout as source<TAB>target lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--src-col", type=int, default=1)
    parser.add_argument("--tgt-col", type=int, default=2)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    written = 0
    with open(args.corpus, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            cols = line.rstrip("\r\n").split("\t")
            if len(cols) < max(args.src_col, args.tgt_col):
                sys.exit(f"{args.corpus}: line {number}: fewer than {args.tgt_col} columns")
            src, tgt = cols[args.src_col - 1], cols[args.tgt_col - 1]
            for _ in range(args.copies):
                pair = renamed(src, tgt, rng)
                if pair is None:
                    break
                print(*pair, sep="\t")
                written += 1
    print(f"{written:,} renamed pairs", file=sys.stderr)


if __name__ == "__main__":
    main()
