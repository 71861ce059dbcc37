"""scripts/average.py: model soups from model directories and a run's resume checkpoints."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from seq2attn_cli.decoding.translator import Translator

SCRIPT = Path(__file__).parent.parent / "scripts" / "average.py"


def _average(*args: Path | str) -> subprocess.CompletedProcess:
    """Run scripts/average.py with these arguments."""
    return subprocess.run(
        [sys.executable, SCRIPT, *map(str, args)], capture_output=True, text=True, timeout=120
    )


def _shifted(checkpoint: Path, into: Path, by: float) -> Path:
    """A copy of a checkpoint with every float tensor moved by `by`: weights no file has."""
    tensors = load_file(checkpoint)
    save_file({k: t + by if t.is_floating_point() else t for k, t in tensors.items()}, into)
    return into


def test_a_model_and_its_checkpoints_average_into_a_model_that_translates(tiny_model, tmp_path):
    latest = load_file(tiny_model / "checkpoint.safetensors")
    (tmp_path / "snaps").mkdir()  # as if copied away earlier in the run
    kept = _shifted(tiny_model / "checkpoint.safetensors", tmp_path / "snaps" / "early", 1.0)
    out = tmp_path / "soup"
    done = _average(tiny_model, kept, tiny_model / "checkpoint.safetensors", "--out", out)
    assert done.returncode == 0, done.stderr
    soup = load_file(out / "model.safetensors")
    for name, t in load_file(tiny_model / "model.safetensors").items():
        if t.is_floating_point():
            mean = (t.double() + 2 * latest[f"model.{name}"].double() + 1) / 3
            assert torch.allclose(soup[name].double(), mean, rtol=1e-3, atol=1e-3), name  # fp16
    assert Translator.load(out).translate("le chat").text


def test_one_checkpoint_is_written_out_as_a_model_of_exactly_its_weights(tiny_model, tmp_path):
    run = shutil.copytree(tiny_model, tmp_path / "run")
    _shifted(tiny_model / "checkpoint.safetensors", run / "checkpoint.safetensors", 0.5)
    kept = shutil.copy(run / "checkpoint.safetensors", tmp_path / "kept.safetensors")
    latest = load_file(run / "checkpoint.safetensors")
    for args in ([run / "checkpoint.safetensors"], [kept, "--like", run]):
        out = tmp_path / f"out{len(args)}"
        assert _average(*args, "--out", out).returncode == 0
        for name, t in load_file(out / "model.safetensors").items():
            assert torch.equal(t, latest[f"model.{name}"].to(t.dtype)), name
        assert (out / "spm.model").read_bytes() == (run / "spm.model").read_bytes()


def test_average_refuses_what_it_cannot_average_in_one_line(tiny_model, tmp_path):
    alone = shutil.copy(tiny_model / "checkpoint.safetensors", tmp_path / "alone.safetensors")
    other = shutil.copytree(tiny_model, tmp_path / "other")
    (other / "spm.model").write_bytes(b"another subword model")
    bare = tmp_path / "bare"
    bare.mkdir()
    cases = {
        (alone,): "--like RUN",
        (tiny_model,): "at least two inputs",
        (tiny_model, tiny_model / "config.json"): "not a valid safetensors file",
        (tiny_model, tmp_path / "missing"): "no such model directory or weights file",
        (tiny_model, bare): "not a model directory",
        (tiny_model, other / "checkpoint.safetensors"): "not the subword model",
    }
    for inputs, message in cases.items():
        done = _average(*inputs, "--out", tmp_path / "never")
        assert done.returncode == 2 and message in done.stderr, (inputs, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "never").exists()
