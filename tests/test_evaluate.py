"""`s2a evaluate`: BLEU and chrF as sacrebleu gives them, by source length, one JSON shape,
and its inputs checked before anything is translated."""

from __future__ import annotations

import json
import math
from pathlib import Path

import sacrebleu
from conftest import toy_pairs, write_tsv
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from seq2attn_cli.cli.app import app
from seq2attn_cli.decoding.translator import Translator
from seq2attn_cli.evaluation import BUCKETS, bucket_of, evaluate, score

runner = CliRunner()


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
    model = figures["models"][0]
    scores = [model["bleu"], model["chrf"], *(b["bleu"] for b in model["buckets"].values())]
    for signal in model["confidence"].values():  # "log_prob", "confidence"
        scores += [*signal["quartile_bleu"], signal["gap"]]
    assert all(round(x, 4) == x for x in scores if x is not None)  # one rounding for all


def test_evaluate_checks_outputs_and_every_model_before_translating(tiny_model, tmp_path):
    test = write_tsv(tmp_path / "test.tsv", toy_pairs(10, seed=3))
    (tmp_path / "empty").mkdir()
    (link := tmp_path / "link.tsv").symlink_to(test)  # another name for the same file
    cases = [
        (["--compare", str(tmp_path / "empty")], "--compare", "not a model directory"),
        (["--compare", str(tmp_path / "gone")], "--compare", "no such directory"),
        (["--output", str(tmp_path / "no" / "h.txt")], "--output", "no such directory"),
        (["--output", str(test / "h.txt")], "--output", f"{test} is not a directory"),
        # the references are not overwritten by the hypotheses
        (["--output", str(link)], "--output", "which this command reads"),
    ]
    for extra, option, says in cases:
        result = runner.invoke(app, ["evaluate", str(test), "--model", str(tiny_model), *extra])
        assert result.exit_code == 2 and result.stdout == ""
        assert option in result.stderr and says in result.stderr
        assert "translating" not in result.stderr  # nothing was translated first
    assert test.read_text() == write_tsv(tmp_path / "again.tsv", toy_pairs(10, seed=3)).read_text()


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


def test_a_test_line_as_long_as_translate_takes_is_scored_and_a_longer_one_refused(
    tiny_model, tmp_path
):
    pairs = toy_pairs(6, seed=4)
    paragraph = " ".join(s for s, _ in toy_pairs(200, seed=5))  # a paragraph, as WMT24++ has
    reference = " ".join(t for _, t in toy_pairs(200, seed=5))
    assert 1_000 < len(paragraph) < 10_000 and 1_000 < len(reference) < 10_000
    test = write_tsv(tmp_path / "test.tsv", [*pairs, (paragraph, reference)])
    args = ["evaluate", str(test), "--model", str(tiny_model), "--format", "json"]
    scored = runner.invoke(app, args)
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout)["sentences"] == 7
    too_long = write_tsv(tmp_path / "long.tsv", [*pairs, ("mot " * 2_600, "word")])
    refused = runner.invoke(app, ["evaluate", str(too_long), "--model", str(tiny_model)])
    assert refused.exit_code == 2 and "line 7" in refused.stderr
    assert "too long (over 10,000 characters)" in refused.stderr  # the limit it passed


def test_evaluate_refuses_one_column_as_both_source_and_reference(tiny_model, tmp_path):
    test = write_tsv(tmp_path / "test.tsv", toy_pairs(4, seed=3))
    args = ["evaluate", str(test), "--model", str(tiny_model), "--src-col", "2", "--tgt-col", "2"]
    refused = runner.invoke(app, args)  # it had scored the references against themselves
    assert refused.exit_code == 2 and refused.stdout == ""
    said = f"s2a: error: {test}: columns must be two different numbers from 1 up (--src-col 2, "
    said += "--tgt-col 2)\n"
    assert refused.stderr == said


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
