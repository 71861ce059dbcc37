"""Read a stream of input lines in chunks, without waiting on a slow pipe. Imports no torch."""

from __future__ import annotations

import io
import select
from collections.abc import Iterator
from typing import BinaryIO


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
            lines.append(line[:max_bytes])
            size += len(lines[-1])
            if len(lines) >= chunk or size >= chunk_bytes:
                yield lines
                lines, size = [], 0
        if len(pending) > max_bytes:
            pending, cut = pending[:max_bytes], True
        if lines and not _ready(stream):
            yield lines
            lines, size = [], 0
    if pending:
        lines.append(pending)
    if lines:
        yield lines


def _ready(stream: BinaryIO) -> bool:
    """True when more input can be read right now without blocking."""
    try:
        ready, _, _ = select.select([stream], [], [], 0)
    except (ValueError, OSError, TypeError, io.UnsupportedOperation):  # no file descriptor
        return True
    return bool(ready)
