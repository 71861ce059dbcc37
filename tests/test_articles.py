"""English a/an: s2a writes the article the next word wants, whatever the model guessed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from seq2attn_cli.articles import agree
from seq2attn_cli.checkpoint import EMBEDDED
from seq2attn_cli.cli import app


def words(text: str) -> list[str]:
    """Pieces of a text, one per word (as SentencePiece writes whole words)."""
    return ["▁" + w for w in text.split()]


def agreed(text: str) -> str:
    return " ".join(p[1:] for p in agree(words(text)))


@pytest.mark.parametrize(
    ("model", "right"),
    [
        ("We ate an red apple .", "We ate a red apple ."),
        ("She reads a interesting book .", "She reads an interesting book ."),
        ("A accident happened .", "An accident happened ."),
        ("I waited a hour .", "I waited an hour ."),
        ("He is a honest man .", "He is an honest man ."),
        ("It is an university .", "It is a university ."),
        ("It was an one-way street .", "It was a one-way street ."),
        ("She is an European .", "She is a European ."),
        ("It was a unimportant detail .", "It was an unimportant detail ."),
        ("Give me a hour's rest .", "Give me an hour's rest ."),
    ],
)
def test_the_article_follows_the_sound_of_the_next_word(model: str, right: str) -> None:
    assert agreed(model) == right
    assert agreed(right) == right  # what is right stays right


@pytest.mark.parametrize(
    "left_alone",
    [
        "He is an FBI agent .",  # acronyms: spelling does not tell
        "It is a UN report .",
        "I had an X-ray .",  # a letter
        "It is an 8 - year - old .",  # a number
        "a historic day and an historic day",  # English writes both
        "Plan A is good .",  # the letter A inside a sentence
        "from a to z",  # a letter: no noun follows
        "Il a été .",  # a foreign word
    ],
)
def test_where_spelling_cannot_tell_the_model_s_article_stays(left_alone: str) -> None:
    assert agreed(left_alone) == left_alone


def test_only_whole_words_are_articles() -> None:
    pieces = ["▁a", "bout", "▁it", "▁an", "d", "▁A", "pple"]  # "about it and Apple"
    assert agree(pieces) == pieces
    assert agree(["▁Yes", ".", "▁A", "▁apple", "."])[2] == "▁An"  # a new sentence
    assert agree(["▁an"]) == ["▁an"]  # nothing after it


@pytest.fixture(scope="module")
def shipped() -> Path:
    if not (EMBEDDED / "config.json").exists():
        pytest.skip("the embedded model is not in this checkout")
    return EMBEDDED


def test_translate_writes_a_red_apple_where_the_model_guessed_an(shipped: Path) -> None:
    sentence = "Nous avons mangé une pomme rouge."
    out = CliRunner().invoke(app, ["translate", sentence, "--threads", "1"])
    assert out.exit_code == 0 and out.stdout == "We ate a red apple.\n"
    shown = CliRunner().invoke(app, ["inspect", sentence, "--threads", "1"], env={"NO_COLOR": "1"})
    assert "translation (beam 5, int8): We ate a red apple." in shown.stdout
    assert "the model wrote: We ate an red apple. (s2a set a/an by the next word)" in shown.stdout


def test_a_model_whose_target_is_not_english_keeps_its_articles(
    shipped: Path, tmp_path: Path
) -> None:
    relabelled = tmp_path / "model"
    shutil.copytree(shipped, relabelled)
    config = json.loads((relabelled / "config.json").read_text(encoding="utf-8"))
    config["corpus"]["languages"]["target"] = "fr"  # "il a un ami" must not become "an un"
    (relabelled / "config.json").write_text(json.dumps(config), encoding="utf-8")
    sentence = ["translate", "Nous avons mangé une pomme rouge.", "--threads", "1"]
    out = CliRunner().invoke(app, [*sentence, "--model", str(relabelled)])
    assert out.exit_code == 0 and out.stdout == "We ate an red apple.\n"
