"""Helpers shared by the test_faults_* modules: run the real CLI, read its one-line errors."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import NoReturn

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
    # one open file, read as the format lays it out (8 bytes of length, a JSON header):
    # safe_open opens the path a second time for torch, and a save renamed in between
    # gave it the header of one checkpoint and the size of the next (CI, stop 49)
    with open(model / "checkpoint.safetensors", "rb") as f:
        header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
    return json.loads(header["__metadata__"]["state"])["counters"]["step"]


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


# ---- signals at chosen moments ---------------------------------------------------------------
# Importing torch takes seconds; a run of a tiny model, one. A server process imports s2a once
# and forks a child per moment, which runs the CLI's main() as `python -m seq2attn_cli` would:
# forty moments then cost forty tiny runs, not forty imports of torch.


def moment_server() -> None:
    """Serve moments: per JSON line on stdin, fork `s2a ARGV`, signal it, answer a JSON line."""
    # The signal goes `delay` seconds after `after` shows on the child's stderr (at once for
    # ""): a moment stays in its phase however loaded the machine is. The answer: the exit
    # code (-N: killed by signal N) and what the child had written on stderr when signalled.
    import torch._dynamo  # noqa: F401  what torch.optim.Adam imports: 1-2 s more per run

    import seq2attn_cli.cli.app  # noqa: F401  the imports every child would otherwise repeat
    import seq2attn_cli.cli.train  # noqa: F401
    import seq2attn_cli.training.loop  # noqa: F401
    import seq2attn_cli.views.progress  # noqa: F401

    gc.freeze()  # children leave these objects alone: exiting, they copy no page of them
    for line in sys.stdin:
        ask = json.loads(line)
        err = Path(ask["stderr"])
        err.write_bytes(b"")
        started = time.monotonic()
        ready, tell = os.pipe()
        pid = os.fork()
        if pid == 0:
            if ask.get("crash"):
                _killed_in_a_write(*ask["crash"])
            _moment_child(ask["argv"], err, tell)  # never returns: main() exits
        os.close(tell)
        os.read(ready, 1)  # its handlers are set: a signal before would be lost in the fork
        os.close(ready)
        status = None
        while status is None and ask["after"] not in err.read_text(errors="replace"):
            status = _wait(pid, timeout=0.002, kill=False)
        if status is None:  # it may end first
            status = _wait(pid, timeout=ask["delay"], kill=False)
        seen = err.read_text(errors="replace")
        if status is None:
            os.kill(pid, ask["signal"])
            status = _wait(pid, timeout=60)
        answer = {"rc": os.waitstatus_to_exitcode(status), "seen": seen,
                  "seconds": round(time.monotonic() - started, 2)}  # fmt: skip
        print(json.dumps(answer), flush=True)


def _moment_child(argv: list[str], err: Path, ready: int) -> None:
    """In the forked child: signals as a fresh Python has them, stderr to `err`, s2a's main()."""
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.dup2(os.open(err, os.O_WRONLY | os.O_APPEND), 2)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.argv = ["s2a", *argv]
    from seq2attn_cli.cli import app

    typer_app = app.app

    def ready_then_run() -> None:  # inside main(): a signal from now on is one it handles
        os.write(ready, b".")
        typer_app()

    app.app = ready_then_run
    sys.exit = _exit_now  # main() ends in sys.exit: its code, and nothing after it runs here
    try:
        app.main()
    except BaseException:  # as Python would show it, uncaught
        traceback.print_exc()
    finally:
        _exit_now(1)


def _exit_now(code: object = None) -> NoReturn:
    """sys.exit(code) as os._exit: no teardown of all torch (seconds when forked), and no
    unwinding through this fork's own code, where a signal that came as s2a exited would
    be raised and change the code reported (it did once: 1, where s2a had chosen 0)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else int(code is not None))  # None: 0, a message: 1


def _killed_in_a_write(name: str, nth: int, share: float) -> None:
    """Make the nth atomic write of the file `name` die by SIGKILL once `share` of it is written."""
    fdopen, count = os.fdopen, [0]

    def spied(fd: int, *args, **kwargs):  # write_atomic opens .NAME.HEX.tmp so
        file = fdopen(fd, *args, **kwargs)
        if not Path(os.readlink(f"/proc/self/fd/{fd}")).name.startswith(f".{name}."):
            return file
        count[0] += 1
        return _Dying(file, share) if count[0] == nth else file

    os.fdopen = spied


class _Dying:
    """A file that takes `share` of what is written to it, then its process is killed (-9)."""

    def __init__(self, file, share: float) -> None:
        self.file, self.share = file, share

    def __enter__(self) -> _Dying:
        return self

    def __exit__(self, *exc: object) -> None:
        self.file.close()

    def write(self, data: bytes) -> None:
        self.file.write(data[: int(len(data) * self.share)])
        self.file.flush()
        os.kill(os.getpid(), signal.SIGKILL)


def _wait(pid: int, timeout: float, *, kill: bool = True) -> int | None:
    """waitpid with a deadline: the status; past it, None (kill=False) or SIGKILL's status."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(min(0.005, max(0.0, deadline - time.monotonic())))
    if not kill:
        return None
    os.kill(pid, signal.SIGKILL)
    return os.waitpid(pid, 0)[1]


class Moments:
    """A moment server, as a context manager: `at(...)` runs one moment."""

    def __enter__(self) -> Moments:
        code = "import faults_util; faults_util.moment_server()"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env=ENV, cwd=Path(__file__).parent, preexec_fn=default_sigint, text=True,
        )  # fmt: skip
        return self

    def at(self, argv: list[str], after: str, delay: float, signum: int, stderr: Path,
           crash: tuple[str, int, float] | None = None) -> dict:  # fmt: skip
        """Run `s2a ARGV`, signal it `delay` s after `after` is on its stderr; rc, seen, err."""
        # crash: (file, nth, share) kills it (-9) in the nth save of file, that share written
        ask = {"argv": argv, "after": after, "delay": delay, "signal": signum,
               "stderr": str(stderr), "crash": crash}  # fmt: skip
        self.proc.stdin.write(json.dumps(ask) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        return {**answer, "err": stderr.read_text(errors="replace")}

    def __exit__(self, *exc: object) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
