"""Documents, not just lines: plain text, HTML, Markdown and subtitles (SubRip, WebVTT),
translated with their structure kept and their inline markup placed by attention.

Each format has a module that reads a document into chunks (chunks.py): what is written as
it was, and the runs of text to translate. `translated` translates every sentence of a
document in one call and writes it back. Imports no torch: the translator is passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..config import DECODE
from ..data.streams import BOM, not_text
from ..errors import DocumentError
from . import html, markdown, srt, text, vtt
from .chunks import NO_LANGUAGES, Chunk, Languages
from .inline import render, sources

if TYPE_CHECKING:
    from ..decoding.translation import Translation

READERS: dict[str, Callable[..., list[Chunk]]] = {  # (text, *, languages) -> chunks
    "text": text.read,
    "html": html.read,
    "markdown": markdown.read,
    "srt": srt.read,
    "vtt": vtt.read,
}
FORMATS = tuple(READERS)
EXTENSIONS = {
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".srt": "srt",
    ".vtt": "vtt",
}
# a bigger document is refused rather than held in memory: ~4 MB of text takes the embedded
# model hours on a CPU; plain text of any length goes line by line (s2a translate -i)
MAX_CHARS = 4_000_000


def format_of(path: str | Path) -> str:
    """A document's format, from its file name's extension."""
    suffix = Path(path).suffix.lower()
    if suffix not in EXTENSIONS:
        known = ", ".join(EXTENSIONS)
        raise DocumentError(
            f"{Path(path).name}: no document format for {suffix or 'no extension'} (known: {known})"
        )
    return EXTENSIONS[suffix]


def unreadable(text: str, *, format: str) -> list[str]:
    """What of a document its reader kept as given because it could not read it: one note each."""
    subtitles = {"srt": srt.blocks, "vtt": vtt.blocks}.get(format)  # (chunks, notes)
    return subtitles(text.removeprefix(BOM))[1] if subtitles else []


def sentences_in(text: str, *, format: str, limit: int | None = None) -> list[str]:
    """The sentences a document asks to translate, in order: its words without its markup,
    each cut to `limit` characters as `translated` cuts it."""
    if format not in READERS:
        raise DocumentError(f"unknown document format {format!r} (one of {', '.join(FORMATS)})")
    return sources(_chunks(text, format), limit)


def _chunks(text: str, format: str, *, languages: Languages = NO_LANGUAGES) -> list[Chunk]:
    """A document read by its format's reader, after its byte-order mark (a Windows editor's),
    which starts the translation too."""
    body = text.removeprefix(BOM)
    return [text[: len(text) - len(body)], *READERS[format](body, languages=languages)]


class Translated(NamedTuple):
    """A document translated, and each of its sentences' Translation (what it left out)."""

    text: str
    sentences: list[Translation]


def translated(
    translator: Any,
    text: str,
    *,
    format: str,
    beam: int = DECODE.beam,
    glossary: Mapping[str, str] | None = None,
) -> Translated:
    """A document translated, and each of its sentences' Translation (what it left out)."""
    if format not in READERS:
        raise DocumentError(f"unknown document format {format!r} (one of {', '.join(FORMATS)})")
    if len(text) > MAX_CHARS:
        raise DocumentError(
            f"{len(text):,} characters; a document may hold {MAX_CHARS:,} at most "
            "(split it, or translate plain text line by line)"
        )
    if problem := not_text([text[: 1 << 16].encode("utf-8", errors="replace")]):
        raise DocumentError(problem)
    # the document says it is in the target language now (<html lang>, Language:, lang:)
    chunks = _chunks(text, format, languages=translator.config.languages)
    limit = getattr(translator, "max_chars", None)  # longer sentences: cut in parts
    wanted = list(dict.fromkeys(sources(chunks, limit)))
    translations = translator.translate(wanted, beam=beam, glossary=glossary)
    done = dict(zip(wanted, translations, strict=True))
    return Translated(render(chunks, done, limit), translations)
