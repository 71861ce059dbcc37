"""Training on several corpora as a user runs it: weights, columns per corpus, compressed
files, a summary of what was used, swapped columns caught, resume and --init that keep the
stored run."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest
from conftest import toy_pairs, write_tsv
from faults_util import s2a
from typer.testing import CliRunner

from seq2attn_cli.cli.app import app

TINY = ["--vocab-size", "60", "--embed", "32", "--hidden", "64", "--batch-tokens", "300",
        "--threads", "1", "--no-amp"]  # fmt: skip
FR = "le la les un une des et est dans pour sur avec que qui pas je il elle nous".split()
EN = "the a of and is in to it that this was for on with he she we you not they".split()


def sentences(n: int, words: list[str], seed: int) -> list[str]:
    """Running 'text' of a language's commonest words: enough to tell the language."""
    import random

    rng = random.Random(seed)
    return [" ".join(rng.choice(words) for _ in range(rng.randint(3, 7))) for _ in range(n)]


def train(*args: str):
    """s2a train through the CLI, in this process."""
    return CliRunner().invoke(app, ["train", *map(str, args)])


@pytest.fixture(scope="module")
def corpora(tmp_path_factory) -> dict[str, Path]:
    """A French->English corpus, an English<TAB>French one, and an .xz one."""
    root = tmp_path_factory.mktemp("corpora")
    fr, en = sentences(400, FR, 1), sentences(400, EN, 2)
    paths = {
        "fr_en": write_tsv(root / "fr_en.tsv", list(zip(fr, en, strict=True))),
        "en_fr": write_tsv(root / "en_fr.tsv", list(zip(en, fr, strict=True))),
        "toy": write_tsv(root / "toy.tsv", toy_pairs(300, seed=4)),
    }
    xz = root / "toy.tsv.xz"
    xz.write_bytes(lzma.compress(paths["toy"].read_bytes()))
    paths["xz"] = xz
    return paths


def test_several_corpora_train_with_their_weights_and_columns(tmp_path, corpora):
    out = tmp_path / "m"
    result = train(corpora["fr_en"], corpora["en_fr"], corpora["xz"], "--src-col", "1,2,1",
                   "--tgt-col", "2,1,2", "--weights", "1,0.5,2", "--out", out, "--max-steps",
                   "4", *TINY)  # fmt: skip
    assert result.exit_code == 0, result.output
    used = json.loads((out / "config.json").read_text())["corpus"]
    first, second, third = used["corpora"]
    assert first["pairs_read"] == 400 and first["held_out"] > 0
    assert second["held_out"] == 0 and second["per_epoch"] == round(second["train_examples"] / 2)
    assert third["corpus"].endswith("toy.tsv.xz") and third["pairs_read"] == 300
    assert third["per_epoch"] == 2 * third["train_examples"]
    assert used["languages"] == {"source": "fr", "target": "en", "guessed": True}
    for corpus in ("fr_en.tsv", "en_fr.tsv", "toy.tsv.xz"):  # the per-corpus summary lines
        assert any(corpus in line and "per epoch" in line for line in result.stderr.splitlines())


def test_a_corpus_with_swapped_columns_is_refused_naming_the_fix(tmp_path, corpora):
    out = tmp_path / "m"
    result = train(corpora["fr_en"], corpora["en_fr"], "--out", out, "--max-steps", "2", *TINY)
    assert result.exit_code == 2
    assert "en_fr.tsv: column 1 looks English and column 2 French" in result.stderr
    assert "--src-col 2 --tgt-col 1" in result.stderr
    assert not out.exists()  # a failed train leaves no directory behind
    forced = train(corpora["fr_en"], corpora["en_fr"], "--out", out, "--max-steps", "2",
                   "--no-check-columns", *TINY)  # fmt: skip
    assert forced.exit_code == 0, forced.output


def test_a_missing_corpus_fails_before_any_directory_is_made(tmp_path, corpora):
    out = tmp_path / "m"
    result = train(corpora["toy"], tmp_path / "nope.tsv", "--out", out, *TINY)
    assert result.exit_code == 2 and "nope.tsv: no such file" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--weights", "inf"), "toy.tsv: weight must be a positive number, not inf"),
        (("--weights", "nan"), "toy.tsv: weight must be a positive number, not nan"),
        (("--valid-size", "-5"), "Invalid value for '--valid-size'"),
        (("--valid-size", "5"), "Invalid value for '--valid-size'"),
        (
            ("--src-col", "0"),
            "toy.tsv: columns must be two different numbers from 1 up (--src-col 0, --tgt-col 2)",
        ),
        (
            ("--tgt-col", "1"),
            "toy.tsv: columns must be two different numbers from 1 up (--src-col 1, --tgt-col 1)",
        ),
        (("--cell", "foo"), "--cell 'foo': expected one of gru, lstm"),
        (("--attention", "luong"), "--attention 'luong': expected one of general, dot, additive"),
    ],
)
def test_a_bad_number_is_refused_in_one_line_before_any_work(tmp_path, corpora, flags, said):
    out = tmp_path / "m"
    result = train(corpora["toy"], "--out", out, *flags, *TINY)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and said in result.stderr
    assert not out.exists()  # refused before SentencePiece was trained into it


def test_resume_needs_no_corpus_and_refuses_flags_that_contradict_the_run(tmp_path, corpora):
    out = tmp_path / "m"
    assert train(corpora["toy"], "--out", out, "--max-steps", "3", *TINY).exit_code == 0
    resumed = train("--resume", "--out", out, "--max-steps", "6", "--threads", "1")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads((out / "config.json").read_text())["steps"] == 6
    clash = train("--resume", "--out", out, "--hidden", "128")
    assert clash.exit_code == 2
    assert "--hidden 128 contradicts the run stored" in clash.stderr
    same = train("--resume", "--out", out, "--hidden", "64", "--max-steps", "7")
    assert same.exit_code == 0, same.output  # repeating the stored value is fine


def test_resume_keeps_the_stored_limits_it_is_not_given(tmp_path, corpora):
    out = tmp_path / "m"
    first = train(corpora["toy"], "--out", out, "--max-steps", "3", "--epochs", "7",
                  "--save-every", "2", "--patience", "5", *TINY)  # fmt: skip
    assert first.exit_code == 0, first.output
    resumed = train("--resume", "--out", out, "--max-steps", "4", "--threads", "1")
    assert resumed.exit_code == 0, resumed.output
    stored = json.loads((out / "config.json").read_text())["training"]
    assert (stored["max_steps"], stored["epochs"], stored["save_every"], stored["patience"]) == (
        4,
        7,
        2,
        5,  # not the defaults: --resume continues the run as stored
    )


def test_a_run_that_stopped_early_goes_on_with_a_higher_patience(tmp_path, corpora):
    out = tmp_path / "m"
    # lr 0: no epoch beats the first, so the second one ends the run (patience 1)
    first = train(corpora["toy"], "--out", out, "--lr", "0", "--patience", "1", *TINY)
    assert first.exit_code == 0 and "early stopping" in first.stderr, first.output
    config = json.loads((out / "config.json").read_text())
    assert len(config["epochs"]) == 2
    again = train("--resume", "--out", out, "--threads", "1")
    assert again.exit_code == 0 and "--patience 1 already reached (1 epoch without" in again.stderr
    more = train("--resume", "--out", out, "--threads", "1", "--patience", "3",
                 "--lr-patience", "5", "--epochs", "3")  # fmt: skip
    assert more.exit_code == 0, more.output
    config = json.loads((out / "config.json").read_text())
    assert len(config["epochs"]) == 3 and config["training"]["patience"] == 3
    assert "already reached" not in more.stderr and "early stopping" not in more.stderr


def test_a_run_whose_bleu_stays_at_zero_while_its_loss_falls_is_not_stopped_early(
    tmp_path, corpora
):
    out = tmp_path / "m"  # random word pairs: nothing a reference shares, only a loss to lower
    done = train(corpora["fr_en"], "--out", out, "--patience", "1", "--epochs", "3", *TINY)
    assert done.exit_code == 0 and "early stopping" not in done.stderr, done.output
    epochs = json.loads((out / "config.json").read_text())["epochs"]
    assert len(epochs) == 3 and all(e["valid_bleu"] < 1 for e in epochs)  # BLEU is noise here
    assert epochs[2]["valid_loss"] < epochs[1]["valid_loss"] < epochs[0]["valid_loss"]
    assert all(e["saved"] for e in epochs) and epochs[2]["lr"] == epochs[0]["lr"]  # never halved


def test_a_run_whose_learning_rate_fell_to_its_floor_is_done(tmp_path, corpora):
    out = tmp_path / "m"
    # lr 2e-5, halved at every epoch that is not better (--lr-patience 1): 1e-5 is the floor
    first = train(corpora["toy"], "--out", out, "--lr", "2e-5", "--patience", "9", *TINY)
    assert first.exit_code == 0 and "learning rate fell below 1e-05" in first.stderr, first.output
    files = {f.name: f.read_bytes() for f in out.iterdir()}
    again = train("--resume", "--out", out, "--threads", "1", "--patience", "20")
    assert again.exit_code == 0 and "the learning rate fell below 1e-05" in again.stderr
    assert {f.name: f.read_bytes() for f in out.iterdir()} == files  # not one more epoch


def table_steps(stderr: str) -> list[int]:
    """The step of each row of the validation table a run ends with."""
    rows = [line.split("│")[1:-1] for line in stderr.splitlines() if line.startswith("│")]
    return [int(cells[1].strip().replace(",", "")) for cells in rows]


def test_a_resumed_run_ends_with_the_table_of_all_its_validations(tmp_path, corpora):
    out = tmp_path / "m"
    assert train(corpora["toy"], "--out", out, "--max-steps", "3", *TINY).exit_code == 0
    resumed = train("--resume", "--out", out, "--max-steps", "6", "--threads", "1")
    assert resumed.exit_code == 0, resumed.output
    stored = [row["step"] for row in json.loads((out / "config.json").read_text())["epochs"]]
    assert stored[0] == 3 and stored[-1] == 6  # the first session's validation, and this one's
    assert table_steps(resumed.stderr) == stored


def test_a_resumed_run_already_at_its_limit_trains_nothing_and_says_so(tmp_path, corpora):
    out = tmp_path / "m"
    first = train(corpora["toy"], "--out", out, "--epochs", "1", *TINY)
    assert first.exit_code == 0 and "(trained 1 epoch)" in first.stderr, first.output
    files = {f.name: f.read_bytes() for f in out.iterdir()}
    steps = json.loads((out / "config.json").read_text())["steps"]
    for limit, said in [
        (
            ("--epochs", "1"),
            "--epochs 1 already reached (1 epoch trained; a higher --epochs goes on)",
        ),
        (
            ("--max-steps", "2"),
            f"--max-steps 2 already reached (the run is at step {steps}; a higher",
        ),
        (("--max-steps", "200"), "--epochs 1 already reached (1 epoch trained; a higher --epochs"),
    ]:
        again = train("--resume", "--out", out, *limit, "--threads", "1")
        assert again.exit_code == 0, again.output
        assert said in again.stderr and "model written" not in again.stderr
        assert {f.name: f.read_bytes() for f in out.iterdir()} == files  # not touched
    two = s2a("train", "--resume", "--out", str(out), "--epochs", "1", "--nproc", "2")
    assert two.returncode == 0 and "launching" not in two.stderr.decode()  # no worker started
    assert two.stderr.decode().count("already reached") == 1
    assert {f.name: f.read_bytes() for f in out.iterdir()} == files


def test_under_a_torchrun_of_the_user_s_only_rank_0_says_the_limit_is_reached(
    tmp_path, corpora, monkeypatch
):
    out = tmp_path / "m"
    assert train(corpora["toy"], "--out", out, "--epochs", "1", *TINY).exit_code == 0
    monkeypatch.setenv("WORLD_SIZE", "2")
    for rank, lines in (("0", 1), ("1", 0)):
        monkeypatch.setenv("RANK", rank)
        again = train("--resume", "--out", out, "--epochs", "1", "--threads", "1")
        assert again.exit_code == 0 and again.stderr.count("already reached") == lines, rank


def _run_started_in(here: Path, monkeypatch) -> Path:
    """A run trained from `here` on corpus.tsv and valid.tsv given by relative paths."""
    here.mkdir()
    write_tsv(here / "corpus.tsv", toy_pairs(200, seed=5))
    write_tsv(here / "valid.tsv", toy_pairs(20, seed=6))
    monkeypatch.chdir(here)
    started = train("corpus.tsv", "--valid", "valid.tsv", "--out", "m", "--max-steps", "1", *TINY)
    assert started.exit_code == 0, started.output
    return here / "m"


def test_resume_works_from_any_directory_and_knows_its_files_however_they_are_named(
    tmp_path, monkeypatch
):
    out = _run_started_in(tmp_path / "r", monkeypatch)
    monkeypatch.chdir(tmp_path)
    resumed = train("--resume", "--out", "r/m", "--max-steps", "2", "--threads", "1")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads((out / "config.json").read_text())["steps"] == 2
    again = train("r/corpus.tsv", "--valid", "r/../r/valid.tsv", "--resume", "--out", "r/m",
                  "--max-steps", "3", "--threads", "1")  # fmt: skip
    assert again.exit_code == 0, again.output  # the same files, named from here
    write_tsv(tmp_path / "other.tsv", toy_pairs(200, seed=5))
    other = train("other.tsv", "--resume", "--out", "r/m")
    assert other.exit_code == 2
    said = "CORPUS other.tsv contradicts the run stored in the model directory"
    assert f"{said} ({tmp_path / 'r' / 'corpus.tsv'})" in other.stderr  # plain paths, no reprs


def test_a_run_stored_with_relative_paths_resumes_from_its_own_directory(tmp_path, monkeypatch):
    out = _run_started_in(tmp_path / "r", monkeypatch)
    config = json.loads((out / "config.json").read_text())
    for spec in config["data"]["corpora"] + config["data"]["valid"]:  # as older s2a wrote them
        spec["path"] = Path(spec["path"]).name
    (out / "config.json").write_text(json.dumps(config))
    monkeypatch.chdir(tmp_path)
    elsewhere = train("--resume", "--out", "r/m", "--max-steps", "2")
    assert elsewhere.exit_code == 2 and elsewhere.stderr.count("\n") == 1
    assert f"corpus.tsv: no such file (looked for {tmp_path / 'corpus.tsv'})" in elsewhere.stderr
    assert "resume from there" in elsewhere.stderr
    monkeypatch.chdir(tmp_path / "r")
    resumed = train("--resume", "--out", "m", "--max-steps", "2", "--threads", "1")
    assert resumed.exit_code == 0, resumed.output
    stored = json.loads((out / "config.json").read_text())["data"]
    paths = [c["path"] for c in stored["corpora"] + stored["valid"]]
    here = tmp_path / "r"  # absolute from now on: the next --resume works from anywhere
    assert paths == [str(here / "corpus.tsv"), str(here / "valid.tsv")]


def test_a_moved_project_resumes_with_its_corpora_given_again(tmp_path, monkeypatch):
    _run_started_in(tmp_path / "r", monkeypatch)
    (tmp_path / "r").rename(tmp_path / "moved")  # the project moved, or went to another machine
    monkeypatch.chdir(tmp_path / "moved")
    gone = train("--resume", "--out", "m", "--max-steps", "2")
    assert gone.exit_code == 2 and "if it moved, give it again" in gone.stderr
    resumed = train("corpus.tsv", "--valid", "valid.tsv", "--resume", "--out", "m",
                    "--max-steps", "2", "--threads", "1")  # fmt: skip
    assert resumed.exit_code == 0, resumed.output
    assert "is gone; the run goes on with corpus.tsv" in resumed.stderr
    stored = json.loads((tmp_path / "moved" / "m" / "config.json").read_text())
    assert stored["steps"] == 2
    assert stored["data"]["corpora"][0]["path"] == str(tmp_path / "moved" / "corpus.tsv")


def test_resume_warns_when_given_other_data_for_a_corpus_that_is_gone(tmp_path, monkeypatch):
    _run_started_in(tmp_path / "r", monkeypatch)
    corpus = tmp_path / "r" / "corpus.tsv"
    lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    corpus.unlink()
    other = tmp_path / "other.tsv"
    other.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    result = train(other, "--valid", "valid.tsv", "--resume", "--out", "m", "--max-steps", "2",
                   "--threads", "1")  # fmt: skip
    assert result.exit_code == 0, result.output
    said = f"warning: {other}: {len(lines) // 2:,} lines, where the run in m read {len(lines):,}"
    assert said in result.stderr


def test_init_starts_from_a_model_and_keeps_its_architecture(tmp_path, corpora, tiny_model):
    out = tmp_path / "tuned"
    result = train(corpora["toy"], "--init", tiny_model, "--out", out, "--max-steps", "2",
                   "--batch-tokens", "300", "--threads", "1")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (out / "spm.model").read_bytes() == (tiny_model / "spm.model").read_bytes()
    assert f"starting from the weights of {tiny_model}" in result.stderr
    card = CliRunner().invoke(app, ["inspect", "--model", str(out)], env={"COLUMNS": "300"})
    assert f"started from    another model's weights (--init {tiny_model}," in card.stdout
    clash = train(corpora["toy"], "--init", tiny_model, "--out", tmp_path / "x", "--hidden", "128")
    assert clash.exit_code == 2 and "--hidden contradicts --init" in clash.stderr


def test_init_from_a_run_on_the_same_corpora_says_how_to_read_on(tmp_path, corpora):
    half = ("--weights", "0.5", "--seed", "3", "--batch-tokens", "300", "--threads", "1")
    first = train(corpora["toy"], "--out", tmp_path / "lost", "--epochs", "2", *TINY, *half[:4])
    assert first.exit_code == 0, first.output
    again = train(corpora["toy"], "--init", tmp_path / "lost", "--out", tmp_path / "again",
                  "--max-steps", "1", *half)  # fmt: skip
    assert again.exit_code == 0, again.output
    said = "has read 2 epochs of these corpora in --seed 3's order: --skip-epochs 2 reads on"
    assert said in again.stderr
    told = train(corpora["toy"], "--init", tmp_path / "lost", "--out", tmp_path / "told",
                 "--max-steps", "1", "--skip-epochs", "2", *half)  # fmt: skip
    assert told.exit_code == 0 and "--skip-epochs" not in told.stderr
    other = train(
        corpora["toy"],
        "--init",
        tmp_path / "lost",
        "--out",
        tmp_path / "other",
        "--max-steps",
        "1",
        *half[:3],
        "4",
        *half[4:],
    )  # another seed: another order
    assert other.exit_code == 0 and "--skip-epochs" not in other.stderr


def test_init_with_input_feed_grows_a_model_that_first_translates_as_before(
    tmp_path, corpora, tiny_model
):
    import torch

    from seq2attn_cli.checkpoint import load_model
    from seq2attn_cli.decoding.search.batched import translate_ids

    out = tmp_path / "fed"
    result = train(corpora["toy"], "--init", tiny_model, "--input-feed", "--out", out, "--lr", "0",
                   "--max-steps", "1", "--batch-tokens", "300", "--threads", "1")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads((out / "config.json").read_text())["model"]["input_feed"] is True
    (plain, subwords, _), (fed, _, _) = load_model(tiny_model), load_model(out)
    weight = fed.decoder.rnn.weight_ih_l0  # (3 * hidden, embed + hidden): the feed's columns
    assert weight.shape[1] == plain.decoder.rnn.weight_ih_l0.shape[1] + fed.decoder.rnn.hidden_size
    ids = subwords.encode(["je mange pain", "il voit grand chat rouge"])
    with torch.no_grad():  # lr 0: the grown model's zero feed weights stay zero
        before, after = (translate_ids(m, ids, beam=3, batch_size=2) for m in (plain, fed))
    assert [h.indices for h in before] == [h.indices for h in after]
    for command in (["translate"], ["inspect", "--steps"], ["inspect", "--target", "I eat bread"]):
        shown = [
            CliRunner().invoke(app, [*command, "--model", str(m), "je mange pain"]).stdout
            for m in (tiny_model, out)
        ]  # int8, beam 5 and forced decoding alike
        assert shown[0] == shown[1] != ""
    card = CliRunner().invoke(app, ["inspect", "--model", str(out)], env={"COLUMNS": "200"})
    assert "input feeding" in card.stdout  # the model card tells the grown model apart
    clash = train(corpora["toy"], "--init", out, "--no-input-feed", "--out", tmp_path / "x")
    assert clash.exit_code == 2 and "--input-feed contradicts --init" in clash.stderr


def test_a_corpus_too_small_for_validation_is_refused(tmp_path):
    corpus = write_tsv(tmp_path / "small.tsv", toy_pairs(50))
    result = train(corpus, "--out", tmp_path / "m", *TINY)
    assert result.exit_code == 2
    assert "too few to hold out a validation set" in result.stderr


def test_a_vocabulary_too_large_for_the_corpus_is_warned_about(tmp_path, corpora):
    result = train(corpora["toy"], "--out", tmp_path / "m", "--max-steps", "1",
                   *TINY[:0], "--vocab-size", "8000", "--embed", "32", "--hidden", "64",
                   "--threads", "1", "--no-amp")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "--vocab-size 8,000 is too large for this corpus" in result.stderr


def test_training_says_when_it_cannot_tell_the_languages(tmp_path, corpora):
    told = train(corpora["fr_en"], "--out", tmp_path / "known", "--max-steps", "1", *TINY)
    assert told.exit_code == 0, told.output
    assert "languages, guessed from the text: French -> English\n" in told.stderr
    made_up = "zork blip frob quux wug dax fep toma rilo vek".split()
    pairs = list(zip(sentences(200, made_up, 3), sentences(200, made_up, 4), strict=True))
    corpus = write_tsv(tmp_path / "made-up.tsv", pairs)
    unsure = train(corpus, "--out", tmp_path / "unknown", "--max-steps", "1", *TINY)
    assert unsure.exit_code == 0, unsure.output
    assert "unknown (too few common words to tell: swapped columns go unchecked)" in unsure.stderr


def test_a_swap_is_caught_against_init_s_model_when_one_column_alone_is_sure(tmp_path, corpora):
    model = tmp_path / "fr-en"
    assert train(corpora["fr_en"], "--out", model, "--max-steps", "1", *TINY).exit_code == 0
    # French of words Italian shares (il, la, le, un, tu): too unsure to name (a user's corpus)
    unsure_fr = sentences(200, ["il", "la", "le", "un", "tu", "pas"], 5)
    en = sentences(200, EN, 6)
    swapped = write_tsv(tmp_path / "en_fr.tsv", list(zip(en, unsure_fr, strict=True)))
    result = train(swapped, "--init", model, "--out", tmp_path / "x", "--max-steps", "1")
    assert result.exit_code == 2
    assert (
        "column 1 looks English and column 2 unknown, the other way round from French -> "
        "English: give this corpus --src-col 2 --tgt-col 1" in result.stderr
    )
    right = write_tsv(tmp_path / "fr_en.tsv", list(zip(unsure_fr, en, strict=True)))
    told = train(right, "--init", model, "--out", tmp_path / "y", "--max-steps", "1")
    assert told.exit_code == 0, told.output
    assert (
        "languages, those of the model it continues (the text too unsure to tell): "
        "French -> English\n" in told.stderr
    )


def test_a_vocab_size_under_one_piece_a_character_is_one_line_in_s2a_s_words(tmp_path, corpora):
    out = tmp_path / "m"
    result = train(corpora["toy"], "--out", out, "--vocab-size", "8", *TINY[2:])
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert (
        "s2a: error: --vocab-size 8 is too small for these corpora: a piece for each of "
        "their characters and the special ones needs at least" in result.stderr
    )
    assert "character_coverage" not in result.stderr and not out.exists()
