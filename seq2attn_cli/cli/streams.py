"""s2a's standard streams: consoles on stderr and stdout that behave in a terminal, a pipe
and a log alike, and stdout and stdin whose failures name them (a closed pipe ends s2a quietly,
a full disk with one line)."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from rich.console import Console


def _is_tty(file: Any) -> bool:
    """The file itself, not rich's is_terminal, which FORCE_COLOR makes true in a log too."""
    try:
        return file.isatty()
    except ValueError:  # closed
        return False


class StderrConsole(Console):
    """stderr: lines wrap at a terminal's width, and never in a log or a pipe (paths stay whole)."""

    @property  # type: ignore[override]
    def soft_wrap(self) -> bool:
        """Asked at each print (CliRunner swaps sys.stderr after start)."""
        return not _is_tty(self.file)

    @soft_wrap.setter
    def soft_wrap(self, _: bool) -> None:  # rich's __init__ sets it; the property decides
        pass


err = StderrConsole(stderr=True, highlight=False)


class StdoutConsole(Console):
    """A rich console on stdout whose closed pipe (`| head`) ends s2a quietly, with exit 0, and
    whose tables end each line at its last character in a pipe or file (no padding to strip)."""

    def _render_buffer(self, buffer: Any) -> str:
        text = super()._render_buffer(buffer)
        if _is_tty(self.file):
            return text
        return "\n".join(line.rstrip(" ") for line in text.split("\n"))

    def on_broken_pipe(self) -> None:
        self.quiet = True  # rich's own handler exits 1; `handled` treats it as cat does
        raise BrokenPipeError


STDOUT = "standard output"  # the name a failed write to stdout gives (`> /dev/full`)
STDIN = "standard input"


class Closed:
    """A standard stream the shell closed (`>&-`, `<&-`): no terminal, and any use of it an
    OSError naming it, as `cat` says "Bad file descriptor" (Python leaves such a stream None,
    and s2a failed on None.isatty())."""

    def __init__(self, name: str) -> None:
        self.name = name

    def isatty(self) -> bool:
        """Not a terminal: no colour, no prompt."""
        return False

    def flush(self) -> None:
        """Nothing: nothing could be written (Python flushes stdout at exit, after the error)."""

    def __getattr__(self, attr: str) -> Any:
        """Reading or writing it (read, write, buffer, fileno...): the error naming it; any
        other attribute (encoding, errors...) it lacks, as a probe with getattr expects."""
        if attr not in INPUT_OUTPUT:
            raise AttributeError(attr)
        raise OSError(errno.EBADF, os.strerror(errno.EBADF), self.name)


INPUT_OUTPUT = {"read", "readline", "readlines", "write", "writelines", "buffer", "fileno"}


class NamedStdout:
    """sys.stdout whose failed writes name it: Python's OSError from a write names no file."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Write `text`; a full disk or a closed file is an OSError naming standard output."""
        with named_failures():
            return self.stream.write(text)

    def flush(self) -> None:
        """Flush, naming standard output if it fails."""
        with named_failures():
            self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        """Everything else (fileno, isatty, buffer, encoding) as the stream has it."""
        return getattr(self.stream, name)


@contextmanager
def named_failures() -> Iterator[None]:
    """Raise a failed write to stdout as an OSError whose filename says so."""
    try:
        yield
    except BrokenPipeError:  # the reader went away: `handled` ends quietly, as cat does
        raise
    except OSError as error:
        raise OSError(error.errno, error.strerror, STDOUT) from None


def quiet_stdout() -> None:
    """Point stdout at /dev/null, where s2a stops on its failure: Python's flush at exit,
    of what the failed write left in the buffer, would print a second error."""
    with suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def use_color(console: Console) -> bool:
    """Whether to draw in colour on this console (not under NO_COLOR or on a plain terminal)."""
    return console.color_system is not None and not console.no_color
