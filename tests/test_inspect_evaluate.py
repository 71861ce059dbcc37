"""`s2a inspect` and `s2a evaluate`: figures that add up, and pictures that are valid files."""

from __future__ import annotations

import json
import math
import shutil
import xml.dom.minidom
from pathlib import Path

import pytest
import sacrebleu
from conftest import toy_pairs, train_tiny, write_tsv
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from seq2attn_cli.card import model_card, parameter_counts
from seq2attn_cli.cli.app import app
from seq2attn_cli.decoding.explain.inspection import diagnostics, explain
from seq2attn_cli.decoding.translator import Translator
from seq2attn_cli.evaluation import BUCKETS, bucket_of, evaluate, score

runner = CliRunner()


def test_card_parameter_counts_add_up_to_the_model(tiny_model):
    translator = Translator.load(tiny_model, quantized=False)
    counts = parameter_counts(translator.model)
    assert sum(counts.values()) == sum(p.numel() for p in translator.model.parameters())
    assert all(n > 0 for n in counts.values())
    card = model_card(tiny_model)
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
@settings(deadline=None)  # sacrebleu per bucket: ~0.2 s on a loaded 2-core machine
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
    translator = Translator.load(tiny_model)
    result = evaluate(translator, pairs, name="tiny", model="m", beam=3, batch_size=16)
    refs = [t for _, t in pairs]
    assert math.isclose(result.bleu, sacrebleu.corpus_bleu(result.hypotheses, [refs]).score)
    assert math.isclose(result.chrf, sacrebleu.corpus_chrf(result.hypotheses, [refs]).score)
    assert result.signature["bleu"].startswith("nrefs:1|case:mixed")
    assert result.signature["chrf"].startswith("nrefs:1|case:mixed")


def test_diagnostics_flag_eos_soak():  # words never attended: Translation.dropped
    src = ["a", "b", "</s>"]
    soaked = diagnostics(src, [[0.1, 0.0, 0.9], [0.2, 0.0, 0.8], [0.0, 0.0, 1.0]])
    assert soaked["eos_soaks"]
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
    assert figures["sentences"] == 30 and len(figures["models"]) == 1
    assert set(figures["models"][0]["buckets"]) == {b for b, _, _ in BUCKETS}


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


def test_inspect_says_the_precision_translate_decodes_in(tiny_model):
    env = {"COLUMNS": "200"}
    for flag, said in (("--quantize", "int8 weights on cpu"), ("--no-quantize", "float32 weights")):
        card = runner.invoke(app, ["inspect", "--model", str(tiny_model), flag], env=env)
        assert card.exit_code == 0 and said in card.stdout, card.output
        sentence = runner.invoke(
            app, ["inspect", "--model", str(tiny_model), "je mange pain", flag], env=env
        )
        assert f"beam 5, {said.split()[0]})" in sentence.stdout, sentence.output
    assert Translator.load(tiny_model).precision == "int8"
    assert Translator.load(tiny_model, quantized=False).precision == "float32"


def test_an_empty_target_is_refused_not_shown_as_an_empty_translation(tiny_model):
    result = runner.invoke(
        app, ["inspect", "--model", str(tiny_model), "Il pleut.", "--target", ""]
    )
    assert result.exit_code == 2 and "--target is empty" in result.stderr
    assert result.stdout == ""


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


def _shown_translation(output: str) -> str:
    """The translation line of `s2a inspect TEXT`: 'translation (beam 5, int8): ...'."""
    line = next(x for x in output.splitlines() if x.startswith("translation ("))
    return line.split("): ", 1)[1]


@pytest.mark.parametrize("beam", ["1", "5"])
def test_inspect_shows_the_translation_translate_gives(beam):
    """The shipped model, whatever it is today: both commands, the same flags, the same text."""
    for text in ("Je suis boulanger.", "je suis étudiant", "Il fait beau aujourd'hui."):
        translated = runner.invoke(app, ["translate", "--beam", beam, text])
        inspected = runner.invoke(app, ["inspect", "--beam", beam, text], env={"COLUMNS": "300"})
        assert translated.exit_code == 0 and inspected.exit_code == 0, inspected.output
        assert _shown_translation(inspected.stdout) == translated.stdout.rstrip("\n")
        search = "greedy" if beam == "1" else f"beam {beam}"
        assert f"translation ({search}, int8):" in inspected.stdout


def test_inspect_without_quantization_matches_translate_without_it(tiny_model):
    for beam in ("1", "3"):
        args = ["--model", str(tiny_model), "--beam", beam, "--no-quantize", "il voit grand chat"]
        translated = runner.invoke(app, ["translate", *args])
        inspected = runner.invoke(app, ["inspect", *args, "--steps"], env={"COLUMNS": "300"})
        assert _shown_translation(inspected.stdout) == translated.stdout.rstrip("\n")
        assert "float32" in inspected.stdout and "decoding step by step" in inspected.stdout


def test_inspect_refuses_options_it_would_otherwise_ignore(tiny_model):
    for args in (["bonjour", "--history"], ["--steps"], ["--target", "I eat"]):
        result = runner.invoke(app, ["inspect", "--model", str(tiny_model), *args])
        assert result.exit_code == 2 and result.stdout == ""
        assert result.stderr.count("\n") == 1 and "s2a: error:" in result.stderr


def test_inspect_save_into_a_missing_directory_fails_before_showing_anything(tiny_model, tmp_path):
    path = tmp_path / "no" / "heat.svg"
    result = runner.invoke(app, ["inspect", "--model", str(tiny_model), "je", "--save", str(path)])
    assert result.exit_code == 2 and result.stdout == ""
    assert "--save" in result.stderr and str(path.parent) in result.stderr


def test_evaluate_checks_outputs_and_every_model_before_translating(tiny_model, tmp_path):
    test = write_tsv(tmp_path / "test.tsv", toy_pairs(10, seed=3))
    (tmp_path / "empty").mkdir()
    cases = [
        (["--compare", str(tmp_path / "empty")], "--compare", "not a model directory"),
        (["--compare", str(tmp_path / "gone")], "--compare", "no such directory"),
        (["--output", str(tmp_path / "no" / "h.txt")], "--output", "no such directory"),
    ]
    for extra, option, says in cases:
        result = runner.invoke(app, ["evaluate", str(test), "--model", str(tiny_model), *extra])
        assert result.exit_code == 2 and result.stdout == ""
        assert option in result.stderr and says in result.stderr
        assert "translating" not in result.stderr  # nothing was translated first


def test_model_errors_say_where_the_directory_came_from(tmp_path):
    result = runner.invoke(app, ["translate", "hi"], env={"S2A_MODEL": str(tmp_path / "nope")})
    assert result.exit_code == 2
    assert f"$S2A_MODEL={tmp_path / 'nope'}: no such directory" in result.stderr
    result = runner.invoke(app, ["evaluate", "t.tsv", "--model", str(tmp_path)])
    assert f"--model {tmp_path}: not a model directory (no config.json)" in result.stderr


def test_evaluate_refuses_malformed_lines_unless_told_to_skip_them(tiny_model, tmp_path):
    lines = [f"{s}\t{t}" for s, t in toy_pairs(12, seed=4)]
    lines[5] = lines[5].replace("\t", " ")  # no tab
    test = tmp_path / "test.tsv"
    test.write_text("\n".join(lines) + "\n", encoding="utf-8")
    refused = runner.invoke(app, ["evaluate", str(test), "--model", str(tiny_model)])
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1
    assert "line 6" in refused.stderr and "--skip-bad" in refused.stderr
    args = ["evaluate", str(test), "--model", str(tiny_model), "--skip-bad", "--format", "json"]
    skipped = runner.invoke(app, args)
    assert skipped.exit_code == 0, skipped.output
    assert (
        json.loads(skipped.stdout)["skipped"] == 1 and "skipped 1 malformed line:" in skipped.stderr
    )


def test_a_test_file_ending_in_blank_lines_is_scored(tiny_model, tmp_path):
    lines = [f"{s}\t{t}\r\n" for s, t in toy_pairs(8, seed=4)]
    test = tmp_path / "crlf.tsv"
    test.write_bytes("".join(lines).encode() + b"\r\n\n \n")
    args = ["evaluate", str(test), "--model", str(tiny_model), "--beam", "1", "--format", "json"]
    scored = runner.invoke(app, args)
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout)["skipped"] == 0 and "skipped" not in scored.stderr
    test.write_bytes("".join(lines[:4] + ["\r\n"] + lines[4:]).encode())  # a blank between pairs
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2 and "empty line: 1 line (first: line 5)" in refused.stderr


def test_evaluate_json_is_one_object_of_one_shape_with_and_without_compare(tiny_model, tmp_path):
    test = write_tsv(tmp_path / "test.tsv", toy_pairs(10, seed=5))
    base = ["evaluate", str(test), "--model", str(tiny_model), "--format", "json", "--beam", "2"]
    one = json.loads(runner.invoke(app, base).stdout)
    two = json.loads(runner.invoke(app, [*base, "--compare", str(tiny_model)]).stdout)
    assert set(one) == set(two) and len(one["models"]) == 1 and len(two["models"]) == 2
    assert set(one["models"][0]) == set(two["models"][1])
    assert one["beam"] == 2 and one["models"][0]["model"] == str(tiny_model)
    assert one["models"][0]["signature"]["bleu"].startswith("nrefs:1")
    assert schema_keys(one) == schema_keys(documented_evaluate_json())


def schema_keys(value, prefix: str = "") -> set[str]:
    """Every key path of a JSON value ('models[].signature.bleu'); buckets by one example."""
    if isinstance(value, dict):
        if prefix.endswith("buckets"):
            value = dict(list(value.items())[:1])
            return {prefix} | schema_keys(next(iter(value.values())), prefix + ".*")
        return {
            path for k, v in value.items() for path in schema_keys(v, f"{prefix}.{k}".lstrip("."))
        } | ({prefix} if prefix else set())
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return {prefix} | schema_keys(value[0], prefix + "[]")
    return {prefix}


def documented_evaluate_json() -> dict:
    """The example object the README documents for `s2a evaluate --format json`."""
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("`s2a evaluate --format json`", 1)[1]
    return json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])


def test_evaluate_stops_on_swapped_columns_and_names_the_fix(tiny_model, tmp_path):
    test = write_tsv(tmp_path / "swapped.tsv", [(t, s) for s, t in toy_pairs(40, seed=6)])
    result = runner.invoke(app, ["evaluate", str(test), "--model", str(tiny_model)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "--src-col 2 --tgt-col 1" in result.stderr and "translating" not in result.stderr
    args = ["evaluate", str(test), "--model", str(tiny_model), "--no-check-columns"]
    assert runner.invoke(app, args).exit_code == 0
    args = ["evaluate", str(test), "--model", str(tiny_model), "--src-col", "2", "--tgt-col", "1"]
    assert runner.invoke(app, args).exit_code == 0


def test_history_of_an_older_model_cut_at_the_length_limit_still_replays(tiny_model, tmp_path):
    model = Path(shutil.copytree(tiny_model, tmp_path / "model"))
    history = json.loads((model / "history.json").read_text(encoding="utf-8"))
    for epoch in history["epochs"]:  # as s2a wrote it before: </s> without its attention row
        epoch["weights"] = epoch["weights"][:-1]
    (model / "history.json").write_text(json.dumps(history), encoding="utf-8")
    result = runner.invoke(app, ["inspect", "--model", str(model), "--history"])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("after epoch") == len(history["epochs"])


@pytest.mark.parametrize(
    ("source", "written", "changed"),
    [  # issue #44: inspect guessed, and named the article rule for a URL written back
        ("Erdoğan a vu www.example.com hier.", "Erdogan saw URL yesterday.", ["letters", "urls"]),
        ("Nous avons vu une pomme.", "We saw a apple.", ["articles"]),
        ("Nous avons vu une pomme.", "We saw an apple.", []),
    ],
)
def test_inspect_names_the_rules_that_changed_the_translation_and_no_other(
    model_writes, source, written, changed
):
    model_writes(written)
    shown = runner.invoke(app, ["inspect", source], env={"COLUMNS": "300"})
    assert shown.exit_code == 0, shown.output
    said = {
        "articles": "set a/an by the next word",
        "letters": "wrote back the letters it read as base letters",
        "urls": "wrote back each URL as given",
    }
    for rule, words in said.items():
        assert (words in shown.stdout) == (rule in changed), (rule, shown.stdout)
    assert ("the model wrote: " + written in shown.stdout) == bool(changed), shown.stdout
