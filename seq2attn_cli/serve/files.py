"""Files for POST /translate_file and GET /download_file/<name>, as LibreTranslate serves them.

A translated file is kept in memory under a random name (LibreTranslate keeps it on disk for
30 minutes): at most KEEP files, none older than KEEP_SECONDS, so the memory is bounded
by KEEP times the largest body the server takes (and a little more as text grows).
"""

from __future__ import annotations

import re
import secrets
import time
from collections import OrderedDict
from pathlib import PurePosixPath, PureWindowsPath

from .fields import Refused

KEEP, KEEP_SECONDS = 32, 30 * 60
UNSAFE = re.compile(r"[^\w.-]", re.ASCII)  # a stored name is a header and a path segment


class Downloads:
    """Translated files by name, the oldest dropped first."""

    def __init__(self, *, keep: int = KEEP, seconds: float = KEEP_SECONDS) -> None:
        self.keep, self.seconds = keep, seconds
        self.files: OrderedDict[str, tuple[float, bytes]] = OrderedDict()

    def add(self, filename: str, data: bytes) -> str:
        """Keep a translated file; the name to download it by: random, then the file's own."""
        self._expire()
        while len(self.files) >= self.keep:
            self.files.popitem(last=False)
        name = f"{secrets.token_hex(16)}.{safe_name(filename)}"
        self.files[name] = (time.monotonic(), data)
        return name

    def get(self, name: str) -> tuple[str, bytes]:
        """(file name to save as, contents) of a kept file; 404 if there is none by that name."""
        self._expire()
        if name not in self.files:
            raise Refused(404, f"no translated file {name[:80]!r} (files are kept 30 minutes)")
        return name.split(".", 1)[1], self.files[name][1]

    def _expire(self) -> None:
        """Drop the files kept longer than `seconds`."""
        now = time.monotonic()
        while self.files and now - next(iter(self.files.values()))[0] > self.seconds:
            self.files.popitem(last=False)


def safe_name(filename: str) -> str:
    """A client's file name as a plain name: no folders, only letters, digits, '.', '-', '_'."""
    base = PurePosixPath(PureWindowsPath(filename).name).name
    return UNSAFE.sub("_", base).lstrip(".")[-100:] or "file.txt"


def text_of(data: bytes, filename: str) -> str:
    """A file's text: UTF-8 (a byte-order mark kept: the translation starts with it too),
    refused if it is not text at all."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Refused(
            400,
            f"Invalid request: {safe_name(filename)} is not UTF-8 text "
            f"({error.reason} at byte {error.start})",
        ) from None
    if "\x00" in text:
        raise Refused(
            400, f"Invalid request: {safe_name(filename)} holds NUL bytes: not a text file"
        )
    return text
