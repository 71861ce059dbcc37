"""`s2a train --nproc N`: the same command re-run as N processes by torch's own launcher
(torchrun), and how that launcher stops when a signal comes: after its workers, one line."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import sys
import tempfile
import time
from contextlib import suppress
from pathlib import Path
from typing import NoReturn

import typer
from rich.markup import escape

from .common import STOP_SAID
from .streams import err


def launch(nproc: int) -> None:
    """Re-run this same command as `nproc` processes with torch's own launcher (torchrun)."""
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.run import main as torchrun

    args = sys.argv[1:]
    for i, arg in enumerate(args):  # drop --nproc N / --nproc=N: the workers are the N
        if arg == "--nproc":
            args = args[:i] + args[i + 2 :]
            break
        if arg.startswith("--nproc="):
            args = args[:i] + args[i + 1 :]
            break
    _quiet_launcher()
    err.print(f"launching {nproc} training processes (torch.distributed, gloo/NCCL)")
    with tempfile.TemporaryDirectory(prefix="s2a-") as folder:
        said = os.environ[STOP_SAID] = str(Path(folder) / "said")  # by rank 0, if it could
        try:
            torchrun(["--standalone", f"--nproc-per-node={nproc}", "-m", "seq2attn_cli", *args])
        except SignalException as error:  # passed on to the workers, which stop and save
            _outlast_workers()
            _stopped(error.sigval, Path(said), folder)
        except Exception as error:  # the launcher reports which rank failed and why
            codes = {f.exitcode for f in getattr(error, "failures", {}).values()}
            if codes and codes <= {130, 143}:  # the signal came to the workers alone
                signum = signal.SIGTERM if 143 in codes else signal.SIGINT
                _stopped(signum, Path(said), folder)
            err.print(f"[bold red]s2a: error:[/] distributed training failed: {escape(str(error))}")
            raise typer.Exit(2) from None


def _quiet_launcher() -> None:
    """torchrun's warnings off: s2a's one line says why it stopped; torchrun's errors still show."""
    # on Ctrl-C it warned "Received 2 death signal, shutting down workers" and one line per worker
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if name.startswith("torch.distributed") and isinstance(logger, logging.Logger):
            logger.setLevel(logging.ERROR)


def _stopped(signum: int, said: Path, folder: str) -> NoReturn:
    """The launcher's exit for a signal; its line only when no worker has said one."""
    if not said.exists():  # the workers had not started s2a yet, or died by the signal
        err.print("s2a: stopped by SIGTERM" if signum == signal.SIGTERM else "s2a: interrupted")
    # at once, without the interpreter's teardown: torchrun's store thread, still running
    # there, once aborted the launcher ("terminate called without an active exception", exit
    # -6 for 143, once in a clean clone's suite); the workers have exited, nothing is left
    shutil.rmtree(folder, ignore_errors=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(128 + signum)


def _outlast_workers(seconds: float = 60) -> None:
    """Wait, deaf to more signals, until every worker has exited: none outlives s2a."""
    # torchrun waits for them, but a second Ctrl-C cuts its wait short: they are still saving
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
    deadline = time.monotonic() + seconds
    for pid in _children():
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _running(pid):  # as torchrun ends a worker that outlasts its own wait
            os.kill(pid, signal.SIGKILL)


def _children() -> list[int]:
    """This process's child processes (none known without /proc)."""
    pids: list[int] = []
    for task in Path("/proc/self/task").glob("*"):  # each thread's children
        with suppress(OSError):  # the thread ended meanwhile
            pids += map(int, (task / "children").read_text().split())
    return pids


def _running(pid: int) -> bool:
    """Whether the child `pid` still runs (one that has exited is reaped)."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == 0
    except ChildProcessError:  # reaped already, by torchrun
        return False
