"""Checks on a model directory before training writes to it. Imports no torch."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..config import CONFIG, HISTORY, PARAMETERS, RESUME, SPM
from ..errors import TrainingError

MODEL_FILES = frozenset({CONFIG, HISTORY, PARAMETERS, RESUME, SPM})


def check_out(out: Path) -> None:
    """Refuse to start when the output directory cannot take a model (checked before training)."""
    if (out / CONFIG).exists():
        raise TrainingError(f"{out}: already holds a model; use --resume, or another --out")
    if out.exists() and not out.is_dir():  # mkdir said only "(File exists)"
        raise TrainingError(f"{out}: a file, not a directory; choose another --out")
    if others := _not_a_models(out):  # the model's files would land among the user's
        listed = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if others[3:] else "")
        raise TrainingError(
            f"{out}: holds files of its own ({listed}); choose an empty or new --out"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
        _write_test(out)
    except OSError as err:
        raise TrainingError(f"{out}: cannot write there ({err.strerror or err})") from None


def check_space(out: Path, params: int, *, resume: bool) -> None:
    """Refuse to start when `out` cannot take the files training will write (a full disk)."""
    # fp16 parameters (2 bytes) + resume state (fp32 parameters and two Adam moments: 12), and the
    # temporary copy each atomic write makes; a resumed run already holds one of each
    need = params * (14 if resume else 28)
    try:
        _write_test(out)
        free = shutil.disk_usage(out).free
    except OSError as err:
        raise TrainingError(f"{out}: cannot write there ({err.strerror or err})") from None
    if free < need:
        raise TrainingError(
            f"{out}: {free / 1e6:.1f} MB free, training needs about {need / 1e6:.1f} MB; "
            "free some space or choose another --out"
        )


def _not_a_models(out: Path) -> list[str]:
    """The entries of `out` a run would not write: none when it is missing or empty."""
    try:
        names = [p.name for p in out.iterdir()] if out.is_dir() else []
    except OSError:  # unreadable: the write test below says why
        return []
    # dot files are the temporary ones a killed save leaves (tidied) and the system's own
    return sorted(n for n in names if n not in MODEL_FILES and not n.startswith("."))


def _write_test(out: Path) -> None:
    """Write and remove a small file, as the checkpoints will be written."""
    test = out / ".write-test"
    tmp = out / ".write-test.tmp"
    tmp.write_bytes(b"ok")
    tmp.replace(test)
    test.unlink()
