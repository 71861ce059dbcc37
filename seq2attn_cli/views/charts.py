"""Terminal charts for s2a: bar charts and line charts, and the cell helpers every picture uses.

Plain lists in, rich renderables out; no torch.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.text import Text

PARTIAL_BLOCKS = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
SERIES_COLORS = ["cyan", "magenta", "green", "yellow", "blue", "red"]
MAX_LABEL = 16  # longer labels are cut: a word this long is rare and a wider column wastes room


def counted(n: int, noun: str) -> str:
    """A count and its noun, plural unless one: "1 line", "2 layers", "3,000 sentences"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def fit(word: str, size: int, *, center: bool = False) -> str:
    """Pad or cut a word to exactly `size` cells, marking a cut with an ellipsis."""
    if cell_len(word) > size:
        cut = Text(word)
        cut.truncate(size, overflow="ellipsis")
        word = cut.plain
    gap = size - cell_len(word)
    left = gap // 2 if center else 0
    return " " * left + word + " " * (gap - left)


def finish(lines: list[Text], width: int) -> Group:
    """Stack lines into one renderable, each cropped so rich can never wrap it."""
    for line in lines:
        line.no_wrap = True
        line.overflow = "crop"
        line.truncate(width)
    return Group(*lines)


def label_width(labels: list[str]) -> int:
    """Width of a label column: the longest label, capped."""
    return min(max((cell_len(label) for label in labels), default=1), MAX_LABEL)


# -----------------------------------------------------------------------------
# bar chart and line chart


def _bar(fraction: float, size: int, *, color: bool) -> str:
    """A horizontal bar `fraction` of `size` cells long, in eighths when unicode is allowed."""
    fraction = min(max(fraction, 0.0), 1.0)
    if not color:
        return "#" * round(fraction * size)
    eighths = round(fraction * size * 8)
    return "█" * (eighths // 8) + PARTIAL_BLOCKS[eighths % 8]


def _one_decimal(value: float | None) -> str:
    """A value with one decimal, or "n/a" when it is missing."""
    return "n/a" if value is None else f"{value:.1f}"


def bar_chart(
    labels: list[str],
    series: dict[str, list[float | None]],
    *,
    color: bool = True,
    width: int = 80,
    maximum: float | None = None,
    title: str | None = None,
) -> RenderableType:
    """Draw horizontal bars, one group per label and one bar per series, value after each bar."""
    for name, values in series.items():
        if len(values) != len(labels):
            raise ValueError(f"series {name!r} has {len(values)} values for {len(labels)} labels")
    lines = [Text(title, style="bold" if color else "")] if title else []
    if not labels or not series:
        return finish([*lines, Text("no data")], width)
    known = [value for values in series.values() for value in values if value is not None]
    top = maximum if maximum is not None else max(known, default=0.0)
    shown = {name: [_one_decimal(v) for v in values] for name, values in series.items()}
    label_w, name_w = label_width(labels), label_width(list(series))
    value_w = max(len(text) for texts in shown.values() for text in texts)
    bar_w = max(1, width - label_w - name_w - value_w - 3)
    for row, label in enumerate(labels):
        if row and len(series) > 1:
            lines.append(Text(""))  # a gap keeps each label's bars visibly together
        for k, (name, values) in enumerate(series.items()):
            line = Text(fit(label if k == 0 else "", label_w) + " " + fit(name, name_w) + " ")
            value = values[row]
            if value is not None and top > 0:
                bar = _bar(value / top, bar_w, color=color)
                line.append(bar, SERIES_COLORS[k % len(SERIES_COLORS)] if color else "")
                line.append(" " if bar else "")
            line.append(shown[name][row])
            lines.append(line)
    return finish(lines, width)


def _downsample(values: list[float], size: int) -> list[float]:
    """Average consecutive values into `size` buckets so a long run fits the plot width."""
    if len(values) <= size:
        return list(values)
    n = len(values)
    buckets = [values[k * n // size : (k + 1) * n // size] for k in range(size)]
    return [sum(bucket) / len(bucket) for bucket in buckets]


def line_chart(
    values: list[float],
    *,
    height: int = 8,
    width: int = 60,
    color: bool = True,
    title: str | None = None,
) -> RenderableType:
    """Plot a curve (e.g. BLEU or loss per epoch) as points on a small grid with min/max labels."""
    lines = [Text(title, style="bold" if color else "")] if title else []
    if not values:
        return finish([*lines, Text("no data")], width)
    height = max(2, height)
    low, high = min(values), max(values)
    top, bottom = f"{high:.2f}", f"{low:.2f}"
    axis_w = max(len(top), len(bottom))
    points = _downsample(values, max(1, width - axis_w - 2))
    dot, tick, rule, corner, dash = "•┤│└─" if color else "*+|+-"
    grid = [[" "] * len(points) for _ in range(height)]
    for x, value in enumerate(points):
        # a flat curve has no scale, so draw it across the middle
        level = round((value - low) / (high - low) * (height - 1)) if high > low else height // 2
        grid[height - 1 - level][x] = dot
    for r, cells in enumerate(grid):
        label = top if r == 0 else bottom if r == height - 1 else ""
        line = Text(label.rjust(axis_w) + " " + (tick if label else rule), "dim" if color else "")
        line.append("".join(cells), "cyan" if color else "")
        lines.append(line)
    lines.append(Text(" " * (axis_w + 1) + corner + dash * len(points), "dim" if color else ""))
    last = str(len(values))
    x_labels = "1" if len(values) == 1 else "1" + last.rjust(max(len(points) - 1, len(last) + 1))
    lines.append(Text(" " * (axis_w + 2) + x_labels, "dim" if color else ""))
    return finish(lines, width)
