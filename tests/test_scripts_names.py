"""scripts/names.py: Tatoeba's Tom and Mary under other names, alike on both sides."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parent.parent / "scripts" / "names.py"
_spec = importlib.util.spec_from_file_location("names", SCRIPT)
names = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(names)


def _renamed(tmp_path: Path, lines: list[str], *args: str) -> list[list[str]]:
    corpus = tmp_path / "corpus.tsv"
    corpus.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, SCRIPT, corpus, *args], capture_output=True, text=True, check=True
    )
    return [line.split("\t") for line in out.stdout.splitlines()]


def test_tom_and_mary_get_one_new_name_each_the_same_on_both_sides(tmp_path) -> None:
    pairs = _renamed(
        tmp_path, ["Tom est fatigué.\tTom is tired.", "Tom aime Marie.\tTom loves Mary."],
        "--copies", "3",
    )  # fmt: skip
    assert len(pairs) == 6
    for src, tgt in pairs:
        assert "Tom" not in src + tgt and "Mary" not in tgt and "Marie" not in src
        assert src.split()[0] == tgt.split()[0]  # the man's name, alike
    man, _, woman = pairs[3][0].rstrip(".").split()
    assert pairs[3][1] == f"{man} loves {woman}."
    assert man in names.MEN and woman in names.WOMEN  # agreement: "fatigué" stays right


def test_pairs_that_do_not_name_tom_or_mary_alike_are_left_out(tmp_path) -> None:
    pairs = _renamed(
        tmp_path,
        ["Il dort.\tHe is asleep.", "Tom dort.\tHe is asleep.", "Tomate.\tTomato."],
    )
    assert pairs == []


def test_the_same_seed_gives_the_same_names(tmp_path) -> None:
    lines = ["Tom chante.\tTom sings."] * 5
    assert _renamed(tmp_path, lines, "--seed", "7") == _renamed(tmp_path, lines, "--seed", "7")
    assert _renamed(tmp_path, lines, "--seed", "7") != _renamed(tmp_path, lines, "--seed", "8")
