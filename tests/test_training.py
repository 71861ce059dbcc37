"""Training: a model directory a user can rely on, exact resume, and loss that falls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from conftest import toy_pairs, train_tiny, write_tsv
from safetensors.torch import load_file
from typer.testing import CliRunner

from seq2attn_cli.checkpoint import load_model
from seq2attn_cli.cli.app import app
from seq2attn_cli.decoding.translator import Translator
from seq2attn_cli.training import loop as training
from seq2attn_cli.training.loop import TrainingError


def test_model_directory_holds_config_weights_tokenizer_and_metrics(tiny_model):
    names = {p.name for p in tiny_model.iterdir()}
    assert {"config.json", "model.safetensors", "spm.model", "checkpoint.safetensors"} <= names
    config = json.loads((tiny_model / "config.json").read_text())
    assert config["format_version"] == 1
    assert config["model"]["attention"] == "general"
    assert config["corpus"]["train_examples"] > 500
    epochs = config["epochs"]
    assert 5 <= len(epochs) <= 12  # early stopping may end before the last epoch
    assert {"valid_loss", "valid_ppl", "valid_bleu", "valid_chrf", "tok_per_s"} <= set(epochs[0])
    assert config["best_valid_bleu"] == max(e["valid_bleu"] for e in epochs)
    model, subwords, _ = load_model(tiny_model)
    assert model.config.src_vocab == len(subwords)


def test_tiny_model_learns_the_toy_language(tiny_model):
    config = json.loads((tiny_model / "config.json").read_text())
    assert config["best_valid_bleu"] > 50
    assert config["epochs"][-1]["valid_loss"] < config["epochs"][0]["valid_loss"] / 2


@pytest.mark.parametrize("attention", ["general", "dot", "additive", "none"])
def test_loss_falls_on_a_copy_task_for_every_attention(tmp_path, attention):
    pairs = [(s, s) for s, _ in toy_pairs(300, seed=5)]
    corpus = write_tsv(tmp_path / "copy.tsv", pairs)
    out = train_tiny(tmp_path / attention, corpus, attention=attention, epochs=5, lr=1e-2)
    losses = [e["valid_loss"] for e in json.loads((out / "config.json").read_text())["epochs"]]
    assert losses[-1] < losses[0] * 0.7, losses


def test_resume_continues_exactly_where_an_interrupted_run_stopped(
    tmp_path, toy_corpus, monkeypatch
):
    # the stopped run validates at step 7 too, where the straight one does not. With every
    # validation scoring the same, the end of epoch 1 would be no better than step 7's and
    # decay the lr: the runs would part, unless only epoch ends count towards a plateau.
    validate = training.validate
    monkeypatch.setattr(training, "validate", lambda *args: {**validate(*args), "valid_bleu": 10.0})
    same = dict(epochs=2, save_every=5, lr_patience=1)
    straight = train_tiny(tmp_path / "straight", toy_corpus, **same)
    # the same run, stopped after 7 steps (mid-epoch) and resumed
    stopped = train_tiny(tmp_path / "resumed", toy_corpus, max_steps=7, **same)
    state = json.loads((stopped / "config.json").read_text())
    assert state["steps"] == 7
    train_tiny(stopped, toy_corpus, resume=True, **same)
    a = load_file(straight / "checkpoint.safetensors")
    b = load_file(stopped / "checkpoint.safetensors")
    assert set(a) == set(b)
    for name in a:
        if name.startswith(("model.", "optim.")):
            torch.testing.assert_close(a[name], b[name], rtol=0, atol=0, msg=name)
    steps = [e["step"] for e in json.loads((stopped / "config.json").read_text())["epochs"]]
    assert (
        steps[0] == 7 and steps[-1] == json.loads((straight / "config.json").read_text())["steps"]
    )


def test_a_run_started_again_with_skip_epochs_reads_what_its_lost_epoch_would_have(
    tmp_path, toy_corpus
):
    # weight 0.5: each epoch reads the other half of the corpus, so epochs differ in what they read
    def read(out: Path) -> int:  # the sum of the example indices the run trained on
        return sum(s["index_sum"] for s in json.loads((out / "config.json").read_text())["shards"])

    two = train_tiny(tmp_path / "two", toy_corpus, rate=0.5, epochs=2)
    one = train_tiny(tmp_path / "one", toy_corpus, rate=0.5, epochs=1)
    again = train_tiny(tmp_path / "again", toy_corpus, rate=0.5, epochs=1, skip_epochs=1)
    assert read(again) == read(two) - read(one) != read(one)


def test_same_seed_gives_the_same_model(tmp_path, toy_corpus):
    a = train_tiny(tmp_path / "a", toy_corpus, epochs=1)
    b = train_tiny(tmp_path / "b", toy_corpus, epochs=1)
    wa, wb = load_file(a / "model.safetensors"), load_file(b / "model.safetensors")
    assert all(torch.equal(wa[k], wb[k]) for k in wa)


def test_existing_model_directory_is_not_overwritten(tiny_model, toy_corpus):
    with pytest.raises(TrainingError, match="already holds a model"):
        train_tiny(tiny_model, toy_corpus)


def test_smoothed_loss_matches_torch_in_value_and_gradient():
    import torch.nn.functional as F

    from seq2attn_cli.training.loss import label_smoothed_loss

    torch.manual_seed(0)
    logits = torch.randn(3, 5, 11, dtype=torch.float64, requires_grad=True)
    target = torch.randint(1, 11, (3, 5))
    target[0, 3:] = 0  # padding is ignored
    ours = label_smoothed_loss(logits, target, 0.1)
    (ours_grad,) = torch.autograd.grad(ours / 7, logits)  # training divides by the token count
    stock = F.cross_entropy(
        logits.view(-1, 11), target.view(-1), ignore_index=0, label_smoothing=0.1, reduction="sum"
    )
    (stock_grad,) = torch.autograd.grad(stock / 7, logits)
    torch.testing.assert_close(ours.double(), stock)
    torch.testing.assert_close(ours_grad, stock_grad)


def test_a_quoted_word_is_read_whole_and_its_quotes_are_written_back_glued(tmp_path):
    # without spaced quotes '"chat"' would be read as ▁" c h a t": a spelling seen only here
    torch.manual_seed(0)
    quoted = [(f'il voit "{s}"', f'he sees "{t}"') for s, t in toy_pairs(400, seed=5, max_words=1)]
    corpus = write_tsv(tmp_path / "quotes.tsv", toy_pairs(1000) + quoted)
    model = train_tiny(tmp_path / "m", corpus, spaced_quotes=True)
    assert json.loads((model / "config.json").read_text())["model"]["spaced_quotes"] is True
    translation = Translator.load(model, quantized=False).translate('il voit "chat"')
    assert translation.src_tokens[-3:] == ["▁chat", '"', "</s>"]
    assert translation.text == 'he sees "cat"'
    said = CliRunner().invoke(app, ["translate", "--model", str(model), "il voit «chat»"])
    assert said.stdout == 'he sees "cat"\n'  # « » read as quotes; int8 as the CLI decodes
    card = CliRunner().invoke(app, ["inspect", "--model", str(model)], env={"COLUMNS": "200"})
    assert "opening quotes spaced off" in card.stdout
