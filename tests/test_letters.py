"""Letters the model has no piece for are read as base letters and written back (letters.py)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from seq2attn_cli.cli.app import app
from seq2attn_cli.decoding.rules.letters import fold, write_back, write_back_pieces
from seq2attn_cli.decoding.rules.unread import readable

FRENCH = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéèàçô .,")
NAMES = "José Sánchez et Miloš Zeman à Łódź."


def test_a_letter_without_a_piece_is_read_as_its_base_letter():
    folded, given = fold(NAMES, FRENCH.__contains__)
    assert folded == "José Sanchez et Milos Zeman à Lodz."  # é and à have pieces: kept
    assert given == {"Sanchez": "Sánchez", "Milos": "Miloš", "Lodz": "Łódź"}


def test_a_letter_whose_base_has_no_piece_either_is_left_for_the_warning():
    assert fold("☃ ü", set("abc ").__contains__) == ("☃ ü", {})  # no base letter; u unknown


def test_a_mark_over_a_space_is_no_letter_and_what_is_read_is_what_is_warned_of():
    # "¯" is a space under a macron: read as that space, "prix¯" had lost its mark unwarned
    assert fold("prix¯ ²", FRENCH.__contains__) == ("prix¯ ²", {})
    assert fold("m² ①", set("m12 ").__contains__) == ("m2 1", {"m2": "m²"})
    assert fold("Tu viens？", set("Tuvienso ?").__contains__)[0] == "Tu viens?"  # full width
    knows = set("m12 ?").__contains__
    assert [readable(c, knows) for c in "¯²①？☃"] == [False, True, True, True, False]


def test_a_word_the_source_also_has_unaccented_is_never_written_back():
    folded, given = fold("Sánchez et Sanchez, Málaga et Malaga, Ávila", FRENCH.__contains__)
    assert folded == "Sanchez et Sanchez, Malaga et Malaga, Avila"
    assert given == {"Avila": "Ávila"}  # either spelling of the others could be meant


def test_two_spellings_that_read_the_same_are_not_written_back():
    assert fold("Śmigły Šmigły", FRENCH.__contains__) == ("Smigly Smigly", {})


def test_a_one_letter_word_is_never_written_back():
    folded, given = fold("á la mode", FRENCH.__contains__)
    assert folded == "a la mode" and given == {}  # else every English "a" would become "á"


def test_only_whole_words_that_copy_a_folded_word_are_written_back():
    given = {"Sanchez": "Sánchez"}
    assert write_back("Sanchez met Sanchezes and Sanchez.", given) == (
        "Sánchez met Sanchezes and Sánchez."
    )


def test_written_back_pieces_keep_their_number_and_lengths():
    pieces = ["▁Mr", "▁San", "chez", "▁left", "."]
    assert write_back_pieces(pieces, {"Sanchez": "Sánchez"}) == [
        "▁Mr",
        "▁Sán",
        "chez",
        "▁left",
        ".",
    ]


def test_translations_write_names_with_the_letters_given(shipped, model_writes):
    if shipped.subwords.knows("ğ"):
        pytest.skip("this model has a piece for ğ")
    model_writes("Mr Erdogan eats an red apple.")
    t = shipped.translate("M. Erdoğan mange une pomme rouge.")
    assert t.source == "M. Erdoğan mange une pomme rouge."  # as given
    assert "".join(t.src_tokens) == "▁M.▁Erdogan▁mange▁une▁pomme▁rouge.</s>"  # as read
    record = t.as_dict()
    assert record["source"] == t.source and record["model_tokens"] == t.model_tokens
    assert t.text == "Mr Erdoğan eats a red apple."
    assert "Erdoğan" in "".join(t.tgt_tokens) and len(t.tgt_tokens) == len(t.model_tokens)
    assert "Erdogan" in "".join(t.model_tokens)
    shown = CliRunner().invoke(
        app, ["inspect", "M. Erdoğan mange une pomme rouge.", "--threads", "1"],
        env={"NO_COLOR": "1"},
    )  # fmt: skip
    said = " ".join(shown.stdout.split())  # as one line, however the terminal wraps it
    assert (
        "the model wrote: Mr Erdogan eats an red apple. (s2a set a/an by the next word "
        "and wrote back the letters it read as base letters)"
    ) in said


def test_a_letter_read_as_its_base_is_not_warned_about_but_one_dropped_is(shipped):
    # a symbol inside a word is read as nothing (one apart from it or at its end is written
    # back: urls.py, symbols.py)
    got = CliRunner().invoke(app, ["translate", "--threads", "1"], input="Sánchez est l☃à.\n")
    assert got.exit_code == 0
    assert got.stderr.count("warning") == 1 and '"☃"' in got.stderr, got.stderr


def test_a_forced_target_is_read_and_shown_as_given(shipped):
    if shipped.subwords.knows("ğ"):
        pytest.skip("this model has a piece for ğ")
    args = ["inspect", "Recep Erdoğan est là.", "--target", "Recep Erdoğan is here."]
    shown = CliRunner().invoke(app, [*args, "--threads", "1"], env={"NO_COLOR": "1"})
    assert shown.exit_code == 0, shown.output
    assert "forced decoding of the given target: Recep Erdoğan is here." in shown.stdout
    assert "<unk>" not in shown.stdout  # the ğ was read as g, not as nothing
    assert "the model wrote" not in shown.stdout  # no rule runs on a given target
