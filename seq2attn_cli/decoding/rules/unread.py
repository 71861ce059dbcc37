"""What of a line the model cannot read: characters no piece holds, and the runs of them
that urls.py reads as the word URL and writes back as given (a word of symbols, "🍕" or
"^_^"; a word of another script, "東京" or "Иван"), symbols.py sets aside (one glued to a
word), and the rest, read as unknown (a warning names them: Translator.unreadable).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from ...data.reading import TAG_CHARACTERS
from .letters import read_as
from .markers import starts_a_sentence

# zero-width joiner, text and emoji presentation selectors, a flag's tags (reading.FLAG_TAGS)
JOINERS = "\u200d\ufe0e\ufe0f" + TAG_CHARACTERS
KEYCAPS = re.compile(r"(?:[0-9#*]\ufe0f?\u20e3)+")
# a word, and what an elision's apostrophe parts from it ("l'🍕", "d'Дмитрий")
ELIDED = re.compile(r"[^\s'’]+")


def unread_runs(
    text: str, knows: Callable[[str], bool], urls: list[tuple[int, int, str]]
) -> list[tuple[int, int, str]]:
    """Outside the URLs: in each word with no letter or digit the model can read ("🍕",
    "👍🏽", "¯\\_(ツ)_/¯"), its first to its last character that no piece holds; and each
    word of letters from no Latin script with one the model cannot read ("東京", "Иван",
    whose "а" it knows); none if nothing else of the line is a word the model can read."""
    runs = [(m.start(), m.end(), m.group()) for m in KEYCAPS.finditer(text)]

    def in_url(i: int) -> bool:
        """Whether character i is in a URL or a keycap."""
        return any(a <= i < b for a, b, _ in urls + runs)

    for m in ELIDED.finditer(text):  # "🍕." -> "🍕": the marks it knows stay the model's
        if not any(c.isalnum() and readable(c, knows) for c in m.group()):
            lost = [i for i, c in enumerate(m.group(), m.start()) if not readable(c, knows)]
            if lost and not in_url(lost[0]) and not starts_a_sentence(text, lost[0]):
                runs.append((lost[0], lost[-1] + 1, text[lost[0] : lost[-1] + 1]))
            continue
        for w in re.finditer(r"\w+", m.group()):  # a word of the token: "d'Дмитрий", "東京2020"
            at = m.start() + w.start()
            foreign = not any(unicodedata.name(c, "").startswith("LATIN") for c in w.group())
            if foreign and not all(readable(c, knows) for c in w.group()) and not in_url(at):
                runs.append((at, at + len(w.group()), w.group()))
    words = any(c.isalnum() and readable(c, knows) and not in_url(i) for i, c in enumerate(text))
    return sorted(runs) if words else []  # the words the model reads are outside them


def readable(char: str, knows: Callable[[str], bool]) -> bool:
    """Whether the model reads a character: a piece holds it, or a letter's base letter
    (letters.py reads "ğ" as "g"); a joiner binds an emoji's sequence, known or not."""
    return char not in JOINERS and read_as(char, knows) is not None
