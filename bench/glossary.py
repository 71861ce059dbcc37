"""The glossary measured: on dev sentences holding a glossary term, how often the output holds
the term's English, and BLEU, with and without the glossary (decoding/rules/glossary.py).

    .venv/bin/python bench/glossary.py [--model DIR] [--beam 5] [--sentences 200]
        [--data /work/data/q/newstest2012-rest.tsv /work/data/q/multi30k-val.tsv]
        [--stand-ins Zorg Kappa]

The glossary is made here from the data: the candidate terms below that occur (whole words,
any case) in at least two lines of the data whose reference holds the English, at most
--terms of them; the sentences are the first lines of the data holding one of its terms, each
term's English in their reference. A sentence counts as kept when its output holds the
English of every glossary term of its source (whole words, any case). `--stand-ins` measures
other words in the terms' place than the rule's own (glossary.STAND_IN), the first printed.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable
from pathlib import Path

import sacrebleu

from seq2attn_cli.decoding.rules import glossary as rule
from seq2attn_cli.decoding.translator import Translator

DATA = ["/work/data/q/newstest2012-rest.tsv", "/work/data/q/multi30k-val.tsv"]
# French -> English as a client's style guide might want it, news and everyday words; many
# with an English the model may not choose by itself
CANDIDATES = {
    "chômage": "unemployment", "croissance": "growth", "dette": "debt", "syndicats": "unions",
    "gouvernement": "government", "entreprise": "company", "entreprises": "companies",
    "Etats-Unis": "United States", "Union européenne": "European Union", "UE": "EU",
    "Banque centrale européenne": "European Central Bank", "BCE": "ECB", "banque": "bank",
    "banques": "banks", "élections": "elections", "élection": "election", "députés": "MPs",
    "président": "president", "ministre": "minister", "premier ministre": "prime minister",
    "marché": "market", "marchés": "markets", "crise": "crisis", "impôts": "taxes",
    "taxe": "tax", "police": "police", "armée": "army", "guerre": "war", "loi": "law",
    "pays": "country", "ville": "city", "voiture": "car", "enfants": "children",
    "enfant": "child", "femme": "woman", "homme": "man", "hommes": "men", "femmes": "women",
    "chien": "dog", "chiens": "dogs", "plage": "beach", "rue": "street", "vélo": "bike",
    "chapeau": "hat", "chemise": "shirt", "eau": "water", "foule": "crowd", "ballon": "ball",
    "fille": "girl", "garçon": "boy", "jeune fille": "young girl", "jeune garçon": "young boy",
    "bâtiment": "building", "scène": "stage", "musique": "music", "montagne": "mountain",
    "neige": "snow", "herbe": "grass", "cheval": "horse", "bateau": "boat", "train": "train",
    "football": "soccer", "lunettes de soleil": "sunglasses", "restaurant": "restaurant",
    "hôpital": "hospital", "école": "school", "journalistes": "journalists",
    "emploi": "job", "emplois": "jobs", "euros": "euros", "milliards": "billion",
    "pétrole": "oil", "gaz": "gas", "prix": "price", "Chine": "China", "Allemagne": "Germany",
}  # fmt: skip


def whole(term: str) -> re.Pattern[str]:
    """`term` as whole words, any case."""
    return re.compile(rf"(?<!\w){re.escape(term)}(?!\w)", re.IGNORECASE)


def chosen(pairs: list[tuple[str, str]], terms: int, sentences: int) -> tuple[dict, list]:
    """The glossary (candidates found with their English in 2 lines or more) and the lines
    holding its terms, each term's English in their reference."""
    found = {
        fr: sum(bool(whole(fr).search(src)) and bool(whole(en).search(ref)) for src, ref in pairs)
        for fr, en in CANDIDATES.items()
    }
    glossary = {fr: CANDIDATES[fr] for fr, n in found.items() if n >= 2}
    glossary = dict(list(glossary.items())[:terms])
    lines = []
    for src, ref in pairs:
        held = [fr for fr in glossary if whole(fr).search(src)]
        if held and all(whole(glossary[fr]).search(ref) for fr in held):
            lines.append((src, ref, [glossary[fr] for fr in held]))
    return glossary, lines[:sentences]


def kept(outputs: Iterable[str], lines: list) -> tuple[int, int]:
    """Sentences whose output holds all its terms' English; terms held."""
    sentences = terms = 0
    for out, (_, _, wanted) in zip(outputs, lines, strict=True):
        held = [bool(whole(en).search(out)) for en in wanted]
        sentences += all(held)
        terms += sum(held)
    return sentences, terms


def with_word(word: str) -> None:
    """The glossary rule with `word` in the terms' place."""
    rule.STAND_IN = word
    rule.ARTICLE = re.compile(rf"(?:\b(an?|An?) )?\b{re.escape(word)}\b")
    rule.LEFT_OVER = re.compile(rf" ?\b{re.escape(word)}\w*")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="model directory (default: embedded)")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--terms", type=int, default=60)
    parser.add_argument("--data", nargs="+", default=DATA)
    parser.add_argument("--show", type=int, default=8, help="lines printed both ways")
    parser.add_argument("--stand-ins", nargs="+", default=[rule.STAND_IN])
    args = parser.parse_args()
    pairs = []
    for path in args.data:
        rows = (line.split("\t") for line in Path(path).read_text().splitlines())
        pairs += [(row[0], row[1]) for row in rows if len(row) >= 2]
    glossary, lines = chosen(pairs, args.terms, args.sentences)
    translator = Translator.load(args.model)
    sources, refs = [src for src, _, _ in lines], [ref for _, ref, _ in lines]
    runs = {"without": [t.text for t in translator.translate(sources, beam=args.beam)]}
    for word in args.stand_ins:
        with_word(word)
        done = translator.translate(sources, beam=args.beam, glossary=glossary)
        runs[f"with ({word})"] = [t.text for t in done]
    plain, glossed = runs["without"], runs[f"with ({args.stand_ins[0]})"]
    wanted = sum(len(terms) for _, _, terms in lines)
    print(f"{len(glossary)} terms: {glossary}")
    print(f"{len(lines)} sentences, {wanted} terms in them; beam {args.beam}")
    for name, outputs in runs.items():
        sentences, terms = kept(outputs, lines)
        bleu = sacrebleu.corpus_bleu(outputs, [refs]).score
        print(
            f"{name:>14} the glossary: all terms kept in {sentences}/{len(lines)} sentences "
            f"({sentences / len(lines):.1%}), {terms}/{wanted} terms; BLEU {bleu:.2f}"
        )
    for src, a, b in list(zip(sources, plain, glossed, strict=True))[: args.show]:
        print(f"\nsource:   {src}\nwithout:  {a}\nwith:     {b}")


if __name__ == "__main__":
    main()
