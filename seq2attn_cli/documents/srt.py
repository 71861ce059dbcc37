"""Subtitle (SRT) documents: not read yet."""

from __future__ import annotations

from ..errors import DocumentError
from .inline import Chunk


def read(text: str) -> list[Chunk]:
    """Subtitle (SRT) is not read yet."""
    raise DocumentError("subtitle files are not translated yet")
