"""The failures s2a expects and reports as one line (exit 2). Imports no torch."""

from __future__ import annotations


class CorpusError(ValueError):
    """A corpus that cannot be used at all; the message names the file (and line)."""


class TrainingError(RuntimeError):
    """Training cannot go on (bad output directory, losses that keep exploding...)."""


class Interrupted(RuntimeError):
    """Ctrl-C during training: the state was saved, the run can be resumed."""

    exit_code = 130  # 128 + SIGINT, as shells report it


class Terminated(Interrupted):
    """SIGTERM during training: every process stopped at one step and the state was saved."""

    exit_code = 143  # 128 + SIGTERM


class SigtermInterrupt(KeyboardInterrupt):
    """SIGTERM raised as Ctrl-C is, where training does not hold it: every path that ends
    Ctrl-C cleanly ends it too, with SIGTERM's exit code."""

    exit_code = 143


class ModelError(ValueError):
    """A model directory that cannot be used; the message names the file."""


class GlossaryError(ValueError):
    """A glossary that cannot be used; the message names the file and line, or the term."""


class DocumentError(ValueError):
    """A document (HTML, Markdown, subtitles) that cannot be translated at all."""
