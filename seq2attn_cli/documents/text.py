"""Plain text as a document: each line's sentences translated one by one and joined with a
space, so N lines in give N lines out and blank lines and indentation stay where they were."""

from __future__ import annotations

from .chunks import NO_LANGUAGES, Chunk, Inline, Languages


def read(text: str, *, languages: Languages = NO_LANGUAGES) -> list[Chunk]:
    """One Inline per line, its line ending kept as it was (plain text names no language)."""
    chunks: list[Chunk] = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        chunks += [Inline([body]), line[len(body) :]]
    return chunks
