"""Sources typed as people type them: the noisy copies training also sees. Imports no torch.

Corpora hold well-formed sentences ("Je suis étudiant."), but at a prompt people write
"je suis etudiant", "ma mere est tres gentille", "jai faim" or make a typo. A model that
never saw such input stumbles on it, so a share of the training pairs is also trained on
with its source typed that way; the target stays as it is.
"""

from __future__ import annotations

import functools
import random
import unicodedata

_FINAL = ".!?"
_LETTERS = "abcdefghijklmnopqrstuvwxyzéèàùç"


def strip_accents(text: str) -> str:
    """'Ma mère est très gentille' -> 'Ma mere est tres gentille' (ç -> c, œ kept)."""
    if text.isascii():
        return text
    for char in set(text):  # each distinct character once: 5x faster than char by char
        if (plain := _plain(char)) != char:
            text = text.replace(char, plain)
    return unicodedata.normalize("NFC", text)


@functools.cache
def _plain(char: str) -> str:
    """A character without its accents ('é' -> 'e'; a lone combining accent -> '')."""
    decomposed = unicodedata.normalize("NFD", char)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )


def typed(src: str, rng: random.Random) -> str:
    """One way a person might type `src`; each habit comes with its own chance."""
    text = src
    if rng.random() < 0.5:
        text = strip_accents(text)
    roll = rng.random()
    if roll < 0.35:
        text = text.lower()
    elif roll < 0.8:
        text = text[:1].lower() + text[1:]
    roll = rng.random()
    if roll < 0.15:
        text = text.replace("'", "")  # "j'ai" -> "jai"
    elif roll < 0.25:
        text = text.replace("'", " ")  # "j'ai" -> "j ai"
    if rng.random() < 0.6:
        text = text.rstrip(_FINAL).rstrip()
    if rng.random() < 0.2:
        text = _typo(text, rng)
    return text or src


def _typo(text: str, rng: random.Random) -> str:
    """One slip of the finger inside a word: two letters swapped, one dropped or doubled."""
    spots = [i for i in range(1, len(text) - 1) if text[i].isalpha() and text[i + 1].isalpha()]
    if not spots:
        return text
    i = rng.choice(spots)
    kind = rng.randrange(4)
    if kind == 0:
        return text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    if kind == 1:
        return text[:i] + text[i + 1 :]
    if kind == 2:
        return text[:i] + text[i] + text[i:]
    return text[:i] + rng.choice(_LETTERS) + text[i + 1 :]


def noisy_copies(sources: list[str], *, share: float, rng: random.Random) -> list[tuple[int, str]]:
    """Noisy copies of about `share` of the sources, typed as people do: (index, copy)."""
    copies = []
    for i, src in enumerate(sources):
        if rng.random() < share and (noisy := typed(src, rng)) != src:
            copies.append((i, noisy))
    return copies
