"""Training with several processes through torch.distributed (gloo on CPU), as torchrun runs it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from faults_util import saved_step, start, wait_for_step

TINY = [
    "--embed",
    "32",
    "--hidden",
    "64",
    "--vocab-size",
    "60",
    "--valid-size",
    "20",
    "--batch-tokens",
    "300",
    "--lr",
    "5e-3",
    "--no-amp",
    "--threads",
    "1",
]


def s2a(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "seq2attn_cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def train_two(corpus, out, *extra: str) -> subprocess.CompletedProcess:
    """`s2a train --nproc 2` of a tiny model."""
    return s2a("train", str(corpus), "--out", str(out), "--nproc", "2", "--epochs", "2", *extra,
               *TINY)  # fmt: skip


def test_two_process_training_shards_batches_and_writes_one_model(tmp_path, toy_corpus):
    out = tmp_path / "ddp"
    result = train_two(toy_corpus, out, "--max-steps", "6")
    assert result.returncode == 0, result.stderr[-2000:]
    config = json.loads((out / "config.json").read_text())
    assert config["processes"] == 2 and config["steps"] == 6
    first, second = config["shards"]
    assert first["examples"] > 0 and second["examples"] > 0  # both ranks took part
    assert first["index_sum"] != second["index_sum"]  # on different batches
    # the run resumes under two processes too, counting steps from the start
    resumed = train_two(toy_corpus, out, "--resume", "--max-steps", "0")  # 0: no limit now
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "resumed at step 6" in resumed.stderr
    assert json.loads((out / "config.json").read_text())["steps"] > 6
    translated = s2a("translate", "--model", str(out), "je mange pain")
    assert translated.returncode == 0 and translated.stdout.count("\n") == 1


def test_a_one_process_run_resumes_on_two_at_an_odd_batch(tmp_path, toy_corpus):
    out = tmp_path / "grown"
    one = s2a("train", str(toy_corpus), "--out", str(out), "--epochs", "1", "--max-steps", "3",
              *TINY)  # fmt: skip
    assert one.returncode == 0, one.stderr[-2000:]
    # batch 3 of the epoch: two processes take batches 3 and 4, 5 and 6, ... to its end
    resumed = train_two(toy_corpus, out, "--resume", "--max-steps", "0")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "resumed at step 3" in resumed.stderr
    # one validation per epoch, and epoch 2 trained: the odd batch left over ends epoch 1
    # (it once stayed in epoch 1, validating the same weights until early stopping)
    validations = json.loads((out / "config.json").read_text())["epochs"]
    assert [v["epoch"] for v in validations] == [0.1667, 1, 2]  # the first: where it stopped
    assert 3 < validations[1]["step"] < validations[2]["step"]


def test_sigterm_to_two_processes_stops_both_at_one_step_and_saves_it(tmp_path, toy_corpus):
    out = tmp_path / "stopped"
    args = ["train", str(toy_corpus), "--out", str(out), "--nproc", "2", "--epochs", "50", *TINY]
    proc = start(*args, "--save-every", "2", stdin=subprocess.DEVNULL)
    wait_for_step(proc, out, 2, timeout=240)
    proc.send_signal(signal.SIGTERM)  # to torchrun's launcher, which passes it on to the ranks
    _, err = proc.communicate(timeout=120)
    err = err.decode()
    assert proc.returncode == 143, err[-2000:]
    assert "Traceback" not in err
    stopped = saved_step(out)  # rank 0 saved where both stopped, between checkpoints or not
    assert err.count(f"stopped by SIGTERM at step {stopped}; continue with --resume") == 1
    resumed = s2a(*args, "--resume", "--max-steps", str(stopped + 2))
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"resumed at step {stopped}," in resumed.stderr
    assert json.loads((out / "config.json").read_text())["steps"] == stopped + 2
