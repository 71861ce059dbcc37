"""An emoji or other symbol the model has no piece for, glued to a word ("5🍕", "Merci😀"),
comes out against that word's translation, in line mode, documents and the runners-up, and
the line keeps its words (decoding/rules/symbols.py)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from seq2attn_cli.cli.app import app
from seq2attn_cli.decoding.rules.symbols import Held, set_aside
from seq2attn_cli.decoding.rules.urls import stand_in_urls


def knows(char: str) -> bool:
    """A model that has a piece for every letter, digit, space and mark, no other symbol."""
    return char.isalnum() or char.isspace() or char in ".,;:!?'()-"


@pytest.mark.parametrize(
    "line, read, held",
    [
        ("J'ai mangé 5🍕.", "J'ai mangé 5.", (Held(2, "🍕"),)),
        ("😀Bonjour à tous", "Bonjour à tous", (Held(0, "😀", before=True),)),
        ("Bonjour,🍕 ça va", "Bonjour, ça va", (Held(0, "🍕", after_marks=True),)),
        ("un café☕️ noir", "un café noir", (Held(1, "☕️"),)),  # its presentation selector
        ("~~barré~~ ici", "barré ici", (Held(0, "~~", before=True), Held(0, "~~"))),
        ("il t´aime 🍕", "il t´aime 🍕", ()),  # between letters, or apart: not this rule's
        ("a gagné +1,2 %", "a gagné 1,2 %", (Held(2, "+", before=True, digits="12"),)),
        ("(-50 €)", "(50 €)", (Held(0, "-", before=True, digits="50"),)),
        ("il fait -5 ° ici", "il fait -5 ° ici", ()),  # degrees: numbers.py's
        ("il fait -1,5 ° ici", "il fait -1,5 ° ici", ()),  # the whole number, not "-1,"
        ("de 10-20 ans", "de 10-20 ans", ()),
    ],
)  # fmt: skip
def test_a_symbol_glued_to_a_word_s_start_or_end_is_set_aside_and_the_words_stay(line, read, held):
    glued = set_aside(line, lambda c: knows(c) and c not in "~")
    assert (glued.read, glued.held) == (read, held)
    assert len(glued.read.split()) == len(line.split())  # tags and alignments keep their words


def test_an_emoji_glued_to_a_word_comes_out_against_its_translation(shipped):
    # read with the word as <unk>: "I ate 5,000." and "Thanks for you." with the emoji lost
    assert shipped.translate("J'ai mangé 5🍕.").text == "I ate 5🍕."
    assert shipped.translate("😀Bonjour à tous.").text.startswith("😀")
    assert shipped.translate("Bonjour,🍕 ça va ?").text.startswith("Well,🍕 ")  # after the comma
    assert shipped.unreadable("J'ai mangé 5🍕.") == []  # nothing to warn about
    got = CliRunner().invoke(app, ["translate", "J'adore le café☕️ le matin."])
    assert got.stdout == "I love coffee☕️ in the morning.\n" and got.stderr == ""


def test_a_number_s_sign_comes_out_before_its_number(shipped):
    # read with their signs: "won11.2%", "$10,000 euros", "The soldier is from -50 euros."
    assert "won +1.2% Friday" in shipped.translate("Le CAC 40 a gagné +1,2 % vendredi.").text
    assert "+€1,200,000" in shipped.translate("Il a gagné +1 200 000 € en 2023.").text
    assert shipped.translate("Le solde est de -50 €.").text.endswith(" -€50.")  # not "-from"
    assert shipped.translate("Une promo de -20 %.").text.count("-20%") == 1
    t = shipped.translate("Soldes : jusqu'à -70 %", beam=5)  # a runner-up: "Sold: -until 70%"
    assert t.alternatives and all("-70%" in a for a in [t.text, *t.alternatives])


def test_every_runner_up_keeps_the_symbol_once(shipped):
    t = shipped.translate("Merci😀", beam=5)
    assert t.alternatives and all(a.count("😀") == 1 for a in [t.text, *t.alternatives])


def test_a_document_s_tags_stay_on_their_words_after_a_glued_emoji(tmp_path):
    page = tmp_path / "page.html"
    page.write_text("<p>J'ai mangé 5🍕 et <b>une pomme</b> hier.</p>\n", encoding="utf-8")
    got = CliRunner().invoke(app, ["translate", "-i", str(page)])
    assert got.stdout == "<p>I ate 5🍕 and <b>an apple</b> yesterday.</p>\n", got.stderr
    notes = tmp_path / "notes.md"
    notes.write_text("# Merci😀 pour *tout* !\n", encoding="utf-8")
    got = CliRunner().invoke(app, ["translate", "-i", str(notes)])
    assert got.stdout == "# Thanks😀 for *everything*.\n" and got.stderr == ""


def test_alignments_count_the_glued_emoji_s_word_once(shipped):
    got = CliRunner().invoke(app, ["translate", "--align", "Merci😀 pour tout"])
    assert got.stdout == "Thanks😀 for everything.\t0-0 1-1 2-2\n"


def test_a_word_in_a_script_the_model_cannot_read_is_copied_as_given(shipped):
    # read as <unk>: "I live in a hurry.", "He's called himself."
    assert shipped.translate("J'habite à 東京.").text == "I live in 東京."
    assert shipped.translate("Il s'appelle Дмитрий.").text == "He is Дмитрий."
    assert shipped.unreadable("Il s'appelle Дмитрий.") == []  # nothing to warn about
    knows = shipped.subwords.knows
    assert stand_in_urls("Désolé ¯\\_(ツ)_/¯", knows).kept == ("¯\\_(ツ)_/¯",)  # one face
    assert stand_in_urls("J'ai fini ^_^", knows).kept == ("^_^",)
    assert stand_in_urls("Erdoğan est là.", knows).kept == ()  # letters.py reads it "Erdogan"


def test_a_name_in_another_script_is_copied_though_the_model_knows_a_letter_of_it(shipped):
    knows = shipped.subwords.knows
    assert knows("а") and not knows("И")  # Cyrillic а: a piece holds it (it looks like a)
    got = [shipped.translate(s).text for s in ["Иван est mon ami.", "J'habite à 東京2020."]]
    assert got == ["Иван is my friend.", "I live in 東京2020."]
    assert "Дмитрий" in shipped.translate("C'est l'ami d'Дмитрий.").text  # after an elision
    assert stand_in_urls("Erdoğan et Þór", knows).kept == ()  # Latin letters: letters.py's


def test_an_emoji_after_an_elision_is_the_word_itself(shipped):
    # glued to "l'", it went after the sentence's full stop: "I like the🍕 and one.☕"
    assert shipped.translate("J'aime l'🍕 et l'☕.").text == "I like 🍕 and ☕."


def test_an_emoji_glued_to_an_address_or_a_mention_is_not_warned_about(shipped):
    line = "Écrivez à jean@ex.fr😀 ou @jean😀 #paris🎉."
    assert shipped.unreadable(line) == [] and "@jean😀" in shipped.translate(line).text
