"""Read a stream of input lines in chunks, without waiting on a slow pipe. Imports no torch."""

from __future__ import annotations

import io
import select
from collections.abc import Iterator
from typing import BinaryIO

BOM = "\ufeff"  # the byte-order mark a Windows editor starts a UTF-8 file with
# what to do about lines that are not UTF-8: most such files are Latin-1 (Windows, old tools)
LATIN1_HINT = "Latin-1? iconv -f latin1 -t utf-8 converts it"


def line_chunks(
    stream: BinaryIO, *, chunk: int, max_bytes: int = 1 << 20, chunk_bytes: int = 1 << 24
) -> Iterator[list[bytes]]:
    """Yield lists of up to `chunk` input lines, early when no more input is ready yet.

    Yielding early is what lets a slow pipe (`tail -f | s2a translate`) get each line's
    translation before the next line arrives. A line longer than `max_bytes` is cut there,
    and a chunk holding `chunk_bytes` is yielded at once, so memory stays bounded even on
    an endless line or a run of long ones.
    """
    pending = b""
    cut = False  # the pending line was cut at max_bytes: drop its bytes until the newline
    lines: list[bytes] = []
    size = 0  # bytes in `lines`
    while data := stream.read1(1 << 16):
        if cut:
            newline = data.find(b"\n")
            if newline < 0:
                continue
            data, cut = data[newline:], False  # the newline completes the cut line below
        *complete, pending = (pending + data).split(b"\n")
        for line in complete:
            lines.append(_cut(line, max_bytes))
            size += len(lines[-1])
            if len(lines) >= chunk or size >= chunk_bytes:
                yield lines
                lines, size = [], 0
        if len(pending) > max_bytes:
            pending, cut = _cut(pending, max_bytes), True
        if lines and not _ready(stream):
            yield lines
            lines, size = [], 0
    if pending:
        lines.append(pending)
    if lines:
        yield lines


def _cut(line: bytes, max_bytes: int) -> bytes:
    """`line` cut near `max_bytes` between characters, never inside one's UTF-8 bytes: before
    the character that crosses the limit, or after it if it is the first."""
    end = min(len(line), max_bytes)
    if end < len(line):
        lead = end  # the lead byte of the character at the limit: at most 3 bytes back
        while lead > 0 and end - lead < 3 and line[lead] & 0xC0 == 0x80:
            lead -= 1
        if lead + _width(line[lead]) > end:  # that character crosses the limit
            end = lead  # (stray continuation bytes of invalid input are cut like any byte)
    if end == 0 and line:  # one character longer than the limit: kept whole, not lost
        end = _width(line[0])
    return line[:end]


def _width(byte: int) -> int:
    """Bytes of the UTF-8 character this byte leads (1 for ASCII and stray bytes)."""
    return 1 if byte < 0xC0 else 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4


def _ready(stream: BinaryIO) -> bool:
    """True when more input can be read right now without blocking."""
    try:
        ready, _, _ = select.select([stream], [], [], 0)
    except (ValueError, OSError, TypeError, io.UnsupportedOperation):  # no file descriptor
        return True
    return bool(ready)


# UTF-32 first: its little-endian mark starts with UTF-16's
_BYTE_ORDER_MARKS = [
    (b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"),
]  # fmt: skip


def not_text(lines: list[bytes]) -> str | None:
    """Why the first chunk of an input is not UTF-8 text, or None when it may well be."""
    for mark, encoding in _BYTE_ORDER_MARKS:
        if lines and lines[0].startswith(mark):
            return (
                f"starts with a {encoding} byte-order mark; s2a reads UTF-8 text "
                f"(iconv -f {encoding} -t UTF-8 converts it)"
            )
    text = b"".join(lines).decode("utf-8", errors="replace")
    invalid = text.count("\ufffd")
    bad = invalid + sum((c < " " and c not in "\t\n\r\v\f") or c == "\x7f" for c in text)
    # by share, so that no chunk size or pipe timing decides: binaries and UTF-16 are mostly
    # NULs, control bytes and invalid UTF-8; text holds a stray one or two
    if bad >= 8 and 10 * bad >= len(text) and invalid == bad:  # short Latin-1 lines: "café"
        return (
            f"not UTF-8: {bad:,} of its first {len(text):,} characters are invalid UTF-8 "
            f"({LATIN1_HINT})"
        )
    if bad >= 8 and 10 * bad >= len(text):
        return (
            f"not text: {bad:,} of its first {len(text):,} characters are NUL, control bytes "
            "or invalid UTF-8 (a binary file, or UTF-16 without a byte-order mark?); "
            "s2a reads UTF-8 text"
        )
    return None


def decoded(raw: bytes) -> tuple[str, str | None]:
    """Bytes as text, each invalid UTF-8 sequence read as U+FFFD, and what was wrong (or None):
    where the first bad byte is, its line when `raw` holds several."""
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as error:
        text = raw.decode("utf-8", errors="replace")
        more = text.count("\ufffd") - raw.count("\ufffd".encode()) - 1
        line = raw.count(b"\n", 0, error.start)
        start = error.start - (raw.rfind(b"\n", 0, error.start) + 1)
        where = f"line {line + 1}, " if b"\n" in raw else ""
        return text, (
            f"not UTF-8 ({where}byte {raw[error.start : error.end].hex(' ')} at byte {start + 1}"
            + (f", and {more:,} more" if more > 0 else "")
            + "); read as \ufffd"
        )
