"""The s2a command line: the Typer app (app.py), one module per command, what they share."""

from .app import main

__all__ = ["main"]
