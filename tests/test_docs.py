"""The hands-on guides run: every command marked runnable in docs/ succeeds, so they cannot rot.

There are two guides, docs/attention-hands-on.md and its Chinese telling,
docs/attention-hands-on.zh.md, with the same runnable blocks (docs/capture.sh writes both), so
one run of the commands runs both guides' (they take minutes on a busy 2-core machine).

A runnable command is a line starting with "$ " inside a ```console block that comes right
after an HTML comment `<!-- runnable -->`; a line ending in a backslash continues on the next
line, and a here-document (`python - <<'EOF'`) runs up to its delimiter line. The other lines
of the block are the output captured with the real models (docs/capture.sh); they are not
compared here: a tiny model prints other words.

The commands run through bash, in order, in a temporary directory laid out as the guide
assumes a clone of the repository to be: `fra.txt` (a toy corpus in Tatoeba's column order,
English then French), `scripts/` (the repository's), `docs/img/`, and `s2a` and `python` on
PATH. S2A_MODEL points at a tiny model trained here with a probe sentence (the guide's
commands without --model use it), OMP_NUM_THREADS=1. The guide's own commands make
data/*.tsv, small.tsv and the two small models that later commands read.

The one rewrite: `s2a train` commands get `--max-steps 20` (before any pipe or redirection),
so that the guide's real training runs take seconds here instead of minutes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import xml.dom.minidom
from pathlib import Path

import pytest
import torch
from conftest import toy_pairs, train_tiny, write_tsv

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docs"))
from runnable import RUNNABLE, block_commands  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
GUIDES = [REPO / "docs" / "attention-hands-on.md", REPO / "docs" / "attention-hands-on.zh.md"]
TRAIN_STEPS = "--max-steps 20"


def runnable_commands(markdown: str) -> list[str]:
    """The commands of every runnable block, in order, as typed (without the "$ ")."""
    return [command for block in RUNNABLE.findall(markdown) for command in block_commands(block)]


def fast(command: str) -> str:
    """`s2a train ...` with --max-steps 20 added before any pipe or redirection."""
    if not command.startswith("s2a train "):
        return command
    head, *rest = re.split(r"\s(?=\||&&|;|[12]?>)", command, maxsplit=1)
    return " ".join([head, TRAIN_STEPS, *rest])


def test_parser_finds_commands_continuations_and_heredocs():
    text = (
        "<!-- runnable -->\n```console\n$ s2a translate a \\\n    b\nout\n$ echo x | cat\nx\n"
        "$ python - <<'EOF'\nprint(1)\nEOF\n1\n```\n"
        "```console\n$ not runnable\n```\n"
    )
    assert runnable_commands(text) == [
        "s2a translate a \\\n    b",
        "echo x | cat",
        "python - <<'EOF'\nprint(1)\nEOF",
    ]
    assert fast("s2a train c.tsv --out m") == "s2a train c.tsv --out m --max-steps 20"
    assert fast("s2a train c.tsv 2>&1 | tail") == "s2a train c.tsv --max-steps 20 2>&1 | tail"
    assert fast("s2a translate x") == "s2a translate x"


def test_the_chinese_guide_has_the_english_guides_commands_and_outputs():
    english, chinese = (RUNNABLE.findall(g.read_text(encoding="utf-8")) for g in GUIDES)
    assert chinese == english, "re-capture both guides: bash docs/capture.sh --write"
    text = GUIDES[1].read_text(encoding="utf-8")
    for term in ("编码器", "解码器", "隐藏层状态", "context向量", "注意力", "词嵌入"):
        assert term in text, f"the Chinese guide does not use the article's term {term}"


@pytest.mark.parametrize("guide", GUIDES, ids=lambda g: g.name)
def test_every_runnable_block_shows_its_output(guide):
    """Blocks lose their captured output only by mistake; a block of `s2a train` commands
    alone may have none (the guide's "try it yourself" runs)."""
    for block in RUNNABLE.findall(guide.read_text(encoding="utf-8")):
        commands = runnable_commands(f"<!-- runnable -->\n```console\n{block}```\n")
        typed = sum(len(c.splitlines()) for c in commands)
        if all(c.startswith("s2a train ") for c in commands):
            continue
        assert len(block.splitlines()) > typed, f"no output under: {commands[0][:60]}"


@pytest.mark.parametrize("guide", GUIDES, ids=lambda g: g.name)
def test_guide_pictures_exist_and_are_small_valid_svg(guide):
    text = guide.read_text(encoding="utf-8")
    pictures = re.findall(r"!\[[^\]]*\]\((img/[^)]+)\)", text)
    assert pictures, "the guide shows no picture"
    for name in pictures:
        path = guide.parent / name
        assert path.suffix == ".svg" and path.exists(), name
        assert path.stat().st_size < 400_000, f"{name} is over 400 kB"
        xml.dom.minidom.parse(str(path))  # raises on invalid XML
    saved = re.findall(r"--save (docs/img/\S+\.svg)", text)
    assert saved and {f"docs/{p}" for p in pictures} <= set(saved), "a picture no command makes"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A directory laid out like a clone, with a tiny default model."""
    root = tmp_path_factory.mktemp("guide")
    # English<TAB>French<TAB>attribution, as Tatoeba's fra.txt; enough for the 2,000 + 1,000
    # sentences scripts/split.py holds out by default
    pairs = toy_pairs(4000, seed=3, max_words=6)
    (root / "fra.txt").write_text(
        "".join(f"{en}\t{fr}\tCC-BY 2.0 (France) toy\n" for fr, en in pairs), encoding="utf-8"
    )
    (root / "scripts").symlink_to(REPO / "scripts")
    (root / "docs" / "img").mkdir(parents=True)
    corpus = write_tsv(root / "default.tsv", toy_pairs(600, seed=4))
    torch.manual_seed(0)
    train_tiny(root / "default-model", corpus, epochs=2, probe="il voit le chat rouge .")
    return root


def test_every_runnable_command_of_the_guides_succeeds(workdir):
    """The commands of both guides, run once: the Chinese guide's are the English guide's."""
    commands = runnable_commands(GUIDES[0].read_text(encoding="utf-8"))
    for guide in GUIDES[1:]:
        assert runnable_commands(guide.read_text(encoding="utf-8")) == commands, guide.name
    assert len(commands) >= 10, "the guide lost its runnable commands"
    assert any(c.startswith("s2a train ") for c in commands)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "S2A_MODEL": str(workdir / "default-model"),
        "OMP_NUM_THREADS": "1",
        "COLUMNS": "100",
    }
    for command in commands:
        started = time.monotonic()
        result = subprocess.run(
            ["bash", "-c", "set -o pipefail\n" + fast(command)],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert result.returncode == 0, (
            f"guide command failed with exit code {result.returncode}: {command}\n"
            f"{result.stderr[-2000:]}"
        )
        print(f"{time.monotonic() - started:5.1f} s  {command}")
