"""The s2a command line: the Typer app and its commands, one module each (train, translate,
align, evaluate, inspect, serve; common.py holds what they share).
Commands parse, call the core, print. Torch is imported inside commands only, so
`s2a --help` stays fast."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from .align import align
from .common import Command, Group, stopped_by
from .evaluate import evaluate
from .inspect import inspect
from .serve import serve
from .train import train
from .translate import translate

app = typer.Typer(
    cls=Group,
    help="s2a: train, run and look inside an RNN encoder-decoder translator with attention.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    """Print s2a's version and exit (--version, -V)."""
    if value:
        from .. import __version__

        print(f"s2a {__version__}")
        raise typer.Exit()


@app.callback()
def _group(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """s2a: train, run and look inside an RNN encoder-decoder translator with attention."""


for command in (
    train,
    translate,
    align,
    evaluate,
    inspect,
    serve,
):  # the order --help lists them in
    app.command(cls=Command)(command)


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt as error:  # Ctrl-C before a command's own handling took over
        sys.exit(stopped_by(error).exit_code)
