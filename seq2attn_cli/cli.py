"""The s2a command line: parses, prints, exits. Torch is imported inside commands only,
so `s2a --help` stays fast."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import sys
from collections.abc import Callable
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperCommand

from .config import CorpusSpec, DecodeConfig, ModelConfig, TrainConfig
from .errors import Interrupted, TrainingError

app = typer.Typer(
    help="s2a: train, run and look inside an RNN encoder-decoder translator with attention.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
err = Console(stderr=True, highlight=False)
DECODE = DecodeConfig()  # translate, inspect and evaluate decode alike, by default


class Command(TyperCommand):
    """Help as other CLIs write it: `CORPUS` and `[TEXT]...` in usage, flags without `<bool>`."""

    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:
        """Usage pieces without the braces this Typer puts around required arguments."""
        return [
            piece.replace("{", "").replace("}", "") for piece in super().collect_usage_pieces(ctx)
        ]

    def get_params(self, ctx: typer.Context) -> list[Any]:
        """The parameters, with no value placeholder shown for flags."""
        params = super().get_params(ctx)
        for param in params:
            if getattr(param, "is_flag", False):
                param.metavar = ""
        return params


class StdoutConsole(Console):
    """A rich console on stdout whose closed pipe (`| head`) ends s2a quietly, with exit 0."""

    def on_broken_pipe(self) -> None:
        self.quiet = True  # rich's own handler exits 1; `handled` treats it as cat does
        raise BrokenPipeError


DEVICES = ["auto", "cpu", "cuda", "mps"]
Debug = Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")]
ModelDir = Annotated[
    Path | None,
    typer.Option(
        "--model", "-m", help="Model directory \\[default: $S2A_MODEL, else the embedded fr-en]."
    ),
]
Device = Annotated[
    str, typer.Option(help="auto | cpu | cuda | mps", autocompletion=lambda: DEVICES)
]
Threads = Annotated[int, typer.Option(help="CPU threads (0 = torch's default).")]
Beam = Annotated[int, typer.Option(min=1, help="Beam size (1 = greedy).")]
BatchSize = Annotated[int, typer.Option(min=1, help="Sentences decoded together.")]
Quantize = Annotated[bool, typer.Option(help="int8 layers on CPU (faster).")]


def _version(value: bool) -> None:
    """Print s2a's version and exit (--version, -V)."""
    if value:
        from . import __version__

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
            import torch  # noqa: F401
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
    except Interrupted as error:  # training saved its state on Ctrl-C
        if debug:
            raise
        err.print(f"s2a: {escape(str(error))}")
        raise typer.Exit(130) from None
    except (ValueError, TrainingError) as error:  # CorpusError, ModelError: the message says it
        if debug:
            raise
        fail(str(error))
    except (OSError, RuntimeError, MemoryError) as error:
        if debug:
            raise
        fail(f"{type(error).__name__}: {error}")
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


def model_dir(given: Path | None, *, option: str = "--model") -> Path:
    """The model directory to use, checked before any work: an error says where it came from."""
    env = os.environ.get("S2A_MODEL")
    if given is not None:
        path, origin = given, f"{option} {given}"
    elif env:
        path, origin = Path(env), f"$S2A_MODEL={env}"
    else:
        from .checkpoint import EMBEDDED

        path, origin = EMBEDDED, "the embedded model"
        if not (path / "config.json").exists():
            fail(
                "no model: the embedded default model is missing; train one with "
                "`s2a train CORPUS --out DIR` and pass --model DIR (or set S2A_MODEL)"
            )
    if not path.exists():
        fail(f"{origin}: no such directory")
    if not path.is_dir():
        fail(f"{origin}: not a directory")
    if not (path / "config.json").exists():
        fail(f"{origin}: not a model directory (no config.json)")
    return path


def check_output(path: Path, option: str) -> None:
    """Fail now, before any work, when `path` cannot be written."""
    import tempfile

    if path.is_dir():
        fail(f"{option} {path}: is a directory")
    if not path.parent.is_dir():
        fail(f"{option} {path}: no such directory {path.parent}")
    try:  # the one sure test (permissions, read-only file systems): write a file there
        with tempfile.TemporaryFile(dir=path.parent):
            pass
        if path.exists() and not os.access(path, os.W_OK):
            raise PermissionError
    except OSError:
        fail(f"{option} {path}: cannot write there")


TRAIN = TrainConfig()  # the defaults of a run and of a model: one home, config.py
MODEL = {
    f.name: f.default
    for f in dataclasses.fields(ModelConfig)
    if f.init and f.default is not dataclasses.MISSING
}
CORPUS = CorpusSpec(path="")
RESUMABLE_LIMITS = {"epochs", "max_steps", "max_time", "save_every"}  # --resume may change
NOT_STORED = {"out", "resume", "nproc", "device", "threads", "debug", "init"}


@app.command(cls=Command)
def train(
    ctx: typer.Context,
    corpora: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="CORPUS",
            help="Tab-separated files (.gz/.xz too), one sentence pair a line; none with --resume.",
            show_default=False,
        ),
    ] = None,
    out: Annotated[Path, typer.Option(help="Model directory to write.")] = Path("model"),
    weights: Annotated[
        str,
        typer.Option(help="Passes per epoch over each corpus, e.g. 1,2,0.1 (0.1 = a tenth)."),
    ] = "1",
    src_col: Annotated[
        str, typer.Option(help="1-based source column: one for all corpora, or one each (2,1).")
    ] = str(CORPUS.src_col),
    tgt_col: Annotated[
        str, typer.Option(help="1-based target column: one for all corpora, or one each.")
    ] = str(CORPUS.tgt_col),
    valid: Annotated[
        list[Path] | None,
        typer.Option(help="Validation TSV, repeatable; each is scored. Columns of corpus 1."),
    ] = None,
    valid_size: Annotated[
        int, typer.Option(help="Pairs held out when no --valid.")
    ] = TRAIN.valid_size,
    vocab_size: Annotated[
        int, typer.Option(min=8, help="SentencePiece pieces (joint).")
    ] = TRAIN.vocab_size,
    attention: Annotated[str, typer.Option(help="general | dot | additive | none")] = MODEL[
        "attention"
    ],
    cell: Annotated[str, typer.Option(help="gru | lstm")] = MODEL["cell"],
    embed: Annotated[int, typer.Option(min=1)] = MODEL["embed"],
    hidden: Annotated[
        int, typer.Option(min=2, help="Decoder size; encoder is 2 x hidden/2.")
    ] = MODEL["hidden"],
    layers: Annotated[int, typer.Option(min=1)] = MODEL["layers"],
    dropout: Annotated[float, typer.Option(min=0.0, max=0.99)] = MODEL["dropout"],
    batch_tokens: Annotated[
        int, typer.Option(min=1, help="Target pieces per batch.")
    ] = TRAIN.batch_tokens,
    epochs: Annotated[int, typer.Option(min=1)] = TRAIN.epochs,
    max_steps: Annotated[
        int, typer.Option(min=0, help="Stop after N steps (0 = no limit).")
    ] = TRAIN.max_steps,
    max_time: Annotated[
        float, typer.Option(min=0, help="Stop after N minutes (0 = none).")
    ] = TRAIN.max_time,
    lr: Annotated[float, typer.Option(min=0.0)] = TRAIN.lr,
    label_smoothing: Annotated[float, typer.Option(min=0.0, max=0.99)] = TRAIN.label_smoothing,
    patience: Annotated[
        int, typer.Option(min=1, help="Validations without gain before stopping.")
    ] = TRAIN.patience,
    save_every: Annotated[
        int, typer.Option(min=1, help="Steps between resume checkpoints.")
    ] = TRAIN.save_every,
    seed: Annotated[int, typer.Option()] = TRAIN.seed,
    amp: Annotated[
        bool, typer.Option("--amp/--no-amp", help="bf16 autocast where the device has native bf16.")
    ] = TRAIN.amp,
    probe: Annotated[
        str, typer.Option(help="Sentence whose attention is kept every epoch.")
    ] = TRAIN.probe,
    init: Annotated[
        Path | None,
        typer.Option(
            help="Start from this model's weights and pieces (fine-tuning); its architecture."
        ),
    ] = None,
    check_columns: Annotated[
        bool,
        typer.Option(
            "--check-columns/--no-check-columns",
            help="Refuse a corpus whose columns look the other way round from the rest.",
        ),
    ] = TRAIN.check_columns,
    noise_share: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Share of pairs also seen typed as people do.")
    ] = TRAIN.noise_share,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue the run in --out, with its stored settings.")
    ] = False,
    nproc: Annotated[
        int, typer.Option(min=1, help="Processes on this machine, via torch's elastic launcher.")
    ] = 1,
    device: Device = "auto",
    threads: Threads = 0,
    debug: Debug = False,
) -> None:
    """Train a model on one or more parallel corpora into a model directory."""
    if nproc > 1 and "WORLD_SIZE" not in os.environ:
        _launch(nproc)
        return
    given = {
        name for name in ctx.params
        if getattr(ctx.get_parameter_source(name), "name", "") == "COMMANDLINE"
    }  # fmt: skip
    with handled(debug):
        options = {k: v for k, v in ctx.params.items() if k in MODEL}
        fields = {f.name for f in dataclasses.fields(TrainConfig)}
        cfg = TrainConfig(**{k: v for k, v in ctx.params.items() if k in fields})
        if resume:
            from .run import stored_run

            cfg, options, specs, valid_specs = _resumed(stored_run(out), ctx.params, given)
        else:
            if not corpora:
                fail("give at least one CORPUS (or --resume to continue the run in --out)")
            specs = _corpus_specs(corpora, weights=weights, src_col=src_col, tgt_col=tgt_col)
            valid_specs = [
                CorpusSpec(path=str(v), src_col=specs[0].src_col, tgt_col=specs[0].tgt_col)
                for v in valid or []
            ]
            if init is not None:
                options = _init_options(init, ctx.params, given)
        _train(specs, valid_specs, out=out, options=options, cfg=cfg, resume=resume,
               init=None if resume else init, device=device, threads=threads)  # fmt: skip


def _corpus_specs(
    corpora: list[Path], *, weights: str, src_col: str, tgt_col: str
) -> list[CorpusSpec]:
    """One CorpusSpec per corpus from the comma lists of --weights, --src-col, --tgt-col."""

    def per_corpus(option: str, text: str, kind: type) -> list:
        try:
            values = [kind(v) for v in text.split(",")]
        except ValueError:
            fail(f"{option} {text!r}: expected numbers separated by commas")
        if len(values) == 1:
            return values * len(corpora)
        if len(values) != len(corpora):
            fail(f"{option} {text!r}: give one value, or one per corpus ({len(corpora)})")
        return values

    ws = per_corpus("--weights", weights, float)
    srcs = per_corpus("--src-col", src_col, int)
    tgts = per_corpus("--tgt-col", tgt_col, int)
    try:
        return [
            CorpusSpec(path=str(c), src_col=s, tgt_col=t, weight=w)
            for c, s, t, w in zip(corpora, srcs, tgts, ws, strict=True)
        ]
    except ValueError as error:
        fail(str(error))
        raise


def _init_options(init: Path, params: dict[str, Any], given: set[str]) -> dict[str, Any]:
    """The architecture of the model `--init` starts from; a flag that contradicts it fails."""
    from .checkpoint import CONFIG, read_json
    from .config import from_dict

    model_config = from_dict(ModelConfig, read_json(init / CONFIG).get("model"))
    options = {k: getattr(model_config, k) for k in MODEL}
    for name in sorted(given & (set(MODEL) | {"vocab_size"})):
        if name == "vocab_size" or params[name] != options[name]:
            flag = "--" + name.replace("_", "-")
            fail(f"{flag} contradicts --init {init}: a run started from a model keeps its "
                 "architecture and pieces")  # fmt: skip
    return options


def _resumed(stored: tuple, params: dict[str, Any], given: set[str]) -> tuple:
    """The stored run's settings with new limits; a flag that contradicts them is an error."""
    cfg, model_config, specs, valid_specs = stored
    now = {
        **dataclasses.asdict(cfg), **dataclasses.asdict(model_config),
        "corpora": [Path(s.path) for s in specs], "valid": [Path(v.path) for v in valid_specs],
        "weights": ",".join(f"{s.weight:g}" for s in specs),
        "src_col": ",".join(str(s.src_col) for s in specs),
        "tgt_col": ",".join(str(s.tgt_col) for s in specs),
    }  # fmt: skip
    for name in sorted(given - RESUMABLE_LIMITS - NOT_STORED):
        value, stored_value = params[name], now.get(name)
        same = value == stored_value or (
            isinstance(value, str) and {value} == set(str(stored_value).split(","))
        )
        if not same:
            flag = "--" + name.replace("_", "-") if name != "corpora" else "CORPUS"
            fail(
                f"{flag} {value!s:.60} contradicts the run stored in the model directory "
                f"({stored_value!s:.60}); --resume continues it as stored, only --epochs, "
                "--max-steps, --max-time and --save-every may change"
            )
    limits = {k: params[k] for k in RESUMABLE_LIMITS}
    cfg = dataclasses.replace(cfg, **limits)
    options = {k: getattr(model_config, k) for k in MODEL}
    return cfg, options, specs, valid_specs


def _train(
    specs: list[CorpusSpec],
    valid_specs: list[CorpusSpec],
    *,
    out: Path,
    options: dict[str, Any],
    cfg: TrainConfig,
    resume: bool,
    init: Path | None,
    device: str,
    threads: int,
) -> None:
    """Run training with progress on stderr; remove an --out it created if it fails early."""
    from . import distributed
    from .progress import TrainProgress
    from .reading import check_file
    from .training import train as run

    for spec in [*specs, *valid_specs]:
        check_file(Path(spec.path))
    created = not out.exists()
    torch_device = distributed.init(setup_torch(device, threads))
    main, ok = distributed.rank() == 0, False
    try:
        with TrainProgress(err) as progress:
            run(corpora=specs, out=out, model_options=options, cfg=cfg, valid=valid_specs,
                resume=resume, init=init, device=torch_device, report=progress.report)  # fmt: skip
        ok = True
    finally:
        distributed.finish(ok=ok)
        if not ok and main and created and not (out / "config.json").exists():
            shutil.rmtree(out, ignore_errors=True)  # nothing worth keeping was written yet
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


def _pharaoh(t: Any) -> str:
    """A translation's word alignment as Pharaoh text ('' without attention)."""
    from .alignment import pharaoh

    return pharaoh(t.alignment)


def _open_input(path: Path) -> Any:
    """The --input file opened for reading, or one error line now, before the model loads."""
    try:
        return path.open("rb")
    except IsADirectoryError:
        fail(f"--input {path}: is a directory")
    except OSError as error:
        fail(f"--input {path}: {error.strerror or error}")


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


def _input(prompt: str) -> str:
    """input() with line editing and history (readline), its prompt on stderr, not stdout."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)  # readline writes its prompt and echo to stdout: make that the terminal
    try:
        return input(prompt)
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _prompt(emit: Any) -> None:
    """The interactive prompt: Up/Down recall, Ctrl-C cancels the line, Ctrl-D ends."""
    try:
        import readline  # noqa: F401  (importing it gives input() line editing and history)
    except ImportError:  # no readline (Windows): a plain prompt
        pass
    err.print("s2a: type a sentence and press Enter (Ctrl-D to end)")
    line_no = 1
    while True:
        try:
            line = _input("> ")
        except EOFError:  # Ctrl-D
            err.print()
            return
        except KeyboardInterrupt:  # Ctrl-C: drop this line, as a shell does
            err.print()
            continue
        try:
            emit([line], line_no)
        except KeyboardInterrupt:
            err.print("(cancelled)")
        line_no += 1


def _write(
    translations: list[Any],
    *,
    line_no: int,
    jsonl: bool,
    align: bool,
    picture: Console | None,
    pieces: bool,
) -> None:
    """One line per translation on stdout (text or JSON); warnings, and heatmaps on `picture`."""
    import json

    from .views import heatmap_view

    out = sys.stdout
    for offset, t in enumerate(translations):
        if t.truncated:
            err.print(
                f"[yellow]warning:[/] input line {line_no + offset}: longer than "
                "the model takes; translated the first part only",
                soft_wrap=True,
            )
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
                pieces=pieces,
                color=_color(picture),
                width=picture.width,
            )
            if view is not None:
                picture.print(view)
    out.flush()


@app.command(cls=Command)
def translate(
    text: Annotated[
        list[str] | None,
        typer.Argument(metavar="TEXT", help="Sentences; none or -: read stdin."),
    ] = None,
    input: Annotated[
        Path | None,
        typer.Option("--input", "-i", help="Translate this file, line by line (- = stdin)."),
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
    quantize: Quantize = DECODE.quantize,
    device: Device = "auto",
    threads: Threads = 0,
    debug: Debug = False,
) -> None:
    """Translate sentences given as arguments, or a file or stdin line by line (one line out per
    line in)."""
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
    with handled(debug):
        stream = _open_input(input) if input is not None and str(input) != "-" else None
        directory = model_dir(model)
        torch_device = setup_torch(device, threads)
        from .translator import Translator

        translator = Translator.load(directory, device=torch_device, quantized=quantize)
        picture = StdoutConsole() if sys.stdout.isatty() else err  # never mixed into a pipe

        def emit(lines: list[str], line_no: int) -> None:
            _write(
                translator.translate(lines, beam=beam, batch_size=batch_size),
                line_no=line_no,
                jsonl=format == "jsonl",
                align=align,
                picture=picture if heatmap else None,
                pieces=pieces,
            )

        if texts:
            emit(texts, 1)
        elif stream is None and sys.stdin.isatty():
            _prompt(emit)
        else:
            from .streams import line_chunks

            line_no = 1
            # big chunks sort better by length: 16 batches a chunk ~10% faster than 4 (beam 5)
            for chunk in line_chunks(stream or sys.stdin.buffer, chunk=batch_size * 16):
                lines = [raw.decode("utf-8", errors="replace") for raw in chunk]
                emit(lines, line_no)
                line_no += len(lines)


def _color(console: Console) -> bool:
    """Whether to draw in colour on this console (not under NO_COLOR or on a plain terminal)."""
    return console.color_system is not None and not console.no_color


def _read_test(
    test: Path, *, src_col: int, tgt_col: int, skip_bad: bool
) -> tuple[list[tuple[str, str]], int]:
    """The test pairs and how many malformed lines were skipped; without --skip-bad, none may be."""
    from .reading import read_pairs

    pairs, read = read_pairs(test, src_col=src_col, tgt_col=tgt_col)
    skipped = sum(read.skipped.values())
    lines = f"{skipped} malformed line{'s' * (skipped != 1)}"
    if skipped and not skip_bad:
        fail(f"{test}: {lines} ({read.summary()}); fix them, or pass --skip-bad to score the rest")
    if skipped:
        err.print(escape(f"{test}: skipped {lines}: {read.summary()}"), soft_wrap=True)
    return pairs, skipped


def _names(directories: list[Path]) -> list[str]:
    """What evaluation tables call each model: its directory's name, its path when names clash."""
    names = [d.name for d in directories]
    return [str(d) if names.count(d.name) > 1 else d.name for d in directories]


@app.command(cls=Command)
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
    threads: Threads = 0,
    debug: Debug = False,
) -> None:
    """Score a model on a test set: BLEU, chrF, and BLEU by source length."""
    import json

    if format not in ("text", "json"):
        fail(f"--format must be text or json (one JSON object), not {format!r}")
    if output:
        check_output(output, "--output")
    with handled(debug):
        from .evaluation import column_problem, report
        from .evaluation import evaluate as run
        from .translator import Translator
        from .views import evaluation_view

        directories = [model_dir(model)] + [model_dir(c, option="--compare") for c in compare or []]
        pairs, skipped = _read_test(test, src_col=src_col, tgt_col=tgt_col, skip_bad=skip_bad)
        torch_device, batch = setup_torch(device, threads), {"batch_size": batch_size}
        translators = [  # every model loads before any translating: a bad one fails at once
            Translator.load(d, device=torch_device, quantized=quantize) for d in directories
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
                escape(f"translating {len(pairs):,} sentences with {directory} (beam {beam})")
            )
            scores = run(translator, pairs, name=name, model=str(directory), beam=beam, **batch)
            results.append(scores)
        if output:
            output.write_text("".join(h + "\n" for h in results[0].hypotheses), encoding="utf-8")
        if format == "json":
            columns = {"src_col": src_col, "tgt_col": tgt_col}
            run_info = {"sentences": len(pairs), "skipped": skipped, "beam": beam, **batch}
            int8 = quantize and torch_device.type == "cpu"
            figures = report(results, test=str(test), **columns, **run_info, quantized=int8)
            print(json.dumps(figures, indent=1))
        else:
            console = StdoutConsole()
            console.print(evaluation_view(results, color=_color(console), width=console.width))


@app.command(cls=Command)
def inspect(
    text: Annotated[
        str | None, typer.Argument(metavar="TEXT", help="A sentence; none: the model card.")
    ] = None,
    model: ModelDir = None,
    beam: Beam = DECODE.beam,
    quantize: Quantize = DECODE.quantize,
    target: Annotated[str | None, typer.Option(help="Force-decode this translation.")] = None,
    steps: Annotated[bool, typer.Option(help="Show every decoding step.")] = False,
    history: Annotated[bool, typer.Option(help="Replay the probe's attention per epoch.")] = False,
    pieces: Annotated[bool, typer.Option(help="Heatmap over subword pieces.")] = False,
    save: Annotated[
        Path | None, typer.Option(help="Also write the picture as .svg or .html.")
    ] = None,
    device: Device = "auto",
    threads: Threads = 0,
    debug: Debug = False,
) -> None:
    """Show the model card, or how the model translates one sentence, step by step."""
    if history and (text is not None or target or steps):
        fail(
            "--history replays the probe sentence of training: give it no TEXT, --target or --steps"
        )
    if text is None and (target or steps):
        fail("--target and --steps need a sentence: s2a inspect TEXT ...")
    if save and save.suffix.lower() not in (".svg", ".html"):
        fail(f"--save: {save} must end in .svg or .html")
    if save:
        check_output(save, "--save")
    with handled(debug):
        directory = model_dir(model)
        if history:
            from .inspection import read_history
            from .views import history_view

            view = partial(history_view, read_history(directory), pieces=pieces)
        elif text is None:
            view = _card(directory, threads=threads)
        else:
            options = dict(beam=beam, quantize=quantize, device=device, threads=threads)
            view = _sentence(directory, text, target=target, steps=steps, pieces=pieces, **options)
        console = StdoutConsole()
        console.print(view(color=_color(console), width=console.width))
        if save:  # the saved picture is always in colour, whatever the terminal is
            from .export import save as save_picture

            width = max(console.width, 100)
            title = f"s2a inspect: {text}" if text else "s2a inspect"
            save_picture(view(color=True, width=width), save, width=width, title=title)
            err.print(escape(f"saved {save}"))


def _card(directory: Path, *, threads: int) -> Callable[..., Any]:
    """The model card's view (of the float model on CPU: the card counts its parameters)."""
    from .inspection import model_card
    from .translator import Translator
    from .views import card_view

    setup_torch("cpu", threads)
    return partial(card_view, model_card(Translator.load(directory, quantized=False), directory))


def _sentence(
    directory: Path,
    text: str,
    *,
    target: str | None,
    steps: bool,
    pieces: bool,
    beam: int,
    quantize: bool,
    device: str,
    threads: int,
) -> Callable[..., Any]:
    """The view of one sentence, decoded as `s2a translate` decodes it with the same flags."""
    from .inspection import inspect_sentence
    from .translator import Translator
    from .views import sentence_view

    torch_device = setup_torch(device, threads)
    translator = Translator.load(directory, device=torch_device, quantized=quantize)
    seen = inspect_sentence(translator, text, target=target, beam=beam)
    search = "greedy" if beam == 1 else f"beam {beam}"
    int8 = quantize and torch_device.type == "cpu"
    label = f"translation ({search}, {'int8' if int8 else 'float32'})"
    if target:
        label = "forced decoding of the given target"
    return partial(sentence_view, seen, label=label, steps=steps, pieces=pieces)


@app.command(cls=Command)
def serve(
    model: ModelDir = None,
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
    quantize: Quantize = DECODE.quantize,
    device: Device = "auto",
    threads: Threads = 0,
    debug: Debug = False,
) -> None:
    """Serve translations over HTTP (LibreTranslate's API) and a page at / that shows attention."""
    with handled(debug):
        directory = model_dir(model)
        from .server import Limits, address, bind, create_app, model_languages
        from .server import serve as run_server

        try:
            sock = bind(host, port)
        except OSError as error:
            fail(f"--host {host} --port {port}: {error.strerror or error}")
        torch_device = setup_torch(device, threads)
        from .translator import Translator

        translator = Translator.load(directory, device=torch_device, quantized=quantize)
        limits = Limits(
            body_bytes=max_body,
            lines=max_lines,
            chars=max_chars or translator.max_chars,
            timeout=timeout,
        )
        languages = model_languages(translator.config, directory)
        app_ = create_app(
            translator, languages=languages, beam=beam, limits=limits, api_key=api_key
        )
        pair = "→".join(languages)
        err.print(
            f"s2a: serving {escape(str(directory))} ({pair}) at {address(sock)}; Ctrl-C stops",
            soft_wrap=True,
        )
        run_server(app_, sock)
