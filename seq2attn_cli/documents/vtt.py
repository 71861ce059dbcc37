"""WebVTT subtitles (.vtt): each cue's text translated; the WEBVTT header, notes, styles,
regions, cue identifiers, timings and their settings kept as written.

A cue is a block with a timing line (00:01.000 --> 00:04.000, settings after it) and an
identifier before it if any. Its text is read as SubRip's is (srt.py): its lines translated as
one text and its line breaks placed by attention, a dialogue's lines alone, <i>, <b> and <u>
placed as in HTML, and its <c>, <v> and <lang> spans too, a sentence that runs on from cue to
cue translated as one (srt.joined); unlike SubRip's, it is escaped as HTML is (&amp;, &lt;),
and a timestamp in it (<00:02.500>) is kept as written after its word, placed by attention
(the runs between translated each alone came out "Good morning <00:03.800>All of them
<00:04.200>All of them."). Read line by line, a .vtt file had its header translated ("WEBVTT"
came out "WE'RE FORGETFUL."), and players refuse a file that does not start with it. A block
that is neither a cue nor a note, style or region is kept as given and named by
documents.unreadable(), as srt.py does.
"""

from __future__ import annotations

import itertools
import re

from ..errors import DocumentError
from .chunks import NO_LANGUAGES, Chunk, Inline, Item, Keep, Languages, relabeled
from .srt import BLANK, cue_text, joined

HEADER = re.compile(r"WEBVTT(?:[ \t]|\r?\n|$)")
TIME = r"(?:\d+:)?[0-5]\d:[0-5]\d\.\d{3}"  # hours if any, minutes, seconds, milliseconds
TIMING = re.compile(rf"[ \t]*{TIME}[ \t]+-->[ \t]+{TIME}(?:[ \t].*)?\r?\n?")
LANGUAGE = re.compile(r"^(Language:[ \t]*)(\S+)", re.M)  # a header's metadata line
NOT_CUES = ("NOTE", "STYLE", "REGION")  # blocks of the file, not of the film: kept
# a timestamp inside a cue's text (karaoke, YouTube's captions): html.parser reads it as text,
# and it came out "&lt;:08.500"; kept as written, the runs between it translated each alone
STAMP = re.compile(rf"(<{TIME}>)")


def read(text: str, *, languages: Languages = NO_LANGUAGES) -> list[Chunk]:
    """The subtitles as chunks: all but the cues' text as written, and a header's Language
    naming the source language naming the target (YouTube writes "Language: fr")."""
    chunks = blocks(text, languages=languages)[0]
    header = LANGUAGE.sub(lambda m: m.group(1) + relabeled(m.group(2), languages), chunks[0])
    return [header, *chunks[1:]]


def blocks(text: str, *, languages: Languages = NO_LANGUAGES) -> tuple[list[Chunk], list[str]]:
    """The subtitles as chunks, and a note for each block kept as given because unreadable."""
    if not HEADER.match(text):
        raise DocumentError("no WEBVTT line at the start: not a WebVTT file")
    chunks: list[Chunk] = []
    notes: list[str] = []
    line = 1
    for k, block in enumerate(BLANK.split(text)):
        inner = k and not k % 2 and block.strip()  # a block after the header, not a blank run
        cue = _cue(block, languages) if inner else None
        if cue is None and inner and not block.startswith(NOT_CUES):
            start = line + len(block) - len(block.lstrip("\r\n"))
            notes.append(f"line {start}: cue not read (no timing line such as 00:01.000 --> "
                         "00:04.000); kept as given, untranslated")  # fmt: skip
        chunks += cue if cue is not None else [block]
        line += block.count("\n")
    return joined(chunks), notes


def _cue(block: str, languages: Languages) -> list[Chunk] | None:
    """One cue's chunks (identifier and timing as written, its text to translate), or None."""
    lines = block.splitlines(keepends=True)  # a note holds no "-->": an identifier may be NOTE
    timing = next((n for n, line in enumerate(lines[:2]) if TIMING.fullmatch(line)), None)
    if timing is None or timing == 1 and "-->" in lines[0]:
        return None
    head = "".join(lines[: timing + 1])
    chunks = cue_text(lines[timing + 1 :], escaped=True, languages=languages)
    for chunk in chunks:
        if isinstance(chunk, Inline):
            chunk.items = _stamped(chunk.items)
    return [head, *chunks]


def _stamped(items: list[Item]) -> list[Item]:
    """A cue's text with each timestamp in it a Keep, placed after its word by attention
    (html.parser hands "<00:02.500>" over in pieces: the text between tags is joined first)."""
    out: list[Item] = []
    for text, run in itertools.groupby(items, key=lambda item: isinstance(item, str)):
        if not text:
            out += run
            continue
        pieces = STAMP.split("".join(run))  # type: ignore[arg-type]
        out += [Keep((p,)) if n % 2 else p for n, p in enumerate(pieces) if p]
    return out
