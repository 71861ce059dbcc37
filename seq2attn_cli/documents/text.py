"""Plain text as a document: each line's sentences translated one by one and joined with a
space, so N lines in give N lines out and blank lines, indentation and tabs stay where they
were (a tab's columns are translated apart, as a line's are: decoding/columns.py)."""

from __future__ import annotations

from .chunks import NO_LANGUAGES, Chunk, Inline, Languages


def read(text: str, *, languages: Languages = NO_LANGUAGES) -> list[Chunk]:
    """One Inline per column of each line, its tabs and line ending kept as they were (plain
    text names no language)."""
    chunks: list[Chunk] = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        for k, column in enumerate(body.split("\t")):
            chunks += ["\t"] * (k > 0) + [Inline([column])]
        chunks.append(line[len(body) :])
    return chunks
