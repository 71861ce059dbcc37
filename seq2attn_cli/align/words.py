"""The words of a line as given, and the model's pieces that spell each of them.

Word aligners (fast_align, eflomal) count the whitespace-separated words of each line as
given, from 0. s2a reads a line cleaned (rules/pipeline.GIVEN: spaces before "?" dropped,
quotes spaced off, letters without a piece folded; a URL as written), so its
pieces are matched back to the given characters: nearly always letter for letter, else by
the longest common runs (difflib), a stretch it changed spread over what it replaced.
Plain strings in, plain lists out: no torch.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher
from functools import cache

from ..decoding.explain.alignment import WORD_START, is_special

WORD = re.compile(r"\S+")
SAME = {"’": "'", "‘": "'", "ʼ": "'", "`": "'", "´": "'", "“": '"', "”": '"', "„": '"',
        "«": '"', "»": '"'}  # fmt: skip
UNREAD = "\0"  # what an <unk> piece spells: characters no piece holds, never matched


def words(text: str) -> list[str]:
    """The whitespace-separated words of a line, as fast_align counts them."""
    return text.split()


@cache
def _key(char: str) -> str:
    """A character as compared with what the model read: its base letter."""
    char = SAME.get(char, char)
    return unicodedata.normalize("NFKD", char)[:1] or char


def given_keys(text: str, spans: list[tuple[int, int]]) -> tuple[list[str], list[int]]:
    """The characters of the words of `text` as compared with what the model read, and the
    word each comes from."""
    keys = [_key(c) for start, end in spans for c in text[start:end]]
    return keys, [w for w, (start, end) in enumerate(spans) for _ in range(start, end)]


def piece_chars(pieces: list[str]) -> tuple[str, list[int]]:
    """The characters pieces spell (no spaces), and the piece each comes from."""
    chars: list[str] = []
    owner: list[int] = []
    for p, piece in enumerate(pieces):
        spelled = UNREAD if is_special(piece) else piece.replace(WORD_START, "")
        chars += spelled
        owner += [p] * len(spelled)
    return "".join(chars), owner


def char_map(given: list[str], read: list[str]) -> list[int]:
    """For each character of `read`, the index of the character of `given` it came from: a
    stretch that differs maps proportionally onto the stretch it replaced, an inserted
    character onto its given neighbour."""
    if given == read:  # the common case: the model read the letters as given
        return list(range(len(read)))
    found = [0] * len(read)
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, given, read, autojunk=False).get_opcodes():
        for j in range(j1, j2):
            if tag == "equal":
                found[j] = i1 + j - j1
            elif tag == "replace":
                found[j] = i1 + (j - j1) * (i2 - i1) // (j2 - j1)
            elif tag == "insert":
                found[j] = min(max(i1 - 1, 0), len(given) - 1)
    return found


def groups(text: str, pieces: list[str]) -> list[list[int]]:
    """For each given word of `text`, the pieces that spell part of it (none: a word the
    model did not read, such as one past the length it takes)."""
    spans = [m.span() for m in WORD.finditer(text)]
    read, owner = piece_chars(pieces)
    if read == "".join(text[start:end] for start, end in spans):  # most lines: as given
        word_of = [w for w, (start, end) in enumerate(spans) for _ in range(start, end)]
        found = range(len(read))
    else:
        given, word_of = given_keys(text, spans)
        found = char_map(given, [_key(c) for c in read]) if given else []
    out: list[list[int]] = [[] for _ in spans]
    for j, i in enumerate(found):
        group = out[word_of[i]]
        if not group or group[-1] != owner[j]:
            group.append(owner[j])
    return out
