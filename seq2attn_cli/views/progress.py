"""Training progress on the terminal: a live bar on a TTY, plain lines elsewhere, and a
table of validation figures after each epoch. Fed by training's report callback."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeRemainingColumn
from rich.table import Table

from ..data import languages
from ..data.streams import LATIN1_HINT


class TrainProgress:
    """Turns training events into progress bars, log lines and epoch tables on a console."""

    def __init__(self, console: Console, *, log_every: float = 30.0) -> None:
        self.console = console
        self.log_every = log_every  # seconds between plain progress lines off a terminal
        self.live = console.is_terminal
        self.progress: Progress | None = None
        self.task = None
        self.last_log = 0.0
        self.read_logged = (("", ""), 0.0)  # (corpus and why, its seconds) at the last reading line

    def __enter__(self) -> TrainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop_bar()

    def _stop_bar(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    def report(self, event: str, info: dict[str, Any]) -> None:
        """Handle one training event."""
        getattr(self, f"on_{event}", lambda info: None)(info)

    def on_reading(self, info: dict[str, Any]) -> None:
        """How far reading a corpus is: a live line on a terminal, else one every log_every s."""
        rate = info["lines"] / max(info["seconds"], 1e-9)
        text = (
            f"reading {info['path']} ({info['why']}): {info['lines']:,} lines, {rate:,.0f} lines/s"
        )
        if self.live:
            if self.progress is None:
                self.progress = Progress(
                    SpinnerColumn(), TextColumn("{task.description}"), console=self.console,
                    transient=True,
                )  # fmt: skip
                self.progress.start()
                self.task = self.progress.add_task(text, total=None)
            self.progress.update(self.task, description=text)
            return
        which, logged = self.read_logged
        since = info["seconds"] - (logged if which == (info["path"], info["why"]) else 0.0)
        if since >= self.log_every:
            self.read_logged = ((info["path"], info["why"]), info["seconds"])
            self.console.print(text, soft_wrap=True)

    def on_corpus(self, info: dict[str, Any]) -> None:
        self._stop_bar()
        c = info["stats"]
        line = (
            f"{c['corpus']}: {c['lines']:,} lines, {c['pairs_read']:,} pairs read"
            + (f", {c['held_out']:,} held out for validation" if c["held_out"] else "")
            + (f", {c['dropped_overlapping_valid']:,} dropped as overlapping validation"
               if c["dropped_overlapping_valid"] else "")
            + (f", {c['dropped_too_many_pieces']:,} too long"
               if c["dropped_too_many_pieces"] else "")
            + f", {c['noisy_copies']:,} noisy copies -> {c['train_examples']:,} examples, "
            f"{c['per_epoch']:,} per epoch (weight {c['weight']:g})"
        )  # fmt: skip
        self.console.print(line, soft_wrap=True)
        self._skipped(c)

    def on_valid(self, info: dict[str, Any]) -> None:
        """A --valid file read: its lines, its pairs and the lines skipped, as for a corpus."""
        self._stop_bar()
        v = info["stats"]
        lines, pairs = v["lines"], v["pairs"]
        self.console.print(
            f"{escape(v['name'])} (validation): {lines:,} line{'s' * (lines != 1)}, "
            f"{pairs:,} pair{'s' * (pairs != 1)} read",
            soft_wrap=True,
        )
        self._skipped(v)

    def _skipped(self, read: dict[str, Any]) -> None:
        """Print the lines a file's reading skipped, by reason with the first line of each."""
        if read["skipped"]:
            skipped = "; ".join(
                f"{reason}: {n:,} (first: line {read['skipped_first_line'][reason]})"
                for reason, n in sorted(read["skipped"].items())
            )
            self.console.print(
                f"  skipped {sum(read['skipped'].values()):,}: {skipped}", soft_wrap=True
            )
        if "invalid UTF-8" in read["skipped"]:  # a user's Latin-1 corpus lost every accent
            self.console.print(
                f"  [yellow]warning:[/] lines not UTF-8 are left out, and with them words "
                f"the model never sees ({LATIN1_HINT})",
                soft_wrap=True,
            )

    def on_data(self, info: dict[str, Any]) -> None:
        self._stop_bar()
        v = info["vocabulary"]
        sets = ", ".join(f"{s['name']} ({s['pairs']:,})" for s in info["valid"])
        src, tgt = (languages.name(info["languages"][k]) for k in ("source", "target"))
        unsure = " (too few common words to tell: swapped columns go unchecked)"
        said = (
            "guessed from the text"
            if info["languages"]["guessed"] or "unknown" in (src, tgt)
            else "those of the model it continues (the text too unsure to tell)"
        )
        self.console.print(
            f"languages, {said}: {src} -> {tgt}" + (unsure if "unknown" in (src, tgt) else ""),
            soft_wrap=True,
        )
        self.console.print(
            f"vocabulary: {v['pieces']:,} pieces ({v['target']:,} on the target side); "
            f"validation: {sets}",
            soft_wrap=True,
        )
        if v["asked"] and v["pieces"] < v["asked"]:
            self.console.print(
                f"[yellow]warning:[/] --vocab-size {v['asked']:,} is too large for this corpus: "
                f"SentencePiece found {v['pieces']:,} pieces; a smaller --vocab-size trains better",
                soft_wrap=True,
            )

    def on_changed(self, info: dict[str, Any]) -> None:
        self._stop_bar()
        self.console.print(
            f"[yellow]warning:[/] {escape(info['corpus'])}: {info['lines']:,} lines, where the "
            f"run in {escape(info['out'])} read {info['read']:,}: --resume goes on over them, "
            "no longer as the run would have gone (to start again from its weights: --init)",
            soft_wrap=True,
        )

    def on_stage(self, info: dict[str, Any]) -> None:
        self._stop_bar()
        self.console.print(info["message"])

    def on_epoch(self, info: dict[str, Any]) -> None:
        self._stop_bar()
        self.epoch = info["epoch"]
        self.epoch_start = (time.monotonic(), info["position"])
        # both limits: --max-steps named alone read as the one that ends the run, and a run
        # of 30 short epochs ended by --epochs at step 90 of --max-steps 150 (a user's try-out)
        label = f"epoch {info['epoch']}/{info['epochs']}" + (
            f" (or sooner: {info['limited']})" if info.get("limited") else ""
        )
        if self.live:
            self.progress = Progress(
                TextColumn(label),
                BarColumn(),
                TextColumn("{task.completed}/{task.total}"),
                TextColumn("loss {task.fields[loss]:.3f}  {task.fields[speed]:,.0f} tok/s"),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task(
                "train", total=info["batches"], completed=info["position"], loss=0.0, speed=0.0
            )
        else:
            self.console.print(f"{label}: {info['batches']:,} batches")

    def on_step(self, info: dict[str, Any]) -> None:
        if self.progress is not None:
            self.progress.update(
                self.task, completed=info["position"], loss=info["loss"], speed=info["tok_per_s"]
            )
        elif time.monotonic() - self.last_log >= self.log_every:
            self.last_log = now = time.monotonic()
            start, first = self.epoch_start
            rate = (info["position"] - first) / max(now - start, 1e-9)  # batches per second
            eta = (info["batches"] - info["position"]) / max(rate, 1e-9)
            self.console.print(
                f"epoch {self.epoch} {100 * info['position'] / info['batches']:.0f}%  "
                f"step {info['step']:,}  loss {info['loss']:.3f}  "
                f"{info['tok_per_s']:,.0f} tok/s  epoch ends in {eta / 60:.0f} min"
            )

    def on_nan(self, info: dict[str, Any]) -> None:
        self.console.print(
            f"[yellow]warning:[/] step {info['step']}: loss is NaN or infinite; update skipped "
            f"({info['count']} so far)"
        )

    def on_validated(self, info: dict[str, Any]) -> None:
        self._stop_bar()
        best = "  (best so far, saved)" if info.get("saved") else ""
        self.console.print(
            f"validation after epoch {info['epoch']:.4g}: loss {info['valid_loss']:.3f}  "
            f"BLEU {info['valid_bleu']:.2f}  chrF {info['valid_chrf']:.2f}"
            + (" (means of the sets)" if len(info["sets"]) > 1 else "")
            + best
        )
        if len(info["sets"]) > 1:
            for v in info["sets"]:
                self.console.print(
                    f"  {v['name']}: loss {v['loss']:.3f}  BLEU {v['bleu']:.2f}  "
                    f"chrF {v['chrf']:.2f}",
                    soft_wrap=True,
                )
        samples = Table(show_header=True, box=None, padding=(0, 1))
        for name in ("source", "reference", "hypothesis"):
            samples.add_column(name, overflow="fold")
        for sample in info["samples"]:
            samples.add_row(sample["source"], sample["reference"], sample["hypothesis"])
        self.console.print(samples)
        if info.get("stop"):
            self.console.print(f"stopping: {info['stop']}")

    def _table(self, rows: list[dict[str, Any]]) -> Table:
        """Validations, one row each."""
        table = Table(title="validation", title_justify="left")
        for name in ("epoch", "step", "loss", "ppl", "BLEU", "chrF", "tok/s", "lr", ""):
            table.add_column(name, justify="right")
        for row in rows:
            speed = row["tok_per_s"]  # None: an epoch resumed at its end ran no step
            table.add_row(
                f"{row['epoch']:.4g}", f"{row['step']:,}", f"{row['valid_loss']:.3f}",
                f"{row['valid_ppl']:.2f}", f"{row['valid_bleu']:.2f}", f"{row['valid_chrf']:.2f}",
                "-" if speed is None else f"{speed:,.0f}", f"{row['lr']:.2g}",
                "best" if row.get("saved") else "",
            )  # fmt: skip
        return table

    def on_done(self, info: dict[str, Any]) -> None:
        self._stop_bar()
        if info["epochs"]:  # every validation of the run, those before a --resume too
            self.console.print(self._table(info["epochs"]))
        best = info.get("saved_bleu")
        best_text = f"{best:.2f}" if best is not None else "n/a"
        self.console.print(
            f"done ({info['reason']}): {info['step']:,} steps in {info['train_seconds'] / 60:.1f} "
            f"min, best validation BLEU {best_text}"
        )
