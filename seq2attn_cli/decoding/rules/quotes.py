"""Opening quotes spaced off their word, for a model trained so (`--spaced-quotes`).

A word glued to its opening quote has no piece of its own: '"bonjour"' is read as
▁" b on jo ur ", a spelling seen only after quotes, and such words came out garbled. A model
trained with `--spaced-quotes` reads '" bonjour"' and writes '" Hello"'; this rule spaces the
quotes off what it reads and glues them back in what it writes (data/reading.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...data.reading import join_quotes, space_quotes
from ..translation import Translation

if TYPE_CHECKING:
    from .pipeline import Setting


@dataclass(frozen=True)
class Quotes:
    """The rule: quotes spaced off in reading, glued back in writing."""

    name: str = "quotes"
    did: str = "glued the opening quotes back to their words"

    @classmethod
    def of(cls, setting: Setting) -> Quotes | None:
        """The rule for a model (pipeline.Setting) trained with spaced quotes; else None."""
        return cls() if setting.spaced_quotes else None

    def read(self, text: str) -> tuple[str, None]:
        """The text with every opening quote spaced off its word."""
        return space_quotes(text), None

    def write(self, t: Translation, memo: None) -> Translation:
        """`t` with its opening quotes glued back to their words."""
        return dataclasses.replace(t, text=join_quotes(t.text))
