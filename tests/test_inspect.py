"""`s2a inspect`: the model card with figures that add up, a sentence step by step as
translate gives it, and pictures that are valid files."""

from __future__ import annotations

import json
import math
import shutil
import xml.dom.minidom
from pathlib import Path

import pytest
from conftest import train_tiny
from typer.testing import CliRunner

from seq2attn_cli.card import model_card, parameter_counts
from seq2attn_cli.cli.app import app
from seq2attn_cli.decoding.explain.inspection import diagnostics, explain
from seq2attn_cli.decoding.translator import Translator

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


def test_diagnostics_flag_eos_soak():  # words never attended: Translation.dropped
    src = ["a", "b", "</s>"]
    soaked = diagnostics(src, [[0.1, 0.0, 0.9], [0.2, 0.0, 0.8], [0.0, 0.0, 1.0]])
    assert soaked["eos_soaks"]
    sharp = diagnostics(src, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert not sharp["eos_soaks"] and sharp["mean_entropy"] == 0


def test_inspect_shows_card_sentence_target_and_history(tiny_model):
    card = runner.invoke(app, ["inspect", "--model", str(tiny_model)])
    assert card.exit_code == 0 and "parameters" in card.stdout and "attention" in card.stdout
    sentence = runner.invoke(
        app, ["inspect", "--model", str(tiny_model), "je mange pain", "--steps"]
    )
    assert sentence.exit_code == 0 and "decoding step by step" in sentence.stdout
    assert "attention entropy: " in sentence.stdout
    pieces = runner.invoke(
        app, ["inspect", "--model", str(tiny_model), "je mange pain", "--pieces"]
    )
    assert pieces.exit_code == 0 and "attention entropy over words: " in pieces.stdout
    forced = runner.invoke(
        app, ["inspect", "--model", str(tiny_model), "je mange pain", "--target", "I eat bread"]
    )
    assert "forced decoding" in forced.stdout and "alignment:" in forced.stdout
    history = runner.invoke(app, ["inspect", "--model", str(tiny_model), "--history"])
    assert history.exit_code == 0 and history.stdout.count("after epoch") >= 5


def test_the_card_says_how_many_times_over_each_corpus_was_seen(tiny_model):
    config = json.loads((tiny_model / "config.json").read_text())
    epochs = config["epochs"][-1]["epoch"]  # one corpus of weight 1: a pass an epoch
    card = runner.invoke(app, ["inspect", "--model", str(tiny_model)], env={"COLUMNS": "300"})
    assert f"{epochs:.2f} passes in {round(epochs, 2):g} epochs" in card.stdout, card.stdout


def test_the_card_gives_a_part_epoch_as_its_passes_are_given(tiny_model, tmp_path):
    copy = tmp_path / "m"
    shutil.copytree(tiny_model, copy)
    config = json.loads((copy / "config.json").read_text())
    config["epochs"][-1]["epoch"] = 40 / 3  # a run stopped a third into an epoch
    (copy / "config.json").write_text(json.dumps(config))
    card = runner.invoke(app, ["inspect", "--model", str(copy)], env={"COLUMNS": "300"})
    assert "13.33 passes in 13.33 epochs" in card.stdout, card.stdout


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


def test_a_target_is_shown_as_given_even_where_the_model_cannot_spell_it(tiny_model):
    result = runner.invoke(
        app, ["inspect", "--model", str(tiny_model), "je mange pain", "--target", "I eat 🍕."]
    )
    assert result.exit_code == 0 and "the given target: I eat 🍕.\n" in result.stdout
    assert "<unk>:" in result.stdout  # its pieces say what the model read: nothing it knows


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
