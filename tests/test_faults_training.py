"""Faults during training: kill -9, Ctrl-C, no room to write, and losses that explode.

Whatever happens, the model directory stays loadable and `--resume` carries on from the
last checkpoint; what can be checked before training is reported before training.
"""

from __future__ import annotations

import dataclasses
import errno
import itertools
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest
import torch
import typer
from conftest import toy_pairs, train_tiny, write_tsv
from faults_util import (
    TINY,
    Moments,
    error_line,
    s2a,
    saved_step,
    start,
    steps,
    wait_for_step,
)
from typer.testing import CliRunner

from seq2attn_cli import checkpoint as ckpt
from seq2attn_cli.cli.app import app
from seq2attn_cli.config import CorpusSpec, ModelConfig, TrainConfig, from_dict
from seq2attn_cli.decoding.translator import Translator
from seq2attn_cli.model.seq2seq import Seq2Seq
from seq2attn_cli.training import loop as training
from seq2attn_cli.training import outdir

runner = CliRunner()
OPTIONS = dict(embed=32, hidden=64, layers=1, cell="gru", attention="general", dropout=0.0)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """3,000 toy pairs: about 50 batches an epoch, so a run lasts long enough to interrupt."""
    return write_tsv(tmp_path_factory.mktemp("corpus") / "toy3k.tsv", toy_pairs(3000, seed=3))


def run(out: Path, corpus: Path, events: list | None = None, **overrides) -> dict:
    """Train through the library (like conftest.train_tiny), recording every report event."""
    cfg = dict(vocab_size=60, valid_size=20, batch_tokens=300, epochs=1, lr=5e-3, amp=False)
    resume = overrides.pop("resume", False)
    cfg.update(overrides)
    record = (lambda event, info: events.append((event, info))) if events is not None else None
    state = training.train(
        corpora=[CorpusSpec(path=str(corpus))], out=out, model_options=OPTIONS,
        cfg=TrainConfig(**cfg), resume=resume, device=torch.device("cpu"),
        report=record or (lambda event, info: None),
    )  # fmt: skip
    return dataclasses.asdict(state)


def resume_state(model: Path) -> dict:
    """Load the resume checkpoint into a fresh model and optimizer: proves it is intact."""
    config = json.loads((model / "config.json").read_text())
    net = Seq2Seq(from_dict(ModelConfig, config["model"]))
    return ckpt.load_resume(
        model / "checkpoint.safetensors", net, torch.optim.Adam(net.parameters())
    )


def translates(model: Path) -> None:
    """The model directory loads and translates, in a separate process."""
    result = s2a("translate", "--model", str(model), "--beam", "1", "je mange pain")
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.count(b"\n") == 1


# ---- kill -9 and Ctrl-C ---------------------------------------------------------------------


def test_kill_9_at_any_moment_leaves_a_loadable_model_that_resumes(tmp_path, corpus):
    out = tmp_path / "model"
    args = ["train", str(corpus), "--out", str(out), *TINY, "--save-every", "2", "--epochs", "50"]
    # 1. killed as soon as the directory exists, before the first step
    proc = start(*args, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    while not (out / "config.json").exists():  # config.json is the last file written at start
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read().decode()
        time.sleep(0.02)
    proc.kill()  # SIGKILL: no handler runs
    proc.wait(timeout=30)
    first = saved_step(out)
    Translator.load(out)
    # 2. resumed, then killed mid-run, at a moment that is not a checkpoint boundary
    proc = start(*args, "--resume", stdin=subprocess.DEVNULL)
    wait_for_step(proc, out, first + 3)
    time.sleep(0.13)
    proc.kill()
    proc.wait(timeout=30)
    last = saved_step(out)
    assert last > first
    Translator.load(out)
    # 3. resumed again: it carries on from the last checkpoint, not from the start
    result = s2a(*args, "--resume", "--max-steps", str(last + 3))
    assert result.returncode == 0, result.stderr.decode()
    assert f"resumed at step {last}," in result.stderr.decode()
    assert steps(out) == last + 3
    translates(out)


# every file train writes into a model directory, and which of its saves is killed: the
# second where there is one, so that a previous version must survive
SAVES = {"spm.model": 1, "model.safetensors": 2, "checkpoint.safetensors": 2, "config.json": 2,
         "history.json": 2}  # fmt: skip


def test_kill_9_at_any_byte_of_any_save_leaves_whole_files_that_resume(tmp_path):
    corpus = write_tsv(tmp_path / "toy.tsv", toy_pairs(400, seed=5))
    fresh = ["train", str(corpus), *TINY, "--save-every", "2", "--epochs", "2", "--out"]
    with Moments() as server:  # forks of one process that imported torch: a run is ~1 s
        for (name, nth), share in itertools.product(SAVES.items(), (0, 0.5, 1)):
            out = tmp_path / f"{name}-{share}"
            got = server.at([*fresh, str(out)], "", 120, 0, tmp_path / "err", (name, nth, share))
            assert got["rc"] == -signal.SIGKILL, got["err"]  # killed in that very write
            assert list(out.glob(f".{name}.*.tmp")), got["err"]  # which it left behind
            if (out / "config.json").exists():  # every file whole: the new or the old one
                for json_file in out.glob("*.json"):
                    ckpt.read_json(json_file)
                assert resume_state(out)["step"] == saved_step(out)
                Translator.load(out)
                argv = ["train", *TINY, "--resume", "--epochs", "2", "--out", str(out)]
            else:  # killed before its first checkpoint was whole: start again, there
                argv = [*fresh, str(out)]
            again = server.at(argv, "", 120, 0, tmp_path / "err")
            assert again["rc"] == 0, again["err"]
            assert "removed what a killed save left" in again["err"]
            assert not list(out.glob(".*.tmp"))
            Translator.load(out)


def test_what_resume_changed_is_stored_before_a_kill_9(tmp_path, corpus):
    out = tmp_path / "model"
    first = [
        "train",
        str(corpus),
        "--out",
        str(out),
        *TINY,
        "--save-every",
        "2",
        "--max-steps",
        "2",
    ]
    assert s2a(*first).returncode == 0
    again = ["--resume", "--epochs", "50", "--max-steps", "0", "--patience", "9"]
    proc = start("train", "--out", str(out), *TINY, "--save-every", "2", *again,
                 stdin=subprocess.DEVNULL)  # fmt: skip
    wait_for_step(proc, out, 4)
    proc.kill()  # kill -9: no validation, no end of run wrote config.json
    proc.communicate(timeout=60)
    stored = ckpt.read_json(out / "config.json")["training"]
    assert (stored["patience"], stored["epochs"], stored["max_steps"]) == (9, 50, 0)


def test_ctrl_c_during_training_saves_and_exits_130(tmp_path, corpus):
    out = tmp_path / "model"
    proc = start("train", str(corpus), "--out", str(out), *TINY, "--save-every", "4",
                 "--epochs", "50", stdin=subprocess.DEVNULL)  # fmt: skip
    waited = wait_for_step(proc, out, 4)
    time.sleep(0.1)  # a few steps on
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    err = err.decode()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert resume_state(out)["step"] == saved_step(out) >= waited
    if "continue with --resume" in err:  # stopped in a step, not in validation: saved there
        assert f"interrupted at step {saved_step(out)};" in err


def test_sigterm_during_training_stops_at_a_step_saves_it_and_resumes_from_it(tmp_path, corpus):
    out = tmp_path / "model"
    args = ["train", str(corpus), "--out", str(out), *TINY, "--epochs", "50"]
    proc = start(*args, "--save-every", "4", stdin=subprocess.DEVNULL)
    wait_for_step(proc, out, 4)  # ~50 batches an epoch: far from validation
    proc.send_signal(signal.SIGTERM)  # as a scheduler asks before it kills
    _, err = proc.communicate(timeout=60)
    err = err.decode()
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    stopped = saved_step(out)  # saved at the step it stopped at, not at the last multiple of 4
    assert f"s2a: stopped by SIGTERM at step {stopped}; continue with --resume" in err
    assert resume_state(out)["step"] == stopped
    result = s2a(*args, "--resume", "--max-steps", str(stopped + 3))
    assert result.returncode == 0, result.stderr.decode()
    assert f"resumed at step {stopped}," in result.stderr.decode()
    assert steps(out) == stopped + 3


def test_a_sigterm_while_validating_stops_once_the_epoch_is_saved(tmp_path, corpus, monkeypatch):
    validate = training.validate

    def validate_and_get_sigterm(*args):
        os.kill(os.getpid(), signal.SIGTERM)  # as if it came while the model was validated
        return validate(*args)

    monkeypatch.setattr(training, "validate", validate_and_get_sigterm)
    with pytest.raises(training.Terminated, match="stopped by SIGTERM at step"):
        run(tmp_path / "model", corpus, epochs=3)
    saved = resume_state(tmp_path / "model")
    assert (saved["epoch"], saved["position"]) == (1, 0)  # epoch 1, validated and saved
    assert [e["step"] for e in saved["epochs"]] == [saved["step"]]
    monkeypatch.setattr(training, "validate", validate)
    resumed = run(tmp_path / "model", corpus, epochs=2, resume=True)
    assert [e["epoch"] for e in resumed["epochs"]] == [1, 2]  # goes on with epoch 2


def test_an_epoch_resumed_at_its_last_step_records_no_speed_rather_than_zero(
    tmp_path, corpus, monkeypatch
):
    whole = run(tmp_path / "whole", corpus)["epochs"][0]["step"]  # steps in one epoch
    why_stop = training._why_stop

    def sigterm_at_the_last_step(cfg, step, **asks):
        return training.SIGTERM_STOP if step == whole else why_stop(cfg, step, **asks)

    monkeypatch.setattr(training, "_why_stop", sigterm_at_the_last_step)
    with pytest.raises(training.Terminated):
        run(tmp_path / "model", corpus)
    monkeypatch.setattr(training, "_why_stop", why_stop)
    events: list = []
    resumed = run(tmp_path / "model", corpus, events, resume=True)
    assert [e["step"] for e in resumed["epochs"]] == [whole]  # validated, with no step run
    assert resumed["epochs"][0]["tok_per_s"] is None
    assert [info["tok_per_s"] for event, info in events if event == "validated"] == [None]


STOPPED = {signal.SIGINT: 130, signal.SIGTERM: 143}


def phase(seen: str, err: str) -> str:
    """What a run was doing when the signal came, as far as its stderr tells."""
    last = ([""] + seen.splitlines())[-1]
    if not last:
        return "starting (command line, imports)"
    if last.startswith("training SentencePiece"):
        return "reading corpora, training SentencePiece"
    if last.startswith("resumed at"):
        return "resumed, before its first step"
    if last.startswith("epoch "):  # the epoch's plan; or its validation if it printed next
        later = err[len(seen) :]
        return "validating, saving" if "validation after" in later else "steps, checkpoints"
    if last.startswith(("validation", " ", "│", "┃", "┏", "┡", "└")):
        return "epoch end: history, next plan"
    return "encoding corpora, building, first save or loading"


def stopped_cleanly(got: dict, signum: int, out: Path) -> str:
    """Assert one moment ended as a signal must end training; return the phase it hit."""
    err, rc = got["err"], got["rc"]
    assert "Traceback" not in err and "Error" not in err, err
    if rc == -signum:  # killed by the default disposition: only before s2a train began
        assert got["seen"] == "", err
    elif rc != 0:  # 0: it finished first
        assert rc == STOPPED[signum], err
        lines = [line for line in err[len(got["seen"]) :].splitlines() if line.startswith("s2a")]
        assert len(lines) == 1, err  # one line says why it stopped
        if "nothing to resume" in lines[0]:
            assert not (out / "config.json").exists(), err
        elif "continue with --resume" not in lines[0]:  # a bare "interrupted": it came
            done = "model written to" in got["seen"]  # before s2a said anything, or as
            assert got["seen"] == "" or done, err  # the process exits after the run
    if (out / "config.json").exists():  # the model loads, and the checkpoint is whole
        assert resume_state(out)["step"] == saved_step(out)
        Translator.load(out)
    if rc == 0 or "model written to" in got["seen"]:
        return "finished first, or as it exits"
    return phase(got["seen"], err)


# (what shows on stderr, then seconds after it): from the start to the end of a fresh run of 3
# epochs, 7 steps each (a save every 2), then of one that never ends by itself, resumed again
# and again: each moment stops it where the next resumes it. Landmarks, not times from the
# start: on a loaded machine every phase takes longer.
FRESH = [("", (0, 0.05)), ("training SentencePiece", (0, 0.02)),
         ("vocabulary:", (0, 0.05, 0.1, 0.2)),  # encoding corpora, building, the first save
         ("epoch 1/3", (0, 0.02, 0.05, 0.08, 0.12, 0.16, 0.2, 0.25)),  # steps, saves, validation
         ("validation after epoch 1", (0, 0.01, 0.03)), ("epoch 3/3", (0, 0.05, 0.1)),
         ("done (", (0, 0.01))]  # fmt: skip
RESUMED = [("", (0, 0.1, 0.2)), ("vocabulary:", (0, 0.05)), ("resumed at", (0, 0.01, 0.03)),
           ("/1000: ", (0, 0.02, 0.05, 0.08, 0.12, 0.16, 0.2, 0.25)),
           ("validation after", (0, 0.01, 0.02, 0.04, 0.06, 0.1, 0.15, 0.2))]  # fmt: skip


def test_ctrl_c_or_sigterm_at_any_moment_of_training_leaves_a_resumable_run(tmp_path):
    corpus = write_tsv(tmp_path / "toy.tsv", toy_pairs(400, seed=5))  # 7 batches an epoch
    fresh = ["train", str(corpus), *TINY, "--save-every", "2", "--epochs", "3", "--out"]
    again = ["train", *TINY, "--save-every", "2", "--resume", "--epochs", "1000", "--out"]
    resumed = train_tiny(tmp_path / "resumed", corpus, epochs=1, patience=1000, min_lr=0.0)
    landmarks = [(after, delay) for after, delays in FRESH for delay in delays]
    runs = [(fresh, tmp_path / f"fresh{i}", a, d) for i, (a, d) in enumerate(landmarks)]
    runs += [(again, resumed, a, d) for a, delays in RESUMED for d in delays]
    moments: dict[tuple[str, str], int] = {}
    with Moments() as server:  # each run a fork of one process that imported torch
        for i, (argv, out, after, delay) in enumerate(runs):
            signum = (signal.SIGINT, signal.SIGTERM)[i % 2]
            got = server.at([*argv, str(out)], after, delay, signum, tmp_path / "err")
            where = stopped_cleanly(got, signum, out)
            moments[where, signum.name] = moments.get((where, signum.name), 0) + 1
    step = saved_step(resumed)
    result = s2a("train", "--out", str(resumed), "--resume", "--max-steps", str(step + 2))
    assert result.returncode == 0, result.stderr.decode()
    assert f"resumed at step {step}," in result.stderr.decode()
    print("\n".join(f"{n:3} {name:8} {where}" for (where, name), n in sorted(moments.items())))
    assert len(runs) >= 40 and {"steps, checkpoints", "validating, saving"} <= {
        where for where, _ in moments
    }, moments


def processes_on(out: Path) -> list[str]:
    """The command lines of s2a processes at work on `out` (once s2a has exited: orphans)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:  # not a process, or gone meanwhile
            continue
        if "seq2attn_cli" in " ".join(argv) and str(out) in argv:
            found.append(" ".join(argv))
    return found


# how a signal comes: (signal, to the whole process group, times), 0.2 s apart
SENT = {"ctrl-c": (signal.SIGINT, True, 1), "ctrl-c thrice": (signal.SIGINT, True, 3),
        "sigterm": (signal.SIGTERM, False, 1)}  # fmt: skip


def signal_two_ranks(out: Path, corpus: Path, moment: str, how: str) -> dict:
    """`s2a train --nproc 2`, signalled at a moment; its exit code, stderr then and at the end."""
    args = ["train", str(corpus), "--out", str(out), "--nproc", "2", *TINY, "--epochs", "50",
            "--save-every", "2"]  # fmt: skip
    log = out.parent / f"{out.name}.err"
    with log.open("wb") as err:  # its own process group: Ctrl-C in a terminal reaches it all
        proc = start(*args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                     start_new_session=True)  # fmt: skip
    try:
        if moment == "starting":  # torchrun starts the workers, which import torch, read...
            while "launching 2" not in log.read_text():
                assert proc.poll() is None, log.read_text()
                time.sleep(0.01)
            time.sleep(1.0)
        else:  # both ranks train, stopping at a checkpoint or between two
            wait_for_step(proc, out, 2, timeout=240)
        seen = log.read_text()
        signum, to_all, times = SENT[how]
        for _ in range(times):
            if to_all and proc.poll() is None:
                os.killpg(proc.pid, signum)
            elif proc.poll() is None:
                proc.send_signal(signum)
            time.sleep(0.2)
        proc.wait(timeout=120)
    finally:
        proc.kill()
    return {"rc": proc.returncode, "seen": seen, "err": log.read_text()}


@pytest.mark.parametrize(
    "moment, how",
    [("starting", "ctrl-c"), ("starting", "sigterm"), ("training", "ctrl-c"),
     ("training", "sigterm"), ("training", "ctrl-c thrice")],
)  # fmt: skip
def test_ctrl_c_or_sigterm_stops_every_rank_of_nproc_2_with_one_line_and_no_orphan(
    tmp_path, corpus, moment, how
):
    # Ctrl-C reaches the launcher and both workers; `kill` (a scheduler's SIGTERM), the launcher.
    # An impatient Ctrl-C again and again must not end the launcher before the workers
    out = tmp_path / "model"
    got = signal_two_ranks(out, corpus, moment, how)
    err = got["err"]
    assert got["rc"] == STOPPED[SENT[how][0]], err
    assert "Traceback" not in err and not re.search(r"^[IWEF]\d{4} ", err, re.M), err  # torch logs
    lines = [line for line in err.splitlines() if line.startswith("s2a")]
    assert len(lines) == 1, err  # one line for all three processes
    assert processes_on(out) == []  # no worker outlives the launcher
    if moment == "training":  # every rank stopped at one step, saved whole: resume from it
        assert lines[0].endswith(f" at step {saved_step(out)}; continue with --resume"), err
    if (out / "config.json").exists():
        assert resume_state(out)["step"] == saved_step(out)
        Translator.load(out)


@pytest.fixture
def known_handlers():
    """SIGINT and SIGTERM as a terminal gives them (a suite run with `&` ignores SIGINT)."""
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    for signum, handler in before.items():
        signal.signal(signum, handler)


@pytest.mark.parametrize("rank", [0, 1])
def test_a_rank_that_stopped_stays_deaf_to_signals_until_it_exits(
    known_handlers, monkeypatch, tmp_path, rank
):
    # CI, stop 49 twice: rank 1 went deaf inside the training block, whose exit put the
    # raising handlers back; a third Ctrl-C then raised in torch's exit hooks, a traceback
    from seq2attn_cli.cli import train as train_cli
    from seq2attn_cli.errors import Interrupted
    from seq2attn_cli.training import distributed

    def stopped(**_):
        raise Interrupted("interrupted at step 4; continue with --resume")

    monkeypatch.setattr(training, "train", stopped)
    monkeypatch.setattr(distributed, "rank", lambda: rank)
    with pytest.raises(typer.Exit if rank else Interrupted):
        train_cli._train([], [], out=tmp_path / "model", options={}, cfg=TrainConfig(),
                         resume=False, init=None, device="cpu", threads=0)  # fmt: skip
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN


def test_a_training_block_gives_back_the_handlers_it_found_unless_one_was_set_inside(
    known_handlers,
):
    from seq2attn_cli.cli.common import deaf_to_signals
    from seq2attn_cli.training.signals import stop_signals

    with stop_signals():
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    with stop_signals():
        deaf_to_signals()
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


# ---- no room to write ----------------------------------------------------------------------


@pytest.mark.parametrize("where", ["under-a-file", "is-a-file", "proc"])
def test_unwritable_out_is_reported_before_training(tmp_path, corpus, where):
    (tmp_path / "file").write_text("not a directory")
    out = {
        "under-a-file": tmp_path / "file" / "model",  # mkdir fails, even for root
        "is-a-file": tmp_path / "file",
        "proc": Path("/proc/s2a-test/model"),  # a file system that takes no directories
    }[where]
    args = ["train", str(corpus), "--out", str(out), *TINY]
    if where == "under-a-file":  # one as a real process, the others in this one (faster)
        result = s2a(*args)
    else:
        got = runner.invoke(app, args)
        result = subprocess.CompletedProcess(args, got.exit_code, b"", got.stderr.encode())
    said = "a file, not a directory" if where == "is-a-file" else "cannot write there"
    error_line(result, str(out), said)
    assert "pairs read" not in result.stderr.decode()  # refused before even reading the corpus


def test_an_out_holding_files_of_its_own_is_refused_and_left_as_it_was(tmp_path, corpus):
    out = tmp_path / "project"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "README.md").write_text("mine too")  # a name a model card could take one day
    got = runner.invoke(app, ["train", str(corpus), "--out", str(out), *TINY])
    result = subprocess.CompletedProcess([], got.exit_code, b"", got.stderr.encode())
    error_line(result, str(out), "holds files of its own (README.md, notes.txt)")
    assert "pairs read" not in got.stderr  # refused before even reading the corpus
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "notes.txt"]


def test_an_out_with_what_a_killed_first_run_left_trains(tmp_path, corpus):
    out = tmp_path / "m"
    out.mkdir()
    (out / ckpt.SPM).write_bytes(b"left by a run killed before its first config.json")
    (out / f".{ckpt.PARAMETERS}.0123456789ab.tmp").write_bytes(b"a killed save")
    got = runner.invoke(app, ["train", str(corpus), "--out", str(out), *TINY])
    assert got.exit_code == 0, got.stderr
    assert (out / ckpt.CONFIG).exists() and not list(out.glob(".*.tmp"))


def test_a_full_disk_is_reported_before_training(tmp_path, corpus, monkeypatch):
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage._replace(free=50_000))
    result = runner.invoke(app, ["train", str(corpus), "--out", str(tmp_path / "m"), *TINY])
    assert result.exit_code == 2, result.output
    assert "MB free, training needs about" in result.stderr and "epoch 1" not in result.stderr
    assert "Traceback" not in result.output


def test_no_space_on_the_first_write_is_reported_before_training(tmp_path, corpus, monkeypatch):
    def full(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(ckpt, "write_atomic", full)
    monkeypatch.setattr(outdir, "_write_test", lambda out: full(out, b""))
    result = runner.invoke(app, ["train", str(corpus), "--out", str(tmp_path / "m"), *TINY])
    assert result.exit_code == 2
    assert "cannot write there (No space left on device)" in result.stderr
    assert "epoch 1" not in result.stderr


@pytest.mark.parametrize("nth", [1, 4])
def test_disk_full_mid_training_keeps_the_last_checkpoint(tmp_path, corpus, monkeypatch, nth):
    out = tmp_path / "model"
    run(out, corpus, save_every=3, max_steps=6)  # checkpoints at steps 3 and 6
    before = {
        name: (out / name).read_bytes()
        for name in ("checkpoint.safetensors", "model.safetensors", "config.json")
    }
    calls = []
    real_fsync = os.fsync

    def fsync(fd):  # the disk fills while a file is half written, on the nth file written
        if stat.S_ISREG(os.fstat(fd).st_mode):  # a folder's fsync (after a rename) is no write
            calls.append(fd)
        if len(calls) == nth and stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    args = ["train", str(corpus), "--out", str(out), "--resume", "--epochs", "1", "--max-steps",
            "0", "--save-every", "3", "--device", "cpu", "--threads", "1"]  # fmt: skip
    result = runner.invoke(app, args)
    monkeypatch.undo()
    assert result.exit_code == 2, result.output
    assert "No space left on device" in result.stderr and "Traceback" not in result.output
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]  # cleaned up
    assert resume_state(out)["step"] >= 6  # the checkpoint is whole (older or newer)
    if nth == 1:  # the very first write: nothing was replaced
        assert all((out / name).read_bytes() == data for name, data in before.items())
    Translator.load(out)
    counters = run(out, corpus, resume=True, epochs=1)  # and the run goes on
    assert counters["epoch"] == 1 and counters["step"] > 6


# ---- NaN and inf ---------------------------------------------------------------------------


def poison(monkeypatch, bad_calls: set[int] | None, *, gradient: bool = False) -> None:
    """Make training's loss NaN (or finite with a NaN gradient) on the given calls (None: all)."""
    real = training.label_smoothed_loss
    calls = []

    def loss(logits, target, smoothing):
        value = real(logits, target, smoothing)
        if not torch.is_grad_enabled():  # validation
            return value
        calls.append(1)
        if bad_calls is None or len(calls) in bad_calls:
            if gradient:  # sqrt'(0) is inf, times 0 is NaN: a finite loss with NaN gradients
                return value + (logits.float().sum() * 0).sqrt()
            return value * float("nan")
        return value

    monkeypatch.setattr(training, "label_smoothed_loss", loss)


@pytest.mark.parametrize("gradient", [False, True], ids=["nan-loss", "nan-gradient"])
def test_a_non_finite_step_is_skipped_and_reported(tmp_path, toy_corpus, monkeypatch, gradient):
    poison(monkeypatch, {3, 5}, gradient=gradient)
    events: list = []
    counters = run(tmp_path / "model", toy_corpus, events, epochs=2)
    nan = [info for event, info in events if event == "nan"]
    assert [info["count"] for info in nan] == [1, 2]
    assert counters["nan_steps"] == 2
    batches = sum(info["batches"] for event, info in events if event == "epoch")
    assert counters["step"] == batches - 2  # every other step was taken
    model, _, _ = ckpt.load_model(tmp_path / "model")  # refuses NaN weights: they are clean
    assert all(torch.isfinite(p).all() for p in model.parameters())
    assert counters["epochs"][-1]["valid_loss"] < counters["epochs"][0]["valid_loss"]


def test_losses_that_keep_exploding_stop_training_with_a_clear_message(
    tmp_path, toy_corpus, monkeypatch
):
    poison(monkeypatch, None)
    out = tmp_path / "model"
    result = runner.invoke(
        app, ["train", str(toy_corpus), "--out", str(out), *TINY, "--epochs", "3"]
    )
    assert result.exit_code == 2
    assert "s2a: error: loss was NaN or infinite in more than 20 steps; try a lower --lr" in (
        result.stderr
    )
    assert result.stderr.count("loss is NaN or infinite; update skipped") == 21
    assert "Traceback" not in result.output
    Translator.load(out)  # the directory still loads: the weights were never touched
    assert resume_state(out)["step"] == 0


# ---- resuming from the wrong place ---------------------------------------------------------


def test_resume_on_a_changed_corpus_goes_on(tmp_path, toy_corpus):
    out = tmp_path / "model"
    run(out, toy_corpus, max_steps=3, save_every=3)
    swapped = write_tsv(tmp_path / "swapped.tsv", [(t, s) for s, t in toy_pairs(300, seed=9)])
    # target pieces it never had (and columns the other way round, on purpose)
    counters = run(out, swapped, resume=True, epochs=2, check_columns=False)
    assert counters["step"] > 3 and counters["epoch"] == 2
    Translator.load(out)


def test_resume_where_there_is_no_model_is_one_line(tmp_path, toy_corpus):
    (tmp_path / "empty").mkdir()
    args = ["train", str(toy_corpus), "--out", str(tmp_path / "empty"), "--resume"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert f"--out {tmp_path / 'empty'}: not a model directory (no config.json)" in result.stderr
    result = runner.invoke(app, [*args[:3], str(tmp_path / "empty" / "x.json"), "--resume"])
    assert result.exit_code == 2 and "no such directory" in result.stderr  # as --model says it
    init = runner.invoke(app, ["train", str(toy_corpus), "--init", str(tmp_path / "nosuch")])
    assert init.exit_code == 2 and f"--init {tmp_path / 'nosuch'}: no such directory" in (
        init.stderr
    )
