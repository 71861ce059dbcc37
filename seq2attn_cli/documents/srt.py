"""SubRip subtitles (.srt): each cue's text translated, its number and timing kept as written.

The `srt` package reads each cue; a block it cannot read (a broken timing, a number that is
not one) is kept as it was, untranslated, and named by documents.unreadable() for the CLI to
warn about. A cue's lines are translated as one text and its line breaks placed by attention,
so a two-line cue stays two lines; a dialogue cue (each line starting with "-") has each line
translated alone. <i>, <b>, <u> and <font> tags are placed as in HTML (html.py), and
{\\an8}-style override tags kept as they were. A sentence a cue leaves unended and the next
goes on in lower case ("Je pense que nous devrions" / "acheter une voiture.") is translated
as one, the cue boundary placed by attention as a line break is: alone, each half came out a
sentence of its own ("I think we should" / "Make a new car."). Only cues of plain text: a tag
placed by attention could cross to the other cue.
"""

from __future__ import annotations

import re

import srt

from ..errors import DocumentError
from . import html
from .chunks import NO_LANGUAGES, Chunk, Inline, Keep, Languages, same

BLANK = re.compile(r"((?:\r?\n)(?:[ \t]*\r?\n)+)")  # what parts two cues
# what parts a cue's text from the next cue's: its line end, blank lines, the next cue's number
# or identifier and its timing line (a dialogue's dash after it: not one sentence)
BETWEEN = re.compile(r"[ \t]*\r?\n(?:[ \t]*\r?\n)+(?:[^\r\n]*\r?\n)?[^\r\n]*-->[^\r\n]*\r?\n")
ENDED = re.compile(r"[.!?…:;»\"')\]♪]\s*$")  # a cue's text that ends its sentence
GOES_ON = re.compile(r"^\s*[a-zà-ÿœæ]")  # the next cue's text, in lower case: the same sentence
OWN_CUE = re.compile(r"-->[^\r\n]*\r?\n$")  # before a cue's whole text: its timing line
MAX_JOINED = 3  # cues a sentence may span: longer runs are lyrics or a list, not one sentence
# an ASS/SSA override tag, which players read in SubRip too: {\an8} (top of the screen),
# {\i1}, {\c&H00FFFF&}; markup, not words
OVERRIDE = r"\{\\[^{}]*\}"
DIALOGUE = re.compile(rf"^(\s*(?:{OVERRIDE}\s*)*-+\s*)(.*)$", re.S)  # {\an8}- Hi!
MARKUP = re.compile(rf"(\r?\n|{OVERRIDE})")  # kept as Keeps: line breaks and override tags


def read(text: str, *, languages: Languages = NO_LANGUAGES) -> list[Chunk]:
    """The subtitles as chunks: numbers, timings and blank lines as written, cue text apart
    (no line of a SubRip file names its language)."""
    return blocks(text)[0]


def blocks(text: str) -> tuple[list[Chunk], list[str]]:
    """The subtitles as chunks, and a note for each block kept as given because unreadable."""
    chunks: list[Chunk] = []
    notes: list[str] = []
    cues, line = 0, 1
    for k, block in enumerate(BLANK.split(text)):
        cue = None if k % 2 or not block.strip() else _cue(block)
        if cue is None and block.strip() and not k % 2:
            start = line + len(block) - len(block.lstrip("\r\n"))  # skip leading newlines
            notes.append(f"line {start}: cue not read ({_why(block)}); kept as given, untranslated")
        cues += cue is not None
        chunks += cue if cue is not None else [block]
        line += block.count("\n")
    if text.strip() and not cues:
        raise DocumentError("no subtitle cue found (number, 00:00:01,000 --> 00:00:02,000, text)")
    return joined(chunks), notes


def joined(chunks: list[Chunk]) -> list[Chunk]:
    """The chunks with each sentence that runs on from cue to cue one Inline, what parts the
    cues a line break in it (SubRip and WebVTT alike)."""
    out: list[Chunk] = []
    spans = 1  # cues the last Inline of `out` holds
    for chunk in chunks:
        k = len(out) - 1
        while k >= 0 and isinstance(out[k], str):  # back to the last Inline, over text as written
            k -= 1
        between = "".join(out[k + 1 :])  # type: ignore[arg-type]
        last = out[k] if k >= 0 else None
        if (
            isinstance(chunk, Inline)
            and isinstance(last, Inline)
            and (spans > 1 or _whole_cue(out, k))  # not a dialogue's last line
            and spans < MAX_JOINED
            and chunk.escape is last.escape
            and BETWEEN.fullmatch(between)
            and _goes_on(last, chunk)
        ):
            last.items = [*last.items, Keep((between,), breaks=True), *chunk.items]
            del out[k + 1 :]
            spans += 1
            continue
        spans = spans if isinstance(chunk, str) else 1
        out.append(chunk)
    return out


def _whole_cue(chunks: list[Chunk], k: int) -> bool:
    """Whether the Inline at `k` is all of its cue's text: right after its timing line."""
    start = k
    while start > 0 and isinstance(chunks[start - 1], str):
        start -= 1
    return bool(OWN_CUE.search("".join(chunks[start:k])))  # type: ignore[arg-type]


def _goes_on(first: Inline, then: Inline) -> bool:
    """Whether `then` goes on with the sentence `first` leaves unended: both plain text and
    line breaks (a tag or a timestamp placed by attention could cross to the other cue)."""
    if not all(
        isinstance(i, str) or isinstance(i, Keep) and i.breaks for i in first.items + then.items
    ):
        return False
    words = [item for item in first.items if isinstance(item, str)]
    more = [item for item in then.items if isinstance(item, str)]
    return bool(words and more) and not ENDED.search(words[-1]) and bool(GOES_ON.match(more[0]))


def _why(block: str) -> str:
    """Why `srt` could not read a block as one cue, in a few words."""
    lines = block.strip().splitlines()
    timings = [n for n, line in enumerate(lines) if "-->" in line]
    if not timings:
        return "no timing line such as 00:00:01,000 --> 00:00:02,000"
    if len(timings) > 1:
        return f"{len(timings)} timing lines: a blank line missing between cues?"
    if timings[0] == 0:
        return "no cue number before its timing line"
    if not lines[0].strip().isdigit():
        return f"cue number {lines[0].strip()[:40]!r} is not a number"
    return f"timing {lines[timings[0]].strip()[:60]!r} cannot be read"


def _cue(block: str) -> list[Chunk] | None:
    """One cue's chunks, or None when `srt` cannot read it as one cue."""
    try:
        found = list(srt.parse(block))
    except srt.SRTParseError:
        return None
    if len(found) != 1:
        return None
    lines = block.splitlines(keepends=True)
    timing = next(n for n, line in enumerate(lines) if "-->" in line)
    return ["".join(lines[: timing + 1]), *cue_text(lines[timing + 1 :], escaped=False)]


def cue_text(
    lines: list[str], *, escaped: bool, languages: Languages = NO_LANGUAGES
) -> list[Chunk]:
    """A cue's text lines (with their line ends) as chunks: translated as one text, or line by
    line for a dialogue. `escaped`: written as HTML is ("&amp;": WebVTT), or not (SubRip)."""
    text = "".join(lines)
    if all(DIALOGUE.match(line) for line in lines):  # "- Hi!" / "- Hello."
        chunks: list[Chunk] = []
        for line in lines:
            dash, rest = DIALOGUE.match(line).groups()  # type: ignore[union-attr]
            content = rest.rstrip("\r\n")
            chunks += [dash, *text_of(content, escaped=escaped, languages=languages)]
            chunks.append(rest[len(content) :])
        return chunks
    content = text.rstrip("\r\n")
    return [*text_of(content, escaped=escaped, languages=languages), text[len(content) :]]


def text_of(content: str, *, escaped: bool, languages: Languages = NO_LANGUAGES) -> list[Chunk]:
    """A cue's text, read as HTML inline markup, its line breaks placed like <br> (a span in
    another language than `languages`' source kept as written, as in HTML)."""
    chunks = html.read(content, languages=languages)
    for chunk in chunks:
        if isinstance(chunk, Inline):
            if not escaped:  # SubRip text is not HTML-escaped: "Tom & Jerry"
                chunk.escape = same
            chunk.items = [
                piece
                for item in chunk.items
                for piece in (_broken(item) if isinstance(item, str) else [item])
            ]
    return chunks


def _broken(text: str) -> list:
    """A run of text with each line break as a Keep that parts words, and each override tag
    ({\\an8}) as a Keep."""
    out: list = []
    for n, piece in enumerate(MARKUP.split(text)):
        if n % 2:
            out.append(Keep((piece,), breaks=not piece.startswith("{")))
        elif piece:
            out.append(piece)
    return out
