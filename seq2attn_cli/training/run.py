"""A training run's state and its start: fresh, from another model's parameters (--init), or
resumed from its model directory. Returns values; never prints."""

from __future__ import annotations

import dataclasses
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import torch

from .. import checkpoint as ckpt
from ..config import FORMAT_VERSION, RESUME, CorpusSpec, ModelConfig, TrainConfig, from_dict
from ..data.corpus import Prepared, Report, prepare
from ..data.subwords import Subwords, train_subwords
from ..errors import ModelError, TrainingError
from ..model.seq2seq import Seq2Seq
from . import distributed
from .outdir import check_out, check_space


@dataclass
class RunState:
    """Where a run is: all that --resume needs besides the parameters and the optimizer."""

    epoch: int = 0  # epochs finished
    position: int = 0  # batches of the current epoch done
    step: int = 0
    best_bleu: float | None = None  # the best at an epoch's end: what a plateau is measured by
    best_loss: float | None = None  # and the lowest loss (plateau.py: while BLEU is noise)
    bad_epochs: int = 0  # epoch ends without progress
    lr_bad_epochs: int = 0  # the same, since the lr last decayed
    nan_steps: int = 0
    train_seconds: float = 0.0
    epochs: list[dict[str, Any]] = field(default_factory=list)  # validation figures
    saved_bleu: float | None = None  # that of model.safetensors: the best of every validation
    saved_loss: float | None = None  # and the lowest loss of those that saved it
    shards: list[dict[str, int]] = field(default_factory=list)  # per rank, this process's run

    @classmethod
    def of(cls, counters: dict[str, Any]) -> RunState:
        """The state a resume checkpoint's counters stand for; an older one's lowest loss read
        from its validations (it had none: its first epoch resumed would reset the patience)."""
        losses = [e["valid_loss"] for e in counters.get("epochs", []) if "valid_loss" in e]
        lowest = min(losses, default=None)
        older = {"saved_bleu": counters["best_bleu"], "best_loss": lowest, "saved_loss": lowest}
        return cls(**{**older, **counters})


@dataclass
class Run:
    """A run being trained: its data, model, optimizer and state."""

    out: Path
    cfg: TrainConfig
    model_config: ModelConfig
    corpora: list[CorpusSpec]
    valid: list[CorpusSpec]
    data: Prepared
    model: Seq2Seq
    net: torch.nn.Module  # the model, or its DDP wrapper
    optimizer: torch.optim.Optimizer
    state: RunState
    device: torch.device
    init: Path | None = None  # the model whose parameters the run started from

    def save(self) -> None:
        """Write the resume checkpoint and config.json (rank 0 only)."""
        ckpt.save_resume(
            out_resume(self.out), self.model, self.optimizer, dataclasses.asdict(self.state)
        )
        self.write_config()

    def write_config(self) -> None:
        """config.json: the model, the run's settings and data, and where it stands."""
        ckpt.write_json(self.out / ckpt.CONFIG, {
            "format_version": FORMAT_VERSION,
            "model": dataclasses.asdict(self.model_config),
            "spm_sha256": ckpt.sha256_hex(self.data.subwords.proto),
            "training": dataclasses.asdict(self.cfg),
            "data": {
                "corpora": [c.stored() for c in self.corpora],
                "valid": [v.stored() for v in self.valid],
                "init": str(self.init) if self.init else None,
            },
            "corpus": self.data.stats,
            "parameters": sum(p.numel() for p in self.model.parameters()),
            "processes": distributed.world(),
            "shards": self.state.shards,
            "best_valid_bleu": self.state.saved_bleu,
            "steps": self.state.step,
            "train_seconds": round(self.state.train_seconds, 1),
            "epochs": self.state.epochs,
        })  # fmt: skip


def out_resume(out: Path) -> Path:
    """The resume checkpoint of a model directory."""
    return out / RESUME


def tidy(out: Path, report: Report) -> None:
    """Remove what a killed save left in `out`: a save killed (kill -9) leaves its temporary
    file behind, and whatever starts next on the directory removes it (rank 0 alone)."""
    if out.is_dir() and (removed := ckpt.remove_temporary(out)):
        report("stage", {"message": f"removed what a killed save left: {', '.join(removed)}"})


def stored_state(out: Path) -> tuple[RunState, float] | None:
    """Where the run stored in `out` stands and its learning rate, read from its resume
    checkpoint's metadata alone, without its tensors or corpora (None: unreadable; start_run
    then says why)."""
    try:
        meta = ckpt.resume_meta(out_resume(out))
        return RunState.of(meta["counters"]), float(meta["param_groups"][0]["lr"])
    except (ModelError, KeyError, IndexError, TypeError, ValueError):
        return None


def bf16_helps(device: torch.device) -> bool:
    """True where bf16 autocast speeds training up: CUDA, and CPUs with native bf16.

    On a CPU with AVX-512 a training step ran 2x faster in bf16; on one with AVX2 only,
    oneDNN emulates bf16 and the same step took 22 s instead of 0.75 s in fp32 (30x slower).
    """
    if device.type == "cuda":
        return True
    if device.type != "cpu":
        return False
    check = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", None)
    return bool(check is not None and check())


def autocast(device: torch.device, enabled: bool):
    """bf16 autocast where enabled and it helps (see bf16_helps); a no-op elsewhere."""
    if not enabled or not bf16_helps(device):
        return nullcontext()
    return torch.autocast(device.type, dtype=torch.bfloat16)


class StoredRun(NamedTuple):
    """The settings and data of a run stored in a model directory (what --resume continues)."""

    cfg: TrainConfig
    model_config: ModelConfig
    corpora: list[CorpusSpec]
    valid: list[CorpusSpec]


def stored_run(out: Path) -> StoredRun:
    """The settings and data of the run stored in `out` (what --resume continues)."""
    stored = ckpt.read_json(out / ckpt.CONFIG)
    try:
        data = stored["data"]
        corpora = [CorpusSpec.from_stored(c) for c in data["corpora"]]
        valid = [CorpusSpec.from_stored(v) for v in data["valid"]]
        cfg = from_dict(TrainConfig, stored["training"])
        model_config = from_dict(ModelConfig, stored["model"])
    except (KeyError, TypeError, ValueError) as err:
        raise TrainingError(f"{out / ckpt.CONFIG}: not a resumable run ({err})") from None
    return StoredRun(cfg, model_config, corpora, valid)


def start_run(
    *,
    corpora: list[CorpusSpec],
    valid: list[CorpusSpec],
    out: Path,
    model_options: dict[str, Any],
    cfg: TrainConfig,
    resume: bool,
    init: Path | None = None,
    device: torch.device,
    report: Report,
    subword_trainer=train_subwords,
) -> Run:
    """Prepare the data and build model and optimizer: fresh, from `init`'s weights, or
    restored from `out` (resume)."""
    main = distributed.rank() == 0
    if main and not resume:
        check_out(out)
    if main:
        tidy(out, report)
    spaced = bool(model_options.get("spaced_quotes"))  # how the model reads and writes quotes
    subwords, output_ids, recorded = _pieces(out, init, resume=resume, main=main)
    known = recorded.get("languages") or {}  # the languages the run must keep
    expected = (known.get("source"), known.get("target"))
    data = prepare(
        corpora, cfg, valid=valid, subwords=subwords, output_ids=output_ids, report=report,
        subword_trainer=subword_trainer, expected=expected, spaced_quotes=spaced,
    )  # fmt: skip
    if resume and main:
        _changed_data(out, recorded.get("corpora", []), data, report)
    start_from = init if not resume else None
    model, optimizer = _build(data, model_options, cfg, device, start_from, report)
    if main:
        check_space(out, sum(p.numel() for p in model.parameters()), resume=resume)
    state = RunState()
    if resume:
        state = RunState.of(ckpt.load_resume(out_resume(out), model, optimizer))
        where = f"step {state.step}, epoch {state.epoch + 1}, batch {state.position}"
        report("stage", {"message": f"resumed at {where}"})
    run = Run(
        out=out, cfg=cfg, model_config=model.config, corpora=corpora, valid=valid, data=data,
        model=model, net=model, optimizer=optimizer, state=state, device=device, init=init,
    )  # fmt: skip
    if main and not resume:
        ckpt.write_atomic(out / ckpt.SPM, data.subwords.proto)
        ckpt.save_parameters(out / ckpt.PARAMETERS, model)  # loadable from the first moment on
        run.save()  # and resumable
        distributed.barrier()  # the other ranks may now read the subwords (see _pieces)
    elif main:  # the limits --resume changed, stored now: a kill -9 before the next
        run.write_config()  # validation would have left the old ones for the next --resume
    if distributed.world() > 1:  # after the barrier: wrapping is collective too
        ids = [device.index] if device.type == "cuda" else None
        run.net = torch.nn.parallel.DistributedDataParallel(model, device_ids=ids)
    return run


def _changed_data(out: Path, stored: list[dict[str, Any]], data: Prepared, report: Report) -> None:
    """Warn where --resume reads a corpus of another length than the run started with: it
    goes on over it, no longer as it would have (a replacement given for a corpus that is
    gone is taken on its word; a reversed one is refused as swapped, data/corpus.py)."""
    for then, now in zip(stored, data.stats["corpora"], strict=False):
        if then.get("lines", now["lines"]) != now["lines"]:
            report("changed", {"corpus": now["corpus"], "lines": now["lines"],
                               "read": then["lines"], "out": str(out)})  # fmt: skip


def _pieces(
    out: Path, init: Path | None, *, resume: bool, main: bool
) -> tuple[Subwords | None, list[int] | None, dict[str, Any]]:
    """Subwords and output ids (the SentencePiece id of each output index) the run must use
    (None: train them), and what the model it continues read (config.json's "corpus": its
    languages, its corpora's figures; empty for a new model)."""
    if resume:
        tensors = ckpt.read_tensors(out_resume(out))
        subwords = Subwords.load(out / ckpt.SPM)
        output_ids = tensors[f"model.{ckpt.OUTPUT_IDS}"]
    elif not main:
        distributed.barrier()  # rank 0 trains (or copies) the subwords; the others load them
        tensors = ckpt.read_tensors(out / ckpt.PARAMETERS)
        subwords = Subwords.load(out / ckpt.SPM)
        output_ids = tensors[ckpt.OUTPUT_IDS]
    elif init is not None:  # the pieces of the model we start from: its parameters fit them
        tensors = ckpt.read_tensors(init / ckpt.PARAMETERS)
        subwords = Subwords.load(init / ckpt.SPM)
        output_ids = tensors[ckpt.OUTPUT_IDS]
    else:
        return None, None, {}
    source = out if resume else init
    recorded = ckpt.read_json(source / ckpt.CONFIG).get("corpus", {}) if source else {}
    return subwords, output_ids.tolist(), recorded


def _grown(tensors: dict[str, torch.Tensor], model: Seq2Seq) -> dict[str, torch.Tensor]:
    """Weights of a model without input feeding, fitted to `model`, which has it."""
    # the decoder RNN's weights on the fed-back vector start at zero: the grown model first
    # translates exactly as the model it grew from, then learns to use the feed
    name = "decoder.rnn.weight_ih_l0"
    weight, wanted = tensors.get(name), model.state_dict()[name].shape
    if not model.config.input_feed or weight is None or weight.shape == wanted:
        return tensors
    grown = torch.nn.functional.pad(weight, (0, wanted[1] - weight.size(1)))  # (gates*hidden, in)
    return {**tensors, name: grown}


def _build(
    data: Prepared,
    model_options: dict[str, Any],
    cfg: TrainConfig,
    device: torch.device,
    init: Path | None,
    report: Report,
) -> tuple[Seq2Seq, torch.optim.Optimizer]:
    """The model (from `init`'s parameters when given) and its optimizer, on `device`."""
    model_config = ModelConfig(
        src_vocab=len(data.subwords), tgt_vocab=len(data.output_ids), **model_options
    )
    torch.manual_seed(cfg.seed)
    model = Seq2Seq(model_config)
    model.output_ids.copy_(torch.tensor(data.output_ids))
    if init is not None:
        tensors = _grown(ckpt.read_tensors(init / ckpt.PARAMETERS), model)
        ckpt.load_state(model, tensors, init / ckpt.PARAMETERS)
        report("stage", {"message": f"starting from the weights of {init}"})
    model.to(device).train()
    # the fused kernel updates all parameters in one pass: 7% of a CPU training step -> 2%
    fused = device.type in ("cpu", "cuda")
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, fused=fused)
    if cfg.amp and not bf16_helps(device):
        report("stage", {"message": f"bf16 autocast off: {device.type} has no native bf16 (fp32)"})
    return model, optimizer
