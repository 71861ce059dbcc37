"""`s2a align`: word alignments for translations that already exist, as fast_align and
eflomal write them: one Pharaoh line per pair (or JSONL with the word-level attention, and the
alignment head's word probabilities when the model has one)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from ..align import HEAD
from ..align.methods import DEFAULT, METHODS
from ..config import DECODE
from .common import (
    Debug,
    Device,
    ModelDir,
    Quantize,
    SearchThreads,
    distinct_columns,
    fail,
    handled,
    load_translator,
    model_dir,
)
from .streams import STDIN, err

PROGRESS_SECONDS = 30  # a progress line on stderr this often
# pairs read, aligned and written at a time (at least): enough to sort into batches of like
# lengths; their alignments (weights as Python lists) are what a run holds: 10,000 news pairs
# peaked at 1.1 GB with chunks of 8,192, 0.8 GB with 2,048 (int8, 2 threads)
CHUNK = 2048
HEAD_METHOD = "head"  # --method: links off the model's alignment head


def align(
    pairs: Annotated[
        Path | None,
        typer.Argument(
            metavar="PAIRS", help="source<TAB>target, one pair a line; none or -: stdin."
        ),
    ] = None,
    src: Annotated[
        Path | None, typer.Option("--src", help="The source sentences, one a line (with --tgt).")
    ] = None,
    tgt: Annotated[
        Path | None, typer.Option("--tgt", help="Their translations, one a line (with --src).")
    ] = None,
    src_col: Annotated[int, typer.Option(min=1, help="PAIRS column of the source.")] = 1,
    tgt_col: Annotated[int, typer.Option(min=1, help="PAIRS column of the target.")] = 2,
    check_columns: Annotated[
        bool,
        typer.Option(help="Stop when PAIRS' source column is not the model's source language."),
    ] = True,
    method: Annotated[
        str | None,
        typer.Option(
            help=f"How links are read: {HEAD_METHOD} (the model's alignment head, {HEAD}; "
            "the default when it has one) or off the attention: "
            + " | ".join(METHODS)
            + f" (default without a head: {DEFAULT}).",
            autocompletion=lambda: [HEAD_METHOD, *METHODS],
            show_default=False,
        ),
    ] = None,
    format: Annotated[
        str, typer.Option("--format", help="text | jsonl", autocompletion=lambda: ["text", "jsonl"])
    ] = "text",
    model: ModelDir = None,
    batch_size: Annotated[
        int, typer.Option(min=1, help="Pairs force-decoded together.")
    ] = DECODE.align_batch_size,
    quantize: Quantize = DECODE.quantize,
    device: Device = "auto",
    threads: SearchThreads = 0,
    debug: Debug = False,
) -> None:
    """Word alignments of sentence pairs: a Pharaoh line (source-target word indices) a pair."""
    if format not in ("text", "jsonl"):
        fail(f"--format must be text or jsonl (one JSON object a line), not {format!r}")
    if method is not None and method != HEAD_METHOD and method not in METHODS:
        fail(f"--method must be one of {', '.join([HEAD_METHOD, *METHODS])}, not {method!r}")
    if (src is None) != (tgt is None):
        fail("--src and --tgt go together: the source sentences and their translations")
    if src is not None and pairs is not None:
        fail(f"give PAIRS ({pairs}) or --src and --tgt, not both")
    if src is not None and str(src) == str(tgt) == "-":
        fail("--src and --tgt cannot both be stdin")
    if src is None:
        distinct_columns(pairs or "stdin", src_col=src_col, tgt_col=tgt_col)
    with handled(debug):
        directory = model_dir(model)
        has_head = (directory / HEAD).exists()
        if method == HEAD_METHOD and not has_head:
            fail(f"--method head: {directory} has no alignment head ({HEAD}); fit one with "
                 "scripts/fit_align_head.py, or choose another --method")  # fmt: skip
        method = method or (HEAD_METHOD if has_head else DEFAULT)
        name = None  # PAIRS' name, whose columns are checked
        if src is not None and tgt is not None:
            texts = _two_files(src, tgt)
        else:
            name, texts = _pairs(pairs, src_col=src_col, tgt_col=tgt_col)
        translator = load_translator(directory, device=device, threads=threads, quantize=quantize)
        if check_columns and name is not None:  # a swapped file aligned silently ("1-0 3-2")
            from ..evaluation import column_problem

            given = [pair for pair, _ in texts]
            if problem := column_problem(translator, given, src_col=src_col, tgt_col=tgt_col):
                fail(f"{name}: {problem}")
        head = None
        if method == HEAD_METHOD:
            from ..align.head import load_head

            head = load_head(directory, translator.config.model)
        _align_all(
            translator,
            texts,
            method=method,
            head=head,
            batch_size=batch_size,
            jsonl=format == "jsonl",
        )


def _align_all(
    translator: Any, texts: list[Any], *, method: str, head: Any, batch_size: int, jsonl: bool
) -> None:
    """Align the pairs chunk by chunk (big chunks sort into batches of like lengths), writing
    each chunk's lines as it is done, and a progress line on stderr every 30 s."""
    from ..align.aligner import align

    started = said = time.monotonic()
    chunk = max(CHUNK, 4 * batch_size * translator.threads)  # every thread kept busy
    for at in range(0, len(texts), chunk):
        part = texts[at : at + chunk]
        found = align(
            translator,
            [pair for pair, _ in part],
            method=method if method in METHODS else DEFAULT,  # `head`: links off the head
            head=head,
            batch_size=batch_size,
        )
        _write(found, [place for _, place in part], jsonl=jsonl)
        if time.monotonic() - said >= PROGRESS_SECONDS:
            said, done = time.monotonic(), at + len(part)
            rate = done / (said - started)
            err.print(f"align: {done:,} of {len(texts):,} pairs, {rate:,.0f} pairs/s")


def _write(found: list[Any], places: list[str], *, jsonl: bool) -> None:
    """One line per pair on stdout; a pair cut to the model's length is named on stderr."""
    import json

    for alignment, place in zip(found, places, strict=True):
        if alignment.truncated:
            err.print(
                f"[yellow]warning:[/] {escape(place)}: longer than the model takes; the words "
                "past its limit are not aligned",
                soft_wrap=True,
            )
        if jsonl:
            sys.stdout.write(json.dumps(alignment.as_dict(), ensure_ascii=False) + "\n")
        else:
            sys.stdout.write(alignment.pharaoh() + "\n")
    sys.stdout.flush()


def _read(path: Path | None, option: str) -> tuple[str, list[str]]:
    """A file's (or stdin's) name and its lines, as text; one it cannot read: one error line."""
    from ..data.streams import decoded, not_text

    name = "stdin" if path is None or str(path) == "-" else str(path)
    try:
        data = sys.stdin.buffer.read() if name == "stdin" else path.read_bytes()  # type: ignore[union-attr]
    except IsADirectoryError:
        fail(f"{option}{name}: is a directory")
    except OSError as error:  # a closed stdin is named as translate names it
        fail(f"{option}{STDIN if error.filename == STDIN else name}: {error.strerror or error}")
    if problem := not_text([data[: 1 << 16]]):
        fail(f"{name}: {problem}")
    text, problem = decoded(data)
    if problem:
        err.print(f"[yellow]warning:[/] {escape(name)}: {problem}", soft_wrap=True)
    lines = text.split("\n")
    if lines[-1] == "":  # the newline that ends the last line starts no line of its own
        lines.pop()
    return name, lines


def _pairs(
    path: Path | None, *, src_col: int, tgt_col: int
) -> tuple[str, list[tuple[tuple[str, str], str]]]:
    """A tab-separated file's (or stdin's) name and its pairs, each with its place for
    messages; a blank line is a pair of empty sentences, a line without the columns an error."""
    name, lines = _read(path, "")
    out = []
    for n, line in enumerate(lines, 1):
        columns = line.split("\t")
        if not line.strip():
            out.append((("", ""), f"{name}: line {n}"))
            continue
        if len(columns) < max(src_col, tgt_col):  # an error (--debug: its traceback)
            raise ValueError(
                f"{name}: line {n}: {len(columns)} column{'s' * (len(columns) != 1)}, "
                f"expected source<TAB>target (columns {src_col} and {tgt_col}): "
                f"{line[:60]!r}"
            )
        out.append(((columns[src_col - 1], columns[tgt_col - 1]), f"{name}: line {n}"))
    return name, out


def _two_files(src: Path, tgt: Path) -> list[tuple[tuple[str, str], str]]:
    """The pairs of two files of one sentence a line, which must have as many lines."""
    src_name, sources = _read(src, "--src ")
    tgt_name, targets = _read(tgt, "--tgt ")
    if len(sources) != len(targets):
        raise ValueError(
            f"--src {src_name} has {len(sources):,} lines and --tgt {tgt_name} "
            f"{len(targets):,}: a translation for every sentence, one a line"
        )
    return [
        ((s, t), f"{src_name}, {tgt_name}: line {n}")
        for n, (s, t) in enumerate(zip(sources, targets, strict=True), 1)
    ]
