"""The s2a command line: parses, prints, exits. Torch is imported inside commands only,
so `s2a --help` stays fast."""

from __future__ import annotations

import io
import os
import signal
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

app = typer.Typer(
    help="s2a: train, run and look inside an RNN encoder-decoder translator with attention.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True, highlight=False)


class StdoutConsole(Console):
    """A rich console on stdout whose closed pipe (`| head`) ends s2a quietly, with exit 0."""

    def on_broken_pipe(self) -> None:
        self.quiet = True  # rich's own handler exits 1; `handled` treats it as cat does
        raise BrokenPipeError


Debug = Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")]
ModelDir = Annotated[
    Path | None,
    typer.Option(
        "--model", "-m", help="Model directory \\[default: $S2A_MODEL, else the embedded fr-en]."
    ),
]
Device = Annotated[str, typer.Option(help="auto | cpu | cuda | mps")]
Threads = Annotated[int, typer.Option(help="CPU threads (0 = torch's default).")]


@app.callback()
def _group() -> None:
    """s2a: train, run and look inside an RNN encoder-decoder translator with attention."""


def fail(message: str) -> None:
    """Print one error line on stderr and exit with code 2."""
    err.print(f"[bold red]s2a: error:[/] {escape(message)}", soft_wrap=True)
    raise typer.Exit(2)


@contextmanager
def interrupts_held():
    """Hold Ctrl-C for the block and raise it right after.

    Importing torch takes a second, and a KeyboardInterrupt raised inside some of its
    imports is swallowed there: s2a would then carry on as if Ctrl-C never came.
    """
    held: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if held:
        raise KeyboardInterrupt


@contextmanager
def handled(debug: bool):
    """Turn expected failures into one line and exit code 2; Ctrl-C into exit 130."""
    try:
        with interrupts_held():  # the first import of torch
            from .data import CorpusError
    except KeyboardInterrupt:
        err.print("s2a: interrupted")
        raise typer.Exit(130) from None
    try:
        yield
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        err.print("s2a: interrupted")
        raise typer.Exit(130) from None
    except BrokenPipeError:
        # the reader went away (e.g. `| head -1`): stop quietly, as cat does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(0) from None
    except (CorpusError, OSError, ValueError, RuntimeError, MemoryError) as error:
        if debug:
            raise
        name = type(error).__name__
        if name == "Interrupted":  # training saved its state on Ctrl-C
            err.print(f"s2a: {escape(str(error))}")
            raise typer.Exit(130) from None
        known = isinstance(error, ValueError) or name == "TrainingError"
        fail(str(error) if known else f"{name}: {error}")
    except Exception as error:  # unforeseen input (or a bug): still one line, not a traceback
        if debug:
            raise
        fail(f"unexpected {type(error).__name__}: {error} (--debug shows the traceback)")


def setup_torch(device: str, threads: int) -> Any:
    """Pick the device ('auto' prefers CUDA, then MPS, then CPU) and the CPU thread count."""
    with interrupts_held():
        import torch

    if threads > 0:
        torch.set_num_threads(threads)
    if device == "auto":
        if torch.cuda.is_available():
            device = "cuda"
        elif torch.backends.mps.is_available():
            device = "mps"
        else:
            device = "cpu"
    if device not in ("cpu", "cuda", "mps") and not device.startswith("cuda:"):
        fail(f"--device must be auto, cpu, cuda or mps, not {device!r}")
    if device.startswith("cuda") and not torch.cuda.is_available():
        fail("--device cuda: no CUDA device is available")
    if device == "mps" and not torch.backends.mps.is_available():
        fail("--device mps: MPS is not available")
    return torch.device(device)


def default_model() -> Path:
    """The model directory to use when --model is not given."""
    env = os.environ.get("S2A_MODEL")
    if env:
        return Path(env)
    embedded = Path(__file__).parent / "models" / "fr-en"
    if not (embedded / "config.json").exists():
        fail(
            "no model: the embedded default model is missing; train one with "
            "`s2a train CORPUS --out DIR` and pass --model DIR (or set S2A_MODEL)"
        )
    return embedded


@app.command()
def train(
    corpus: Annotated[Path, typer.Argument(help="Tab-separated file, one sentence pair a line.")],
    out: Annotated[Path, typer.Option(help="Model directory to write.")] = Path("model"),
    src_col: Annotated[int, typer.Option(min=1, help="1-based source column.")] = 1,
    tgt_col: Annotated[int, typer.Option(min=1, help="1-based target column.")] = 2,
    valid: Annotated[Path | None, typer.Option(help="Validation TSV (same columns).")] = None,
    valid_size: Annotated[int, typer.Option(help="Pairs held out when no --valid.")] = 1000,
    vocab_size: Annotated[int, typer.Option(min=8, help="SentencePiece pieces (joint).")] = 8000,
    attention: Annotated[str, typer.Option(help="general | dot | additive | none")] = "general",
    cell: Annotated[str, typer.Option(help="gru | lstm")] = "gru",
    embed: Annotated[int, typer.Option(min=1)] = 256,
    hidden: Annotated[
        int, typer.Option(min=2, help="Decoder size; encoder is 2 x hidden/2.")
    ] = 512,
    layers: Annotated[int, typer.Option(min=1)] = 1,
    dropout: Annotated[float, typer.Option(min=0.0, max=0.99)] = 0.2,
    batch_tokens: Annotated[int, typer.Option(min=1, help="Target pieces per batch.")] = 1500,
    epochs: Annotated[int, typer.Option(min=1)] = 30,
    max_steps: Annotated[int, typer.Option(min=0, help="Stop after N steps (0 = no limit).")] = 0,
    max_time: Annotated[float, typer.Option(min=0, help="Stop after N minutes (0 = none).")] = 0,
    lr: Annotated[float, typer.Option(min=0.0)] = 1e-3,
    label_smoothing: Annotated[float, typer.Option(min=0.0, max=0.99)] = 0.1,
    patience: Annotated[
        int, typer.Option(min=1, help="Validations without gain before stopping.")
    ] = 4,
    save_every: Annotated[int, typer.Option(min=1, help="Steps between resume checkpoints.")] = 500,
    seed: Annotated[int, typer.Option()] = 1,
    amp: Annotated[bool, typer.Option(help="bf16 autocast (CPU and CUDA).")] = True,
    probe: Annotated[str, typer.Option(help="Sentence whose attention is kept every epoch.")] = "",
    casual_share: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Share of pairs also seen typed casually.")
    ] = 0.2,
    resume: Annotated[bool, typer.Option(help="Continue the run in --out.")] = False,
    nproc: Annotated[
        int, typer.Option(min=1, help="Processes on this machine, via torch's elastic launcher.")
    ] = 1,
    device: Device = "auto",
    threads: Threads = 0,
    debug: Debug = False,
) -> None:
    """Train a model on a parallel corpus into a model directory."""
    if nproc > 1 and "WORLD_SIZE" not in os.environ:
        _launch(nproc)
        return
    with handled(debug):
        from .config import TrainConfig
        from .progress import TrainProgress
        from .training import train as run

        cfg = TrainConfig(
            src_col=src_col,
            tgt_col=tgt_col,
            valid_size=valid_size,
            vocab_size=vocab_size,
            batch_tokens=batch_tokens,
            epochs=epochs,
            max_steps=max_steps,
            max_time=max_time,
            lr=lr,
            label_smoothing=label_smoothing,
            patience=patience,
            save_every=save_every,
            seed=seed,
            amp=amp,
            probe=probe,
            casual_share=casual_share,
        )
        options = dict(
            embed=embed,
            hidden=hidden,
            layers=layers,
            cell=cell,
            attention=attention,
            dropout=dropout,
        )
        from . import distributed

        torch_device = distributed.init(setup_torch(device, threads))
        main, ok = distributed.rank() == 0, False
        try:
            with TrainProgress(err) as progress:
                run(
                    corpus=corpus,
                    out=out,
                    model_options=options,
                    cfg=cfg,
                    valid=valid,
                    resume=resume,
                    device=torch_device,
                    report=progress.report,
                )
            ok = True
        finally:
            distributed.finish(ok=ok)
        if main:
            err.print(f"model written to [bold]{escape(str(out))}[/]")


def _launch(nproc: int) -> None:
    """Re-run this same command as `nproc` processes with torch's own launcher (torchrun)."""
    from torch.distributed.run import main as torchrun

    args = sys.argv[1:]
    for i, arg in enumerate(args):  # drop --nproc N / --nproc=N: the workers are the N
        if arg == "--nproc":
            args = args[:i] + args[i + 2 :]
            break
        if arg.startswith("--nproc="):
            args = args[:i] + args[i + 1 :]
            break
    err.print(f"launching {nproc} training processes (torch.distributed, gloo/NCCL)")
    try:
        torchrun(["--standalone", f"--nproc-per-node={nproc}", "-m", "seq2attn_cli", *args])
    except Exception as error:  # the launcher reports which rank failed and why
        err.print(f"[bold red]s2a: error:[/] distributed training failed: {escape(str(error))}")
        raise typer.Exit(2) from None


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:  # Ctrl-C before a command's own handling took over
        sys.stderr.write("s2a: interrupted\n")
        sys.exit(130)


def show_heatmap(console: Console, translation: Any, *, pieces: bool, title: str = "") -> None:
    """Draw one translation's attention on a console (colour unless NO_COLOR / no colour)."""
    from .heatmap import heatmap, word_level

    if not translation.tgt_tokens:
        return
    if not translation.has_attention:
        console.print("(no attention: this model decodes from a single context vector)")
        return
    src, tgt, weights = translation.src_tokens, translation.tgt_tokens, translation.weights
    if not pieces:
        src, tgt, weights = word_level(src, tgt, weights)
        src, tgt = [w.lstrip("▁") or w for w in src], [w.lstrip("▁") or w for w in tgt]
    color = console.color_system is not None and not console.no_color
    console.print(heatmap(src, tgt, weights, color=color, width=console.width, title=title or None))


@app.command()
def translate(
    text: Annotated[list[str] | None, typer.Argument(help="Sentences; none: read stdin.")] = None,
    model: ModelDir = None,
    beam: Annotated[int, typer.Option(min=1, help="Beam size (1 = greedy).")] = 5,
    batch_size: Annotated[int, typer.Option(min=1, help="Sentences decoded together.")] = 64,
    heatmap: Annotated[bool, typer.Option(help="Draw each sentence's attention.")] = False,
    pieces: Annotated[bool, typer.Option(help="Heatmap over subword pieces, not words.")] = False,
    align: Annotated[bool, typer.Option(help="Append Pharaoh word alignments (tab).")] = False,
    format: Annotated[str, typer.Option("--format", help="text | jsonl")] = "text",
    quantize: Annotated[bool, typer.Option(help="int8 layers on CPU (faster).")] = True,
    device: Device = "auto",
    threads: Threads = 0,
    debug: Debug = False,
) -> None:
    """Translate sentences given as arguments, or stdin line by line (one line out per line in)."""
    import json

    if format not in ("text", "jsonl"):
        fail(f"--format must be text or jsonl, not {format!r}")
    with handled(debug):
        directory = model or default_model()
        torch_device = setup_torch(device, threads)
        from .translator import Translator, alignment, pharaoh

        translator = Translator.load(directory, device=torch_device, quantized=quantize)
        out = sys.stdout
        picture = StdoutConsole() if out.isatty() else err  # heatmaps never mix into piped output

        def emit(lines: list[str], line_no: int) -> None:
            for offset, t in enumerate(
                translator.translate(lines, beam=beam, batch_size=batch_size)
            ):
                if t.truncated:
                    err.print(
                        f"[yellow]warning:[/] input line {line_no + offset}: longer than "
                        "the model takes; translated the first part only",
                        soft_wrap=True,
                    )
                if format == "jsonl":
                    record = t.as_dict()
                    if align:
                        record["alignment"] = pharaoh(alignment(t))
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
                else:
                    out.write(t.text + (f"\t{pharaoh(alignment(t))}" if align else "") + "\n")
                if heatmap:
                    out.flush()
                    show_heatmap(picture, t, pieces=pieces)
            out.flush()

        if text:
            emit(text, 1)
        elif sys.stdin.isatty():
            err.print("s2a: type a sentence and press Enter (Ctrl-D to end)")
            line_no = 1
            while True:
                err.print("> ", end="")  # the prompt goes to stderr: stdout carries results only
                line = sys.stdin.readline()
                if not line:  # Ctrl-D
                    err.print()
                    break
                emit([line.rstrip("\n")], line_no)
                line_no += 1
        else:
            from .data import line_chunks

            line_no = 1
            # big chunks sort better by length: 16 batches a chunk ~10% faster than 4 (beam 5)
            for chunk in line_chunks(sys.stdin.buffer, chunk=batch_size * 16):
                lines = [raw.decode("utf-8", errors="replace") for raw in chunk]
                emit(lines, line_no)
                line_no += len(lines)


def _color(console: Console) -> bool:
    return console.color_system is not None and not console.no_color


@app.command()
def evaluate(
    test: Annotated[Path, typer.Argument(help="Test TSV: source and reference columns.")],
    model: ModelDir = None,
    src_col: Annotated[int, typer.Option(min=1)] = 1,
    tgt_col: Annotated[int, typer.Option(min=1)] = 2,
    beam: Annotated[int, typer.Option(min=1)] = 5,
    batch_size: Annotated[int, typer.Option(min=1)] = 64,
    compare: Annotated[Path | None, typer.Option(help="A second model to put beside.")] = None,
    output: Annotated[Path | None, typer.Option(help="Write the hypotheses here.")] = None,
    format: Annotated[str, typer.Option("--format", help="text | json")] = "text",
    quantize: Annotated[bool, typer.Option(help="int8 layers on CPU (faster).")] = True,
    device: Device = "auto",
    threads: Threads = 0,
    debug: Debug = False,
) -> None:
    """Score a model on a test set: BLEU, chrF, and BLEU by source length."""
    import json

    if format not in ("text", "json"):
        fail(f"--format must be text or json, not {format!r}")
    with handled(debug):
        from .data import read_pairs
        from .evaluation import evaluate as run
        from .translator import Translator
        from .views import evaluation_view

        pairs, report = read_pairs(test, src_col=src_col, tgt_col=tgt_col)
        if report.skipped:
            err.print(
                escape(f"{test}: skipped {sum(report.skipped.values())} lines: {report.summary()}")
            )
        torch_device = setup_torch(device, threads)
        results = []
        for directory in [model or default_model()] + ([compare] if compare else []):
            translator = Translator.load(directory, device=torch_device, quantized=quantize)
            name = (
                directory.name
                if directory != compare or directory.name != (model or default_model()).name
                else str(directory)
            )
            err.print(
                escape(f"translating {len(pairs):,} sentences with {directory} (beam {beam})")
            )
            results.append(run(translator, pairs, name=name, beam=beam, batch_size=batch_size))
        if output:
            output.write_text("".join(h + "\n" for h in results[0].hypotheses), encoding="utf-8")
        if format == "json":
            figures = [r.as_dict() for r in results]
            print(json.dumps(figures[0] if len(figures) == 1 else figures, indent=1))
        else:
            console = StdoutConsole()
            console.print(evaluation_view(results, color=_color(console), width=console.width))


@app.command()
def inspect(
    text: Annotated[str | None, typer.Argument(help="A sentence; none: the model card.")] = None,
    model: ModelDir = None,
    target: Annotated[str | None, typer.Option(help="Force-decode this translation.")] = None,
    steps: Annotated[bool, typer.Option(help="Show every decoding step.")] = False,
    history: Annotated[bool, typer.Option(help="Replay the probe's attention per epoch.")] = False,
    pieces: Annotated[bool, typer.Option(help="Heatmap over subword pieces.")] = False,
    save: Annotated[
        Path | None, typer.Option(help="Also write the picture as .svg or .html.")
    ] = None,
    threads: Threads = 0,
    debug: Debug = False,
) -> None:
    """Show the model card, or how the model translates one sentence, step by step."""
    if save and save.suffix.lower() not in (".svg", ".html"):
        fail(f"--save: {save} must end in .svg or .html")
    with handled(debug):
        from .translator import Translator
        from .views import card_view

        directory = model or default_model()
        setup_torch("cpu", threads)  # inspection runs on the CPU: it is one sentence
        translator = Translator.load(directory, quantized=False)
        consoles = [StdoutConsole()]
        if save:  # the saved picture is always in colour, whatever the terminal is
            recorder = Console(
                record=True,
                file=io.StringIO(),
                color_system="truecolor",
                force_terminal=True,
                width=max(consoles[0].width, 100),
            )
            consoles.append(recorder)
        for console in consoles:
            if history:
                _show_history(console, directory, pieces=pieces)
            elif text is None:
                from .inspection import model_card

                card = model_card(translator, directory)
                console.print(card_view(card, color=_color(console), width=console.width))
            else:
                _show_sentence(console, translator, text, target=target, steps=steps, pieces=pieces)
        if save:
            if save.suffix.lower() == ".svg":
                save.write_text(recorder.export_svg(title="s2a inspect"), encoding="utf-8")
            else:
                save.write_text(recorder.export_html(), encoding="utf-8")
            err.print(escape(f"saved {save}"))


def _show_sentence(
    console: Console, translator: Any, text: str, *, target: str | None, steps: bool, pieces: bool
) -> None:
    """Heatmap, diagnostics and (optionally) every step of one sentence."""
    from .heatmap import word_level
    from .inspection import diagnostics, explain
    from .translator import alignment, pharaoh
    from .views import diagnostics_view, steps_view

    translation, detail = explain(translator, text, target)
    label = "forced decoding of the given target" if target else "translation (greedy)"
    console.print(f"[bold]source:[/]   {escape(translation.source)}")
    console.print(f"[bold]{label}:[/] {escape(translation.text)}")
    console.print(f"score: {translation.score:.3f} log-probability per piece")
    if target:
        console.print(
            "per-piece log-probability: "
            + escape("  ".join(f"{s.piece}:{s.log_prob:.2f}" for s in detail))
        )
        console.print(f"alignment: {pharaoh(alignment(translation))}")
    show_heatmap(console, translation, pieces=pieces)
    if translation.has_attention:
        src, _, weights = word_level(
            translation.src_tokens, translation.tgt_tokens, translation.weights
        )
        console.print(diagnostics_view(diagnostics([w.lstrip("▁") for w in src], weights)))
    if steps:
        # an `--attention none` model attends to its one context vector, not to a source piece
        columns = translation.src_tokens if translation.has_attention else ["(context vector)"]
        console.print(steps_view(columns, detail))


def _show_history(console: Console, directory: Path, *, pieces: bool) -> None:
    """Replay the probe sentence's heatmap after every epoch of training."""
    from .checkpoint import HISTORY, read_json
    from .translator import Translation

    path = directory / HISTORY
    if not path.exists():
        fail(f"{path}: missing (the model was trained without a probe sentence)")
    data = read_json(path)
    console.print(f"[bold]probe:[/] {escape(str(data.get('probe', '')))}")
    for entry in data.get("epochs", []):
        t = Translation(
            source="",
            text="",
            score=0.0,
            src_tokens=entry["source"],
            tgt_tokens=entry["target"],
            weights=entry["weights"],
        )
        show_heatmap(console, t, pieces=pieces, title=f"after epoch {entry['epoch']:.3g}")
