"""Several processes on one model directory: readers never see a half-written file, because
every write is a temporary file renamed into place."""

from __future__ import annotations

import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import torch
from conftest import toy_pairs, train_tiny
from faults_util import TINY, s2a, saved_step, start

from seq2attn_cli import checkpoint as ckpt
from seq2attn_cli.checkpoint import load_model

SENTENCES = [s for s, _ in toy_pairs(60, seed=11)]


def test_two_translations_on_one_model_at_once(tiny_model, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("".join(s + "\n" for s in SENTENCES), encoding="utf-8")
    with text.open("rb") as a, text.open("rb") as b:
        procs = [start("translate", "--model", str(tiny_model), "--beam", "1", stdin=f)
                 for f in (a, b)]  # fmt: skip
        results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err.decode() for _, err in results]
    (out_a, _), (out_b, _) = results
    assert out_a == out_b and out_a.count(b"\n") == len(SENTENCES)


def test_translate_while_train_resume_writes_the_same_directory(toy_corpus, tmp_path):
    # a run that would go on until stopped: resumed, it keeps writing into the directory
    model = train_tiny(tmp_path / "model", toy_corpus, epochs=1, patience=1000, min_lr=0.0)
    before = saved_step(model)
    trainer = start("train", str(toy_corpus), "--out", str(model), "--resume", "--epochs", "500",
                    "--save-every", "1", *TINY, stdin=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while saved_step(model) <= before:  # the resumed run is writing checkpoints
            assert trainer.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        stdin = "".join(s + "\n" for s in SENTENCES).encode()
        overlapped = 0
        for _ in range(2):
            step = saved_step(model)
            result = s2a("translate", "--model", str(model), "--beam", "1", stdin=stdin)
            assert result.returncode == 0, result.stderr.decode()
            assert result.stdout.count(b"\n") == len(SENTENCES)
            overlapped += trainer.poll() is None and saved_step(model) > step
        assert overlapped >= 1  # checkpoints were replaced while a translation was loading
    finally:
        trainer.send_signal(signal.SIGINT)
        _, err = trainer.communicate(timeout=60)
    assert trainer.returncode in (0, 130), err.decode()  # 0: it stopped early by itself
    load_model(model)  # and it is whole once the writer has gone


def test_a_reader_sees_the_old_file_or_the_new_one_never_a_mix(tiny_model, tmp_path):
    model = Path(shutil.copytree(tiny_model, tmp_path / "model"))
    net, _, _ = load_model(model)
    original = round(float(net.bridge.bias[0].detach()), 3)
    versions = [0.25, -0.5]  # two recognisable versions of the weights
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        i = 0
        while not stop.is_set():
            with torch.no_grad():
                net.bridge.bias.fill_(versions[i % 2])
            try:
                ckpt.save_parameters(model / "model.safetensors", net)
                ckpt.write_json(model / "config.json", ckpt.read_json(model / "config.json"))
            except BaseException as error:  # pragma: no cover - reported below
                errors.append(error)
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        seen = set()
        for _ in range(40):
            loaded, _, _ = load_model(model)  # raises ModelError on any torn file
            seen.add(round(float(loaded.bridge.bias[0].detach()), 3))
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not errors, errors
    assert seen <= {original, *versions}
    assert not list(model.glob(".*.tmp"))
