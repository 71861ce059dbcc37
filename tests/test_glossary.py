"""A glossary: each French term read as a stand-in, written back as the glossary's English, in
line mode, the server and the Python API (decoding/rules/glossary.py)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from test_server import client_for
from typer.testing import CliRunner

from seq2attn_cli.cli.app import app
from seq2attn_cli.decoding.rules.glossary import read_glossary, terms_of
from seq2attn_cli.decoding.rules.pipeline import Pipeline
from seq2attn_cli.decoding.translator import Translator
from seq2attn_cli.errors import GlossaryError

TERMS = {
    "Banque centrale européenne": "ECB",
    "banque": "bank",
    "pomme": "apple",
    "parapluie": "brolly",
}


def read(shipped: Translator, text: str) -> str:
    """The line as the model reads it with TERMS."""
    glossed = dataclasses.replace(shipped.setting, glossary=TERMS)
    (line,) = Pipeline(setting=glossed).read([text])
    return shipped.subwords.text(shipped.subwords.pieces(line.parts[0].ids))


@pytest.mark.parametrize(
    ("line", "read_as"),
    [
        ("la Banque centrale européenne et la banque", "la Kappa et la Kappa"),  # longest first
        ("LA BANQUE, la Banque.", "LA Kappa, la Kappa."),  # any case, punctuation around
        ("les pommes du pommier", "les pommes du pommier"),  # whole words only
        ("(pomme) «parapluie»", '(Kappa) " Kappa"'),  # brackets and quotes
        ("la Banque  centrale européenne", "la Kappa"),  # any spaces inside a term
    ],
)
def test_terms_are_read_whole_longest_first_in_any_case(shipped, line, read_as):
    assert read(shipped, line) == read_as


def test_each_term_is_written_back_as_the_glossary_says_in_order(shipped, model_writes):
    model_writes("The Kappa lends to a Kappa and a Kappa.")
    t = shipped.translate("La banque prête à une pomme et un parapluie.", glossary=TERMS)
    assert t.text == "The bank lends to an apple and a brolly."  # a/an set by the English
    assert "glossary" in t.changed_by and "Kappa" not in t.dropped


def test_a_term_the_model_lost_follows_the_word_attending_to_it(shipped, model_writes):
    model_writes("I saw it.")
    t = shipped.translate("J'ai vu la pomme.", glossary=TERMS)
    assert t.text.count("apple") == 1 and "Kappa" not in t.text


def test_a_stand_in_written_twice_is_not_left_in_the_text(shipped, model_writes):
    model_writes("I saw the Kappa and Kappas.")
    t = shipped.translate("J'ai vu la pomme.", glossary=TERMS)
    assert t.text.count("apple") == 1 and "Kappa" not in t.text and "  " not in t.text


def test_a_term_that_starts_a_sentence_starts_with_a_capital_as_the_line_does(
    shipped, model_writes
):
    model_writes("Kappa sleeps.")  # the model dropped the article before the stand-in
    assert shipped.translate("La pomme dort.", glossary=TERMS).text == "Apple sleeps."
    assert shipped.translate("la pomme dort.", glossary=TERMS).text == "apple sleeps."
    said = {"téléphone": "iPhone", "banque": "ECB"}  # the user's capitals are kept as given
    assert shipped.translate("Le téléphone dort.", glossary=said).text == "iPhone sleeps."
    assert shipped.translate("la banque dort.", glossary=said).text == "ECB sleeps."
    model_writes("I eat the Kappa.")
    assert shipped.translate("Je mange la pomme.", glossary=TERMS).text == "I eat the apple."
    model_writes("It's late. Kappa sleeps.")  # as any sentence of the translation starts
    assert shipped.translate("Il est tard, la pomme dort.", glossary=TERMS).text == (
        "It's late. Apple sleeps."
    )
    for written in (
        "Fruit, e.g. Kappa.",
        "At 3 p.m. Kappa time.",
        "Dr. Kappa eats.",
        "So... Kappa.",
    ):
        model_writes(written)  # not after an abbreviation or a pause
        assert shipped.translate("Il est tard, la pomme dort.", glossary=TERMS).text == (
            written.replace("Kappa", "apple")
        )


def test_a_term_first_in_the_shipped_model_s_translation_is_capitalized(shipped):
    assert shipped.translate("Le chat dort.", glossary={"chat": "kitty"}).text == "Kitty sleeps."
    assert shipped.translate("Le chat.", glossary={"chat": "cat"}).text == "Cat."


def test_the_beam_s_alternatives_get_the_articles_and_capitals_the_best_translation_gets(
    shipped,
):
    for source, terms in [("Le chat dort.", {"chat": "kitty"}), ("Un chat dort.", {"chat": "owl"})]:
        t = shipped.translate(source, glossary=terms)
        assert t.alternatives, source  # the shipped model's beam has runners-up for both
        for text in [t.text, *t.alternatives]:
            assert text[0].isupper() and not re.search(r"\bA owl\b", text), (source, text)


def test_no_glossary_changes_nothing(shipped, model_writes):
    model_writes("The Kappa is here.")
    for glossary in (None, {}):
        t = shipped.translate("La pomme est ici.", glossary=glossary)
        assert t.text == "The Kappa is here." and "glossary" not in t.changed_by
    no_term = shipped.translate("Il est ici.", glossary=TERMS)
    assert no_term.text == "The Kappa is here." and "glossary" not in no_term.changed_by


def test_the_api_refuses_a_bad_glossary():
    with pytest.raises(GlossaryError, match="empty term"):
        terms_of({"pomme": " "})
    with pytest.raises(GlossaryError, match="given twice"):
        terms_of({"pomme": "apple", "Pomme": "pear"})
    assert terms_of({"Pomme": "apple", "pomme": "apple"}) == {"pomme": "apple"}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "terms.tsv"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_glossary_file_is_read_with_comments_and_blank_lines(tmp_path):
    path = write(tmp_path, "# terms\npomme\tapple\n\nchat \t cat\nPomme\tapple\n")
    assert read_glossary(path) == {"pomme": "apple", "chat": "cat", "Pomme": "apple"}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("pomme\tapple\nchat cat\n", ":2: no tab"),
        ("pomme\tapple\n\t cat\n", ":2: empty term"),
        ("pomme\t\n", ":1: empty term"),
        ("pomme\tapple\nchat\tcat\nPomme\tpear\n", ":3: 'Pomme' is on line 1 already, as 'apple'"),
        ("a\tb\tc\n", ":1: more than two fields"),
        ("# nothing\n", "no terms"),
    ],
)
def test_a_bad_glossary_file_is_one_line_naming_file_and_line(tmp_path, tiny_model, text, says):
    path = write(tmp_path, text)
    with pytest.raises(GlossaryError, match=says):
        read_glossary(path)
    args = ["translate", "--model", str(tmp_path / "no-model"), "--glossary", str(path), "chat"]
    result = CliRunner().invoke(app, args)  # checked before the model is looked for
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and f"{path}" in result.stderr and says in result.stderr


def test_a_missing_glossary_file_is_one_line(tmp_path):
    result = CliRunner().invoke(app, ["translate", "--glossary", str(tmp_path / "no.tsv"), "x"])
    said = f"s2a: error: --glossary {tmp_path / 'no.tsv'}: No such file or directory\n"
    assert result.exit_code == 2 and result.stderr == said  # was "([Errno 2] No such file ...)"


def test_translate_takes_a_glossary_file(tmp_path, tiny_model):
    path = write(tmp_path, "chat\tmoggy\n")
    args = ["translate", "--model", str(tiny_model), "--beam", "1", "il voit chat"]
    plain = CliRunner().invoke(app, args)
    glossed = CliRunner().invoke(app, [*args, "--glossary", str(path)])
    assert plain.exit_code == glossed.exit_code == 0
    assert "moggy" not in plain.stdout and glossed.stdout.count("moggy") == 1


def test_serve_takes_a_glossary_field(tiny_model):
    with client_for(Translator.load(tiny_model)) as client:
        plain = client.post("/translate", json={"q": "il voit chat", "source": "fr"})
        asked = {"q": "il voit chat", "source": "fr", "glossary": {"chat": "moggy"}}
        glossed = client.post("/translate", json=asked)
        assert plain.status_code == glossed.status_code == 200
        assert "moggy" not in plain.json()["translatedText"]
        assert glossed.json()["translatedText"].count("moggy") == 1
        html = client.post(
            "/translate", json={**asked, "q": "<p>il voit chat</p>", "format": "html"}
        )
        assert html.status_code == 200 and "moggy" in html.json()["translatedText"]
        for bad, says in (({"chat": ""}, "empty term"), (["chat"], "must be an object")):
            refused = client.post("/translate", json={**asked, "glossary": bad})
            assert refused.status_code == 400 and says in refused.json()["error"]


def test_serve_capitalizes_a_term_that_starts_the_translation(shipped):
    with client_for(shipped) as client:
        asked = {"q": "Le chat dort.", "source": "fr", "glossary": {"chat": "kitty"}}
        answer = client.post("/translate", json=asked)
        assert answer.status_code == 200 and answer.json()["translatedText"] == "Kitty sleeps."


def test_serve_translates_a_file_with_a_glossary_field(tiny_model):
    with client_for(Translator.load(tiny_model)) as client:
        sent = {"files": {"file": ("notes.txt", b"il voit chat\n")}}
        asked = {"source": "fr", "target": "en", "glossary": '{"chat": "moggy"}'}
        plain = client.post("/translate_file", data={"source": "fr", "target": "en"}, **sent)
        glossed = client.post("/translate_file", data=asked, **sent)
        assert plain.status_code == glossed.status_code == 200, glossed.text
        assert "moggy" not in client.get(plain.json()["translatedFileUrl"]).text
        assert client.get(glossed.json()["translatedFileUrl"]).text.count("moggy") == 1
        refused = client.post("/translate_file", data={**asked, "glossary": "chat"}, **sent)
        assert refused.status_code == 400 and "must be an object" in refused.json()["error"]


def test_inspect_names_the_glossary_among_the_changes(tmp_path, shipped, model_writes):
    from seq2attn_cli.decoding.explain.inspection import inspect_sentence

    model_writes("I eat a Kappa.")
    seen = inspect_sentence(shipped, "Je mange une pomme.", beam=1, glossary=TERMS)
    assert seen.translation.text == "I eat an apple."
    assert "wrote each glossary term as the glossary's English" in seen.changes
    plain = inspect_sentence(shipped, "Je mange une pomme.", beam=1)
    assert not any("glossary" in change for change in plain.changes)
    path = write(tmp_path, "pomme\tapple\n")
    result = CliRunner().invoke(app, ["inspect", "--glossary", str(path)])
    assert result.exit_code == 2 and "needs a sentence" in result.stderr
