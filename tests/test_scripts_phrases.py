"""scripts/phrases.py: short phrase pairs read off word alignments, for words and labels alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parent.parent / "scripts" / "phrases.py"

# French<TAB>English, and the links s2a align writes for each pair (source-target word indices)
PAIRS = [
    ("Le chat dort ici.", "The cat sleeps here.", "0-0 1-1 2-2 3-3"),
    ("Je vois le chat noir.", "I see the black cat.", "0-0 1-1 2-2 3-4 4-3"),
    ("Le chat mange ici.", "The cat eats here.", "0-0 1-1 2-2 3-3"),
    ("Le chien dort ici.", "The dog sleeps here.", "0-0 1-1 2-2 3-3"),
    ("Il regarde la télévision.", "He watches TV.", "0-0 1-1 3-2"),
    ("Je pense à la maison.", "I think of the house.", "0-0 1-1 2-2 3-3 4-4"),
    ("Je pense à la maison.", "I think of home.", "0-0 1-1 2-2 4-3"),
    ("Le chat, 3 fois.", "The cat, 3 times.", "0-0 1-1 2-2 3-3"),
    ("Bonsoir !", "Good evening!", "0-0"),  # a whole short pair, "evening" unlinked
    ("Merci pour le repas chaud.", "Thank you for the hot meal.", "0-0 1-2 2-3 3-5 4-4"),
    ("Merci pour tout ceci.", "Thank you for all this.", "0-0 1-2 2-3 3-4"),
    ("Merci !", "Thank you!", "0-0"),
    ("Chat !", "Chat!", "0-0"),  # a copy alone: the readings within stand
]


def _phrases(tmp_path: Path, *args: str) -> list[tuple[str, str]]:
    corpus, links = tmp_path / "corpus.tsv", tmp_path / "links.txt"
    corpus.write_text("".join(f"{en}\t{fr}\n" for fr, en, _ in PAIRS), encoding="utf-8")
    links.write_text("".join(f"{link}\n" for *_, link in PAIRS), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, SCRIPT, "--pairs", corpus, links, "2", "1", *args],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [tuple(line.split("\t")) for line in out.stdout.splitlines()]


def test_a_word_seen_often_enough_is_kept_with_its_translation_and_capitalised(tmp_path):
    pairs = _phrases(tmp_path, "--min-count", "3")
    assert ("chat", "cat") in pairs and ("Chat", "Cat") in pairs  # 4 readings, the first lowered
    assert ("le chat", "the cat") in pairs and ("Le chat", "The cat") in pairs
    assert ("chien", "dog") not in pairs  # seen once
    assert ("dort", "sleeps") not in pairs  # twice


def test_function_words_marks_and_digits_make_no_phrase(tmp_path):
    pairs = _phrases(tmp_path, "--min-count", "1")
    sources = {src.lower() for src, _ in pairs}
    assert "le" not in sources and "je" not in sources and "à la" not in sources  # stop words
    assert ("chat noir", "black cat") in pairs  # crossed links: one span each side
    assert not any(c.isdigit() or "," in src for src, _ in pairs for c in src)
    assert ("télévision", "TV") in pairs and ("regarde la", "watches") not in pairs  # ends linked


def test_a_phrase_read_two_ways_keeps_the_more_frequent_only_if_shared_enough(tmp_path):
    pairs = dict(_phrases(tmp_path, "--min-count", "1", "--min-share", "0.6"))
    assert "maison" not in pairs  # "house" once, "home" once: 0.5 of its readings
    pairs = dict(_phrases(tmp_path, "--min-count", "1", "--min-share", "0.5"))
    assert pairs["maison"] in ("house", "home")


def test_a_whole_short_pair_is_one_phrase_its_words_linked_or_not(tmp_path):
    pairs = _phrases(tmp_path, "--min-count", "1")
    assert ("Bonsoir", "Good evening") in pairs and ("Bonsoir", "Good") not in pairs
    assert ("Merci", "Thank you") in pairs  # read alone once, "Thank" twice within


def test_links_of_another_length_than_the_corpus_are_one_line_naming_them(tmp_path):
    corpus, links = tmp_path / "corpus.tsv", tmp_path / "links.txt"
    corpus.write_text("The cat sleeps here.\tLe chat dort ici.\n" * 2, encoding="utf-8")
    links.write_text("0-0 1-1 2-2 3-3\n", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, SCRIPT, "--pairs", corpus, links, "2", "1"], capture_output=True, text=True
    )
    assert out.returncode == 1 and out.stderr == f"{links}: 1 lines, not one a pair of {corpus}\n"
