"""The words of a line as given, and the model's pieces that spell each of them.

Word aligners (fast_align, eflomal) count the whitespace-separated words of each line as
given, from 0. s2a reads a line cleaned (decoding/translator.py: spaces before "?" dropped,
quotes spaced off, a URL read as the word URL, letters without a piece folded), so its
pieces are matched back to the given characters: nearly always letter for letter, else by
the longest common runs (difflib), a stretch it changed (a URL) spread over what it replaced.
Plain strings in, plain lists out: no torch.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher

from ..decoding.alignment import WORD_START, is_special

WORD = re.compile(r"\S+")
SAME = {"’": "'", "‘": "'", "ʼ": "'", "`": "'", "´": "'", "“": '"', "”": '"', "„": '"',
        "«": '"', "»": '"'}  # fmt: skip
UNREAD = "\0"  # what an <unk> piece spells: characters no piece holds, never matched


def words(text: str) -> list[str]:
    """The whitespace-separated words of a line, as fast_align counts them."""
    return text.split()


def _key(char: str) -> str:
    """A character as compared with what the model read: its base letter, lower case."""
    char = SAME.get(char, char)
    base = unicodedata.normalize("NFKD", char)[:1] or char
    return base.lower()


def piece_chars(pieces: list[str]) -> tuple[str, list[int]]:
    """The characters pieces spell (no spaces), and the piece each comes from."""
    chars: list[str] = []
    owner: list[int] = []
    for p, piece in enumerate(pieces):
        spelled = UNREAD if is_special(piece) else piece.replace(WORD_START, "")
        chars += spelled
        owner += [p] * len(spelled)
    return "".join(chars), owner


def char_map(given: str, read: str) -> list[int]:
    """For each character of `read`, the index of the character of `given` it came from.

    Both are compared without spaces. A stretch that differs maps proportionally onto the
    given stretch it replaced; an inserted character onto its given neighbour."""
    a = [_key(c) for c in given]
    b = [_key(c) for c in read]
    if a == b:  # the common case: the model read the letters as given
        return list(range(len(b)))
    found = [0] * len(b)
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        for j in range(j1, j2):
            if tag == "equal":
                found[j] = i1 + j - j1
            elif tag == "replace":
                found[j] = i1 + (j - j1) * (i2 - i1) // (j2 - j1)
            elif tag == "insert":
                found[j] = min(max(i1 - 1, 0), len(a) - 1)
    return found


def groups(text: str, pieces: list[str]) -> list[list[int]]:
    """For each given word of `text`, the pieces that spell part of it (none: a word the
    model did not read, such as one past the length it takes)."""
    spans = [m.span() for m in WORD.finditer(text)]
    word_of = [w for w, (start, end) in enumerate(spans) for _ in range(start, end)]
    given = "".join(text[start:end] for start, end in spans)
    read, owner = piece_chars(pieces)
    out: list[list[int]] = [[] for _ in spans]
    if not given:
        return out
    for j, i in enumerate(char_map(given, read)):
        group = out[word_of[i]]
        if not group or group[-1] != owner[j]:
            group.append(owner[j])
    return out
