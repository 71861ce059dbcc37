"""What every s2a command shares: its options, its checks of paths and models, and how it
fails (one line on stderr, exit 2) or is interrupted (exit 130)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from ..config import CONFIG
from ..errors import Interrupted, SigtermInterrupt, TrainingError
from .streams import STDIN, STDOUT, Closed, NamedStdout, err, quiet_stdout


class Command(TyperCommand):
    """Help as other CLIs write it: `CORPUS` and `[TEXT]...` in usage, flags without `<bool>`."""

    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:
        """Usage pieces without the braces this Typer puts around required arguments."""
        return [
            piece.replace("{", "").replace("}", "") for piece in super().collect_usage_pieces(ctx)
        ]

    def get_params(self, ctx: typer.Context) -> list[Any]:
        """The parameters, with no value placeholder shown for flags."""
        params = super().get_params(ctx)
        for param in params:
            if getattr(param, "is_flag", False):
                param.metavar = ""
        return params


class Group(TyperGroup):
    """The `s2a` group: a usage error is one line on stderr and exit 2, like every error."""

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        """Run a command; turn Click's usage box (several lines, in colour) into one line."""
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        if sys.stdin is None:  # `<&-`: Python sets a closed stream to None
            sys.stdin = Closed(STDIN)
        if not isinstance(sys.stdout, NamedStdout):
            sys.stdout = NamedStdout(Closed(STDOUT) if sys.stdout is None else sys.stdout)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except typer.Abort:
            sys.stderr.write("s2a: aborted\n")
            sys.exit(1)
        except OSError as error:  # a failed write to stdout, in a command or in `--help`
            if error.filename != STDOUT:
                raise
            traced(error, "--debug" in sys.argv[1:])
            quiet_stdout()
            sys.stderr.write(f"s2a: error: {STDOUT}: {error.strerror}\n")
            sys.exit(2)
        except Exception as error:
            # Click's usage errors; newer Typers carry their own copy of Click, so by shape
            if not callable(getattr(error, "format_message", None)):
                raise
            if type(error).__name__ == "NoArgsIsHelpError" and error.format_message():
                error.show()  # `s2a` alone, without Rich: Click's help on stderr, not an error
                sys.exit(2)
            ctx = getattr(error, "ctx", None)
            hint = f" (see '{ctx.command_path} --help')" if ctx else ""
            if message := " ".join(error.format_message().split()):  # none: help was shown
                sys.stderr.write(f"s2a: error: {message}{hint}\n")
            sys.exit(getattr(error, "exit_code", 2))
        sys.exit(code if isinstance(code, int) else 0)

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        """Parse the command line; a signal meanwhile ends s2a as it does later on (one line)."""
        try:
            return super().make_context(*args, **kwargs)
        except KeyboardInterrupt as error:  # Typer would exit 130 without a word
            raise stopped_by(error) from None

    def invoke(self, ctx: Any) -> Any:
        """Run the command; a signal outside its own handling ends s2a with one line."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as error:
            raise stopped_by(error) from None


DEVICES = ["auto", "cpu", "cuda", "mps"]
Debug = Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")]
ModelDir = Annotated[
    Path | None,
    typer.Option(
        "--model", "-m", help="Model directory \\[default: $S2A_MODEL, else the embedded fr-en]."
    ),
]
Device = Annotated[
    str, typer.Option(help="auto | cpu | cuda | mps", autocompletion=lambda: DEVICES)
]
Threads = Annotated[int, typer.Option(min=0, help="CPU threads (0 = torch's default).")]
SearchThreads = Annotated[
    int,
    typer.Option("--threads", min=0, help="CPU threads for the search (0 = one a core)."),
]
Beam = Annotated[int, typer.Option(min=1, help="Beam size (1 = greedy).")]
BatchSize = Annotated[int, typer.Option(min=1, help="Sentences decoded together.")]
Quantize = Annotated[bool, typer.Option(help="int8 layers on CPU (faster).")]


# set by `train --nproc`'s launcher: the file rank 0 creates once it has said why it stopped
STOP_SAID = "S2A_STOP_SAID"


def deaf_to_signals() -> None:
    """s2a is stopping: more Ctrl-C or SIGTERM change nothing (none raises at exit)."""
    # an impatient third Ctrl-C (the launcher passes on SIGTERM) reached a training rank in
    # torch's exit hooks, after its line: a traceback there (CI, stop 49)
    if threading.current_thread() is not threading.main_thread():  # handlers: main's alone
        return
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)


def say_stopped(line: str) -> None:
    """Print the line saying why s2a stopped; of several training ranks, rank 0 alone does."""
    deaf_to_signals()
    if int(os.environ.get("WORLD_SIZE", "1")) > 1 and os.environ.get("RANK", "0") != "0":
        return  # Ctrl-C reaches every rank: one line says it for all
    err.print(line)
    if said := os.environ.get(STOP_SAID):  # the launcher says nothing more
        with suppress(OSError):  # it is gone: its folder with it
            Path(said).touch()


def stopped_by(error: KeyboardInterrupt) -> typer.Exit:
    """Say that Ctrl-C (or SIGTERM, raised as it is in training) ended s2a; the exit to raise."""
    if isinstance(error, SigtermInterrupt):
        say_stopped("s2a: stopped by SIGTERM")
        return typer.Exit(error.exit_code)
    say_stopped("s2a: interrupted")
    return typer.Exit(130)


def fail(message: str) -> None:
    """Print one error line on stderr and exit with code 2."""
    err.print(f"[bold red]s2a: error:[/] {escape(message)}", soft_wrap=True)
    raise typer.Exit(2)


def distinct_columns(path: Path | str, *, src_col: int, tgt_col: int) -> None:
    """Fail (exit 2) unless the columns are two different ones: the rule training reads by,
    naming the flags that gave them."""
    from ..config import CorpusSpec

    try:
        CorpusSpec(path=str(path), src_col=src_col, tgt_col=tgt_col)
    except ValueError as problem:
        fail(f"{problem} (--src-col {src_col}, --tgt-col {tgt_col})")


@contextmanager
def interrupts_held():
    """Hold Ctrl-C and SIGTERM for the block and deliver them right after, as they were set.

    Importing torch takes a second, and a KeyboardInterrupt raised inside some of its
    imports is swallowed there: s2a would then carry on as if Ctrl-C never came.
    """
    held: list[int] = []
    signals = [s for s in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(s) is not None]
    previous = {s: signal.signal(s, lambda signum, frame: held.append(signum)) for s in signals}
    try:
        yield
    finally:
        for signum, before in previous.items():
            signal.signal(signum, before)
    for signum in held[:1]:  # to the handler it has now: raised, ignored, or the default
        signal.raise_signal(signum)


@contextmanager
def handled(debug: bool):
    """Turn expected failures into one line and exit code 2; Ctrl-C into exit 130."""
    try:
        with interrupts_held():  # the first import of torch
            import torch  # noqa: F401
    except KeyboardInterrupt as error:
        raise stopped_by(error) from None
    try:
        yield
    except typer.Exit:
        raise
    except KeyboardInterrupt as error:
        raise stopped_by(error) from None
    except BrokenPipeError:
        quiet_stdout()  # the reader went away (e.g. `| head -1`): stop quietly, as cat does
        raise typer.Exit(0) from None
    except Interrupted as error:  # training saved its state on Ctrl-C or SIGTERM
        traced(error, debug)
        say_stopped(f"s2a: {escape(str(error))}")
        raise typer.Exit(error.exit_code) from None
    except (ValueError, TrainingError) as error:  # CorpusError, ModelError: the message says it
        traced(error, debug)
        fail(str(error))
    except (OSError, RuntimeError, MemoryError) as error:
        if getattr(error, "filename", None) == STDOUT:  # stdout's: Group.main says it
            raise
        traced(error, debug)
        if getattr(error, "filename", None) == STDIN:  # worded as stdout's
            fail(f"{STDIN}: {error.strerror}")
        fail(f"{type(error).__name__}: {error}")
    except Exception as error:  # unforeseen input (or a bug): still one line, not a traceback
        traced(error, debug)
        fail(f"unexpected {type(error).__name__}: {error} (--debug shows the traceback)")


def traced(error: BaseException, debug: bool) -> None:
    """With --debug, the error's traceback on stderr (its line and exit code follow as without)."""
    if debug:
        traceback.print_exception(error, file=sys.stderr)


@contextmanager
def writing(path: Path, option: str) -> Iterator[None]:
    """Write to `path` (checked by check_output before the work); a failure names the file."""
    try:
        yield
    except OSError as error:
        fail(f"{option} {path}: {error.strerror or error}")


def glossary_terms(path: Path | None) -> dict[str, str] | None:
    """A --glossary file's terms, checked before any work; a bad one: one line, exit 2."""
    if path is None:
        return None
    from ..decoding.rules.glossary import read_glossary
    from ..errors import GlossaryError

    try:
        return read_glossary(path)
    except GlossaryError as error:
        fail(f"--glossary {error}")  # worded as --input's: "--glossary g.tsv: line 3: ..."
    return None


def load_translator(directory: Path, *, device: str, threads: int, quantize: bool) -> Any:
    """The translator on the device asked for, as `seq2attn_cli.load` gives it."""
    from .. import load

    torch_device = setup_torch(device, 0)  # load() sets the threads (search.batched.side_by_side)
    return load(directory, device=str(torch_device), quantized=quantize, threads=threads)


def setup_torch(device: str, threads: int) -> Any:
    """Pick the device ('auto' prefers CUDA, then MPS, then CPU) and the CPU thread count."""
    with interrupts_held():
        import torch

    from ..model.device import pick_device

    if threads > 0:
        torch.set_num_threads(threads)
    try:
        return pick_device(device)
    except ValueError as error:
        fail(f"--{error}")


def model_dir(given: Path | None, *, option: str = "--model") -> Path:
    """The model directory to use, checked before any work: an error says where it came from."""
    env = os.environ.get("S2A_MODEL")
    if given is not None:
        path, origin = given, f"{option} {given}"
    elif env:
        path, origin = Path(env), f"$S2A_MODEL={env}"
    else:
        from ..checkpoint import EMBEDDED

        path, origin = EMBEDDED, "the embedded model"
        if not (path / CONFIG).exists():
            fail(
                "no model: the embedded default model is missing; train one with "
                "`s2a train CORPUS --out DIR` and pass --model DIR (or set S2A_MODEL)"
            )
    if not path.exists():
        fail(f"{origin}: no such directory")
    if not path.is_dir():
        fail(f"{origin}: not a directory")
    if not (path / CONFIG).exists():
        fail(f"{origin}: not a model directory (no {CONFIG})")
    return path


def check_output(path: Path, option: str, *, reads: tuple[Path, ...] = ()) -> None:
    """Fail now, before any work, when `path` cannot be written or is a file the command reads."""
    import tempfile

    for read in reads:
        with suppress(OSError):
            if path.exists() and path.samefile(read):
                fail(f"{option} {path}: is {read}, which this command reads; write elsewhere")
    if path.is_dir():
        fail(f"{option} {path}: is a directory")
    if path.parent.exists() and not path.parent.is_dir():
        fail(f"{option} {path}: {path.parent} is not a directory")
    if not path.parent.is_dir():
        fail(f"{option} {path}: no such directory {path.parent}")
    try:  # the one sure test (permissions, read-only file systems): write a file there
        with tempfile.TemporaryFile(dir=path.parent):
            pass
        if path.exists() and not os.access(path, os.W_OK):
            raise PermissionError
    except OSError:
        fail(f"{option} {path}: cannot write there")
