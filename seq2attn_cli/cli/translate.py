"""`s2a translate`: sentences, a file, a pipe or an interactive prompt in; one line out per
line in (text or JSONL), with heatmaps and alignments on request; or a whole document (HTML,
Markdown, subtitles) in and the same document, translated, out."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from ..config import DECODE
from .common import (
    BatchSize,
    Beam,
    Debug,
    Device,
    ModelDir,
    Quantize,
    SearchThreads,
    fail,
    glossary_terms,
    handled,
    load_translator,
    model_dir,
)
from .inputs import document_format, looks_like, open_input, read_document
from .prompt import prompt
from .streams import StdoutConsole, err, use_color

BAD_LINES_NAMED = 3  # lines not UTF-8 named one by one; the rest are counted


def translate(
    text: Annotated[
        list[str] | None,
        typer.Argument(metavar="TEXT", help="Sentences; none or -: read stdin."),
    ] = None,
    input: Annotated[
        Path | None,
        typer.Option(
            "--input",
            "-i",
            help="Translate this file (- = stdin): line by line, or as a document if .html, .htm,"
            " .md, .markdown, .srt or .vtt.",
        ),
    ] = None,
    input_format: Annotated[
        str | None,
        typer.Option(
            "--input-format",
            help="Read --input as a document of this format: html | markdown | srt | vtt | text"
            " (text: each line's sentences one by one).",
            autocompletion=lambda: ["html", "markdown", "srt", "vtt", "text"],
        ),
    ] = None,
    model: ModelDir = None,
    beam: Beam = DECODE.beam,
    batch_size: BatchSize = DECODE.batch_size,
    heatmap: Annotated[bool, typer.Option(help="Draw each sentence's attention.")] = False,
    pieces: Annotated[bool, typer.Option(help="Heatmap over subword pieces, not words.")] = False,
    align: Annotated[bool, typer.Option(help="Append Pharaoh word alignments (tab).")] = False,
    format: Annotated[
        str, typer.Option("--format", help="text | jsonl", autocompletion=lambda: ["text", "jsonl"])
    ] = "text",
    glossary: Annotated[
        Path | None,
        typer.Option(
            help="French term<TAB>English term a line: each term written as that English.",
        ),
    ] = None,
    quantize: Quantize = DECODE.quantize,
    device: Device = "auto",
    threads: SearchThreads = 0,
    debug: Debug = False,
) -> None:
    """Translate sentences, a file or stdin (one line out per line in), or a whole document."""
    if format not in ("text", "jsonl"):
        fail(f"--format must be text or jsonl (one JSON object a line), not {format!r}")
    texts = text or []
    if texts == ["-"]:
        texts, input = [], input or Path("-")
    elif "-" in texts:
        fail("'-' (read stdin) cannot be mixed with sentences to translate")
    if texts and input is not None:
        fail(f"give sentences or --input {input}, not both")
    _warn_about_file_names(texts)
    document = document_format(input, input_format)
    if pieces and not heatmap:
        fail("--pieces draws the --heatmap over subword pieces: give --heatmap too")
    if document is not None and (format != "text" or align or heatmap):
        fail("--format jsonl, --align and --heatmap are for lines; a document comes out whole")
    if document is not None and texts:
        fail("--input-format is for --input (a file, or - for stdin), not sentences")
    terms = glossary_terms(glossary)
    with handled(debug):
        if document is not None:
            source = read_document(input)
            translator = _load(model, device, threads, quantize)
            name = "stdin" if input is None or str(input) == "-" else str(input)
            _write_document(translator, source, document, beam=beam, name=name, glossary=terms)
            return
        stream = open_input(input) if input is not None and str(input) != "-" else None
        translator = _load(model, device, threads, quantize)
        picture = StdoutConsole() if sys.stdout.isatty() else err  # never mixed into a pipe
        name = str(input) if stream is not None else None

        def emit(lines: list[str], line_no: int) -> None:
            _write(
                translator.translate(lines, beam=beam, batch_size=batch_size, glossary=terms),
                places=[_place(name, line_no + offset) for offset in range(len(lines))],
                unknown=translator.unreadable,
                jsonl=format == "jsonl",
                align=align,
                picture=picture if heatmap else None,
                pieces=pieces,
            )

        if texts:  # an argument's lines are lines, as piped: one line out per line in
            lines = [t.removesuffix("\n").split("\n") for t in texts]  # "a\n" is one line
            emit([line.removesuffix("\r") for each in lines for line in each], 1)
        elif stream is None and sys.stdin.isatty():
            prompt(emit)
        else:
            keeps_bom = format == "text" and not align  # a mark before JSON or pairs: none
            _stream(stream or sys.stdin.buffer, name, emit, chunk=batch_size * 16, bom=keeps_bom)


def _stream(stream: Any, name: str | None, emit: Callable, *, chunk: int, bom: bool) -> None:
    """A file or stdin translated a chunk of lines at a time, as they arrive; lines not UTF-8
    named, the first few one by one; a byte-order mark written back first if `bom`."""
    from ..data.streams import BOM, LATIN1_HINT, line_chunks, not_text

    line_no, bad = 1, 0  # bad: lines not UTF-8
    # big chunks sort better by length: 16 batches a chunk ~10% faster than 4 (beam 5)
    for lines_read in line_chunks(stream, chunk=chunk):
        if line_no == 1 and (problem := not_text(lines_read)):
            fail(f"{name or 'stdin'}: {problem}")
        lines, bad = _decoded(lines_read, name, line_no, bad)
        if line_no == 1 and lines and lines[0].startswith(BOM) and bom:
            sys.stdout.write(BOM)  # a Windows editor's mark: the output keeps it too
            lines[0] = lines[0].removeprefix(BOM)
        if line_no == 1 and name is None and (hint := looks_like("\n".join(lines[:2]))):
            err.print(f"[yellow]warning:[/] stdin {escape(hint)}", soft_wrap=True)
        emit(lines, line_no)
        line_no += len(lines)
    if bad > BAD_LINES_NAMED:
        more = bad - BAD_LINES_NAMED
        err.print(
            f"[yellow]warning:[/] {escape(name or 'stdin')}: {more:,} more "
            f"line{'s' if more > 1 else ''} not UTF-8 ({LATIN1_HINT})",
            soft_wrap=True,
        )


def _decoded(chunk: list[bytes], name: str | None, line_no: int, bad: int) -> tuple[list[str], int]:
    """A chunk's lines as text, and how many lines so far were not UTF-8: the first three are
    named in a warning each, so that a Latin-1 file does not bury stderr."""
    from ..data.streams import decoded

    lines = []
    for k, raw in enumerate(chunk):
        text, problem = decoded(raw)
        if problem and (bad := bad + 1) <= BAD_LINES_NAMED:
            place = escape(_place(name, line_no + k))
            err.print(f"[yellow]warning:[/] {place}: {problem}", soft_wrap=True)
        lines.append(text)
    return lines, bad


def _load(model: Path | None, device: str, threads: int, quantize: bool) -> Any:
    """The translator, on the device asked for."""
    return load_translator(model_dir(model), device=device, threads=threads, quantize=quantize)


def _write_document(
    translator: Any, text: str, format: str, *, beam: int, name: str, glossary: Any
) -> None:
    """A document translated to stdout, warnings as for lines; one it cannot read: one line."""
    from ..documents import translated, unreadable
    from ..documents.runs import without_stand_ins
    from ..errors import DocumentError

    try:
        document, sentences = translated(
            translator, text, format=format, beam=beam, glossary=glossary
        )
    except DocumentError as error:
        fail(f"{name}: {error}")
    for note in unreadable(text, format=format):
        err.print(f"[yellow]warning:[/] {escape(name)}: {escape(note)}", soft_wrap=True)
    for t in sentences:
        unknown = [without_stand_ins(run) for run in translator.unreadable(t.source)]
        _warn(t, _sentence_place(name, t.source), [run for run in unknown if run])
    sys.stdout.write(document)
    sys.stdout.flush()


def _sentence_place(name: str, source: str) -> str:
    """Where a document's sentence came from, for warnings: 'page.html: "Il pleut…"'."""
    start = source if len(source) <= 40 else source[:40].rsplit(" ", 1)[0] + "…"
    return f'{name}: "{start}"'


def _pharaoh(t: Any) -> str:
    """A translation's word alignment as Pharaoh text ('' without attention)."""
    from ..decoding.explain.alignment import pharaoh

    return pharaoh(t.alignment)


def _warn_about_file_names(texts: list[str]) -> None:
    """Warn when a sentence to translate is the name of a file: the file was probably meant."""
    for text in texts:
        try:
            is_file = "\n" not in text and Path(text).is_file()
        except (OSError, ValueError):  # too long or holding NUL: not a file name
            is_file = False
        if is_file:
            err.print(
                escape(
                    f"warning: {text!r} is also a file; translating the text as given. "
                    f"To translate the file: s2a translate -i {text}"
                ),
                soft_wrap=True,
            )


def _place(name: str | None, line_no: int) -> str:
    """Where an input line came from, for warnings: 'book.fr: line 3', or 'input line 3'."""
    return f"{name}: line {line_no}" if name else f"input line {line_no}"


def _warn(t: Any, place: str, unknown: list[str]) -> None:
    """Say on stderr what of an input line the model could not take in."""
    if t.truncated:
        err.print(
            f"[yellow]warning:[/] {escape(place)}: longer than s2a translates; "
            f"translated its first {len(t.source):,} characters only",
            soft_wrap=True,
        )
    if unknown:
        runs = ", ".join(f'"{run}"' for run in unknown)
        # written back where the line or its part was not searched ("🍕🍕", "5🍕"): kept
        done = (
            "written as given" if all(r in t.text for r in unknown) else "translated without them"
        )
        err.print(
            f"[yellow]warning:[/] {escape(place)}: the model knows no piece for "
            f"{escape(runs)}; {done}",
            soft_wrap=True,
        )
    from ..decoding.explain.confidence import is_number, is_symbol

    # symbols and numbers are judged by the text, so certain, unlike a word's attention
    if symbols := [w for w in t.dropped if (is_symbol(w) or is_number(w)) and w not in unknown]:
        runs = ", ".join(f'"{s}"' for s in symbols)
        err.print(
            f"[yellow]warning:[/] {escape(place)}: the translation left out {escape(runs)}",
            soft_wrap=True,
        )


def _write(
    translations: list[Any],
    *,
    places: list[str],
    unknown: Callable[[str], list[str]],
    jsonl: bool,
    align: bool,
    picture: Console | None,
    pieces: bool,
) -> None:
    """One line per translation on stdout (text or JSON); warnings, and heatmaps on `picture`."""
    import json

    from ..views.renderables import heatmap_view

    out = sys.stdout
    for t, place in zip(translations, places, strict=True):
        _warn(t, place, unknown(t.source))
        if jsonl:
            record = t.as_dict()
            if align:
                record["alignment"] = _pharaoh(t)
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            out.write(t.text + (f"\t{_pharaoh(t)}" if align else "") + "\n")
        if picture is not None:
            out.flush()
            view = heatmap_view(
                t.src_tokens,
                t.tgt_tokens,
                t.weights,
                attends=t.has_attention,
                pieces=pieces,
                color=use_color(picture),
                width=picture.width,
                dropped=t.dropped,
            )
            if view is not None:
                picture.print(view)
    out.flush()
