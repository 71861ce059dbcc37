"""Rich renderables for what s2a shows: heatmaps of translations, decoding steps,
diagnostics and evaluation figures (the model card: card.py).

Plain data in (translations, dicts and lists from inspection and evaluation), renderables
out; no torch.
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..decoding.explain.alignment import group_pieces, pharaoh, word_level
from .charts import bar_chart
from .heatmap import heatmap


def heatmap_view(
    src: list[str],
    tgt: list[str],
    weights: list[list[float]],
    *,
    attends: bool,
    pieces: bool,
    color: bool,
    width: int,
    title: str = "",
    dropped: list[str] | None = None,
) -> RenderableType | None:
    """One translation's attention (rows target, columns source), over words unless `pieces`;
    a model without attention (not `attends`) has none to draw.

    With `dropped` (the translation's), a coverage row under it marks the words it names.
    """
    if not tgt:
        return None
    if not attends:
        return Text("(no attention: this model decodes from a single context vector)")
    groups = [[j] for j in range(len(src))] if pieces else group_pieces(src).groups
    sums = [sum(row[j] for row in weights[:-1]) for j in range(len(src))]  # over output steps
    if not pieces:
        src, tgt, weights = word_level(src, tgt, weights)
    coverage = None
    if dropped is not None:
        missing = set(dropped)
        coverage = [
            (sum(sums[j] for j in group), any(w in missing for w in re.split(r"\W+", word)))
            for word, group in zip(src, groups, strict=True)
        ]
    return heatmap(
        src, tgt, weights, color=color, width=width, title=title or None, coverage=coverage
    )


def sentence_view(
    seen: Any, *, label: str, steps: bool, pieces: bool, color: bool, width: int
) -> RenderableType:
    """What `s2a inspect TEXT` shows: the translation, its heatmap, diagnostics and steps."""
    t = seen.translation
    has_attention = t.has_attention
    lines: list[RenderableType] = [
        Text.assemble(("source:", "bold"), f"   {t.source}"),
        Text.assemble((f"{label}:", "bold"), f" {t.text}"),
    ]
    if seen.changes:  # what the rules around the search changed (decoding/rules/pipeline.py)
        wrote = (
            f"the model wrote: {seen.model_text}" if seen.model_text else "the model wrote nothing"
        )
        lines.append(Text(f"{wrote} (s2a {' and '.join(seen.changes)})"))
    lines.append(Text(f"score: {t.score:.3f} log-probability per piece"))
    missed = f"; may have dropped: {' '.join(t.dropped)}" if t.dropped else ""
    lines.append(Text(f"confidence: {t.confidence:.2f}{missed}"))
    if seen.forced:
        per_piece = "  ".join(f"{s.piece}:{s.log_prob:.2f}" for s in seen.steps)
        lines.append(Text(f"per-piece log-probability: {per_piece}"))
        lines.append(Text(f"alignment: {pharaoh(t.alignment)}"))
    picture = heatmap_view(
        t.src_tokens,
        t.tgt_tokens,
        t.weights,
        attends=has_attention,
        pieces=pieces,
        color=color,
        width=width,
        dropped=t.dropped,
    )
    if picture is not None:
        lines.append(picture)
    if seen.diagnostics:  # none without attention, or for a line the model did not write
        lines.append(diagnostics_view(seen.diagnostics, pieces=pieces))
    if steps and not seen.steps:
        lines.append(Text("no decoding steps: the model searched nothing for this line"))
    elif steps:
        # an `--attention none` model attends to its one context vector, not to a source piece
        columns = t.src_tokens if has_attention else ["(context vector)"]
        lines.append(steps_view(columns, seen.steps))
    return Group(*lines)


def history_view(
    history: dict[str, Any], *, pieces: bool, color: bool, width: int
) -> RenderableType:
    """The probe sentence's heatmap after every epoch of training (history.json)."""
    lines: list[RenderableType] = [
        Text.assemble(("probe:", "bold"), f" {history.get('probe', '')!s}")
    ]
    for entry in history.get("epochs", []):
        picture = heatmap_view(
            entry["source"],
            entry["target"],
            entry["weights"],
            attends=history["attends"],
            pieces=pieces,
            color=color,
            width=width,
            title=f"after epoch {entry['epoch']:.3g}",
        )
        if picture is not None:
            lines.append(picture)
    return Group(*lines)


def steps_view(src: list[str], steps: list[Any]) -> RenderableType:
    """One row per decoding step: scores -> softmax weights -> top source words -> candidates."""
    table = Table(title="decoding step by step", title_justify="left", padding=(0, 1))
    table.add_column("t", justify="right")
    table.add_column("|h_t|", justify="right")
    table.add_column("scores (raw)", overflow="fold")
    table.add_column("weights (softmax)", overflow="fold")
    table.add_column("|c_t|", justify="right")
    table.add_column("top-5 next pieces", overflow="fold")
    table.add_column("chosen", style="bold")
    for t, step in enumerate(steps, start=1):
        order = sorted(range(len(step.weights)), key=lambda j: -step.weights[j])[:3]
        table.add_row(
            str(t),
            f"{step.state_norm:.1f}",
            " ".join(f"{s:.1f}" for s in step.scores),
            " ".join(f"{src[j]}:{step.weights[j]:.2f}" for j in order),
            f"{step.context_norm:.1f}",
            " ".join(f"{p}:{q:.2f}" for p, q in step.candidates),
            f"{step.piece} ({step.log_prob:.2f})",
        )
    return table


def diagnostics_view(diag: dict[str, Any], *, pieces: bool) -> RenderableType:
    """Attention diagnostics under a heatmap (reckoned over words: said under one of pieces)."""
    over = " over words" if pieces else ""
    lines = [
        f"attention entropy{over}: {diag['mean_entropy']:.2f} nats per step "
        f"(uniform{over} would be {diag['max_entropy']:.2f})",
    ]
    text = Text("\n".join(lines))
    if diag["eos_soaks"]:
        text.append(
            f"\nwarning: end-of-sentence takes {diag['eos_share']:.0%} of the attention "
            "on average: the model is not looking at the words",
            style="yellow",
        )
    return text


def evaluation_view(results: list[Any], *, color: bool, width: int) -> RenderableType:
    """Overall figures, then BLEU by source length as a table and a bar chart."""
    summary = Table(box=None, padding=(0, 2))
    for name in ("model", "sentences", "BLEU", "chrF", "seconds", "sent/s"):
        summary.add_column(name, justify="left" if name == "model" else "right")
    for r in results:
        summary.add_row(
            r.name,
            f"{r.sentences:,}",
            f"{r.bleu:.2f}",
            f"{r.chrf:.2f}",
            f"{r.seconds:.1f}",
            f"{r.sentences / max(r.seconds, 1e-9):,.1f}",
        )
    labels = list(results[0].buckets)
    table = Table(
        title="BLEU by source length (words)", title_justify="left", box=None, padding=(0, 2)
    )
    table.add_column("length")
    table.add_column("sentences", justify="right")
    for r in results:
        table.add_column(r.name, justify="right")
    for label in labels:
        values = [r.buckets[label]["bleu"] for r in results]
        table.add_row(
            label,
            f"{results[0].buckets[label]['count']:,}",
            *("n/a" if v is None else f"{v:.1f}" for v in values),
        )
    chart = bar_chart(
        labels,
        {r.name: [r.buckets[k]["bleu"] for k in labels] for r in results},
        color=color,
        width=width,
        maximum=100.0,
    )
    signature = Text(f"sacrebleu: {results[0].signature['bleu']}", style="dim")
    return Group(summary, Text(), table, Text(), chart, signature, Text(), _confidence(results))


def _confidence(results: list[Any]) -> Table:
    """BLEU by quartile of each signal (least sure first) and its Spearman with sentence chrF."""
    table = Table(
        title="BLEU by confidence quartile (least sure first); Spearman with sentence chrF",
        title_justify="left",
        box=None,
        padding=(0, 2),
    )
    for name in ("model", "signal", "Q1", "Q2", "Q3", "Q4", "Q4-Q1", "Spearman"):
        table.add_column(name, justify="left" if name in ("model", "signal") else "right")
    for r in results:
        for signal, figures in r.confidence.items():
            bleu, gap = figures["quartile_bleu"], figures["gap"]
            table.add_row(
                r.name,
                signal.replace("_", "-"),
                *("n/a" if v is None else f"{v:.1f}" for v in bleu),
                "n/a" if gap is None else f"{gap:.1f}",
                f"{figures['spearman_chrf']:.3f}",
            )
    return table
