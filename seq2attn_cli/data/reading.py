"""Read sentence pairs from tab-separated files (plain, .gz or .xz), streaming, and
normalise text the way training and translation both see it. Imports no torch."""

from __future__ import annotations

import gzip
import lzma
import os
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import CorpusError
from .streams import not_text

# source-length buckets in words, as in Bahdanau et al. (2015), Fig. 2
BUCKETS: list[tuple[str, int, int]] = [
    ("1-5", 1, 5), ("6-10", 6, 10), ("11-15", 11, 15), ("16-20", 16, 20), ("21-30", 21, 30),
    ("31+", 31, 10**9),
]  # fmt: skip


def bucket_of(source: str) -> str:
    """Name of the length bucket a source sentence falls in."""
    n = max(len(source.split()), 1)
    return next(name for name, lo, hi in BUCKETS if lo <= n <= hi)


@dataclass
class ReadReport:
    """What reading a corpus kept and skipped: skipped lines are counted, never hidden."""

    path: str
    lines: int = 0
    kept: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count
    first_line: dict[str, int] = field(default_factory=dict)  # reason -> first line number
    max_chars: int = 0  # the longest side kept, said with "too long"

    def skip(self, reason: str, line_no: int) -> None:
        """Count one skipped line under its reason."""
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        self.first_line.setdefault(reason, line_no)

    def figures(self) -> dict[str, Any]:
        """Lines read and skipped, by reason with the first line of each, as config.json keeps
        them for a corpus and a --valid file alike."""
        return {
            "lines": self.lines,
            "skipped": dict(self.skipped),
            "skipped_first_line": dict(self.first_line),
        }

    def summary(self) -> str:
        """One line per reason, e.g. 'no tab: 3 lines (first: line 7)'."""
        limit = {"too long": f" (over {self.max_chars:,} characters)"} if self.max_chars else {}
        return "; ".join(
            f"{reason}{limit.get(reason, '')}: {n} line{'s' * (n != 1)} "
            f"(first: line {self.first_line[reason]})"
            for reason, n in sorted(self.skipped.items())
        )


# a zero-width joiner between two symbols binds an emoji sequence (👨‍👩‍👧, ❤️‍🔥): as a space,
# the family came out as three people ("The 👨 👩 is 👧 here.")
EMOJI_JOINER = re.compile(r"(?<=[^\w\s])\u200d(?=[^\w\s])")
# the tag characters that make a black flag a region's (🏴 + "gbsct" + cancel tag: Scotland's):
# as spaces, the flag came out plain black
TAG_CHARACTERS = "".join(map(chr, range(0xE0020, 0xE0080)))
FLAG_TAGS = re.compile(f"(?<=\U0001f3f4)[{TAG_CHARACTERS}]+")


# the categories of characters no font draws: controls, formats, surrogates, unassigned; not
# a private use one, which an icon font draws (it was left out without a word)
INVISIBLE = {"Cc", "Cf", "Cs", "Cn"}


def clean(text: str) -> str:
    """NFC-normalise and fold runs of whitespace (and invisible characters) into one space."""
    # isprintable() is False for every control character (category C, and spaces but " "):
    # text that passes (most lines) skips the character-by-character look-up, which took
    # two thirds of the time reading Europarl
    if not text.isprintable():
        joins = {m.start() for m in EMOJI_JOINER.finditer(text)}
        joins |= {i for m in FLAG_TAGS.finditer(text) for i in range(m.start(), m.end())}
        text = "".join(
            " " if unicodedata.category(c) in INVISIBLE and i not in joins else c
            for i, c in enumerate(text)
        )
    return " ".join(unicodedata.normalize("NFC", text).split())


# Variants that mean the same to a reader: typographic apostrophes and quotes (Canadian laws
# write ’, Tatoeba '), the minus sign (U+2212: "Il fait −4 °C." came out "He's getting out of
# Celsius."), French spacing before ? ! : ; and the space Tatoeba sets before a final full stop
# (non-breaking and thin spaces `clean` has folded already). Nothing here changes a word.
_SAME_CHARACTER = {
    "’": "'", "‘": "'", "ʼ": "'", "`": "'", "´": "'",
    "“": '"', "”": '"', "„": '"', "−": "-",
}  # fmt: skip
_SPACE_BEFORE = re.compile(r" ([?!:;.,)»])")  # "Stop !" -> "Stop!"
_SPACE_AFTER = re.compile(r"([«(]) ")  # "« Oui »" -> "«Oui»" -> '"Oui"'


def normalize(text: str) -> str:
    """`clean`, then fold apostrophe, quote and space variants and French punctuation spacing."""
    text = clean(text)  # its only whitespace is single spaces
    # a replace per variant present: 10x faster than str.translate, which looks up each character
    if not text.isascii() or "`" in text:
        for variant, same in _SAME_CHARACTER.items():
            if variant in text:
                text = text.replace(variant, same)
    text = _SPACE_AFTER.sub(r"\1", _SPACE_BEFORE.sub(r"\1", text))
    return text.replace("«", '"').replace("»", '"')


# An opening quote glued to its word hides the word's own piece: '"bonjour' is read as ▁" b on
# j our, a spelling the model rarely saw, and comes out garbled. A model trained on spaced
# quotes (config.json's "spaced_quotes") reads '" bonjour' and writes '" Hello"', which
# `join_quotes` glues back. A quote opens where it starts the text or follows a space or a
# bracket, and a letter or digit comes next.
_OPENS = r'(?:^|(?<=[\s(\[]))"'  # a quote at the start, or after a space or a bracket
_OPENING_QUOTE = re.compile(_OPENS + r"(?=\w)")
_SPACED_OPENING_QUOTE = re.compile(_OPENS + r" (?=\w)")


def space_quotes(text: str) -> str:
    """Put a space after every opening quote: '"bonjour"' -> '" bonjour"'."""
    return _OPENING_QUOTE.sub('" ', text) if '"' in text else text


def join_quotes(text: str) -> str:
    """Undo `space_quotes`: '" Hello"' -> '"Hello"'."""
    return _SPACED_OPENING_QUOTE.sub('"', text) if '"' in text else text


def open_corpus(path: Path) -> BinaryIO:
    """Open a corpus for reading bytes, decompressing .gz and .xz on the fly."""
    if path.suffix == ".gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if path.suffix == ".xz":
        return lzma.open(path, "rb")  # type: ignore[return-value]
    return path.open("rb")


def check_file(path: Path) -> None:
    """Refuse a corpus that is missing, a directory or unreadable, before any work starts."""
    if not path.exists():
        raise CorpusError(f"{path}: no such file")
    if path.is_dir():
        raise CorpusError(f"{path}: is a directory, expected a tab-separated file")
    if not path.is_file():  # a pipe (<(xzcat ...)): opened twice, its writer may be gone
        if not os.access(path, os.R_OK):
            raise CorpusError(f"{path}: Permission denied")
        return
    try:
        with open_corpus(path) as handle:  # a binary or UTF-16 file: named as translate does
            start = handle.read(1 << 16)
    except (EOFError, lzma.LZMAError, gzip.BadGzipFile):  # damaged: iter_pairs names its line
        return
    except OSError as err:
        raise CorpusError(f"{path}: {err.strerror or err}") from None
    if problem := not_text([start]):
        raise CorpusError(f"{path}: {problem}")


def iter_pairs(
    path: str | Path,
    report: ReadReport,
    *,
    src_col: int = 1,
    tgt_col: int = 2,
    max_chars: int = 1000,
) -> Iterator[tuple[str, str]]:
    """Yield the (src, tgt) pairs of a TSV file one at a time, counting every skipped line."""
    path = Path(path)
    check_file(path)
    report.max_chars = max_chars
    need = max(src_col, tgt_col)
    try:
        handle = open_corpus(path)
    except OSError as err:
        raise CorpusError(f"{path}: {err.strerror}") from None
    cap = max(1 << 20, 8 * max_chars * need)  # bytes: longer lines are never held in memory
    with handle:
        try:
            for line_no, raw in enumerate(_bounded_lines(handle, cap), start=1):
                report.lines = line_no
                if raw is None:
                    report.skip("too long", line_no)
                    continue
                pair, reason = _parse_line(raw, line_no, need, src_col, tgt_col, max_chars)
                if reason:
                    report.skip(reason, line_no)
                elif pair:
                    report.kept += 1
                    yield pair
        except (OSError, EOFError, lzma.LZMAError) as err:  # a damaged .gz or .xz
            raise CorpusError(
                f"{path}: line {report.lines + 1}: cannot decompress ({err})"
            ) from None


def read_pairs(
    path: str | Path, *, src_col: int = 1, tgt_col: int = 2, max_chars: int = 1000
) -> tuple[list[tuple[str, str]], ReadReport]:
    """Read all (src, tgt) pairs of a TSV file (for test and validation sets, not corpora)."""
    report = ReadReport(path=str(path))
    pairs = list(iter_pairs(path, report, src_col=src_col, tgt_col=tgt_col, max_chars=max_chars))
    if not pairs:
        raise CorpusError(f"{path}: no usable sentence pairs{_detail(report)}")
    return pairs, report


def _detail(report: ReadReport) -> str:
    """' (why lines were skipped)' or ''."""
    return f" ({report.summary()})" if report.skipped else ""


def _bounded_lines(handle: BinaryIO, cap: int) -> Iterator[bytes | None]:
    """The lines of a file; None for a line longer than `cap` bytes, read through in pieces."""
    while raw := handle.readline(cap):
        if len(raw) == cap and not raw.endswith(b"\n"):
            while (rest := handle.readline(cap)) and not rest.endswith(b"\n"):
                pass
            yield None
        else:
            yield raw


def _parse_line(
    raw: bytes, line_no: int, need: int, src_col: int, tgt_col: int, max_chars: int
) -> tuple[tuple[str, str] | None, str]:
    """Parse one raw line into a pair, or name the reason it is skipped."""
    if line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):  # UTF-8 byte order mark
        raw = raw[3:]
    raw = raw.rstrip(b"\r\n")
    if not raw.strip():
        return None, "empty line"
    if b"\x00" in raw:
        return None, "NUL byte"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "invalid UTF-8"
    if "\t" not in text:
        return None, "no tab"
    cols = text.split("\t")
    if len(cols) < need:
        return None, "missing column"
    src, tgt = clean(cols[src_col - 1]), clean(cols[tgt_col - 1])
    if not src or not tgt:
        return None, "empty side"
    if len(src) > max_chars or len(tgt) > max_chars:
        return None, "too long"
    return (src, tgt), ""
