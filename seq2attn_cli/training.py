"""Training: corpora -> subwords -> batches -> teacher-forced steps -> validated checkpoints.

The story in four parts: `start_run` (a fresh run, or a stored one resumed), `train_epoch`
(the steps of one epoch), `end_epoch` (validate, keep the best, decay the lr, decide to stop)
and `train`, which wires them. Progress goes to a `report(event, info)` callback; this module
never prints.
"""

from __future__ import annotations

import dataclasses
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from . import checkpoint as ckpt
from . import distributed
from .batching import Batch, batch_plan, epoch_examples, make_batch
from .config import BOS, EOS, FORMAT_VERSION, CorpusSpec, ModelConfig, TrainConfig, from_dict
from .corpus import Prepared, Report, prepare
from .errors import Interrupted, TrainingError
from .loss import label_smoothed_loss
from .outdir import check_out, check_space
from .seq2seq import Seq2Seq
from .subwords import Subwords, train_subwords
from .validation import probe_attention, validate

__all__ = ["Interrupted", "RunState", "TrainingError", "autocast", "train"]


@dataclass
class RunState:
    """Where a run is: all that --resume needs besides the weights and the optimizer."""

    epoch: int = 0  # epochs finished
    position: int = 0  # batches of the current epoch done
    step: int = 0
    best_bleu: float | None = None
    bad_epochs: int = 0  # validations without a better BLEU
    lr_bad_epochs: int = 0  # the same, since the lr last decayed
    nan_steps: int = 0
    train_seconds: float = 0.0
    epochs: list[dict[str, Any]] = field(default_factory=list)  # validation figures
    shards: list[dict[str, int]] = field(default_factory=list)  # per rank, this process's run


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
    init: Path | None = None  # the model whose weights the run started from

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
                "corpora": [dataclasses.asdict(c) for c in self.corpora],
                "valid": [dataclasses.asdict(v) for v in self.valid],
                "init": str(self.init) if self.init else None,
            },
            "corpus": self.data.stats,
            "parameters": sum(p.numel() for p in self.model.parameters()),
            "processes": distributed.world(),
            "shards": self.state.shards,
            "best_valid_bleu": self.state.best_bleu,
            "steps": self.state.step,
            "train_seconds": round(self.state.train_seconds, 1),
            "epochs": self.state.epochs,
        })  # fmt: skip


def out_resume(out: Path) -> Path:
    """The resume checkpoint of a model directory."""
    return out / ckpt.RESUME


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


def stored_run(out: Path) -> tuple[TrainConfig, ModelConfig, list[CorpusSpec], list[CorpusSpec]]:
    """The settings and data of the run stored in `out` (what --resume continues)."""
    stored = ckpt.read_json(out / ckpt.CONFIG)
    try:
        data = stored["data"]
        corpora = [from_dict(CorpusSpec, c) for c in data["corpora"]]
        valid = [from_dict(CorpusSpec, v) for v in data["valid"]]
        cfg = from_dict(TrainConfig, stored["training"])
        model_config = from_dict(ModelConfig, stored["model"])
    except (KeyError, TypeError, ValueError) as err:
        raise TrainingError(f"{out / ckpt.CONFIG}: not a resumable run ({err})") from None
    return cfg, model_config, corpora, valid


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
    subwords = tgt_pieces = None
    if resume:
        subwords = Subwords.load(out / ckpt.SPM)
        tgt_pieces = ckpt.read_tensors(out_resume(out))["model.tgt_pieces"].tolist()
    elif not main:
        distributed.barrier()  # rank 0 trains (or copies) the subwords; the others load them
        subwords = Subwords.load(out / ckpt.SPM)
        tgt_pieces = ckpt.read_tensors(out / ckpt.WEIGHTS)["tgt_pieces"].tolist()
    else:
        check_out(out)
        if init is not None:  # the pieces of the model we start from: its weights fit them
            subwords = Subwords.load(init / ckpt.SPM)
            tgt_pieces = ckpt.read_tensors(init / ckpt.WEIGHTS)["tgt_pieces"].tolist()
    expected = (None, None)
    if init is not None or resume:  # the languages of the model the run continues
        recorded = ckpt.read_json((init if not resume else out) / ckpt.CONFIG).get("corpus", {})
        known = recorded.get("languages") or {}
        expected = (known.get("source"), known.get("target"))
    data = prepare(
        corpora, cfg, valid=valid, subwords=subwords, tgt_pieces=tgt_pieces, report=report,
        subword_trainer=subword_trainer, expected=expected,
    )  # fmt: skip
    model_config = ModelConfig(
        src_vocab=len(data.subwords), tgt_vocab=len(data.tgt_pieces), **model_options
    )
    torch.manual_seed(cfg.seed)
    model = Seq2Seq(model_config)
    model.tgt_pieces.copy_(torch.tensor(data.tgt_pieces))
    model.to(device).train()
    # the fused kernel updates all weights in one pass: 7% of a CPU training step -> 2%
    fused = device.type in ("cpu", "cuda")
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, fused=fused)
    if main:
        check_space(out, sum(p.numel() for p in model.parameters()), resume=resume)
    state = RunState()
    if init is not None and not resume:
        ckpt.load_state(model, ckpt.read_tensors(init / ckpt.WEIGHTS), init / ckpt.WEIGHTS)
        report("stage", {"message": f"starting from the weights of {init}"})
    if cfg.amp and not bf16_helps(device):
        report("stage", {"message": f"bf16 autocast off: {device.type} has no native bf16 (fp32)"})
    if resume:
        state = RunState(**ckpt.load_resume(out_resume(out), model, optimizer))
        where = f"step {state.step}, epoch {state.epoch + 1}, batch {state.position}"
        report("stage", {"message": f"resumed at {where}"})
    net: torch.nn.Module = model
    if distributed.world() > 1:
        ids = [device.index] if device.type == "cuda" else None
        net = torch.nn.parallel.DistributedDataParallel(model, device_ids=ids)
    run = Run(
        out=out, cfg=cfg, model_config=model_config, corpora=corpora, valid=valid, data=data,
        model=model, net=net, optimizer=optimizer, state=state, device=device, init=init,
    )  # fmt: skip
    if main and not resume:
        ckpt.write_atomic(out / ckpt.SPM, data.subwords.proto)
        ckpt.save_weights(out / ckpt.WEIGHTS, model)  # loadable from the first moment on
        run.save()  # and resumable
    if not resume and main:
        distributed.barrier()
    return run


def train(
    *,
    corpora: list[CorpusSpec],
    out: Path,
    model_options: dict[str, Any],
    cfg: TrainConfig,
    valid: list[CorpusSpec] | None = None,
    resume: bool = False,
    init: Path | None = None,
    device: torch.device,
    report: Report,
    subword_trainer=train_subwords,
) -> RunState:
    """Train a model into `out` (or continue the one there with resume); return its state.

    Under torchrun every rank calls this: rank 0 trains the subwords, validates, reports and
    writes; each rank takes its own share of every epoch's batches.
    """
    out = Path(out)
    main = distributed.rank() == 0
    report = report if main else _silent
    run = start_run(
        corpora=corpora, valid=valid or [], out=out, model_options=model_options, cfg=cfg,
        resume=resume, init=init, device=device, report=report,
        subword_trainer=subword_trainer,
    )  # fmt: skip
    lengths = list(zip(run.data.train_src.lengths(), run.data.train_tgt.lengths(), strict=True))
    history_path = out / ckpt.HISTORY
    history = ckpt.read_json(history_path)["epochs"] if resume and history_path.exists() else []
    probe = cfg.probe or run.data.valid[0].pairs[0][0]
    clock = (time.monotonic(), run.state.train_seconds)  # (start, trained before this process)
    shards = [0.0] * (2 * distributed.world())  # per rank: examples trained on, their index sum
    stop = ""
    while not stop and run.state.epoch < cfg.epochs:
        stop, done, tok_per_s = train_epoch(run, lengths, clock, shards, report)
        if main:
            stop = end_epoch(run, done, tok_per_s, stop, report)
            history.append({"epoch": done, **probe_attention(run.model, run.data, probe)})
            ckpt.write_json(history_path, {"probe": probe, "epochs": history})
        # rank 0 decided; every rank follows (same stop, same learning rate)
        stop, lr = distributed.broadcast((stop, run.optimizer.param_groups[0]["lr"]))
        for group in run.optimizer.param_groups:
            group["lr"] = lr
    shards = distributed.all_sum(shards, device)
    run.state.shards = [
        {"examples": int(shards[2 * r]), "index_sum": int(shards[2 * r + 1])}
        for r in range(distributed.world())
    ]
    if main:
        run.write_config()
    report(
        "done", {"reason": stop or f"trained {cfg.epochs} epochs", **dataclasses.asdict(run.state)}
    )
    return run.state


def train_epoch(
    run: Run,
    lengths: list[tuple[int, int]],
    clock: tuple[float, float],
    shards: list[float],
    report: Report,
) -> tuple[str, float, float]:
    """Train the rest of the current epoch; return (why to stop or '', epochs done, tok/s)."""
    cfg, state = run.cfg, run.state
    rank, world = distributed.rank(), distributed.world()
    examples = epoch_examples(
        run.data.sizes, [c.weight for c in run.corpora], seed=cfg.seed, epoch=state.epoch
    )
    plan = batch_plan(
        lengths, examples, batch_tokens=cfg.batch_tokens, seed=cfg.seed, epoch=state.epoch
    )
    plan = plan[: len(plan) - len(plan) % world]  # every rank takes one batch per step
    limits = [f"--max-steps {cfg.max_steps}"] * bool(cfg.max_steps) + [
        f"--max-time {cfg.max_time:g} min"
    ] * bool(cfg.max_time)
    report("epoch", {"epoch": state.epoch + 1, "epochs": cfg.epochs, "batches": len(plan),
                     "position": state.position, "limited": " or ".join(limits)})  # fmt: skip
    window_tokens, window_start = 0, time.monotonic()
    stop = ""
    try:
        while not stop and state.position < len(plan):
            index = plan[state.position + rank]  # this rank's shard of the step
            batch = make_batch(run.data.train_src, run.data.train_tgt, index, bos=BOS, eos=EOS)
            shards[2 * rank] += len(index)
            shards[2 * rank + 1] += sum(index)
            out_of_time = bool(cfg.max_time) and time.monotonic() - clock[0] >= cfg.max_time * 60
            loss, tokens, stop_votes = _step(
                run.net, run.optimizer, batch, cfg, run.device, out_of_time
            )
            state.position += world
            if loss is None:
                state.nan_steps += 1
                report("nan", {"step": state.step, "count": state.nan_steps})
                if state.nan_steps > 20:
                    raise TrainingError(
                        "loss was NaN or infinite in more than 20 steps; try a lower --lr"
                    )
                continue
            state.step += 1
            window_tokens += tokens
            now = time.monotonic()
            state.train_seconds = clock[1] + now - clock[0]
            report("step", {
                "step": state.step, "position": state.position, "batches": len(plan), "loss": loss,
                "tok_per_s": window_tokens / max(now - window_start, 1e-9),
                "lr": run.optimizer.param_groups[0]["lr"],
            })  # fmt: skip
            if rank == 0 and state.step % cfg.save_every == 0:
                ckpt.save_resume(
                    out_resume(run.out), run.model, run.optimizer, dataclasses.asdict(state)
                )
            if cfg.max_steps and state.step >= cfg.max_steps:
                stop = f"reached --max-steps {cfg.max_steps}"
            elif stop_votes:
                stop = f"reached --max-time {cfg.max_time:g} minutes"
    except KeyboardInterrupt:
        if rank == 0:
            ckpt.save_resume(
                out_resume(run.out), run.model, run.optimizer, dataclasses.asdict(state)
            )
        raise Interrupted(f"interrupted at step {state.step}; continue with --resume") from None
    done = state.epoch + state.position / len(plan)  # epochs trained, as a fraction
    if state.position >= len(plan):
        state.epoch, state.position = state.epoch + 1, 0
    return stop, done, window_tokens / max(time.monotonic() - window_start, 1e-9)  # training only


def end_epoch(run: Run, done: float, tok_per_s: float, stop: str, report: Report) -> str:
    """Validate, keep the best model, decay the lr on a plateau; return why to stop or ''."""
    metrics = validate(run.model, run.data, run.device)
    metrics.update(
        epoch=round(done, 4), step=run.state.step, lr=run.optimizer.param_groups[0]["lr"],
        tok_per_s=tok_per_s,
    )  # fmt: skip
    verdict = _after_validation(run, metrics)  # always: it keeps the best weights
    stop = stop or verdict
    run.state.epochs.append({k: v for k, v in metrics.items() if k != "samples"})
    run.save()
    report("validated", {**metrics, "best": run.state.best_bleu, "stop": stop})
    return stop


def _after_validation(run: Run, metrics: dict[str, Any]) -> str:
    """Keep the best model, decay the lr on a plateau, and say why to stop ('' to go on)."""
    cfg, state, groups = run.cfg, run.state, run.optimizer.param_groups
    bleu = metrics["valid_bleu"]
    if state.best_bleu is None or bleu > state.best_bleu:
        state.best_bleu, state.bad_epochs, state.lr_bad_epochs = bleu, 0, 0
        ckpt.save_weights(run.out / ckpt.WEIGHTS, run.model)
        metrics["saved"] = True
        return ""
    state.bad_epochs += 1
    state.lr_bad_epochs += 1
    if state.lr_bad_epochs >= cfg.lr_patience:
        state.lr_bad_epochs = 0
        for group in groups:
            group["lr"] *= cfg.lr_decay
    if state.bad_epochs >= cfg.patience:
        return f"early stopping: no better validation BLEU for {cfg.patience} validations"
    if groups[0]["lr"] < cfg.min_lr:
        return f"learning rate fell below {cfg.min_lr:g}"
    return ""


def _step(
    net: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    cfg: TrainConfig,
    device: torch.device,
    out_of_time: bool,
) -> tuple[float | None, int, bool]:
    """One teacher-forced step; returns (loss or None if not finite, tokens, stop vote).

    Ranks agree before updating: if any rank's loss is not finite, every rank skips the
    update (otherwise the others would wait forever in the gradient all-reduce).
    """
    with autocast(device, cfg.amp):
        logits, _ = net(batch.src.to(device), batch.src_lengths, batch.tgt_in.to(device))
    tokens = batch.tgt_tokens
    loss = label_smoothed_loss(logits, batch.tgt_out.to(device), cfg.label_smoothing) / tokens
    finite = bool(torch.isfinite(loss))
    world = distributed.world()
    ok, tokens_all, votes = distributed.all_sum([float(finite), tokens, float(out_of_time)], device)
    if ok < world:
        optimizer.zero_grad(set_to_none=True)
        return None, 0, votes > 0
    loss.backward()
    if not torch.isfinite(torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.clip)):
        optimizer.zero_grad(set_to_none=True)  # a NaN gradient would poison every weight
        return None, 0, votes > 0
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item(), int(tokens_all), votes > 0


def _silent(event: str, info: dict[str, Any]) -> None:
    """The report callback of ranks other than 0."""
