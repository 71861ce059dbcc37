"""A line is translated whole, sentence by sentence, and a sentence longer than the model
translates well in parts (parts.py)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from seq2attn_cli.align.forced import read
from seq2attn_cli.cli.app import app
from seq2attn_cli.data.subwords import EOS_PIECE
from seq2attn_cli.decoding.explain.inspection import explain
from seq2attn_cli.decoding.rules.parts import joined, split
from seq2attn_cli.decoding.translation import Translation
from seq2attn_cli.decoding.translator import Translator

# 16 short sentences: about 150 pieces for the tiny model, so 2 parts or more
LONG = " ".join(["Je mange pain rouge."] * 8 + ["Il voit chat petit, nous aime eau."] * 8)


def short(limit: int):
    """A `fits` test: at most `limit` characters."""
    return lambda text: len(text) <= limit


def test_a_long_line_is_cut_between_sentences_before_anywhere_else():
    text = "Il est là. Elle arrive ! Puis ils partent, tous les deux, vers la gare."
    assert split(text, short(30)) == [
        "Il est là.",
        "Elle arrive !",
        "Puis ils partent,",
        "tous les deux, vers la gare.",
    ]


def test_a_dialogue_s_dash_starts_a_sentence():
    assert split("Bonjour. - Salut, ça va ? — Oui.", short(100)) == [
        "Bonjour.", "- Salut, ça va ?", "— Oui."
    ]  # fmt: skip


def test_a_sentence_may_end_in_a_number_or_a_one_letter_word():
    text = "Il y en a. Voir l'article 3. Le train part à 8 h. Elle arrive."
    assert split(text, short(25)) == [
        "Il y en a.",
        "Voir l'article 3.",
        "Le train part à 8 h.",
        "Elle arrive.",
    ]


def test_a_title_or_an_initial_does_not_end_a_sentence():
    text = "M. Dupont et J. Martin sont venus. Mme Durand est partie."
    assert split(text, short(40)) == [
        "M. Dupont et J. Martin sont venus.",
        "Mme Durand est partie.",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Lisez la p. 12 du livre.",
        "Voir l'art. 3 et la fig. 2.",
        "Il habite à env. 10 km, cf. Dupont.",
        "Voir le chap. IV et le vol. 2.",
        "Lisez la p. https://example.org/a pour plus.",
        "Voir le vol. II de l'ouvrage et l'art. L. 121-1 du code.",
        "Fondée en 52 av. J.-C. par les Romains.",
        "Le Prof. Martin et le Gén. de Gaulle, au 12 bd. Saint-Michel.",
        "La juge militaire Col. Denise Lind a demandé.",  # newstest2013 cut it after "Col."
    ],
)
def test_an_abbreviation_does_not_end_a_sentence(text):
    assert split(text, short(100)) == [text]


@pytest.mark.parametrize(
    "text",
    [
        "Le 14 sept. 2001, il est parti.",
        "Il est là depuis sept. 2019, ou oct. 2018.",
        "Sept. 2001 fut terrible.",  # a heading's date: "Come on. 2001 was terrible."
    ],
)
def test_a_month_written_short_ends_no_sentence_before_a_year(text):
    assert split(text, short(100)) == [text]  # cut there, "2001, il…" had come out "Go away."


@pytest.mark.parametrize(
    "text",
    [
        "Il part le 14 sept. C'est loin.",
        "Il arrive le 2 nov. 15 personnes l'attendent.",
        "Nous étions sept. 2000 personnes attendaient.",  # seven, not September
        "Ils étaient sept. L'un est parti.",
    ],
)
def test_a_month_or_seven_ends_a_sentence_before_anything_but_a_year(text):
    assert len(split(text, short(100))) == 2


def test_a_word_that_numbers_ends_a_sentence_before_a_capital():
    text = "Il a subi un vol. Appelez la police."
    assert split(text, short(100)) == ["Il a subi un vol.", "Appelez la police."]


def test_a_sentence_too_long_is_cut_at_the_clause_mark_nearest_its_middle():
    text = "un, deux trois quatre cinq six; sept huit neuf dix onze douze treize"
    assert split(text, short(40)) == [
        "un, deux trois quatre cinq six;",
        "sept huit neuf dix onze douze treize",
    ]


def test_without_marks_a_line_is_cut_at_spaces_and_without_spaces_anywhere():
    words = "alpha beta gamma delta epsilon zeta eta theta"
    assert all(len(p) <= 12 for p in split(words, short(12)))
    assert " ".join(split(words, short(12))) == words
    assert "".join(split("x" * 50, short(7))) == "x" * 50


@pytest.mark.parametrize("limit", [1, 5, 20, 60])
def test_parts_keep_every_word_in_order(limit):
    text = "Le 14 juillet 1989, à Lyon : « Bonjour ! » dit-il… Puis (enfin) — il partit; fin."
    parts = split(text, short(limit))
    assert all(p == p.strip() and p for p in parts)
    assert "".join(parts).replace(" ", "") == text.replace(" ", "")


@pytest.fixture(scope="module")
def translator(tiny_model) -> Translator:
    return Translator.load(tiny_model)


def test_a_long_line_is_translated_whole_each_part_as_alone(translator):
    (line,) = translator.rules.read([LONG])
    assert len(line.parts) > 1
    assert all(len(part.ids) <= translator.rules.cut.limit for part in line.parts)
    whole = translator.translate(LONG, beam=2)
    alone = translator.translate([part.text for part in line.parts], beam=2)
    assert whole.parts == len(line.parts) and whole.source == LONG and not whole.truncated
    assert whole.text == " ".join(t.text for t in alone)


def test_every_sentence_of_a_short_line_is_translated(shipped):
    # whole, the embedded model wrote "The store is closed." and nothing of the second one
    t = shipped.translate("Le magasin est fermé. Revenez lundi.")
    assert t.parts == 2 and t.text == "The store is closed. Come back on Monday."
    three = "Il pleut. Il fait froid. Où est la gare ?"
    assert shipped.translate(three).text == " ".join(
        t.text for t in shipped.translate(["Il pleut.", "Il fait froid.", "Où est la gare ?"])
    )


def test_inspect_given_a_target_reads_a_line_of_sentences_whole_as_align_does(
    translator, tiny_model
):
    line, target = "Je mange. Il voit chat.", "I eat. He sees cat."
    forced, _ = explain(translator, line, target=target)
    (aligned,) = read(translator, [line])
    assert forced.src_tokens == aligned.pieces + [EOS_PIECE] and "▁voit" in forced.src_tokens
    shown = CliRunner().invoke(app, ["inspect", line, "--target", target, "-m", str(tiny_model)])
    assert shown.exit_code == 0 and "sees" in shown.stdout, shown.stderr


def test_inspect_refuses_a_line_of_sentences_and_names_them(tiny_model):
    got = CliRunner().invoke(
        app, ["inspect", "Je mange. Il voit chat.", "--model", str(tiny_model)]
    )
    assert got.exit_code == 2 and got.stderr.count("\n") == 1
    assert "2 sentences" in got.stderr and "Je mange. | Il voit chat." in got.stderr


def test_the_attention_of_a_line_in_parts_is_one_block_per_part(translator):
    whole = translator.translate(LONG, beam=2)
    alone = translator.translate(
        [part.text for part in translator.rules.read([LONG])[0].parts], beam=2
    )
    assert whole.src_tokens == [p for t in alone for p in t.src_tokens[:-1]] + ["</s>"]
    assert whole.tgt_tokens == [p for t in alone for p in t.tgt_tokens[:-1]] + ["</s>"]
    assert len(whole.weights) == len(whole.tgt_tokens)
    assert all(len(row) == len(whole.src_tokens) for row in whole.weights)
    assert all(sum(row) == pytest.approx(1, abs=1e-3) for row in whole.weights)
    first = len(alone[0].src_tokens) - 1  # the first part's pieces, without its </s>
    for row in whole.weights[: len(alone[0].tgt_tokens) - 1]:  # the first part's rows
        assert not any(row[first:-1])  # nothing on the other parts' pieces
    assert whole.alignment and whole.word_attention[0]


def test_inspect_refuses_a_sentence_in_parts_and_says_why(tiny_model):
    one = ", ".join(["je mange pain rouge"] * 24) + "."  # one sentence, over 70 pieces
    got = CliRunner().invoke(app, ["inspect", one, "--model", str(tiny_model)])
    assert got.exit_code == 2
    assert "s2a translates it in" in got.stderr and "inspect one part at a time: " in got.stderr
    parts = got.stderr.split("one part at a time: ")[1].strip().split(" | ")  # where it was cut
    assert len(parts) > 1 and " ".join(parts).replace(" ,", ",") == one, parts


def test_inspect_refuses_a_line_of_columns_which_translate_translates_apart(tiny_model):
    got = CliRunner().invoke(
        app, ["inspect", "je mange pain\til voit chat", "--model", str(tiny_model)]
    )
    assert got.exit_code == 2 and "2 columns (a tab between them)" in got.stderr
    assert "inspect one column at a time: je mange pain | il voit chat" in got.stderr


def test_a_line_in_parts_is_one_line_out_with_no_warning(tiny_model):
    got = CliRunner().invoke(app, ["translate", "--model", str(tiny_model)], input=LONG + "\nje\n")
    assert got.exit_code == 0 and "longer than" not in got.stderr
    assert len(got.stdout.splitlines()) == 2


def test_jsonl_says_in_how_many_parts_a_line_was_translated(tiny_model):
    args = ["translate", "--model", str(tiny_model), "--format", "jsonl"]
    got = CliRunner().invoke(app, args, input=LONG + "\nje mange\n")
    records = [json.loads(line) for line in got.stdout.splitlines()]
    assert [r["parts"] for r in records][1] == 1 and records[0]["parts"] > 1
    assert all(len(row) == len(records[0]["src_tokens"]) for row in records[0]["attention"])


def test_parts_of_a_model_without_attention_keep_their_one_column():
    def part(src: list[str], tgt: list[str]) -> Translation:
        rows = [[1.0]] * (len(tgt) + 1)  # --attention none: the one context vector
        text = "".join(tgt).replace("▁", " ").strip()
        return Translation("", text, -1.0, src + ["</s>"], tgt + ["</s>"], rows, attends=False)

    whole = joined([part(["▁a", "▁b."], ["▁x"]), part(["▁c."], ["▁y", "▁z"])])
    assert whole.text == "x y z" and whole.parts == 2
    assert whole.weights == [[1.0]] * 4 and not whole.has_attention and whole.alignment == []
    assert whole.score == pytest.approx(-1.0)
