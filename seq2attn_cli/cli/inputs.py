"""`s2a translate --input`: the file opened before the model loads, and whether it is read line
by line or as a document (HTML, Markdown, subtitles), whole."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from rich.markup import escape

from .common import fail
from .streams import err


def open_input(path: Path) -> Any:
    """The --input file opened for reading, or one error line now, before the model loads."""
    try:
        return path.open("rb")
    except IsADirectoryError:
        fail(f"--input {path}: is a directory")
    except OSError as error:
        fail(f"--input {path}: {error.strerror or error}")


# how a document piped in without --input-format starts: read line by line, its markup, cue
# numbers and timings are translated as text, so it is said
LOOKS_LIKE = (
    ("SubRip subtitles", "srt", re.compile(r"\s*\d+[ \t]*\r?\n[ \t]*\d+:\d\d:\d\d,\d+[ \t]+-->")),
    ("WebVTT subtitles", "vtt", re.compile(r"WEBVTT(?:\s|$)")),
    ("an HTML page", "html", re.compile(r"\s*<(?:!doctype\s+html|html)\b", re.I)),
)


def looks_like(start: str) -> str:
    """What the start of text read line by line says it is, as a hint ('' when lines)."""
    for kind, format, pattern in LOOKS_LIKE:
        if pattern.match(start):
            return (
                f"looks like {kind}: read line by line; --input-format {format} keeps its structure"
            )
    return ""


def document_format(input: Path | None, given: str | None) -> str | None:
    """The document format --input is read in, or None to translate it line by line."""
    if input is None and given is None:  # lines: markdown-it and the readers stay unimported
        return None
    from ..documents import EXTENSIONS, FORMATS

    if given is not None:
        given = given.lower()  # HTML, SRT: as the extensions are read
        if given not in FORMATS:
            fail(f"--input-format must be one of {', '.join(FORMATS)}, not {given!r}")
        return given
    suffix = input.suffix.lower() if input is not None else ""
    return EXTENSIONS[suffix] if suffix in EXTENSIONS and suffix != ".txt" else None


def read_document(path: Path | None) -> str:
    """A whole document, from its file or stdin, or one error line naming it."""
    from ..data.streams import decoded, not_text
    from ..documents import MAX_CHARS

    name = "stdin" if path is None or str(path) == "-" else str(path)
    stream = sys.stdin.buffer if name == "stdin" else open_input(path)  # type: ignore[arg-type]
    with stream:
        data = stream.read(4 * MAX_CHARS + 1)  # UTF-8: at most 4 bytes a character
    if problem := not_text([data[: 1 << 16]]):
        fail(f"{name}: {problem}")
    text, problem = decoded(data)
    if len(data) > 4 * MAX_CHARS or len(text) > MAX_CHARS:
        fail(f"{name}: more than {MAX_CHARS:,} characters; split it, or translate it line by line")
    if problem:
        err.print(f"[yellow]warning:[/] {escape(name)}: {problem}", soft_wrap=True)
    return text
