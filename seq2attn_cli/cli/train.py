"""`s2a train`: corpora and flags -> a TrainConfig and the corpus specs, then training with
progress on stderr (or torch's launcher for --nproc)."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from ..config import ATTENTIONS, CELLS, CONFIG, MIN_VALID, CorpusSpec, ModelConfig, TrainConfig
from ..errors import Interrupted
from .common import (
    STOP_SAID,
    Debug,
    Device,
    Threads,
    deaf_to_signals,
    distinct_columns,
    fail,
    handled,
    model_dir,
    setup_torch,
)  # fmt: skip
from .launch import launch
from .streams import err

if TYPE_CHECKING:  # training imports torch: not for --help
    from ..training.run import StoredRun

TRAIN = TrainConfig()  # the defaults of a run and of a model: one home, config.py
MODEL = {
    f.name: f.default
    for f in dataclasses.fields(ModelConfig)
    if f.init and f.default is not dataclasses.MISSING
}
CORPUS = CorpusSpec(path="")
# what --resume may change: the limits, the plateau rules and --save-every; the rest is the run
RESUMABLE = {"epochs", "max_steps", "max_time", "patience", "lr_patience", "save_every"}
NOT_STORED = {"out", "resume", "nproc", "device", "threads", "debug", "init"}


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
        int,
        typer.Option(
            min=MIN_VALID,
            help=f"Pairs held out when no --valid (at least {MIN_VALID}; a "
            "tenth of the first corpus at most).",
        ),
    ] = TRAIN.valid_size,
    vocab_size: Annotated[
        int, typer.Option(min=8, help="SentencePiece pieces (joint).")
    ] = TRAIN.vocab_size,
    attention: Annotated[str, typer.Option(help=" | ".join(ATTENTIONS))] = MODEL["attention"],
    cell: Annotated[str, typer.Option(help=" | ".join(CELLS))] = MODEL["cell"],
    embed: Annotated[int, typer.Option(min=1)] = MODEL["embed"],
    hidden: Annotated[
        int, typer.Option(min=2, help="Decoder size; encoder is 2 x hidden/2.")
    ] = MODEL["hidden"],
    layers: Annotated[int, typer.Option(min=1)] = MODEL["layers"],
    dropout: Annotated[float, typer.Option(min=0.0, max=0.99)] = MODEL["dropout"],
    input_feed: Annotated[
        bool,
        typer.Option(
            "--input-feed/--no-input-feed",
            help="Feed each step's attentional vector into the next (Luong 2015); slower.",
        ),
    ] = MODEL["input_feed"],
    spaced_quotes: Annotated[
        bool,
        typer.Option(
            "--spaced-quotes/--glued-quotes",
            help="Opening quotes spaced off ('\" bonjour\"'): the quoted word keeps its piece.",
        ),
    ] = MODEL["spaced_quotes"],
    batch_tokens: Annotated[
        int, typer.Option(min=1, help="Target pieces per batch.")
    ] = TRAIN.batch_tokens,
    max_pieces: Annotated[
        int, typer.Option(min=2, help="Pairs with a side this long in pieces are skipped.")
    ] = TRAIN.max_pieces,
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
        int,
        typer.Option(min=1, help="Epochs without a better validation BLEU before stopping."),
    ] = TRAIN.patience,
    lr_patience: Annotated[
        int,
        typer.Option(min=1, help="Epochs without a better validation BLEU before lr halves."),
    ] = TRAIN.lr_patience,
    save_every: Annotated[
        int, typer.Option(min=1, help="Steps between resume checkpoints.")
    ] = TRAIN.save_every,
    seed: Annotated[int, typer.Option()] = TRAIN.seed,
    skip_epochs: Annotated[
        int,
        typer.Option(
            min=0,
            help="Start the data order N epochs in: a run started again from its weights "
            "(--init) reads on, not its first epochs' slices again.",
        ),
    ] = TRAIN.skip_epochs,
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
    # Before torch loads: on CPU, bf16 autocast keeps a oneDNN computation for every tensor
    # shape it meets, and batches of every length make thousands. Keeping one: 150 steps on
    # 60,000 Tatoeba pairs peaked at 1,315 MB instead of 1,659, side by side in the same time
    # (110.6 s against 111.4; an environment variable PyTorch reads once; the user's wins).
    os.environ.setdefault("LRU_CACHE_CAPACITY", "1")
    from ..training.signals import raise_sigterm_at_once

    raise_sigterm_at_once()  # SIGTERM ends a run as Ctrl-C does, from its first moment (143)
    given = {
        name for name in ctx.params
        if getattr(ctx.get_parameter_source(name), "name", "") == "COMMANDLINE"
    }  # fmt: skip
    with handled(debug):
        options = {k: v for k, v in ctx.params.items() if k in MODEL}
        for name, choices in (("attention", ATTENTIONS), ("cell", CELLS)):
            if options[name] not in choices:  # before any work, as Click's own checks are
                fail(f"--{name} {options[name]!r}: expected one of {', '.join(choices)}")
        fields = {f.name for f in dataclasses.fields(TrainConfig)}
        cfg = TrainConfig(**{k: v for k, v in ctx.params.items() if k in fields})
        if resume:
            model_dir(out, option="--out")  # worded as --model's and --init's: before any work
            from ..training.run import stored_run

            stored = _located(stored_run(out), out, corpora or [], valid or [])
            cfg, options, specs, valid_specs = _resumed(stored, ctx.params, given)
            if reached := _reached(out, cfg):  # before the corpora are read: nothing to train
                if _speaks_for_the_run():  # (and before --nproc's workers start)
                    _left_as_it_was(out, reached)
                return
        else:
            if not corpora:
                fail("give at least one CORPUS (or --resume to continue the run in --out)")
            specs = _corpus_specs(corpora, rates=weights, src_col=src_col, tgt_col=tgt_col)
            valid_specs = [
                CorpusSpec(path=str(v), src_col=specs[0].src_col, tgt_col=specs[0].tgt_col)
                for v in valid or []
            ]
            from ..training.paths import anchored

            specs, valid_specs = anchored(specs), anchored(valid_specs)
            if init is not None:
                options = _init_options(model_dir(init, option="--init"), ctx.params, given)
                if (said := _read_before(init, specs, cfg)) and _speaks_for_the_run():
                    err.print(f"s2a: {said}", soft_wrap=True)
        if nproc > 1 and "WORLD_SIZE" not in os.environ:  # the command checked, then its workers
            launch(nproc)
            return
        _train(specs, valid_specs, out=out, options=options, cfg=cfg, resume=resume,
               init=None if resume else init, device=device, threads=threads)  # fmt: skip


def _corpus_specs(
    corpora: list[Path], *, rates: str, src_col: str, tgt_col: str
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

    per_epoch = per_corpus("--weights", rates, float)  # passes per epoch over each corpus
    srcs = per_corpus("--src-col", src_col, int)
    tgts = per_corpus("--tgt-col", tgt_col, int)
    for corpus, src, tgt in zip(corpora, srcs, tgts, strict=True):
        distinct_columns(corpus, src_col=src, tgt_col=tgt)
    try:
        return [
            CorpusSpec(path=str(c), src_col=s, tgt_col=t, rate=r)
            for c, s, t, r in zip(corpora, srcs, tgts, per_epoch, strict=True)
        ]
    except ValueError as error:
        fail(str(error))
        raise


def _located(stored: StoredRun, out: Path, corpora: list[Path], valid: list[Path]) -> StoredRun:
    """The stored run with its corpora and --valid files found (training/paths.py)."""
    from ..training.paths import located

    specs, notes = located(stored.corpora, corpora, out=out)
    valid_specs, more = located(stored.valid, valid, out=out)
    for note in notes + more if _speaks_for_the_run() else []:
        err.print(f"s2a: {note}", soft_wrap=True)
    return stored._replace(corpora=specs, valid=valid_specs)


def _init_options(init: Path, params: dict[str, Any], given: set[str]) -> dict[str, Any]:
    """The architecture of the model `--init` starts from; a flag that contradicts it fails."""
    from ..checkpoint import read_json
    from ..config import from_dict

    model_config = from_dict(ModelConfig, read_json(init / CONFIG).get("model"))
    options = {k: getattr(model_config, k) for k in MODEL}
    for name in sorted(given & (set(MODEL) | {"vocab_size"})):
        if name == "input_feed" and params[name]:  # the one growth allowed (see run._grown)
            options[name] = True
        elif name == "vocab_size" or params[name] != options[name]:
            flag = "--" + name.replace("_", "-")
            fail(f"{flag} contradicts --init {init}: a run started from a model keeps its "
                 "architecture and pieces")  # fmt: skip
    return options


def _read_before(init: Path, specs: list[CorpusSpec], cfg: TrainConfig) -> str:
    """A note when `init`'s model was trained on these corpora in this --seed's data order:
    the --skip-epochs that reads on from where it stopped ('' when there is nothing to say)."""
    from ..checkpoint import read_json

    stored = read_json(init / CONFIG)
    try:
        same = stored["data"]["corpora"] == [s.stored() for s in specs]
        read = int(stored["training"].get("skip_epochs", 0)) + int(stored["epochs"][-1]["epoch"])
        same = same and stored["training"]["seed"] == cfg.seed
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):  # not a run of ours
        return ""
    if not same or read <= cfg.skip_epochs or all(s.rate == int(s.rate) for s in specs):
        return ""  # other data, said already, or every epoch reads the same pairs
    return (f"--init {init} has read {read} epochs of these corpora in --seed {cfg.seed}'s "
            f"order: --skip-epochs {read} reads on, not their first slices again")  # fmt: skip


def _resumed(stored: StoredRun, params: dict[str, Any], given: set[str]) -> tuple:
    """The stored run's settings with new limits; a flag that contradicts them is an error."""
    cfg, model_config, specs, valid_specs = stored
    now = {
        **dataclasses.asdict(cfg), **dataclasses.asdict(model_config),
        "corpora": [Path(s.path) for s in specs], "valid": [Path(v.path) for v in valid_specs],
        "weights": ",".join(f"{s.rate:g}" for s in specs),
        "src_col": ",".join(str(s.src_col) for s in specs),
        "tgt_col": ",".join(str(s.tgt_col) for s in specs),
    }  # fmt: skip
    for name in sorted(given - RESUMABLE - NOT_STORED):
        value, stored_value = params[name], now.get(name)
        if not _same(value, stored_value):
            flag = "--" + name.replace("_", "-") if name != "corpora" else "CORPUS"
            fail(
                f"{flag} {_shown(value)} contradicts the run stored in the model directory "
                f"({_shown(stored_value)}); --resume continues it as stored: only the limits "
                "(--epochs, --max-steps, --max-time), the plateau rules (--patience, "
                "--lr-patience), --save-every and where it runs (--device, --threads, --nproc) "
                "may change"
            )
    cfg = dataclasses.replace(cfg, **{k: params[k] for k in RESUMABLE & given})  # others: stored
    options = {k: getattr(model_config, k) for k in MODEL}
    return cfg, options, specs, valid_specs


def _reached(out: Path, cfg: TrainConfig) -> str:
    """The limit the run stored in `out` has already reached with `cfg`'s ('' if none)."""
    from ..training.loop import limit_reached
    from ..training.run import stored_state

    stored = stored_state(out)
    return limit_reached(cfg, *stored) if stored is not None else ""


def _speaks_for_the_run() -> bool:
    """Whether this process says what is said once a run: the only one, s2a's own launcher
    (its workers start checked), or rank 0 of a torchrun the user started."""
    if "WORLD_SIZE" not in os.environ:
        return True
    return os.environ.get("RANK", "0") == "0" and STOP_SAID not in os.environ


def _left_as_it_was(out: Path, reached: str) -> None:
    """Say that the run in `out` has reached a limit already; remove what a killed save left."""
    from ..training.run import tidy
    from ..views.progress import TrainProgress

    tidy(out, TrainProgress(err).report)  # as a run that starts would: the directory is whole
    err.print(f"{reached}: nothing to train; {escape(str(out))} is left as it was", soft_wrap=True)


def _same(value: Any, stored: Any) -> bool:
    """Whether a flag given with --resume says what the stored run says (paths: the same file)."""
    if isinstance(value, list):  # CORPUS, --valid: typed from here, stored absolute
        return [p.resolve() for p in value] == [Path(s).resolve() for s in stored or []]
    return value == stored or (isinstance(value, str) and {value} == set(str(stored).split(",")))


def _shown(value: Any) -> str:
    """A flag's value as a user types it: paths as plain text, a long value cut short."""
    if isinstance(value, list):
        return " ".join(map(str, value)) or "none"
    return f"{value!s:.60}"


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
    from ..training import distributed
    from ..training.loop import train as run
    from ..training.signals import stop_signals
    from ..views.progress import TrainProgress

    created = not out.exists()
    torch_device = distributed.init(setup_torch(device, threads))
    main, ok = distributed.rank() == 0, False
    with stop_signals() as signals:
        # training handles the signals itself; once it has ended, one changes nothing: the
        # model is written, or the run stopped (ignored then, not a second line or traceback)
        signals.hold()
        try:
            with TrainProgress(err) as progress:
                run(corpora=specs, out=out, model_options=options, cfg=cfg,
                    valid=valid_specs, resume=resume, init=init, device=torch_device,
                    report=progress.report)  # fmt: skip
            ok = True
        except (Interrupted, KeyboardInterrupt) as error:
            deaf_to_signals()  # stopped by a signal: more change nothing, here and at exit
            if not main and isinstance(error, Interrupted):  # rank 0 alone says so
                raise typer.Exit(error.exit_code) from None
            raise
        finally:
            distributed.finish(ok=ok)
            if not ok and main and created and not (out / CONFIG).exists():
                shutil.rmtree(out, ignore_errors=True)  # nothing worth keeping was written yet
        if main:
            err.print(f"model written to [bold]{escape(str(out))}[/]")
