"""`s2a serve`: a model behind LibreTranslate's HTTP API, and a page that shows attention."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ..config import DECODE
from .common import (
    Beam,
    Debug,
    Device,
    ModelDir,
    Quantize,
    SearchThreads,
    fail,
    handled,
    load_translator,
    model_dir,
)
from .streams import err


def serve(
    model: ModelDir = None,
    compare: Annotated[
        Path | None,
        typer.Option(help="A second model that /walk decodes beside the first.", metavar="DIR"),
    ] = None,
    host: Annotated[str, typer.Option(help="Address to listen on (0.0.0.0: all).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port (0: any free).")] = 5000,
    beam: Beam = DECODE.beam,
    api_key: Annotated[
        str | None, typer.Option(help="Require this api_key in every /translate request.")
    ] = None,
    max_body: Annotated[int, typer.Option(min=1, help="Largest request body, bytes.")] = 262144,
    max_lines: Annotated[int, typer.Option(min=1, help="Most lines in one request.")] = 128,
    max_chars: Annotated[
        int, typer.Option(min=0, help="Longest line, characters (0: the model's limit).")
    ] = 0,
    timeout: Annotated[float, typer.Option(min=0.1, help="Seconds a request may take.")] = 30.0,
    log_requests: Annotated[
        bool,
        typer.Option(
            "--log-requests",
            help="A line on stderr a request: client, method, path, status, ms (never its text).",
        ),
    ] = False,
    req_limit: Annotated[
        int, typer.Option(min=0, help="Requests a client may make a minute (0: any); then 429.")
    ] = 0,
    quantize: Quantize = DECODE.quantize,
    device: Device = "auto",
    threads: SearchThreads = 0,
    debug: Debug = False,
) -> None:
    """Serve translations over HTTP (LibreTranslate's API) and a page at / that shows attention."""
    with handled(debug):
        directory = model_dir(model)
        other = model_dir(compare, option="--compare") if compare else None
        from ..serve.server import UNDETERMINED, Limits, address, bind, create_app, model_languages
        from ..serve.server import serve as run_server
        from ..training.signals import raise_sigterm_at_once

        try:
            sock = bind(host, port)
        except OSError as error:
            fail(f"--host {host} --port {port}: {error.strerror or error}")
        options = dict(device=device, threads=threads, quantize=quantize)
        translator = load_translator(directory, **options)
        if max_chars > translator.longest_line:  # longer lines would be cut, and nobody told
            fail(f"--max-chars {max_chars}: s2a translates lines of up to "
                 f"{translator.longest_line:,} characters")  # fmt: skip
        limits = Limits(
            body_bytes=max_body,
            lines=max_lines,
            chars=max_chars or translator.max_chars,
            timeout=timeout,
        )
        languages = model_languages(translator.config, directory)
        second = None
        if other:
            second = load_translator(other, **options)
            theirs = model_languages(second.config, other)
            if UNDETERMINED not in (*theirs, *languages) and theirs != languages:
                fail(f"--compare {other}: translates {'→'.join(theirs)}, not {'→'.join(languages)}")
        app_ = create_app(
            translator,
            languages=languages,
            beam=beam,
            limits=limits,
            api_key=api_key,
            per_minute=req_limit,
            name=directory.name,
            compare=(other.name, second) if other and second else None,
            log=(lambda line: err.print(escape(line), soft_wrap=True)) if log_requests else None,
        )
        pair = "→".join(languages)
        err.print(
            f"s2a: serving {escape(str(directory))} ({pair}) at {address(sock)}; Ctrl-C stops",
            soft_wrap=True,
        )
        # uvicorn shuts down on Ctrl-C or SIGTERM, then raises it again: SIGTERM had killed
        # s2a without a word (exit -15); now it ends as Ctrl-C does, with SIGTERM's 143
        raise_sigterm_at_once()
        run_server(app_, sock)
        err.print("s2a: stopped serving")  # SIGINT ignored (`s2a serve &`): uvicorn still stops
