"""The interactive prompt of `s2a translate` in a terminal: line editing and history,
Ctrl-C cancels a line, Ctrl-D ends."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from .streams import err


def _input(prompt: str) -> str:
    """input() with line editing and history (readline), its prompt on stderr, not stdout."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)  # readline writes its prompt and echo to stdout: make that the terminal
    try:
        return input(prompt)
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def prompt(emit: Callable[[list[str], int], None]) -> None:
    """The interactive prompt: Up/Down recall, Ctrl-C cancels the line, Ctrl-D ends."""
    try:
        import readline  # noqa: F401  (importing it gives input() line editing and history)
    except ImportError:  # no readline (Windows): a plain prompt
        pass
    err.print("s2a: type a sentence and press Enter (Ctrl-D to end)")
    line_no = 1
    while True:
        try:
            line = _input("> ")
        except EOFError:  # Ctrl-D
            err.print()
            return
        except KeyboardInterrupt:  # Ctrl-C: drop this line, as a shell does
            err.print()
            continue
        try:
            emit([line], line_no)
        except KeyboardInterrupt:
            err.print("(cancelled)")
        line_no += 1
