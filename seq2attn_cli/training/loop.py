"""Training: corpora -> subwords -> batches -> teacher-forced steps -> validated checkpoints.

The story in four parts: `start_run` (run.py: a fresh run, one from --init, or a stored one
resumed), `train_epoch` (the steps of one epoch), `end_epoch` (validate, keep the best, decay
the lr, decide to stop) and `train`, which wires them. Progress goes to a
`report(event, info)` callback; this module never prints.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from .. import checkpoint as ckpt
from ..config import BOS, EOS, HISTORY, CorpusSpec, TrainConfig
from ..data.batching import Batch, batch_plan, epoch_examples, make_batch
from ..data.corpus import Report
from ..data.subwords import train_subwords
from ..errors import Interrupted, Terminated, TrainingError
from . import distributed
from .loss import label_smoothed_loss
from .plateau import lowest, progress
from .run import Run, RunState, autocast, out_resume, start_run
from .signals import StopSignals, stop_signals
from .validation import probe_attention, validate

__all__ = ["Interrupted", "RunState", "Terminated", "TrainingError", "limit_reached", "train"]

SIGTERM_STOP = "stopped by SIGTERM"
SIGINT_STOP = "interrupted"
LR_FLOOR = "learning rate fell below {min_lr:g}"  # TrainConfig.min_lr: the run is done


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
    writes; each rank takes its own share of every epoch's batches. Ctrl-C or SIGTERM at any
    moment raise Interrupted or Terminated, the last checkpoint whole (see signals.py).
    """
    out = Path(out)
    report = report if distributed.rank() == 0 else _silent
    with stop_signals() as signals:
        try:
            run = start_run(
                corpora=corpora, valid=valid or [], out=out, model_options=model_options,
                cfg=cfg, resume=resume, init=init, device=device, report=report,
                subword_trainer=subword_trainer,
            )  # fmt: skip
            signals.hold()  # the run has a checkpoint from here on: stop at a safe point
            if signals.noted:  # raised, and swallowed where it was raised
                raise KeyboardInterrupt
        except BaseException as error:
            if signals.noted or isinstance(error, KeyboardInterrupt):  # whatever it became
                raise _stopped_starting(signals, out) from None
            raise
        return _epochs(run, resume, signals, report)


def _epochs(run: Run, resume: bool, signals: StopSignals, report: Report) -> RunState:
    """Train the run's epochs (validating, saving and deciding at each end); its final state."""
    cfg, out, device, main = run.cfg, run.out, run.device, distributed.rank() == 0
    lengths = (run.data.train_src.lengths(), run.data.train_tgt.lengths())  # (source, target)
    history_path = out / HISTORY
    history = ckpt.read_json(history_path)["epochs"] if resume and history_path.exists() else []
    probe = cfg.probe or run.data.valid[0].pairs[0][0]
    clock = (time.monotonic(), run.state.train_seconds)  # (start, trained before this process)
    shards = [0.0] * (2 * distributed.world())  # per rank: examples trained on, their index sum
    stop = ""
    while not stop and run.state.epoch < cfg.epochs:
        stop, done, tok_per_s = train_epoch(run, lengths, clock, shards, signals, report)
        if main:
            stop = end_epoch(run, done, tok_per_s, stop, report)
            history.append({"epoch": done, **probe_attention(run.model, run.data, probe)})
            ckpt.write_json(history_path, {"probe": probe, "epochs": history})
        # rank 0 decided; every rank follows (same stop, same learning rate)
        stop, lr = distributed.broadcast((stop, run.optimizer.param_groups[0]["lr"]))
        for group in run.optimizer.param_groups:
            group["lr"] = lr
        # a signal that came after the epoch's last vote (validating, saving): end_epoch saved
        # this very state. One after the last epoch's: the run ends now anyway, whole.
        if not stop and run.state.epoch < cfg.epochs:
            interrupted, terminated = distributed.all_sum(list(map(float, signals.votes())), device)
            if interrupted or terminated:
                raise _stopped(SIGTERM_STOP if terminated else SIGINT_STOP, run.state.step)
    shards = distributed.all_sum(shards, device)
    run.state.shards = [
        {"examples": int(shards[2 * r]), "index_sum": int(shards[2 * r + 1])}
        for r in range(distributed.world())
    ]
    if main:
        run.write_config()
    report(
        "done",
        {"reason": stop or f"trained {_epochs_said(cfg.epochs)}", **dataclasses.asdict(run.state)},
    )
    return run.state


def train_epoch(
    run: Run,
    lengths: tuple[Sequence[int], Sequence[int]],
    clock: tuple[float, float],
    shards: list[float],
    signals: StopSignals,
    report: Report,
) -> tuple[str, float, float | None]:
    """Train the rest of the current epoch; return (why to stop or '', epochs done, tok/s)."""
    cfg, state = run.cfg, run.state
    rank, world = distributed.rank(), distributed.world()
    plan = _epoch_plan(run, lengths, world, report)
    window_tokens, window_start = 0, time.monotonic()
    stop = ""
    # a run resumed on more processes may stand between whole steps: the last, partial
    # step is left out, as a fresh epoch's plan leaves it out (it crashed rank 1 before)
    while not stop and state.position + world <= len(plan):
        index = plan[state.position + rank]  # this rank's shard of the step
        batch = make_batch(run.data.train_src, run.data.train_tgt, index, bos=BOS, eos=EOS)
        shards[2 * rank] += len(index)
        shards[2 * rank + 1] += sum(index)
        elapsed = time.monotonic() - clock[0]
        asks = (bool(cfg.max_time) and elapsed >= cfg.max_time * 60, *signals.votes())
        loss, tgt_count, (time_up, interrupted, terminated) = _step(
            run.net, run.optimizer, batch, cfg, run.device, asks
        )
        state.position += world
        if loss is None:
            _count_nan(state, report)
        else:
            state.step += 1
            window_tokens += tgt_count
            now = time.monotonic()
            state.train_seconds = clock[1] + now - clock[0]
            report("step", {
                "step": state.step, "position": state.position, "batches": len(plan),
                "loss": loss, "tok_per_s": window_tokens / max(now - window_start, 1e-9),
                "lr": run.optimizer.param_groups[0]["lr"],
            })  # fmt: skip
            if rank == 0 and state.step % cfg.save_every == 0:
                _save_resume(run)
        stop = _why_stop(
            cfg, state.step, time_up=time_up, interrupted=interrupted, terminated=terminated
        )
    if stop in (SIGINT_STOP, SIGTERM_STOP):  # before the epoch's end is counted: resuming
        if rank == 0:  # validates it
            _save_resume(run)
        distributed.barrier()  # no rank leaves (and has torchrun stop the rest) mid-save
        raise _stopped(stop, state.step)
    if state.position + world > len(plan):  # no whole step left: the epoch is over
        state.epoch, state.position = state.epoch + 1, 0
    done = state.epoch + state.position / len(plan)  # epochs trained, as a fraction
    # training time only; None when no step ran (an epoch resumed at its end): not 0 tok/s
    speed = window_tokens / max(time.monotonic() - window_start, 1e-9) if window_tokens else None
    return stop, done, speed


def _count_nan(state: RunState, report: Report) -> None:
    """Count a step skipped for a loss that was not finite; too many end the run."""
    state.nan_steps += 1
    report("nan", {"step": state.step, "count": state.nan_steps})
    if state.nan_steps > 20:
        raise TrainingError("loss was NaN or infinite in more than 20 steps; try a lower --lr")


def limit_reached(cfg: TrainConfig, state: RunState, lr: float) -> str:
    """The limit a run where `state` stands, at learning rate `lr`, has already reached under
    `cfg` ('' if none): a run resumed there would train nothing, or one epoch to stop again.
    --max-time counts from each process's start."""
    # each says which limit a resume must raise: "--epochs 30 already reached" answered a
    # --max-steps 160 that a user gave to go on, and named no way to (a user's try-out)
    if _steps_done(cfg, state.step):
        return (f"--max-steps {cfg.max_steps} already reached (the run is at step "
                f"{state.step:,}; a higher --max-steps goes on)")  # fmt: skip
    if state.epoch >= cfg.epochs:
        return (f"--epochs {cfg.epochs} already reached ({_epochs_said(state.epoch)} trained; "
                "a higher --epochs goes on)")  # fmt: skip
    if state.bad_epochs >= cfg.patience:
        return (f"--patience {cfg.patience} already reached ({_epochs_said(state.bad_epochs)} "
                "without a better validation BLEU; a higher --patience goes on)")  # fmt: skip
    if lr_spent(cfg, lr):
        return f"the {LR_FLOOR.format(min_lr=cfg.min_lr)} (it is {lr:g}): the run is done"
    return ""


def lr_spent(cfg: TrainConfig, lr: float) -> bool:
    """Whether the plateau decay took the lr below --lr's floor (one given below it trains)."""
    return lr < cfg.min_lr <= cfg.lr


def _steps_done(cfg: TrainConfig, step: int) -> bool:
    """Whether a run at `step` has taken the steps --max-steps allows."""
    return bool(cfg.max_steps) and step >= cfg.max_steps


def _why_stop(
    cfg: TrainConfig, step: int, *, time_up: bool, interrupted: bool = False, terminated: bool
) -> str:
    """Why the run stops after this step ('' to go on); the ranks voted on the last three."""
    if _steps_done(cfg, step):
        return f"reached --max-steps {cfg.max_steps}"
    if terminated:  # both: SIGTERM's code, which a scheduler waits for
        return SIGTERM_STOP
    if interrupted:
        return SIGINT_STOP
    if time_up:
        return f"reached --max-time {cfg.max_time:g} minutes"
    return ""


def _stopped(why: str, step: int) -> Interrupted:
    """The error a signal ends the run with, once the state at `step` is saved."""
    error = Terminated if why == SIGTERM_STOP else Interrupted
    return error(f"{why} at step {step}; continue with --resume")


def _stopped_starting(signals: StopSignals, out: Path) -> Interrupted:
    """The error for a signal that came while the run started, before it had a checkpoint."""
    why, error = (SIGTERM_STOP, Terminated) if signals.votes()[1] else (SIGINT_STOP, Interrupted)
    if (out / ckpt.CONFIG).exists():  # written last: the run's checkpoint is whole
        return error(f"{why} while starting; continue with --resume")
    return error(f"{why} before the first checkpoint: nothing to resume, start again")


def _epoch_plan(
    run: Run, lengths: tuple[Sequence[int], Sequence[int]], world: int, report: Report
) -> list[list[int]]:
    """The current epoch's batches, a whole number per rank, announced in a report."""
    cfg, state = run.cfg, run.state
    epoch = cfg.skip_epochs + state.epoch  # of the data order
    examples = epoch_examples(
        run.data.sizes, [c.rate for c in run.corpora], seed=cfg.seed, epoch=epoch
    )
    plan = batch_plan(*lengths, examples, batch_tokens=cfg.batch_tokens, seed=cfg.seed, epoch=epoch)
    plan = plan[: len(plan) - len(plan) % world]  # every rank takes one batch per step
    limits = [f"--max-steps {cfg.max_steps}"] * bool(cfg.max_steps) + [
        f"--max-time {cfg.max_time:g} min"
    ] * bool(cfg.max_time)
    report("epoch", {"epoch": state.epoch + 1, "epochs": cfg.epochs, "batches": len(plan),
                     "position": state.position, "limited": " or ".join(limits)})  # fmt: skip
    return plan


def _save_resume(run: Run) -> None:
    """Write the resume checkpoint: weights, optimizer and where the run is."""
    ckpt.save_resume(out_resume(run.out), run.model, run.optimizer, dataclasses.asdict(run.state))


def end_epoch(run: Run, done: float, tok_per_s: float | None, stop: str, report: Report) -> str:
    """Validate, keep the best model, decay the lr on a plateau; return why to stop or ''."""
    metrics: dict[str, Any] = {
        **validate(run.model, run.data, run.device),
        "epoch": round(done, 4), "step": run.state.step,
        "lr": run.optimizer.param_groups[0]["lr"], "tok_per_s": tok_per_s,
    }  # fmt: skip
    # a run stopped mid-epoch validates too, for the model it leaves (position: not reset)
    verdict = _after_validation(run, metrics, epoch_end=run.state.position == 0)
    stop = stop or verdict
    run.state.epochs.append({k: v for k, v in metrics.items() if k != "samples"})
    run.save()
    report("validated", {**metrics, "best": run.state.saved_bleu, "stop": stop})
    return stop


def _after_validation(run: Run, metrics: dict[str, Any], *, epoch_end: bool) -> str:
    """Keep the best model; at an epoch's end, decay the lr on a plateau and say why to stop
    (what counts as progress: plateau.py).

    Only epoch ends weigh in a plateau: a validation where --max-time or --max-steps stopped
    a run would otherwise decay the lr (it did, 0.001 -> 0.0005, in a run stopped 3 steps
    after an epoch's end), and a run stopped and resumed would learn unlike one that was not.
    """
    cfg, state, groups = run.cfg, run.state, run.optimizer.param_groups
    bleu, loss = metrics["valid_bleu"], metrics["valid_loss"]
    if progress(bleu, loss, state.saved_bleu, state.saved_loss):
        state.saved_bleu = max(bleu, state.saved_bleu or bleu)
        state.saved_loss = lowest(loss, state.saved_loss)
        ckpt.save_parameters(run.out / ckpt.PARAMETERS, run.model)
        metrics["saved"] = True
    if not epoch_end:
        return ""
    better = progress(bleu, loss, state.best_bleu, state.best_loss)
    state.best_bleu = max(bleu, state.best_bleu or bleu)
    state.best_loss = lowest(loss, state.best_loss)
    if better:
        state.bad_epochs, state.lr_bad_epochs = 0, 0
        return ""
    state.bad_epochs += 1
    state.lr_bad_epochs += 1
    if state.lr_bad_epochs >= cfg.lr_patience:
        state.lr_bad_epochs = 0
        for group in groups:
            group["lr"] *= cfg.lr_decay
    if state.bad_epochs >= cfg.patience:
        return f"early stopping: no better validation BLEU for {cfg.patience} epochs"
    if lr_spent(cfg, groups[0]["lr"]):
        return LR_FLOOR.format(min_lr=cfg.min_lr)
    return ""


def _step(
    net: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    cfg: TrainConfig,
    device: torch.device,
    asks: tuple[bool, bool, bool],
) -> tuple[float | None, int, tuple[bool, bool, bool]]:
    """One teacher-forced step; returns (loss or None if not finite, tgt_count, stop votes).

    Ranks agree before updating: if any rank's loss is not finite, every rank skips the
    update (otherwise the others would wait forever in the gradient all-reduce). They vote
    on stopping in the same all-reduce: out of time, Ctrl-C or SIGTERM (`asks`, as this rank
    sees it).
    """
    with autocast(device, cfg.amp):
        logits, _ = net(batch.src.to(device), batch.src_lengths, batch.tgt_in.to(device))
    tgt_count = batch.tgt_count
    loss = label_smoothed_loss(logits, batch.tgt_out.to(device), cfg.label_smoothing) / tgt_count
    finite = bool(torch.isfinite(loss))
    world = distributed.world()
    summed = [float(finite), tgt_count, *map(float, asks)]
    ok, tgt_count_all, *votes = distributed.all_sum(summed, device)
    stops = (votes[0] > 0, votes[1] > 0, votes[2] > 0)  # (time, SIGINT, SIGTERM): any rank
    if ok < world:
        optimizer.zero_grad(set_to_none=True)
        return None, 0, stops
    loss.backward()
    if not torch.isfinite(torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.clip)):
        optimizer.zero_grad(set_to_none=True)  # a NaN gradient would poison every parameter
        return None, 0, stops
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item(), int(tgt_count_all), stops


def _silent(event: str, info: dict[str, Any]) -> None:
    """The report callback of ranks other than 0."""


def _epochs_said(n: int) -> str:
    """'1 epoch', '2 epochs' (training may not import views/charts.counted)."""
    return f"{n} epoch{'s' * (n != 1)}"
