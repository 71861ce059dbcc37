"""Markdown documents: not read yet."""

from __future__ import annotations

from ..errors import DocumentError
from .inline import Chunk


def read(text: str) -> list[Chunk]:
    """Markdown is not read yet."""
    raise DocumentError("markdown documents are not translated yet")
