"""An alignment head beside a model (align.safetensors): fitted by scripts/fit_align_head.py,
the default of `s2a align` when present, checked against the model, never touching translation."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import torch
from conftest import toy_pairs, write_tsv
from typer.testing import CliRunner

from seq2attn_cli.align import HEAD
from seq2attn_cli.align.aer import read_gold, score
from seq2attn_cli.align.aligner import align
from seq2attn_cli.align.head import AlignHead, metadata_of, save_head
from seq2attn_cli.cli.app import app
from seq2attn_cli.config import ModelConfig
from seq2attn_cli.decoding.translator import Translator

runner = CliRunner()
SCRIPT = Path(__file__).parent.parent / "scripts" / "fit_align_head.py"
PAIRS = [
    ("je mange pain", "I eats bread"),
    ("il voit chat rouge", "he sees red cat"),
    ("elle aime eau .", "she loves water ."),
    ("nous voit grand chien", "we sees big dog"),
]


def run(*args: str | Path) -> subprocess.CompletedProcess:
    """A process with the package on its path, one thread."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(SCRIPT.parent.parent)}
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          timeout=300, env=env)  # fmt: skip


def with_head(model: Path, out: Path, config: ModelConfig | None = None, dim: int = 8) -> Path:
    """A copy of `model` with an unfitted head (for `config`'s sizes: by default the model's)."""
    shutil.copytree(model, out)
    torch.manual_seed(1)
    config = config or Translator.load(model).config.model
    save_head(out / HEAD, AlignHead.for_model(config, dim=dim), {"pairs": "0"})
    return out


def swapped(pairs: list[tuple[str, str]]) -> list[tuple[str, str, list[tuple[int, int]]]]:
    """Pairs with their last two target words swapped (a French noun-adjective order), and
    their true links: the last two source words cross."""
    out = []
    for src, tgt in pairs:
        words = tgt.split()
        n = len(words)
        links = [(i, i) for i in range(n)]
        if n > 1:
            words[-2:], links[-2:] = words[:-3:-1], [(n - 2, n - 1), (n - 1, n - 2)]
        out.append((src, " ".join(words), links))
    return out


def test_a_fitted_head_aligns_better_than_attention(tiny_model, tmp_path):
    model = shutil.copytree(tiny_model, tmp_path / "model")
    train = swapped(toy_pairs(600, seed=3))
    corpus = write_tsv(tmp_path / "toy.tsv", [(s, t) for s, t, _ in train])
    (tmp_path / "toy.align").write_text(
        "".join(" ".join(f"{i}-{j}" for i, j in links) + "\n" for _, _, links in train)
    )
    trial = swapped(toy_pairs(40, seed=4))
    (tmp_path / "dev.fr").write_text("".join(s + "\n" for s, _, _ in trial))
    (tmp_path / "dev.en").write_text("".join(t + "\n" for _, t, _ in trial))
    (tmp_path / "dev.wa").write_text(
        "".join(f"{n} {j + 1} {i + 1} S\n" for n, (_, _, ls) in enumerate(trial, 1) for i, j in ls)
    )
    links = tmp_path / "toy.align"
    fitted = run(SCRIPT, "--model", model, "--corpus", corpus, "--links", links,
                 "--pairs", "600", "--minutes", "0.15", "--dim", "32",
                 "--trial", tmp_path)  # fmt: skip
    assert fitted.returncode == 0, fitted.stderr
    gold = read_gold((tmp_path / "dev.wa").read_text().splitlines())
    aer, lines = {}, {}
    for method in ("head", "shared"):
        out = run("-m", "seq2attn_cli", "align", "--model", model, "--method", method,
                  "--src", tmp_path / "dev.fr", "--tgt", tmp_path / "dev.en")  # fmt: skip
        found = [{tuple(map(int, x.split("-"))) for x in line.split()}
                 for line in out.stdout.splitlines()]  # fmt: skip
        aer[method], lines[method] = score(found, gold).aer, out.stdout
    default = run("-m", "seq2attn_cli", "align", "--model", model,
                  "--src", tmp_path / "dev.fr", "--tgt", tmp_path / "dev.en")  # fmt: skip
    assert aer["head"] < aer["shared"], aer
    assert metadata_of(model / HEAD)["trial_aer"] == f"{100 * aer['head']:.1f}"
    assert default.stdout == lines["head"]  # the head is the default when the model has one


def test_a_model_without_a_head_refuses_method_head_in_one_line(tiny_model, tmp_path):
    pairs = write_tsv(tmp_path / "pairs.tsv", PAIRS)
    result = runner.invoke(
        app, ["align", str(pairs), "--model", str(tiny_model), "--method", "head"]
    )
    assert result.exit_code == 2
    assert "has no alignment head" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not result.stdout


def test_a_head_that_does_not_fit_the_model_is_one_error_line(tiny_model, tmp_path):
    other = ModelConfig(src_vocab=60, tgt_vocab=60, embed=16, hidden=32)
    model = with_head(tiny_model, tmp_path / "model", other)
    pairs = write_tsv(tmp_path / "pairs.tsv", PAIRS)
    for damage in ("other model", "not a file of tensors"):
        if damage == "not a file of tensors":
            (model / HEAD).write_bytes(b"\x80\x04 a pickle, perhaps")
        result = runner.invoke(app, ["align", str(pairs), "--model", str(model)])
        assert result.exit_code == 2, damage
        assert str(model / HEAD) in result.stderr, damage
        assert len(result.stderr.strip().splitlines()) == 1 and not result.stdout


def test_translations_are_the_same_with_and_without_a_head(tiny_model, tmp_path):
    model = with_head(tiny_model, tmp_path / "model")
    src = "".join(s + "\n" for s, _ in PAIRS)
    without = runner.invoke(app, ["translate", "--model", str(tiny_model)], input=src)
    beside = runner.invoke(app, ["translate", "--model", str(model)], input=src)
    assert without.exit_code == beside.exit_code == 0
    assert beside.stdout == without.stdout and beside.stdout.strip()


def test_head_links_of_a_pair_are_the_same_whatever_the_batch(tiny_model, tmp_path):
    from seq2attn_cli.align.head import load_head

    model = with_head(tiny_model, tmp_path / "model")
    translator = Translator.load(model)
    head = load_head(str(model), translator.config.model)  # a path as a string, as load() takes
    pairs = PAIRS * 3
    alone = [align(translator, [p], head=head)[0] for p in pairs]
    assert all(a.links and a.probabilities for a in alone)
    for batch_size in (1, 3, 32):
        assert align(translator, pairs, head=head, batch_size=batch_size) == alone


def test_jsonl_keeps_the_attention_and_adds_the_heads_probabilities(tiny_model, tmp_path):
    model = with_head(tiny_model, tmp_path / "model")
    pairs = write_tsv(tmp_path / "pairs.tsv", PAIRS)
    text = runner.invoke(app, ["align", str(pairs), "--model", str(model)])
    jsonl = runner.invoke(app, ["align", str(pairs), "--model", str(model), "--format", "jsonl"])
    rows = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert [r["alignment"] for r in rows] == text.stdout.splitlines()
    for row, (src, tgt) in zip(rows, PAIRS, strict=True):
        shape = (len(tgt.split()), len(src.split()))
        for key in ("weights", "probabilities"):
            assert (len(row[key]), len(row[key][0])) == shape, key
        assert all(sum(r) <= 1.0001 for r in row["probabilities"])
