"""A model card's figures: dev scores, BLEU by length, twenty phrases and words, ten sentences.

Usage: python scripts/card.py MODEL PREVIOUS SET.tsv [SET.tsv ...] [--noisy TATOEBA.tsv]
       [--work DIR] > figures.md

Each SET is French<TAB>English (as `s2a evaluate` reads it by default), named by its file
name; a malformed line is skipped everywhere, as `--skip-bad` skips it. Every figure is
measured as a user gets it: `s2a evaluate --compare` (beam 5, int8, `--skip-bad`) for the
scores, `s2a translate` for the phrases and the sample sentences, both models side by side on
the same day. `--noisy` adds that set with its French accents stripped and in lower case (the
issue's "within 2 BLEU of clean"). The phrases and words are judged against the answers
listed here; the tables are Markdown for the card.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import unicodedata
from pathlib import Path

from seq2attn_cli.checkpoint import read_config
from seq2attn_cli.data.reading import read_pairs
from seq2attn_cli.decoding.rules.clean import longest_line

S2A = Path(sys.executable).with_name("s2a")
BUCKETS = ("1-5", "6-10", "11-15", "16-20", "21-30", "31+")

# The card's twenty everyday phrases, greetings first, each with the answers counted right.
PHRASES = {
    "Bonjour !": ("Hello!", "Hello.", "Good morning!", "Good morning.", "Hi!", "Good day!"),
    "Bonjour.": ("Hello.", "Hello!", "Good morning.", "Good morning!", "Hi.", "Good day."),
    "bonjour": ("Hello.", "Hello", "hello", "Good morning.", "Good morning", "good morning"),
    "Salut !": ("Hi!", "Hello!", "Hey!", "Hi.", "Hello."),
    "Enchanté.": ("Nice to meet you.", "Pleased to meet you.", "Delighted."),
    "Comment ça va ?": ("How are you?", "How's it going?", "How are you doing?",
                        "How is it going?"),
    "Je m'appelle Pierre.": ("My name is Pierre.", "I'm Pierre.", "I am Pierre."),
    "Bonne année !": ("Happy New Year!", "Happy new year!", "Happy New Year."),
    "Au revoir !": ("Goodbye!", "Goodbye.", "Bye!", "Good-bye!", "See you!"),
    "Merci beaucoup.": ("Thank you very much.", "Thanks a lot.", "Thank you so much."),
    "De rien.": ("You're welcome.", "Don't mention it.", "No problem.", "It's nothing."),
    "Bonsoir.": ("Good evening.", "Good evening!"),
    "Bonne nuit.": ("Good night.", "Goodnight.", "Good night!"),
    "À bientôt !": ("See you soon!", "See you soon.", "See you!"),
    "Excusez-moi.": ("Excuse me.", "I'm sorry.", "Sorry."),
    "Je ne comprends pas.": ("I don't understand.", "I do not understand."),
    "Où sont les toilettes ?": ("Where are the toilets?", "Where is the toilet?",
                                "Where is the bathroom?", "Where's the bathroom?",
                                "Where are the restrooms?", "Where is the restroom?"),
    "Combien ça coûte ?": ("How much is it?", "How much does it cost?", "How much does that cost?",
                           "How much is that?"),
    "Parlez-vous anglais ?": ("Do you speak English?",),
    "J'ai faim.": ("I'm hungry.", "I am hungry."),
}  # fmt: skip
# Twenty words alone, as a dictionary look-up or a label asks them (a table's header, a menu),
# each with the answers counted right, whatever their case and end mark ("Cat." for "cat").
WORDS = {
    "chat": ("cat",), "maison": ("house", "home"), "voiture": ("car",), "livre": ("book",),
    "eau": ("water",), "pain": ("bread",), "ville": ("city", "town"), "pays": ("country",),
    "Prix": ("price",), "Total": ("total",), "Nom": ("name", "last name", "surname"),
    "Adresse": ("address",), "Aide": ("help",), "Fichier": ("file",),
    "Enregistrer": ("save", "record", "register"), "Annuler": ("cancel",),
    "Paramètres": ("settings", "parameters"), "Rechercher": ("search", "find"),
    "Bienvenue": ("welcome",), "Merci": ("thanks", "thank you"),
}  # fmt: skip


def translated(model: Path, lines: list[str]) -> list[str]:
    """`s2a translate` of each line, one line out per line in (beam 5, int8, as shipped)."""
    out = subprocess.run([S2A, "translate", "--model", str(model)], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return out.splitlines()


def evaluated(test: Path, model: Path, previous: Path) -> list[dict]:
    """`s2a evaluate --compare`: the figures of each model on `test`, the new one first, each
    with the number of sentences scored."""
    argv = [S2A, "evaluate", str(test), "--model", str(model), "--compare", str(previous),
            "--skip-bad", "--format", "json"]  # fmt: skip
    scored = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    return [{**m, "sentences": scored["sentences"]} for m in scored["models"]]


def noisy(test: Path, work: Path, model: Path) -> list[Path]:
    """`test` with its French accents stripped, and in lower case (references untouched)."""
    max_chars = read_config(model / "config.json").training.max_chars
    pairs, _ = read_pairs(test, max_chars=longest_line(max_chars))  # as evaluate reads a test

    def bare(text: str) -> str:
        return "".join(
            c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c)
        )

    out = []
    for name, change in (("accents-stripped", bare), ("lower-case", str.lower)):
        path = work / f"{test.stem}.{name}.tsv"
        path.write_text("".join(f"{change(p[0])}\t{p[1]}\n" for p in pairs), encoding="utf-8")
        out.append(path)
    return out


def samples(test: Path, n: int = 10, most_words: int = 30) -> list[tuple[str, str]]:
    """Every k-th pair of `most_words` French words or fewer: n of them, spread over the set."""
    short = [p for p in read_pairs(test)[0] if len(p[0].split()) <= most_words]
    return short[:: max(1, len(short) // n)][:n]


def row(*cells: object) -> str:
    """A Markdown table row; a | inside a cell escaped."""
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def score_tables(figures: dict[str, list[dict]]) -> list[str]:
    """The scores table and the BLEU-by-length table, the previous model's figures beside."""
    lines = ["| dev set | sentences | BLEU | chrF | previous model: BLEU / chrF |",
             "|---|---:|---:|---:|---:|"]  # fmt: skip
    for name, (new, old) in figures.items():
        lines.append(row(name, f"{new['sentences']:,}",
                         f"{new['bleu']:.2f}", f"{new['chrf']:.2f}",
                         f"{old['bleu']:.2f} / {old['chrf']:.2f}"))  # fmt: skip
    lines += ["", "| set | " + " | ".join(BUCKETS) + " |", "|---|" + "---:|" * len(BUCKETS)]
    for name, (new, old) in figures.items():
        counts = " / ".join(str(new["buckets"].get(b, {}).get("count", 0)) for b in BUCKETS)
        cells = []
        for b in BUCKETS:
            a, o = new["buckets"].get(b), old["buckets"].get(b)
            cells.append(f"{a['bleu']:.1f} ({o['bleu']:.1f})" if a and a.get("count") else "")
        lines.append(row(f"{name} ({counts})", *cells))
    return lines


def phrase_table(model: Path, previous: Path) -> list[str]:
    """The twenty phrases by both models, and how many each got right."""
    sources = list(PHRASES)
    new, old = translated(model, sources), translated(previous, sources)
    right = [sum(t in PHRASES[s] for s, t in zip(sources, ts, strict=True)) for ts in (new, old)]
    lines = [f"Twenty everyday phrases: **{right[0]} right**, against {right[1]} for the "
             "previous model.", "", "| French | this model | previous model |",
             "|---|---|---|"]  # fmt: skip
    lines += [row(s, a, b) for s, a, b in zip(sources, new, old, strict=True)]
    return lines


def word_table(model: Path, previous: Path) -> list[str]:
    """The twenty words alone by both models, and how many each got right."""
    sources = list(WORDS)
    new, old = translated(model, sources), translated(previous, sources)

    def right(source: str, said: str) -> bool:
        return said.rstrip(".!? ").lower() in WORDS[source]

    counts = [sum(right(s, t) for s, t in zip(sources, ts, strict=True)) for ts in (new, old)]
    lines = [f"Twenty words alone: **{counts[0]} right**, against {counts[1]} for the previous "
             "model.", "", "| French | this model | previous model |", "|---|---|---|"]  # fmt: skip
    lines += [row(s, a, b) for s, a, b in zip(sources, new, old, strict=True)]
    return lines


def sample_table(name: str, test: Path, model: Path, previous: Path) -> list[str]:
    """Ten sentences of a set: French, reference, this model, the previous one."""
    pairs = samples(test)
    sources = [p[0] for p in pairs]
    new, old = translated(model, sources), translated(previous, sources)
    lines = [f"**{name}**", "", "| French | reference | this model | previous model |",
             "|---|---|---|---|"]  # fmt: skip
    lines += [row(s, r, a, b) for (s, r), a, b in zip(pairs, new, old, strict=True)]
    return [*lines, ""]


def main() -> None:
    """Measure both models and print the card's tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("previous", type=Path)
    parser.add_argument("sets", type=Path, nargs="+")
    parser.add_argument("--noisy", type=Path, help="a set also scored accents stripped, lower case")
    parser.add_argument("--work", type=Path, default=Path("card-work"))
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    tests = list(args.sets) + (noisy(args.noisy, args.work, args.model) if args.noisy else [])
    figures = {}
    for test in tests:
        print(f"scoring {test.name}", file=sys.stderr)
        figures[test.stem] = evaluated(test, args.model, args.previous)
    (args.work / "figures.json").write_text(json.dumps(figures, indent=1), encoding="utf-8")
    lines = [*score_tables(figures), "", *phrase_table(args.model, args.previous), ""]
    lines += [*word_table(args.model, args.previous), ""]
    for test in args.sets:
        lines += sample_table(test.stem, test, args.model, args.previous)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
