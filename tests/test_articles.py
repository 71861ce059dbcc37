"""English a/an: s2a writes the article the next word wants, whatever the model guessed."""

from __future__ import annotations

import dataclasses

import pytest
from typer.testing import CliRunner

from seq2attn_cli.cli.app import app
from seq2attn_cli.data.subwords import train_subwords
from seq2attn_cli.decoding.rules.articles import agree
from seq2attn_cli.decoding.translator import Translator

APPLE = "Nous avons mangé une pomme rouge."


def words(text: str) -> list[str]:
    """Pieces of a text, one per word (as SentencePiece writes whole words)."""
    return ["▁" + w for w in text.split()]


def agreed(text: str) -> str:
    """The text, a piece per word, after the rule."""
    return " ".join(p[1:] for p in agree(words(text)))


@pytest.mark.parametrize(
    ("model", "right"),
    [
        ("We ate an red apple .", "We ate a red apple ."),
        ("She reads a interesting book .", "She reads an interesting book ."),
        ("A accident happened .", "An accident happened ."),
        ("I waited a hour .", "I waited an hour ."),
        ("It was a hourglass .", "It was an hourglass ."),
        ("He is a honest man .", "He is an honest man ."),
        ("It is a honour .", "It is an honour ."),
        ("It is an university .", "It is a university ."),
        ("It was an one-way street .", "It was a one-way street ."),
        ("She is an European .", "She is a European ."),
        ("He lives in an Utah town .", "He lives in a Utah town ."),
        ("It was a unimportant detail .", "It was an unimportant detail ."),
        ("It was a unidentified man .", "It was an unidentified man ."),
        ("It is an unidirectional road .", "It is a unidirectional road ."),
        ("It is a onerous task .", "It is an onerous task ."),
        ("Give me a hour's rest .", "Give me an hour's rest ."),
    ],
)
def test_the_article_follows_the_sound_of_the_next_word(model: str, right: str) -> None:
    assert agreed(model) == right
    assert agreed(right) == right  # what is right stays right


@pytest.mark.parametrize(
    "left_alone",
    [
        "He is an FBI agent .",  # acronyms and codes: spelling does not tell
        "It is a UN report .",
        "It is an mRNA vaccine .",
        "She has an MSc .",
        "It is an mp3 file .",
        "He bought an Xbox .",  # a letter said by its name
        "I had an X-ray .",
        "It is an 8-year-old .",
        "a historic day and an historic day",  # English writes both
        "Vitamin A intake is low .",  # the letter A inside a sentence
        "A equals B .",  # a letter: no noun follows
        "Il a un ami .",  # French
        "Il a été .",
    ],
)
def test_where_spelling_cannot_tell_the_model_s_article_stays(left_alone: str) -> None:
    assert agreed(left_alone) == left_alone


def test_only_whole_words_are_articles() -> None:
    pieces = ["▁an", "gle", "▁a", "pple"]  # "angle apple": no article in them
    assert agree(pieces) == pieces
    assert agree(["▁Yes", ".", "▁A", "▁apple", "."])[2] == "▁An"  # a new sentence
    assert agree(["▁an"]) == ["▁an"]  # nothing after it


def test_an_article_the_vocabulary_lacks_is_spelled_in_pieces() -> None:
    english = ["A dog runs in a park.", "A man eats a pear.", "He ate a apple on a old boat."]
    sub = train_subwords(english * 50, vocab_size=40, seed=1, threads=1)
    assert sub.sp.piece_to_id("▁an") == sub.sp.unk_id()
    pieces = sub.pieces(sub.encode(["He ate a apple on a old boat."])[0])
    assert sub.text(agree(pieces)) == "He ate an apple on an old boat."


def test_english_output_gets_the_article_the_next_word_wants(shipped, model_writes) -> None:
    model_writes("We ate an red apple.")
    t = shipped.translate(APPLE)
    assert t.text == "We ate a red apple."
    pieces = shipped.subwords.text
    assert pieces(t.tgt_tokens[:-1]) == "We ate a red apple."  # heatmaps and JSON: as printed
    assert pieces(t.model_tokens[:-1]) == "We ate an red apple."  # what the search wrote
    shown = CliRunner().invoke(app, ["inspect", APPLE, "--threads", "1"], env={"NO_COLOR": "1"})
    assert "translation (beam 5, int8): We ate a red apple." in shown.stdout
    assert "the model wrote: We ate an red apple. (s2a set a/an by the next word)" in shown.stdout
    assert "▁an:" in CliRunner().invoke(app, ["inspect", APPLE, "--steps"]).stdout  # its step


def test_nothing_is_said_when_the_model_s_article_was_right(shipped, model_writes) -> None:
    model_writes("We ate a red apple.")
    assert shipped.translate(APPLE).model_tokens == []
    shown = CliRunner().invoke(app, ["inspect", APPLE, "--threads", "1"], env={"NO_COLOR": "1"})
    assert "We ate a red apple." in shown.stdout and "the model wrote" not in shown.stdout


def test_a_model_whose_target_is_not_english_keeps_its_articles(shipped, model_writes) -> None:
    model_writes("We ate an red apple.")
    config = dataclasses.replace(shipped.config, languages=("en", "fr"))  # "il a un" stays
    relabelled = Translator(
        model=shipped.model, subwords=shipped.subwords, config=config, device=shipped.device
    )
    assert relabelled.translate(APPLE).text == "We ate an red apple."


def test_translate_writes_a_red_apple(shipped) -> None:
    out = CliRunner().invoke(app, ["translate", APPLE, "--threads", "1"])
    assert out.exit_code == 0 and out.stdout == "We ate a red apple.\n"
