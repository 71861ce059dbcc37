"""`s2a inspect` and `s2a evaluate`: figures that add up, and pictures that are valid files."""

from __future__ import annotations

import json
import math
import xml.dom.minidom

import sacrebleu
from conftest import toy_pairs, train_tiny, write_tsv
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from seq2attn_cli.cli import app
from seq2attn_cli.evaluation import BUCKETS, bucket_of, evaluate, score
from seq2attn_cli.inspection import diagnostics, explain, model_card, parameter_counts
from seq2attn_cli.translator import Translator

runner = CliRunner()


def test_card_parameter_counts_add_up_to_the_model(tiny_model):
    translator = Translator.load(tiny_model, quantized=False)
    counts = parameter_counts(translator.model)
    assert sum(counts.values()) == sum(p.numel() for p in translator.model.parameters())
    assert all(n > 0 for n in counts.values())
    card = model_card(translator, tiny_model)
    assert card["files"]["model.safetensors"] > 0 and card["epochs"]


def test_forced_decoding_of_own_greedy_output_reproduces_greedy_score(tiny_model):
    translator = Translator.load(tiny_model, quantized=False)
    greedy = translator.translate(["il voit grand chat rouge"], beam=1)[0]
    forced, steps = explain(translator, "il voit grand chat rouge", target=greedy.text)
    assert forced.text == greedy.text
    assert math.isclose(forced.score, greedy.score, rel_tol=1e-4)
    assert len(steps) == len(forced.tgt_tokens)
    for step in steps:
        assert math.isclose(sum(step.weights), 1.0, abs_tol=1e-4)
        assert len(step.candidates) == 5


@given(st.lists(st.integers(1, 60), min_size=1, max_size=100))
def test_buckets_cover_every_sentence_exactly_once(lengths):
    sources = [" ".join(["w"] * n) for n in lengths]
    _, _, _, buckets = score(sources, sources, sources)
    assert sum(b["count"] for b in buckets.values()) == len(sources)
    assert list(buckets) == [name for name, _, _ in BUCKETS]
    for n, s in zip(lengths, sources, strict=True):
        name = bucket_of(s)
        lo, hi = next((lo, hi) for b, lo, hi in BUCKETS if b == name)
        assert lo <= n <= hi


def test_evaluate_bleu_equals_sacrebleu_on_the_same_hypotheses(tiny_model):
    pairs = toy_pairs(40, seed=11, max_words=12)
    result = evaluate(Translator.load(tiny_model), pairs, name="tiny", beam=3, batch_size=16)
    refs = [t for _, t in pairs]
    assert math.isclose(result.bleu, sacrebleu.corpus_bleu(result.hypotheses, [refs]).score)
    assert math.isclose(result.chrf, sacrebleu.corpus_chrf(result.hypotheses, [refs]).score)
    assert result.signature.startswith("nrefs:1|case:mixed")


def test_diagnostics_flag_unattended_words_and_eos_soak():
    src = ["a", "b", "</s>"]
    soaked = diagnostics(src, [[0.1, 0.0, 0.9], [0.2, 0.0, 0.8], [0.0, 0.0, 1.0]])
    assert soaked["eos_soaks"] and soaked["never_attended"] == ["b"]
    sharp = diagnostics(src, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert not sharp["eos_soaks"] and sharp["mean_entropy"] == 0


def test_evaluate_compare_prints_both_models_by_length(tmp_path, tiny_model):
    test = write_tsv(tmp_path / "test.tsv", toy_pairs(30, seed=12, max_words=12))
    out = tmp_path / "hyps.txt"
    result = runner.invoke(
        app,
        [
            "evaluate",
            str(test),
            "--model",
            str(tiny_model),
            "--compare",
            str(tiny_model),
            "--output",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "BLEU by source length" in result.stdout and "11-15" in result.stdout
    assert len(out.read_text().splitlines()) == 30
    result = runner.invoke(
        app, ["evaluate", str(test), "--model", str(tiny_model), "--format", "json"]
    )
    figures = json.loads(result.stdout)
    assert figures["sentences"] == 30 and set(figures["buckets"]) == {b for b, _, _ in BUCKETS}


def test_inspect_shows_card_sentence_target_and_history(tiny_model):
    card = runner.invoke(app, ["inspect", "--model", str(tiny_model)])
    assert card.exit_code == 0 and "parameters" in card.stdout and "attention" in card.stdout
    sentence = runner.invoke(
        app, ["inspect", "--model", str(tiny_model), "je mange pain", "--steps"]
    )
    assert sentence.exit_code == 0 and "decoding step by step" in sentence.stdout
    assert "attention entropy" in sentence.stdout
    forced = runner.invoke(
        app, ["inspect", "--model", str(tiny_model), "je mange pain", "--target", "I eat bread"]
    )
    assert "forced decoding" in forced.stdout and "alignment:" in forced.stdout
    history = runner.invoke(app, ["inspect", "--model", str(tiny_model), "--history"])
    assert history.exit_code == 0 and history.stdout.count("after epoch") >= 5


def test_inspect_steps_of_a_model_without_attention_name_its_context_vector(tmp_path, toy_corpus):
    model = train_tiny(tmp_path / "none", toy_corpus, attention="none", epochs=2)
    args = ["inspect", "--model", str(model), "je mange pain", "--steps"]
    result = runner.invoke(app, args, env={"COLUMNS": "300"})  # one table row a line
    assert result.exit_code == 0, result.output
    steps = result.stdout.split("decoding step by step")[1]
    assert "(context vector):1.00" in steps and "▁je:" not in steps


def test_inspect_save_writes_a_valid_svg(tmp_path, tiny_model):
    path = tmp_path / "heat.svg"
    result = runner.invoke(
        app, ["inspect", "--model", str(tiny_model), "je mange pain", "--save", str(path)]
    )
    assert result.exit_code == 0, result.output
    document = xml.dom.minidom.parse(str(path))
    assert document.documentElement.tagName == "svg"
    assert "mange" in path.read_text()


def test_brackets_in_a_sentence_are_shown_as_typed(tiny_model):
    result = runner.invoke(app, ["inspect", "--model", str(tiny_model), "il voit [red] chat [/]"])
    assert result.exit_code == 0, result.output
    assert "il voit [red] chat [/]" in result.stdout
