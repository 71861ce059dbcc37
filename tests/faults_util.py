"""Helpers shared by the test_faults_* modules: run the real CLI, read its one-line errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

# a model that trains in seconds on one thread (the sizes of conftest.train_tiny)
TINY = [
    "--vocab-size", "60", "--valid-size", "20", "--batch-tokens", "300", "--embed", "32",
    "--hidden", "64", "--dropout", "0", "--lr", "5e-3", "--no-amp", "--device", "cpu",
    "--threads", "1",
]  # fmt: skip
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "NO_COLOR": "1", "COLUMNS": "80"}


def default_sigint() -> None:
    """In a child before exec: SIGINT back to its default disposition."""
    # `make test &` (or nohup) starts the suite with SIGINT ignored, children inherit that,
    # and a Python started so never raises KeyboardInterrupt: every Ctrl-C test failed
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def s2a(*args: str, stdin: bytes = b"", timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the real CLI as a process and wait for it."""
    return subprocess.run(
        [sys.executable, "-m", "seq2attn_cli", *args],
        input=stdin, capture_output=True, timeout=timeout, env=ENV, preexec_fn=default_sigint,
    )  # fmt: skip


def start(*args: str, **kwargs) -> subprocess.Popen:
    """Start the real CLI as a process (stdin, stdout and stderr are pipes unless given)."""
    kwargs = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE,
              "preexec_fn": default_sigint, **kwargs}  # fmt: skip
    return subprocess.Popen([sys.executable, "-m", "seq2attn_cli", *args], env=ENV, **kwargs)


def error_line(result: subprocess.CompletedProcess, *names: str) -> str:
    """Assert a clean failure: exit 2, no traceback, exactly one error line naming `names`."""
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2, (result.returncode, err)
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("s2a: error:")]
    assert len(errors) == 1, err
    for name in names:
        assert name in errors[0], (name, errors[0])
    return errors[0]


def steps(model: Path) -> int:
    """Training steps recorded in a model directory's config.json."""
    return json.loads((model / "config.json").read_text())["steps"]


def saved_step(model: Path) -> int:
    """The step the resume checkpoint was saved at (from its safetensors metadata)."""
    from safetensors import safe_open

    with safe_open(str(model / "checkpoint.safetensors"), framework="pt") as f:
        return json.loads(f.metadata()["state"])["counters"]["step"]


def wait_for_step(proc: subprocess.Popen, model: Path, at_least: int, timeout: float = 90) -> int:
    """Wait until the checkpoint in `model` was saved at a step >= at_least; return that step."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode()
        try:
            step = saved_step(model)
            if step >= at_least:
                return step
        except Exception:  # not written yet: the directory fills as training starts
            pass
        time.sleep(0.05)
    raise AssertionError(f"no checkpoint at step {at_least} within {timeout}s")
