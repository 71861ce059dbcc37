"""Untrusted model directories: loading one never runs code from it, and every fault in one
(truncated or tampered weights, a bad config.json, a foreign tokenizer, a newer format, a
pickle where a checkpoint should be) is one line naming the file, and exit code 2."""

from __future__ import annotations

import json
import os
import pickle
import random
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from faults_util import error_line, s2a
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.torch import load_file, save_file
from typer.testing import CliRunner

from seq2attn_cli import checkpoint as ckpt
from seq2attn_cli.checkpoint import ModelError, load_model
from seq2attn_cli.cli.app import app
from seq2attn_cli.config import FORMAT_VERSION, TrainConfig
from seq2attn_cli.data.subwords import Subwords, train_subwords
from seq2attn_cli.decoding.translator import Translator

runner = CliRunner()


def _tensors(fn: Callable[[dict], None]) -> Callable[[Path], None]:
    """A tamper that edits model.safetensors' tensors and writes them back validly."""

    def tamper(d: Path) -> None:
        tensors = load_file(d / "model.safetensors")
        fn(tensors)
        save_file(tensors, d / "model.safetensors")

    return tamper


def _config(fn: Callable[[dict], None]) -> Callable[[Path], None]:
    """A tamper that edits config.json."""

    def tamper(d: Path) -> None:
        config = json.loads((d / "config.json").read_text())
        fn(config)
        (d / "config.json").write_text(json.dumps(config))

    return tamper


def _truncate(name: str, keep: float) -> Callable[[Path], None]:
    def tamper(d: Path) -> None:
        data = (d / name).read_bytes()
        (d / name).write_bytes(data[: int(len(data) * keep)])

    return tamper


def _foreign_spm(same_size: bool) -> Callable[[Path], None]:
    """Put another model's tokenizer in place: with the same number of pieces, or not."""

    def tamper(d: Path) -> None:
        size = len(Subwords.load(d / "spm.model")) + (0 if same_size else 7)
        rng = random.Random(1)
        words = ["".join(rng.choice("abcdefghijklmnop") for _ in range(rng.randint(2, 7)))
                 for _ in range(12000)]  # fmt: skip
        texts = [" ".join(words[i : i + 6]) for i in range(0, len(words), 6)]
        other = train_subwords(texts, vocab_size=size, seed=1)
        assert len(other) == size
        (d / "spm.model").write_bytes(other.proto)

    return tamper


def _replace(name: str, make: Callable[[Path], None]) -> Callable[[Path], None]:
    def tamper(d: Path) -> None:
        (d / name).unlink()
        make(d / name)

    return tamper


def _del(key: str, sub: str | None = None) -> Callable[[dict], None]:
    return lambda c: (c[sub] if sub else c).pop(key)


def _set(value, key: str, sub: str | None = None) -> Callable[[dict], None]:
    return lambda c: (c[sub] if sub else c).__setitem__(key, value)


def _first_matrix(t: dict) -> str:
    return next(k for k, v in sorted(t.items()) if v.dim() == 2 and v.shape[0] != v.shape[1])


TAMPERS: dict[str, tuple[Callable[[Path], None], str, str]] = {
    # name: (tamper, file the message names, what it says)
    "weights truncated": (_truncate("model.safetensors", 0.5), "model.safetensors",
                          "not a valid safetensors file"),
    "weights header only": (_truncate("model.safetensors", 0.01), "model.safetensors",
                            "not a valid safetensors file"),
    "weights empty": (_truncate("model.safetensors", 0), "model.safetensors",
                      "not a valid safetensors file"),
    "weights header length bomb": (
        lambda d: (d / "model.safetensors").write_bytes(
            b"\xff" * 7 + b"\x7f" + (d / "model.safetensors").read_bytes()[8:]),
        "model.safetensors", "not a valid safetensors file"),
    "weights transposed": (
        _tensors(lambda t: t.__setitem__(_first_matrix(t), t[_first_matrix(t)].T.contiguous())),
        "model.safetensors", "config.json implies"),
    "weights NaN": (_tensors(lambda t: t["bridge.weight"].fill_(float("nan"))),
                    "model.safetensors", "NaN or infinite"),
    "weights inf": (_tensors(lambda t: t["bridge.bias"].fill_(float("inf"))),
                    "model.safetensors", "NaN or infinite"),
    "weights tensor missing": (_tensors(lambda t: t.pop("bridge.bias")), "model.safetensors",
                               "do not match config.json"),
    "weights tensor added": (_tensors(lambda t: t.__setitem__("evil", torch.zeros(3))),
                             "model.safetensors", "do not match config.json"),
    "weights renamed": (_tensors(lambda t: t.__setitem__("bridge.bias2", t.pop("bridge.bias"))),
                        "model.safetensors", "do not match config.json"),
    "tgt_pieces out of range": (_tensors(lambda t: t["tgt_pieces"].fill_(10**6)),
                                "model.safetensors", "outside the vocabulary"),
    "weights missing": (lambda d: (d / "model.safetensors").unlink(), "model.safetensors",
                        "missing"),
    "weights a FIFO": (_replace("model.safetensors", os.mkfifo), "model.safetensors",
                       "not a regular file"),
    "weights -> /dev/zero": (_replace("model.safetensors", lambda p: p.symlink_to("/dev/zero")),
                             "model.safetensors", "not a regular file"),
    "config missing": (lambda d: (d / "config.json").unlink(), "",
                       "not a model directory (no config.json)"),
    "config not JSON": (lambda d: (d / "config.json").write_text("{'model':"), "config.json",
                        "unreadable"),
    "config not UTF-8": (lambda d: (d / "config.json").write_bytes(b"\xff\xfe{}"),
                         "config.json", "unreadable"),
    "config a list": (lambda d: (d / "config.json").write_text("[1, 2]"), "config.json",
                      "expected a JSON object"),
    "config a directory": (_replace("config.json", Path.mkdir), "config.json",
                           "not a regular file"),
    "no format_version": (_config(_del("format_version")), "config.json", "no format_version"),
    "format_version a string": (_config(_set("1", "format_version")), "config.json",
                                "no format_version"),
    "newer format": (_config(_set(FORMAT_VERSION + 1, "format_version")), "config.json",
                     "newer than this s2a understands"),
    "model section missing": (_config(_del("model")), "config.json", "expected an object"),
    "model section a number": (_config(_set(3, "model")), "config.json", "expected an object"),
    "model field missing": (_config(_del("src_vocab", "model")), "config.json",
                            "missing 1 required"),
    "model field unknown": (_config(_set(1, "evil", "model")), "config.json",
                            "unknown fields evil"),
    "model field a float": (_config(_set(1.5, "embed", "model")), "config.json",
                            "embed must be of type int"),
    "model field a string": (_config(_set("64", "hidden", "model")), "config.json",
                             "hidden must be of type int"),
    "model field a bool": (_config(_set(True, "layers", "model")), "config.json",
                           "layers must be of type int"),
    "model field negative": (_config(_set(-4, "embed", "model")), "config.json",
                             "embed must be positive"),
    "model field bad choice": (_config(_set("transformer", "cell", "model")), "config.json",
                               "cell must be one of"),
    "model larger than weights": (_config(_set(128, "hidden", "model")), "model.safetensors",
                                  "do not match config.json"),
    "model absurdly large": (_config(_set(10**9, "hidden", "model")), "model.safetensors",
                             "do not match config.json"),
    "training limits negative": (_config(_set(-5, "max_pieces", "training")), "config.json",
                                 "must be positive integers"),
    "training limits strings": (_config(_set("x", "max_chars", "training")), "config.json",
                                "must be positive integers"),
    "training section a string": (_config(_set("x", "training")), "config.json",
                                  "must be positive integers"),
    "training field of a wrong type": (_config(_set("fast", "lr", "training")), "config.json",
                                       "lr must be of type float"),
    "tokenizer checksum a number": (_config(_set(5, "spm_sha256")), "config.json",
                                    "spm_sha256 must be a string"),
    "spm missing": (lambda d: (d / "spm.model").unlink(), "spm.model", "missing"),
    "spm garbage": (lambda d: (d / "spm.model").write_bytes(os.urandom(600)), "spm.model",
                    "not a SentencePiece model"),
    "spm empty": (_truncate("spm.model", 0), "spm.model", "not a SentencePiece model"),
    "spm truncated": (_truncate("spm.model", 0.5), "spm.model", "not a SentencePiece model"),
    "spm from another model": (_foreign_spm(False), "spm.model", "come from different models"),
    "spm same size, other model": (_foreign_spm(True), "spm.model",
                                   "not the tokenizer this model was trained with"),
}  # fmt: skip


@pytest.fixture
def copy(tiny_model, tmp_path) -> Path:
    """A private copy of the tiny model, free to tamper with."""
    return Path(shutil.copytree(tiny_model, tmp_path / "model"))


@pytest.mark.parametrize("fault", list(TAMPERS))
def test_every_fault_in_a_model_directory_is_one_clear_error(copy, fault):
    tamper, file, says = TAMPERS[fault]
    tamper(copy)
    with pytest.raises(ModelError) as caught:
        load_model(copy)
    message = str(caught.value)
    assert message.startswith(str(copy / file)) and says in message, message
    assert "\n" not in message


def test_a_config_written_by_an_older_s2a_still_loads(copy):
    config = json.loads((copy / "config.json").read_text())
    training = {
        k: v for k, v in config["training"].items() if k not in ("max_pieces", "noise_share")
    }
    config["training"] = {
        **training,
        "src_col": 1,
        "tgt_col": 2,
        "casual_share": 0.2,
        "max_chars": 80,
    }
    config["corpus"] = {"corpus": "fra.txt", "lines": 1000}  # languages were not recorded yet
    del config["data"], config["shards"]
    (copy / "config.json").write_text(json.dumps(config))
    _, _, stored = load_model(copy)
    assert stored.training == TrainConfig(**{**training, "max_chars": 80})  # the rest: defaults
    assert stored.languages == (None, None) and stored.raw == config
    translator = Translator.load(copy, quantized=False)
    assert (translator.max_chars, translator.max_pieces) == (80, TrainConfig().max_pieces)


@pytest.mark.parametrize(
    "where", ["missing", "a file", "empty"], ids=["missing", "a-file", "empty-directory"]
)
def test_something_that_is_no_model_directory_is_refused(tmp_path, where):
    path = tmp_path / "m"
    if where == "a file":
        path.write_text("hello")
    elif where == "empty":
        path.mkdir()
    with pytest.raises(ModelError, match=re.escape(str(path))):
        load_model(path)


def test_the_cli_turns_each_kind_of_fault_into_one_line_and_exit_2(copy, tmp_path):
    """The same faults through the real processes of translate, evaluate and inspect."""
    cases = [
        ("weights truncated", ["translate", "hello"]),
        ("newer format", ["evaluate", "TEST"]),
        ("spm same size, other model", ["inspect"]),
    ]
    test = tmp_path / "test.tsv"
    test.write_text("je mange pain\tI eats bread\n")
    for fault, args in cases:
        model = Path(shutil.copytree(copy, tmp_path / fault.replace(" ", "-").replace(",", "")))
        tamper, file, says = TAMPERS[fault]
        tamper(model)
        args = [str(test) if a == "TEST" else a for a in args] + ["--model", str(model)]
        if args[0] == "evaluate":  # in this process: the same code, without a torch import
            got = runner.invoke(app, args)
            result = subprocess.CompletedProcess(args, got.exit_code, b"", got.stderr.encode())
        else:
            result = s2a(*args)
        error_line(result, str(model / file), says)


# ---- pickles planted where weights or checkpoints belong ----------------------------------


class Payload:
    """Unpickling this creates a marker file: proof that code from the file ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def plant(model: Path, marker: Path) -> None:
    """Plant armed pickles as the weights (plain pickle) and the checkpoint (torch.save)."""
    payload = pickle.dumps({"weights": Payload(marker)})
    pickle.loads(payload)["weights"].close()  # the payload is live: unpickling makes the marker
    assert marker.exists()
    marker.unlink()
    (model / "model.safetensors").write_bytes(payload)
    torch.save({"state": Payload(marker)}, model / "checkpoint.safetensors")


def test_a_planted_pickle_is_refused_and_never_run(copy, tmp_path, toy_corpus):
    marker = tmp_path / "pwned"
    plant(copy, marker)
    translate = s2a("translate", "--model", str(copy), "hello")
    error_line(translate, str(copy / "model.safetensors"), "not a valid safetensors file")
    resume = s2a("train", str(toy_corpus), "--out", str(copy), "--resume", "--device", "cpu")
    error_line(resume, str(copy / "checkpoint.safetensors"), "not a valid safetensors file")
    for args in (["inspect"], ["evaluate", str(toy_corpus)]):  # in-process: same code path
        result = runner.invoke(app, [*args, "--model", str(copy)])
        assert result.exit_code == 2 and "not a valid safetensors file" in result.stderr
    assert not marker.exists()


def test_the_package_never_unpickles():
    source = Path(ckpt.__file__).parent
    for path in source.glob("*.py"):
        text = path.read_text()
        for call in ("torch.load(", "pickle.load", "pickle.Unpickler", "import dill"):
            assert call not in text, f"{path.name} calls {call}"


# ---- tampered resume checkpoints ----------------------------------------------------------


def _resume(copy: Path, edit: Callable[[dict, dict], None]) -> None:
    from safetensors import safe_open

    path = copy / "checkpoint.safetensors"
    with safe_open(str(path), framework="pt") as f:
        meta = json.loads(f.metadata()["state"])
    tensors = load_file(path)
    edit(tensors, meta)
    save_file(tensors, path, metadata={"state": json.dumps(meta)})


RESUME_TAMPERS = {
    "no metadata": lambda d: save_file(load_file(d / "checkpoint.safetensors"),
                                       d / "checkpoint.safetensors"),
    "counters missing": lambda d: _resume(d, lambda t, m: m.pop("counters")),
    "step a string": lambda d: _resume(d, lambda t, m: m["counters"].__setitem__("step", "7")),
    "step negative": lambda d: _resume(d, lambda t, m: m["counters"].__setitem__("step", -1)),
    "param_groups junk": lambda d: _resume(d, lambda t, m: m.__setitem__("param_groups", [1])),
    "optimizer state junk": lambda d: _resume(
        d, lambda t, m: t.__setitem__("optim.x.exp_avg", torch.zeros(2))),
    "rng state missing": lambda d: _resume(d, lambda t, m: t.pop("rng.torch")),
    "rng state wrong": lambda d: _resume(d, lambda t, m: t.__setitem__("rng.torch",
                                                                       torch.zeros(3))),
    "weights NaN": lambda d: _resume(d, lambda t, m: t["model.bridge.bias"].fill_(float("nan"))),
}  # fmt: skip


@pytest.mark.parametrize("fault", list(RESUME_TAMPERS))
def test_a_tampered_resume_checkpoint_is_one_clear_error(copy, fault):
    from seq2attn_cli.model.seq2seq import Seq2Seq

    RESUME_TAMPERS[fault](copy)
    model, _, _ = load_model(copy)  # the translating side is untouched
    fresh = Seq2Seq(model.config)
    path = copy / "checkpoint.safetensors"
    with pytest.raises(ModelError, match=re.escape(str(path))):
        ckpt.load_resume(path, fresh, torch.optim.Adam(fresh.parameters()))


def test_a_tampered_checkpoint_stops_resume_with_one_line(copy, toy_corpus):
    RESUME_TAMPERS["step a string"](copy)
    args = ["--resume", "--epochs", "99", "--device", "cpu", "--threads", "1"]
    result = runner.invoke(app, ["train", str(toy_corpus), "--out", str(copy), *args])
    assert result.exit_code == 2, result.output
    assert "checkpoint.safetensors: resume state does not fit this model" in result.stderr


# ---- fuzzing: corrupt bytes anywhere give a ModelError or a working model, nothing else ----


@given(
    name=st.sampled_from(["model.safetensors", "config.json", "spm.model"]),
    flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)),
                   min_size=1, max_size=6),
    cut=st.none() | st.floats(0, 1),
)  # fmt: skip
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
def test_fuzzed_model_files_load_or_fail_cleanly(tiny_model, tmp_path, name, flips, cut):
    target = tmp_path / "fuzz"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(tiny_model, target)
    data = bytearray((target / name).read_bytes())
    for where, byte in flips:
        data[int(where * len(data))] = byte
    if cut is not None:
        data = data[: int(cut * len(data))]
    (target / name).write_bytes(bytes(data))
    try:
        model, subwords, _ = load_model(target)
    except ModelError as error:
        assert str(error).startswith(str(target)) and "\n" not in str(error)
    else:
        assert all(torch.isfinite(p).all() for p in model.parameters())
