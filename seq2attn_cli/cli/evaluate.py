"""`s2a evaluate`: a test file scored by one model or several side by side (BLEU, chrF, BLEU
by source length), as a table or one JSON object."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
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
    check_output,
    distinct_columns,
    fail,
    handled,
    load_translator,
    model_dir,
    writing,
)
from .streams import StdoutConsole, err, use_color

if TYPE_CHECKING:
    from ..data.reading import ReadReport


def evaluate(
    test: Annotated[
        Path, typer.Argument(metavar="TEST", help="Test TSV: source and reference columns.")
    ],
    model: ModelDir = None,
    src_col: Annotated[int, typer.Option(min=1)] = 1,
    tgt_col: Annotated[int, typer.Option(min=1)] = 2,
    beam: Beam = DECODE.beam,
    batch_size: BatchSize = DECODE.batch_size,
    compare: Annotated[
        list[Path] | None, typer.Option(help="Another model to put beside (repeatable).")
    ] = None,
    output: Annotated[Path | None, typer.Option(help="Write the hypotheses here.")] = None,
    format: Annotated[
        str, typer.Option("--format", help="text | json", autocompletion=lambda: ["text", "json"])
    ] = "text",
    skip_bad: Annotated[
        bool, typer.Option("--skip-bad", help="Skip malformed test lines (and say how many).")
    ] = False,
    check_columns: Annotated[
        bool, typer.Option(help="Stop when the source column is not the model's source language.")
    ] = True,
    quantize: Quantize = DECODE.quantize,
    device: Device = "auto",
    threads: SearchThreads = 0,
    debug: Debug = False,
) -> None:
    """Score a model on a test set: BLEU, chrF, and BLEU by source length."""
    import json

    if format not in ("text", "json"):
        fail(f"--format must be text or json (one JSON object), not {format!r}")
    distinct_columns(test, src_col=src_col, tgt_col=tgt_col)
    if output:
        check_output(output, "--output", reads=(test,))
    with handled(debug):
        from ..evaluation import column_problem, report
        from ..evaluation import evaluate as run
        from ..views.charts import counted
        from ..views.renderables import evaluation_view

        directories = [model_dir(model)] + [model_dir(c, option="--compare") for c in compare or []]
        longest = min(_longest_line(d) for d in directories)
        pairs, skipped = _read_test(
            test, src_col=src_col, tgt_col=tgt_col, skip_bad=skip_bad, max_chars=longest
        )
        batch = {"batch_size": batch_size}
        translators = [  # every model loads before any translating: a bad one fails at once
            load_translator(d, device=device, threads=threads, quantize=quantize)
            for d in directories
        ]
        problem = check_columns and column_problem(
            translators[0], pairs, src_col=src_col, tgt_col=tgt_col
        )
        if problem:
            fail(f"{test}: {problem}")
        results = []
        for directory, name, translator in zip(
            directories, _names(directories), translators, strict=True
        ):
            err.print(
                escape(
                    f"translating {counted(len(pairs), 'sentence')} with {directory} (beam {beam})"
                )
            )
            scores = run(translator, pairs, name=name, model=str(directory), beam=beam, **batch)
            results.append(scores)
        if output:
            with writing(output, "--output"):
                output.write_text("".join(h + "\n" for h in results[0].hypotheses), "utf-8")
        if format == "json":
            columns = {"src_col": src_col, "tgt_col": tgt_col}
            run_info = {"sentences": len(pairs), "skipped": skipped, "beam": beam, **batch}
            int8 = translators[0].precision == "int8"
            figures = report(results, test=str(test), **columns, **run_info, quantized=int8)
            print(json.dumps(figures, indent=1))
        else:
            console = StdoutConsole()
            console.print(evaluation_view(results, color=use_color(console), width=console.width))


def _longest_line(directory: Path) -> int:
    """The longest line `s2a translate` takes with the model in `directory`, in characters: a
    test line up to it is scored (WMT24++'s paragraphs run past the model's 1,000)."""
    from ..checkpoint import read_config
    from ..config import CONFIG
    from ..decoding.rules.clean import longest_line

    return longest_line(read_config(directory / CONFIG).training.max_chars)


def _read_test(
    test: Path, *, src_col: int, tgt_col: int, skip_bad: bool, max_chars: int
) -> tuple[list[tuple[str, str]], int]:
    """The test pairs and how many malformed lines were skipped; without --skip-bad, none may be."""
    from ..data.reading import read_pairs

    pairs, read = read_pairs(test, src_col=src_col, tgt_col=tgt_col, max_chars=max_chars)
    _forget_trailing_blanks(read)
    skipped = sum(read.skipped.values())
    lines = f"{skipped} malformed line{'s' * (skipped != 1)}"
    if skipped and not skip_bad:
        fail(f"{test}: {lines} ({read.summary()}); fix them, or pass --skip-bad to score the rest")
    if skipped:
        err.print(escape(f"{test}: skipped {lines}: {read.summary()}"), soft_wrap=True)
    return pairs, skipped


def _forget_trailing_blanks(read: ReadReport) -> None:
    """Uncount the empty lines when all of them end the file: they hold nothing to be malformed."""
    blank = read.skipped.get("empty line", 0)
    if blank and read.first_line["empty line"] == read.lines - blank + 1:
        del read.skipped["empty line"], read.first_line["empty line"]


def _names(directories: list[Path]) -> list[str]:
    """What evaluation tables call each model: its directory's name, its path when names clash."""
    names = [d.name for d in directories]
    return [str(d) if names.count(d.name) > 1 else d.name for d in directories]
