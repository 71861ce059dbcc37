"""Training progress on the terminal: a live bar on a TTY, plain lines elsewhere, and a
table of validation figures after each epoch. Fed by training's report callback."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table


class TrainProgress:
    """Turns training events into progress bars, log lines and epoch tables on a console."""

    def __init__(self, console: Console, *, log_every: float = 30.0) -> None:
        self.console = console
        self.log_every = log_every  # seconds between plain progress lines off a terminal
        self.live = console.is_terminal
        self.progress: Progress | None = None
        self.task = None
        self.last_log = 0.0
        self.rows: list[dict[str, Any]] = []

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

    def on_read(self, info: dict[str, Any]) -> None:
        read = info["report"]
        line = f"{read.path}: {read.kept:,} pairs from {read.lines:,} lines"
        if read.skipped:
            line += f"; skipped {sum(read.skipped.values()):,}: {read.summary()}"
        self.console.print(line, soft_wrap=True)

    def on_stage(self, info: dict[str, Any]) -> None:
        self.console.print(info["message"])

    def on_epoch(self, info: dict[str, Any]) -> None:
        self._stop_bar()
        self.epoch = info["epoch"]
        if self.live:
            self.progress = Progress(
                TextColumn(f"epoch {info['epoch']}/{info['epochs']}"),
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
            self.console.print(f"epoch {info['epoch']}: {info['batches']:,} batches")

    def on_step(self, info: dict[str, Any]) -> None:
        if self.progress is not None:
            self.progress.update(
                self.task, completed=info["position"], loss=info["loss"], speed=info["tok_per_s"]
            )
        elif time.monotonic() - self.last_log >= self.log_every:
            self.last_log = time.monotonic()
            self.console.print(
                f"step {info['step']:,}  batch {info['position']:,}/{info['batches']:,}  "
                f"loss {info['loss']:.3f}  {info['tok_per_s']:,.0f} tok/s  lr {info['lr']:.2g}"
            )

    def on_nan(self, info: dict[str, Any]) -> None:
        self.console.print(
            f"[yellow]warning:[/] step {info['step']}: loss is NaN or infinite; update skipped "
            f"({info['count']} so far)"
        )

    def on_validated(self, info: dict[str, Any]) -> None:
        self._stop_bar()
        self.rows.append(info)
        table = Table(title=f"validation after epoch {info['epoch']:.4g}", title_justify="left")
        for name in ("epoch", "step", "loss", "ppl", "BLEU", "chrF", "tok/s", "lr", ""):
            table.add_column(name, justify="right")
        for row in self.rows:
            table.add_row(
                f"{row['epoch']:.4g}",
                f"{row['step']:,}",
                f"{row['valid_loss']:.3f}",
                f"{row['valid_ppl']:.2f}",
                f"{row['valid_bleu']:.2f}",
                f"{row['valid_chrf']:.2f}",
                f"{row['tok_per_s']:,.0f}",
                f"{row['lr']:.2g}",
                "best" if row.get("saved") else "",
            )
        self.console.print(table)
        samples = Table(show_header=True, box=None, padding=(0, 1))
        for name in ("source", "reference", "hypothesis"):
            samples.add_column(name, overflow="fold")
        for s in info["samples"]:
            samples.add_row(s["source"], s["reference"], s["hypothesis"])
        self.console.print(samples)
        if info.get("stop"):
            self.console.print(f"stopping: {info['stop']}")

    def on_done(self, info: dict[str, Any]) -> None:
        self._stop_bar()
        best = info.get("best_bleu")
        best_text = f"{best:.2f}" if best is not None else "n/a"
        self.console.print(
            f"done ({info['reason']}): {info['step']:,} steps in {info['train_seconds'] / 60:.1f} "
            f"min, best validation BLEU {best_text}"
        )
