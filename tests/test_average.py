"""scripts/average.py: model soups from model directories and a run's resume checkpoints."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from seq2attn_cli.translator import Translator

SCRIPT = Path(__file__).parent.parent / "scripts" / "average.py"


def _average(*args: Path | str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, SCRIPT, *map(str, args)], capture_output=True, text=True, timeout=120
    )


def test_a_model_and_its_checkpoints_average_into_a_model_that_translates(tiny_model, tmp_path):
    latest = load_file(tiny_model / "checkpoint.safetensors")
    kept = tmp_path / "snaps" / "early.safetensors"  # as if copied away earlier in the run
    kept.parent.mkdir()
    save_file({k: t + 1 if t.is_floating_point() else t for k, t in latest.items()}, kept)
    out = tmp_path / "soup"
    done = _average(tiny_model, kept, tiny_model / "checkpoint.safetensors", "--out", out)
    assert done.returncode == 0, done.stderr
    best = load_file(tiny_model / "model.safetensors")
    soup = load_file(out / "model.safetensors")
    for name, t in best.items():
        if t.is_floating_point():
            mean = (t.double() + 2 * latest[f"model.{name}"].double() + 1) / 3
            assert torch.allclose(soup[name].double(), mean, rtol=1e-3, atol=1e-3), name  # float16
    assert Translator.load(out).translate("le chat").text


def test_one_checkpoint_is_written_out_as_the_model_of_the_run_s_latest_weights(
    tiny_model, tmp_path
):
    out = tmp_path / "latest"
    assert _average(tiny_model / "checkpoint.safetensors", "--out", out).returncode == 0
    latest = load_file(tiny_model / "checkpoint.safetensors")
    for name, t in load_file(out / "model.safetensors").items():
        assert torch.equal(t, latest[f"model.{name}"].to(t.dtype)), name
    assert (out / "spm.model").read_bytes() == (tiny_model / "spm.model").read_bytes()


def test_average_refuses_what_it_cannot_average_in_one_line(tiny_model, tmp_path):
    alone = tmp_path / "alone.safetensors"
    shutil.copy(tiny_model / "checkpoint.safetensors", alone)
    cases = {
        (alone,): "give its run directory too",
        (tiny_model,): "at least two inputs",
        (tiny_model, tiny_model / "config.json"): "not a valid safetensors file",
        (tiny_model, tmp_path / "missing"): "no such model directory or checkpoint",
    }
    for inputs, message in cases.items():
        done = _average(*inputs, "--out", tmp_path / "never")
        assert done.returncode != 0 and message in done.stderr, (inputs, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "never").exists()
