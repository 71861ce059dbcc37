"""Training: corpus -> subwords -> batches -> teacher-forced steps -> validated checkpoints.

Progress goes to a `report(event, info)` callback; this module never prints.
"""

from __future__ import annotations

import shutil
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import torch

from . import checkpoint as ckpt
from . import distributed
from .config import BOS, EOS, FORMAT_VERSION, ModelConfig, TrainConfig, from_dict, to_dict
from .corpus import Report, prepare
from .data import Batch, batch_plan, make_batch
from .evaluation import probe_attention, validate
from .loss import label_smoothed_loss
from .seq2seq import Seq2Seq
from .subwords import Subwords


class TrainingError(RuntimeError):
    """Training cannot go on (bad output directory, losses that keep exploding...)."""


class Interrupted(RuntimeError):
    """Ctrl-C during training: the state was saved, the run can be resumed."""


def autocast(device: torch.device, enabled: bool):
    """bf16 autocast where it helps (CPU here: 2x); a no-op elsewhere or when disabled."""
    if not enabled or device.type not in ("cpu", "cuda"):
        return nullcontext()
    return torch.autocast(device.type, dtype=torch.bfloat16)


def train(
    *,
    corpus: Path,
    out: Path,
    model_options: dict[str, Any],
    cfg: TrainConfig,
    valid: Path | None = None,
    resume: bool = False,
    device: torch.device,
    report: Report,
) -> dict[str, Any]:
    """Train a model into `out` (or continue one with resume); return the final counters.

    Under torchrun every rank calls this: rank 0 trains the subwords, validates, reports and
    writes; each rank takes its own share of every epoch's batches.
    """
    out = Path(out)
    main = distributed.rank() == 0
    report = report if main else _silent
    subwords = tgt_pieces = stored = None
    if resume:
        stored = ckpt.read_json(out / ckpt.CONFIG)
        limits = {"epochs": cfg.epochs, "max_steps": cfg.max_steps, "max_time": cfg.max_time}
        cfg = from_dict(TrainConfig, {**stored["training"], **limits})  # stored run, new limits
        subwords = Subwords.load(out / ckpt.SPM)
        tgt_pieces = ckpt.read_tensors(out / ckpt.RESUME)["model.tgt_pieces"].tolist()
    elif main:
        _check_out(out)
    else:
        distributed.barrier()  # rank 0 trains the subwords; the others load them
        subwords = Subwords.load(out / ckpt.SPM)
    data = prepare(
        corpus, cfg, valid=valid, subwords=subwords, tgt_pieces=tgt_pieces, report=report
    )
    if stored is not None:
        model_config = from_dict(ModelConfig, stored["model"])
    else:
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
        _check_space(out, model, resume=resume)
    counters: dict[str, Any] = {
        "epoch": 0, "position": 0, "step": 0, "best_bleu": None, "bad_epochs": 0,
        "lr_bad_epochs": 0, "nan_steps": 0, "train_seconds": 0.0, "epochs": [],
    }  # fmt: skip
    if resume:
        counters = ckpt.load_resume(out / ckpt.RESUME, model, optimizer)
        where = (
            f"step {counters['step']}, epoch {counters['epoch'] + 1}, batch {counters['position']}"
        )
        report("stage", {"message": f"resumed at {where}"})
    elif main:
        ckpt.write_atomic(out / ckpt.SPM, data.subwords.proto)
        ckpt.save_weights(out / ckpt.WEIGHTS, model)  # loadable from the first moment on
        ckpt.save_resume(out / ckpt.RESUME, model, optimizer, counters)  # and resumable
        distributed.barrier()
    net = model
    if distributed.world() > 1:
        ids = [device.index] if device.type == "cuda" else None
        net = torch.nn.parallel.DistributedDataParallel(model, device_ids=ids)

    def write_config() -> None:
        ckpt.write_json(out / ckpt.CONFIG, {
            "format_version": FORMAT_VERSION,
            "model": to_dict(model_config),
            "spm_sha256": ckpt.sha256_hex(data.subwords.proto),
            "training": to_dict(cfg),
            "corpus": data.stats,
            "parameters": sum(p.numel() for p in model.parameters()),
            "processes": distributed.world(),
            "shards": counters.get("shards", []),  # what each rank trained on in this run
            "best_valid_bleu": counters["best_bleu"],
            "steps": counters["step"],
            "train_seconds": round(counters["train_seconds"], 1),
            "epochs": counters["epochs"],
        })  # fmt: skip

    if main:
        write_config()
    lengths = [(len(s) + 1, len(t)) for s, t in zip(data.train_src, data.train_tgt, strict=True)]
    probe = cfg.probe or (data.valid_pairs[0][0] if data.valid_pairs else "")
    history_path = out / ckpt.HISTORY
    history = ckpt.read_json(history_path)["epochs"] if resume and history_path.exists() else []
    started = time.monotonic()
    trained_before = counters["train_seconds"]
    rank, world = distributed.rank(), distributed.world()
    shards = [0.0] * (2 * world)  # per rank: examples trained on, sum of their indices
    stop = ""
    while not stop and counters["epoch"] < cfg.epochs:
        epoch = counters["epoch"]
        plan = batch_plan(lengths, batch_tokens=cfg.batch_tokens, seed=cfg.seed, epoch=epoch)
        plan = plan[: len(plan) - len(plan) % world]  # every rank takes one batch per step
        info = {"epoch": epoch + 1, "epochs": cfg.epochs, "batches": len(plan)}
        report("epoch", {**info, "position": counters["position"]})
        window_tokens, window_start = 0, time.monotonic()
        try:
            while counters["position"] < len(plan):
                index = plan[counters["position"] + rank]  # this rank's shard of the step
                batch = make_batch(data.train_src, data.train_tgt, index, bos=BOS, eos=EOS)
                shards[2 * rank] += len(index)
                shards[2 * rank + 1] += sum(index)
                out_of_time = bool(cfg.max_time) and time.monotonic() - started >= cfg.max_time * 60
                loss, tokens, stop_votes = _step(net, optimizer, batch, cfg, device, out_of_time)
                counters["position"] += world
                if loss is None:
                    counters["nan_steps"] += 1
                    report("nan", {"step": counters["step"], "count": counters["nan_steps"]})
                    if counters["nan_steps"] > 20:
                        raise TrainingError(
                            "loss was NaN or infinite in more than 20 steps; try a lower --lr"
                        )
                    continue
                counters["step"] += 1
                window_tokens += tokens
                now = time.monotonic()
                counters["train_seconds"] = trained_before + now - started
                report("step", {
                    "step": counters["step"], "position": counters["position"],
                    "batches": len(plan), "loss": loss,
                    "tok_per_s": window_tokens / max(now - window_start, 1e-9),
                    "lr": optimizer.param_groups[0]["lr"],
                })  # fmt: skip
                if main and counters["step"] % cfg.save_every == 0:
                    ckpt.save_resume(out / ckpt.RESUME, model, optimizer, counters)
                if cfg.max_steps and counters["step"] >= cfg.max_steps:
                    stop = f"reached --max-steps {cfg.max_steps}"
                elif stop_votes:
                    stop = f"reached --max-time {cfg.max_time:g} minutes"
                if stop:
                    break
        except KeyboardInterrupt:
            if main:
                ckpt.save_resume(out / ckpt.RESUME, model, optimizer, counters)
            raise Interrupted(
                f"interrupted at step {counters['step']}; continue with --resume"
            ) from None
        finished_epoch = counters["position"] >= len(plan)
        if finished_epoch:
            counters["epoch"], counters["position"] = epoch + 1, 0
        tok_per_s = window_tokens / max(time.monotonic() - window_start, 1e-9)  # training only
        if main:
            metrics = validate(model, data, cfg, device)
            metrics.update(
                epoch=epoch + (1 if finished_epoch else counters["position"] / len(plan)),
                step=counters["step"],
                lr=optimizer.param_groups[0]["lr"],
                tok_per_s=tok_per_s,
            )
            verdict = _after_validation(model, optimizer, metrics, counters, cfg, out)
            stop = stop or verdict
            counters["epochs"].append({k: v for k, v in metrics.items() if k != "samples"})
            if probe:
                history.append({"epoch": metrics["epoch"], **probe_attention(model, data, probe)})
                ckpt.write_json(history_path, {"probe": probe, "epochs": history})
            ckpt.save_resume(out / ckpt.RESUME, model, optimizer, counters)
            write_config()
            report("validated", {**metrics, "best": counters["best_bleu"], "stop": stop})
        # rank 0 decided; every rank follows (same stop, same learning rate)
        stop, lr = distributed.broadcast((stop, optimizer.param_groups[0]["lr"]))
        for group in optimizer.param_groups:
            group["lr"] = lr
    shards = distributed.all_sum(shards, device)
    counters["shards"] = [
        {"examples": int(shards[2 * r]), "index_sum": int(shards[2 * r + 1])} for r in range(world)
    ]
    if main:
        write_config()
    report("done", {"reason": stop or f"trained {cfg.epochs} epochs", **counters})
    return counters


def _silent(event: str, info: dict[str, Any]) -> None:
    """The report callback of ranks other than 0."""


def _check_out(out: Path) -> None:
    """Refuse to start when the output directory cannot take a model (checked before training)."""
    if (out / ckpt.CONFIG).exists():
        raise TrainingError(f"{out}: already holds a model; use --resume, or another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
        ckpt.write_atomic(out / ".write-test", b"ok")
        (out / ".write-test").unlink()
    except OSError as err:
        raise TrainingError(f"{out}: cannot write there ({err.strerror or err})") from None


def _check_space(out: Path, model: Seq2Seq, *, resume: bool) -> None:
    """Refuse to start when `out` cannot take the files training will write (a full disk)."""
    params = sum(p.numel() for p in model.parameters())
    # fp16 weights (2 bytes) + resume state (fp32 weights and two Adam moments: 12), and the
    # temporary copy each atomic write makes; a resumed run already holds one of each
    need = params * (14 if resume else 28)
    try:
        ckpt.write_atomic(out / ".write-test", b"ok")
        (out / ".write-test").unlink()
        free = shutil.disk_usage(out).free
    except OSError as err:
        raise TrainingError(f"{out}: cannot write there ({err.strerror or err})") from None
    if free < need:
        raise TrainingError(
            f"{out}: {free / 1e6:.1f} MB free, training needs about {need / 1e6:.1f} MB; "
            "free some space or choose another --out"
        )


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


def _after_validation(
    model: Seq2Seq,
    optimizer: torch.optim.Optimizer,
    metrics: dict[str, Any],
    counters: dict[str, Any],
    cfg: TrainConfig,
    out: Path,
) -> str:
    """Keep the best model, decay the lr on a plateau, and say why to stop ('' to go on)."""
    bleu = metrics["valid_bleu"]
    if counters["best_bleu"] is None or bleu > counters["best_bleu"]:
        counters["best_bleu"], counters["bad_epochs"], counters["lr_bad_epochs"] = bleu, 0, 0
        ckpt.save_weights(out / ckpt.WEIGHTS, model)
        metrics["saved"] = True
        return ""
    counters["bad_epochs"] += 1
    counters["lr_bad_epochs"] += 1
    if counters["lr_bad_epochs"] >= cfg.lr_patience:
        counters["lr_bad_epochs"] = 0
        for group in optimizer.param_groups:
            group["lr"] *= cfg.lr_decay
    if counters["bad_epochs"] >= cfg.patience:
        return f"early stopping: no better validation BLEU for {cfg.patience} validations"
    if optimizer.param_groups[0]["lr"] < cfg.min_lr:
        return f"learning rate fell below {cfg.min_lr:g}"
    return ""
