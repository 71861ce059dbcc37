"""A confidence for every translation, and the source words it may have dropped."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import toy_pairs, write_tsv
from typer.testing import CliRunner

from seq2attn_cli.cli.app import app
from seq2attn_cli.data.languages import STOP_SETS
from seq2attn_cli.decoding.explain.confidence import (
    SIGNALS,
    Unflagged,
    can_drop,
    coverage,
    dropped,
    missing_numbers,
    missing_symbols,
    signals,
)
from seq2attn_cli.decoding.explain.wordlists import NUMBER_WORDS, SYMBOL_WORDS
from seq2attn_cli.decoding.search.hypothesis import Hypothesis
from seq2attn_cli.decoding.translator import Translator
from seq2attn_cli.errors import ModelError
from seq2attn_cli.evaluation import ranks, spearman

runner = CliRunner()
NONE = Unflagged()  # every word of three letters or more can be named as dropped
FRENCH = Unflagged.of("fr")
REPO = Path(__file__).parent.parent
# "Je m'appelle Pierre." as SentencePiece cuts it; three output steps and </s>
SRC = ["▁Je", "▁m", "'", "appel", "le", "▁Pierre", ".", "</s>"]
NEVER_PIERRE = [  # every step looks anywhere but at "Pierre"
    [0.9, 0.05, 0.0, 0.0, 0.0, 0.0, 0.0, 0.05],
    [0.0, 0.3, 0.1, 0.3, 0.3, 0.0, 0.0, 0.0],
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.9, 0.1],
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
]


def test_a_word_the_attention_never_covers_is_named_as_dropped() -> None:
    words, covered = coverage(SRC, NEVER_PIERRE)
    assert words == ["Je", "m'appelle", "Pierre", "."]  # pieces of a word summed
    assert covered[words.index("Pierre")] == 0 and covered[words.index("m'appelle")] > 0.5
    assert dropped(SRC, NEVER_PIERRE, 0.3, NONE) == ["Pierre"]
    # the same attention, with a step that looks at "Pierre", drops nothing
    looked = [row[:] for row in NEVER_PIERRE]
    looked[2] = [0.0, 0.0, 0.0, 0.0, 0.0, 0.8, 0.1, 0.1]
    assert dropped(SRC, looked, 0.3, NONE) == []


def test_function_words_the_model_reads_with_their_neighbours_are_not_flagged() -> None:
    src = ["▁Il", "▁a", "▁mangé", "</s>"]
    weights = [[0.2, 0.0, 0.8, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    assert dropped(src, weights, 0.3, Unflagged(words=frozenset({"il", "a"}))) == []
    assert dropped(src, weights, 0.3, NONE) == []  # "Il", "a": too short to be flagged
    src = ["▁Elle", "▁a", "▁mangé", "</s>"]
    assert dropped(src, weights, 0.3, NONE) == ["Elle"]


def test_an_auxiliary_the_translation_carries_is_not_named_as_dropped() -> None:
    weights = [[0.9, 0.0, 0.1, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]  # "won" on gagné
    assert dropped(["▁Elles", "▁ont", "▁gagné", "</s>"], weights, 0.3, FRENCH) == []
    assert (
        dropped(["▁Elles", "▁d", "'", "être", "</s>"], [[0.9, 0, 0, 0.1, 0]] * 3, 0.3, FRENCH) == []
    )
    assert dropped(
        ["▁Elles", "▁l", "'", "arme", "</s>"], [[0.9, 0, 0, 0.1, 0]] * 3, 0.3, FRENCH
    ) == ["l'arme"]


def test_an_idiom_read_through_one_of_its_words_is_not_named_as_dropped() -> None:
    # "Il a dit quelque chose." -> "He said something.": "something" looks at "quelque" only
    src = ["▁Il", "▁a", "▁dit", "▁quelque", "▁chose", ".", "</s>"]
    weights = [
        [0.9, 0.1, 0, 0, 0, 0, 0],  # He
        [0, 0.2, 0.8, 0, 0, 0, 0],  # said
        [0, 0, 0, 0.95, 0.05, 0, 0],  # something
        [0, 0, 0, 0, 0, 1.0, 0],  # .
        [0, 0, 0, 0, 0, 0, 1.0],  # </s>
    ]
    assert dropped(src, weights, 0.3, NONE) == ["chose"]
    assert dropped(src, weights, 0.3, FRENCH) == []
    # an idiom that got no attention at all is still missing, whole
    nothing = [[0.9, 0.1, 0, 0, 0, 0, 0], [0, 0.2, 0.8, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 1.0]]
    assert dropped(src, nothing, 0.3, FRENCH) == ["quelque", "chose"]


def test_the_progressive_en_train_de_is_grammar_but_a_train_can_be_missed() -> None:
    # "Il est en train de boire." -> "He's drinking.": no step needs "train"
    src = ["▁Il", "▁est", "▁en", "▁train", "▁de", "▁boire", ".", "</s>"]
    weights = [[0.5, 0.5, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1.0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 1.0]]
    assert dropped(src, weights, 0.3, FRENCH) == []
    elided = ["▁Il", "▁est", "▁en", "▁train", "▁d", "'", "écrire", ".", "</s>"]
    rows = [[0.5, 0.5, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 1.0, 0, 0], [0] * 8 + [1.0]]
    assert dropped(elided, rows, 0.3, FRENCH) == []
    # the verb after "d'" is no grammar: unread, it is named
    unread = [[0.5, 0.5, 0, 0, 0, 0, 0, 0, 0], [0] * 8 + [1.0]]
    assert dropped(elided, unread, 0.3, FRENCH) == ["d'écrire"]
    # "Je viens en train." -> "I'm coming.": the train is gone, and named
    src = ["▁Je", "▁viens", "▁en", "▁train", ".", "</s>"]
    weights = [[1.0, 0, 0, 0, 0, 0], [0, 1.0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1.0]]
    assert dropped(src, weights, 0.3, FRENCH) == ["train"]


def test_every_language_with_stop_words_keeps_them_unflagged() -> None:
    src = ["▁The", "▁cat", "▁and", "▁the", "▁dog", "</s>"]
    weights = [[0, 1.0, 0, 0, 0, 0], [0, 0, 0, 0, 1.0, 0], [0, 0, 0, 0, 0, 1.0]]
    assert dropped(src, weights, 0.3, Unflagged.of("en")) == []
    assert dropped(src, weights, 0.3, NONE) == ["The", "and", "the"]
    assert all(Unflagged.of(lang).words >= STOP_SETS[lang] for lang in STOP_SETS)


def test_only_an_elided_article_or_pronoun_is_read_past() -> None:
    french, english = STOP_SETS["fr"], STOP_SETS["en"]
    assert not can_drop("d'être", french) and not can_drop("qu'il", french)
    assert can_drop("l'arme", french) and can_drop("quelqu'un", french)
    assert can_drop("can't", english) and can_drop("Obama's", english)


def test_every_signal_is_a_number_and_a_loop_shows_as_repeated_attention() -> None:
    tgt = ["▁I", "'", "m", "</s>"]
    once = signals(
        SRC[:4] + ["</s>"], tgt, [[1, 0, 0, 0, 0]] * 3 + [[0, 0, 0, 0, 1]], -0.2, attends=True
    )
    assert set(once) == set(SIGNALS) and once["surprise"] == pytest.approx(math.log(0.2))
    looping = signals(SRC, SRC, [[1.0] + [0.0] * 7] * 7 + [[0.0] * 7 + [1.0]], -0.2, attends=True)
    assert looping["repeated"] > once["repeated"] and looping["copied"] == 1.0


def test_spearman_is_the_rank_correlation_with_ties_sharing_ranks() -> None:
    assert ranks([10, 20, 20, 5]) == [2.0, 3.5, 3.5, 1.0]
    assert spearman([1, 2, 3, 4], [10, 30, 31, 80]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]) == pytest.approx(0.8)  # 1 - 6*4/120
    assert spearman([1, 1, 1], [1, 2, 3]) == 0.0


def test_every_translation_has_a_confidence_between_0_and_1_and_a_list_of_dropped_words(
    shipped,
) -> None:
    found = shipped.translate(["Je suis étudiant.", "Je m'appelle Pierre.", "", "Bonjour"])
    assert all(0.0 <= t.confidence <= 1.0 for t in found)
    assert all(isinstance(t.dropped, list) for t in found) and found[2].dropped == []
    assert found[0].as_dict()["confidence"] == round(found[0].confidence, 4)


def test_words_the_search_never_attended_are_the_translation_s_dropped(shipped, monkeypatch):
    def search(model, src_ids, **_):  # writes "I'm calling." looking at "Je" only
        (ids,) = src_ids
        written = shipped.subwords.encode(["I'm calling."])[0]
        indices = [shipped.output_index[i] for i in written]
        on_je = [1.0] + [0.0] * len(ids)  # (src_len + 1,): the pieces and </s>
        return [Hypothesis(indices=indices, score=-0.5, weights=[on_je] * (len(indices) + 1))]

    monkeypatch.setattr("seq2attn_cli.decoding.translator.translate_ids", search)
    t = shipped.translate("Je m'appelle Pierre.")
    assert t.dropped == ["m'appelle", "Pierre"]  # ".": not a word
    assert t.as_dict()["dropped"] == t.dropped


def test_a_symbol_is_missing_only_when_neither_it_nor_its_word_is_written() -> None:
    words = SYMBOL_WORDS["en"]
    src = ["▁Tom", "▁", "&", "▁Jerry", "▁:", "▁12", ",", "50", "▁", "€", "▁", "%", "</s>"]
    assert missing_symbols(src, "Tom and Jerry: 12.50 euros, 3%", words) == []
    assert missing_symbols(src, "Tom & Jerry: €12.50 per cent", words) == []
    assert missing_symbols(src, "Tom is getting Jerry: 12,50", words) == ["&", "€", "%"]
    assert missing_symbols(src, "Tom band Jerry: 12,50 € %", words) == ["&"]  # a word, not a part
    assert missing_symbols(["▁₹", "5", "</s>"], "5 rupees", words) == ["₹"]  # only as itself


def test_a_number_is_missing_only_when_the_text_says_it_neither_in_digits_nor_in_words() -> None:
    words = NUMBER_WORDS["en"]
    src = ["▁En", "▁2019", ",", "▁35", "▁000", "▁sur", "▁1", ",", "5", "▁et", "▁2", "e", "</s>"]
    assert missing_numbers(src, "In 2019, 35,000 of 1.5 and second", words) == []
    assert missing_numbers(src, "In 2019: 35 000, 1.50, the 2nd", words) == []
    assert missing_numbers(src, "In 000 out of 15, and", words) == ["2019", "35 000", "1,5", "2"]
    src = ["▁21", "▁ans", ",", "▁30", "▁jours", ",", "▁1", "▁000", "▁fois", ",", "▁35", "</s>"]
    said = "Twenty-one years, thirty days, a thousand times, thirty"
    assert missing_numbers(src, said, words) == ["35"]  # "thirty" is not 35
    assert missing_numbers(src, "21 years, 30 days, thirty-five times", words) == ["1 000"]
    src = ["▁21", "▁jours", ",", "▁1", ",", "5", "▁heure", "▁et", "▁100", "e", "</s>"]
    said = "twenty days and one night, fifteen hours, the hundredth"  # not 21, nor 1.5
    assert missing_numbers(src, said, words) == ["21", "1,5"]


def test_a_currency_sign_the_translation_left_out_is_dropped_and_warned(shipped, monkeypatch):
    def search(model, src_ids, **_):  # writes "I paid a lot yesterday." looking at each piece
        (ids,) = src_ids
        written = shipped.subwords.encode(["I paid a lot yesterday."])[0]
        indices = [shipped.output_index[i] for i in written]
        even = [1.0 / (len(ids) + 1)] * (len(ids) + 1)  # (src_len + 1,): the pieces and </s>
        return [Hypothesis(indices=indices, score=-0.5, weights=[even] * (len(indices) + 1))]

    monkeypatch.setattr("seq2attn_cli.decoding.translator.translate_ids", search)
    assert "£" in shipped.translate("J'ai payé 12,50 £ hier.").dropped  # € is read as euros
    result = runner.invoke(app, ["translate", "--threads", "1", "J'ai payé 12,50 £ hier."])
    assert result.exit_code == 0 and result.stdout == "I paid a lot yesterday.\n"
    assert 'input line 1: the translation left out "£", "12,50"' in result.stderr


def test_a_sign_of_arithmetic_or_a_hash_the_translation_left_out_is_warned(shipped):
    # "C#" came out "City", "a > b" "you're up", unwarned
    result = runner.invoke(app, ["translate", "--threads", "1", "Il code en C#.", "Si a > b."])
    assert '"#"' in result.stderr and '">"' in result.stderr
    said = missing_symbols(
        ["▁2", "▁+", "▁2", "▁=", "▁4"], "Two plus two makes four.", SYMBOL_WORDS["en"]
    )
    assert said == []  # named in words


def test_jsonl_carries_the_confidence_and_the_dropped_words(tiny_model) -> None:
    args = ["translate", "--model", str(tiny_model), "--format", "jsonl", "il voit chat", "je"]
    result = runner.invoke(app, args)
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.exit_code == 0 and len(records) == 2
    for record in records:
        assert 0.0 <= record["confidence"] <= 1.0 and isinstance(record["dropped"], list)


def test_the_heatmap_shows_each_source_word_s_coverage(tiny_model) -> None:
    args = ["translate", "--model", str(tiny_model), "--heatmap", "il voit chat"]
    result = runner.invoke(app, args, env={"NO_COLOR": "1", "COLUMNS": "100"})
    row = next(line for line in result.stderr.splitlines() if line.startswith("coverage"))
    assert len(row.split()) == 1 + 4  # three words and </s>


def fitted_copy(tiny_model: Path, tmp_path: Path, **confidence) -> Path:
    """A copy of the tiny model whose config.json holds this "confidence" part."""
    model = Path(shutil.copytree(tiny_model, tmp_path / "model"))
    config = json.loads((model / "config.json").read_text(encoding="utf-8"))
    config["confidence"] = confidence
    (model / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return model


def test_the_confidence_part_of_config_json_is_what_the_translator_uses(tiny_model, tmp_path):
    sure = Translator.load(fitted_copy(tiny_model, tmp_path, bias=9.0, weights={}, threshold=0))
    assert sure.translate("il voit chat").confidence > 0.99
    assert sure.translate("il voit chat").dropped == []
    shutil.rmtree(tmp_path / "model")
    unsure = Translator.load(fitted_copy(tiny_model, tmp_path, bias=-9.0, threshold=99.0))
    t = unsure.translate("il voit chat")
    assert t.confidence < 0.01 and t.dropped == ["voit", "chat"]  # "il": a stop word


def test_a_confidence_part_naming_an_unknown_signal_is_refused_in_one_line(tiny_model, tmp_path):
    model = fitted_copy(tiny_model, tmp_path, weights={"vibes": 1.0})
    with pytest.raises(ModelError, match="unknown signal 'vibes'"):
        Translator.load(model)


def test_evaluate_prints_bleu_by_confidence_quartile_and_the_spearman(tiny_model, tmp_path):
    test = write_tsv(tmp_path / "test.tsv", toy_pairs(40, seed=3, max_words=10))
    result = runner.invoke(app, ["evaluate", str(test), "--model", str(tiny_model)])
    assert result.exit_code == 0, result.stderr
    assert "BLEU by confidence quartile" in result.stdout and "Spearman" in result.stdout
    args = ["evaluate", str(test), "--model", str(tiny_model), "--format", "json"]
    figures = json.loads(runner.invoke(app, args).stdout)["models"][0]["confidence"]
    assert set(figures) == {"log_prob", "confidence"}
    assert len(figures["confidence"]["quartile_bleu"]) == 4
    assert -1 <= figures["confidence"]["spearman_chrf"] <= 1


def test_the_fit_script_writes_a_confidence_part_the_translator_then_uses(tiny_model, tmp_path):
    model = Path(shutil.copytree(tiny_model, tmp_path / "model"))
    dev = write_tsv(tmp_path / "dev.tsv", toy_pairs(60, seed=8, max_words=12))
    script = [sys.executable, str(REPO / "scripts" / "fit_confidence.py"), str(model)]
    done = subprocess.run(
        [*script, "--dev", str(dev), "--lines", "40", "--threads", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    part = json.loads((model / "config.json").read_text(encoding="utf-8"))["confidence"]
    assert set(part["weights"]) == set(SIGNALS) and part["fitted_on"] == ["dev.tsv (40 lines)"]
    judge = Translator.load(model).config.confidence
    assert judge.bias == part["bias"] and judge.threshold == part["threshold"]
