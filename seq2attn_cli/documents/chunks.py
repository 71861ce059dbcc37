"""What a format module (html.py, markdown.py, srt.py, vtt.py, text.py) reads a document into:
chunks.

Text written as it was (a str), `Plain` runs translated without markup (an alt or title
attribute), and `Inline` runs: the text of one block (a paragraph, a heading, a table cell, a
cue) with its inline markup as `Open`/`Close` pairs and `Keep` atoms (inline code, <br>, an
image) written as they were. inline.py translates them and writes the document back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Languages = tuple[str | None, str | None]  # (source, target), as a model's config.json says
NO_LANGUAGES: Languages = (None, None)


def primary(code: str) -> str:
    """A language code's language: "fr" of "fr", "fr-CA", "FR", "fr_FR"."""
    return code.split("-")[0].split("_")[0].strip().lower()


def relabeled(code: str, languages: Languages) -> str:
    """A language code as a translated document writes it: the target's where it names the
    source ("fr", "fr-CA", "FR"), else as given."""
    source, target = languages
    if source and target and primary(code) == source:
        return target
    return code


def same(text: str) -> str:
    """Text written as it is (Markdown, plain text)."""
    return text


@dataclass(frozen=True)
class Plain:
    """A run of text translated without markup, e.g. a title attribute's value."""

    source: str
    escape: Callable[[str], str] = same


Part = str | Plain  # the text of a tag: as written, or with an attribute to translate


@dataclass(frozen=True)
class Open:
    """An opening tag, as written (`<b>`, `**`, `[`), and its name to match its Close."""

    parts: tuple[Part, ...]
    name: str
    # what the pair writes when it comes out around nothing: None, itself (`<b></b>`); Markdown
    # cannot write `****`, so its marks write "" and a link its destination as its text
    empty: str | None = None


@dataclass(frozen=True)
class Close:
    """A closing tag, as written (`</b>`, `**`, `](https://...)`, a link's title translated)."""

    parts: tuple[Part, ...]
    name: str


@dataclass(frozen=True)
class Keep:
    """Markup written as it was, never translated: inline code, <br>, an image."""

    parts: tuple[Part, ...]
    breaks: bool = False  # it parts words as a space does (<br>, a line break)
    cuts: bool = False  # and sentences too (<br>, but not a line break inside a subtitle)
    word: bool = False  # a word of the sentence, read in its place (inline code: runs.py)


Item = str | Open | Close | Keep


@dataclass
class Inline:
    """The text of one block with its inline markup; `escape` writes text into the format."""

    items: list[Item]
    escape: Callable[[str], str] = same


Chunk = str | Plain | Inline
