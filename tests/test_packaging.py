"""What `pip install` gives a user: the embedded model and nothing else a checkout's models/
holds, and a package that translates from any directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
SHIPPED = {"README.md", "config.json", "history.json", "model.safetensors", "spm.model"}


def run(*args: str, **kwargs) -> subprocess.CompletedProcess:
    """Run a command of this Python, quietly, and insist that it worked."""
    result = subprocess.run([sys.executable, *args], capture_output=True, timeout=300, **kwargs)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel of a copy of this checkout where a user also trained a model into models/."""
    tree = tmp_path_factory.mktemp("checkout")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(ROOT / "seq2attn_cli", tree / "seq2attn_cli", ignore=skip)
    shutil.copytree(ROOT / "models" / "fr-en", tree / "models" / "fr-en")
    (tree / "models" / "fr-en" / "checkpoint.safetensors").write_bytes(b"resume state")
    (tree / "models" / "my-fr-en").mkdir()
    (tree / "models" / "my-fr-en" / "config.json").write_text("{}")
    dist = tmp_path_factory.mktemp("dist")
    run("-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(tree))
    return next(dist.glob("*.whl"))


def test_the_wheel_ships_the_embedded_model_and_nothing_else_from_models(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    models = {n for n in names if "models/" in n}
    assert models == {f"seq2attn_cli/models/fr-en/{name}" for name in SHIPPED}
    assert not (ROOT / "seq2attn_cli" / "models").exists()  # no symlink in the checkout


def test_the_wheel_ships_every_module_of_the_package(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "seq2attn_cli").rglob("*.py")}
    assert modules - names == set()  # e.g. a new folder missing from pyproject's packages


def test_an_installed_wheel_translates_from_another_directory(wheel, tmp_path):
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    run("-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel))
    env = {k: v for k, v in os.environ.items() if k != "S2A_MODEL"}
    env.update(PYTHONPATH=str(site), OMP_NUM_THREADS="1")
    where = run("-c", "import seq2attn_cli; print(seq2attn_cli.__file__)", env=env, cwd=elsewhere)
    assert where.stdout.decode().startswith(str(site))  # the installed copy, not the checkout
    sentence = "je suis étudiant ."
    installed = run("-m", "seq2attn_cli", "translate", sentence, env=env, cwd=elsewhere)
    checkout = run("-m", "seq2attn_cli", "translate", sentence, env={**env, "PYTHONPATH": ""})
    assert installed.stdout.strip() and installed.stdout == checkout.stdout
