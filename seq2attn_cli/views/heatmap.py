"""Attention as a heatmap in the terminal: one row per target word, one column per source word.

Plain lists in (words from alignment.word_level, or pieces), a rich renderable out; no torch.
Rows are always the target, so every heatmap of a call reads the same way; under them, when
given, the coverage row: each source word's attention summed over the output, in red where
the word may have been dropped (decoding/explain/confidence.py). The layout is the
first of these that fits the width:
- wide: every column as wide as its word, so labels are whole; cells print their weight;
- compact: narrow columns of one width under labels written top to bottom;
- panels: the tightest compact columns, split into blocks that each repeat the row labels.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import RenderableType
from rich.style import Style
from rich.text import Text

from ..decoding.explain.alignment import check_shape
from .charts import MAX_LABEL, finish, fit, label_width

SHADES = " .:-=+*#%@"  # ASCII ramp for weight 0 -> 1 when there is no colour
DIGITS = 3  # ".42" and "1.0": the narrowest cell that prints its weight
COMPACT = [(3, 1), (2, 1), (1, 1), (1, 0)]  # (cell, gap) of compact columns, roomiest first
# viridis sampled at 0, 1/8, ..., 1: perceptually uniform, so equal weight steps look equal
VIRIDIS = [
    (68, 1, 84),
    (71, 45, 123),
    (59, 82, 139),
    (44, 114, 142),
    (33, 145, 140),
    (40, 174, 128),
    (94, 201, 98),
    (173, 220, 48),
    (253, 231, 37),
]


def _viridis(x: float) -> tuple[int, int, int]:
    """The viridis colour of x in [0, 1], linearly interpolated between the table's stops."""
    position = min(max(x, 0.0), 1.0) * (len(VIRIDIS) - 1)
    i = min(int(position), len(VIRIDIS) - 2)
    frac = position - i
    r, g, b = (round(a + (c - a) * frac) for a, c in zip(VIRIDIS[i], VIRIDIS[i + 1], strict=True))
    return r, g, b


def _hex(rgb: tuple[int, int, int]) -> str:
    """Format an RGB triple as #rrggbb."""
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _cell(weight: float, size: int, *, color: bool) -> tuple[str, Style | str]:
    """Text and style of one cell: its weight on viridis when it fits, or an ASCII shade."""
    weight = min(max(weight, 0.0), 1.0)
    if not color:
        return SHADES[round(weight * (len(SHADES) - 1))] * size, ""
    digits = "1.0" if weight >= 0.995 else f"{weight:.2f}"[1:]  # ".42" keeps cells narrow
    rgb = _viridis(weight)
    luminance = (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255
    ink = "#000000" if luminance > 0.5 else "#ffffff"  # dark text on the bright yellow end
    text = "" if digits == ".00" or size < DIGITS else digits  # blank cells let peaks stand out
    return fit(text, size, center=True), Style(color=ink, bgcolor=_hex(rgb))


def _wide_cells(cols: list[str]) -> list[int]:
    """Column widths that show every source word whole (up to MAX_LABEL) and its weight."""
    return [min(max(DIGITS, cell_len(name)), MAX_LABEL) for name in cols]


def _row_width(label: int, cells: list[int], gap: int) -> int:
    """Width of a line: the label, a space, then the cells separated by `gap` spaces."""
    return label + 1 + sum(cells) + gap * (len(cells) - 1)


def _header(cols: list[str], cells: list[int], *, gap: int, label: int, color: bool) -> list[Text]:
    """Column labels: one line of whole words, or, in narrow columns, words top to bottom."""
    style, indent, spacer = ("bold" if color else ""), " " * (label + 1), " " * gap
    columns = list(zip(cols, cells, strict=True))
    if all(cell_len(name) <= cell or cell == MAX_LABEL for name, cell in columns):
        words = [fit(name, cell, center=True) for name, cell in columns]
        return [Text(indent + spacer.join(words), style)]
    # a word longer than MAX_LABEL letters is cut, as the wide layout cuts it
    stacks = [
        [*name[: MAX_LABEL - 1], "…"] if len(name) > MAX_LABEL else list(name) for name in cols
    ]
    lines = []
    for k in range(max(len(stack) for stack in stacks)):
        letters = [
            fit(s[k] if k < len(s) else "", c, center=True)
            for s, c in zip(stacks, cells, strict=True)
        ]
        lines.append(Text(indent + spacer.join(letters), style))
    return lines


def _coverage_cell(value: float, size: int, *, low: bool, color: bool) -> tuple[str, str]:
    """A coverage cell: the sum printed where it fits ("!" marks a dropped word without colour)."""
    digits = f"{value:.1f}" if value < 9.95 else f"{value:.0f}"
    text = digits.removeprefix("0") if size < len(digits) else digits
    if size < len(text):
        text = "!" if low and not color else SHADES[round(min(value, 1.0) * (len(SHADES) - 1))]
    elif low and not color:
        text = (text + "!")[-size:] if size > len(text) else text
    return fit(text, size, center=True), ("bold red" if low and color else "")


def _grid(
    rows: list[str],
    cols: list[str],
    grid: list[list[float]],
    *,
    cells: list[int],
    gap: int,
    label: int,
    color: bool,
    coverage: list[tuple[float, bool]] | None = None,
) -> list[Text]:
    """One block of the heatmap: the column labels, one line per row word, the coverage row."""
    lines = _header(cols, cells, gap=gap, label=label, color=color)
    for name, weights in zip(rows, grid, strict=True):
        line = Text()
        line.append(fit(name, label) + " ", "bold" if color else "")
        for j, (weight, cell) in enumerate(zip(weights, cells, strict=True)):
            line.append(" " * gap if j else "")
            line.append(*_cell(weight, cell, color=color))
        lines.append(line)
    if coverage is not None:
        line = Text(fit("coverage", label) + " ", "italic" if color else "")
        for j, ((value, low), cell) in enumerate(zip(coverage, cells, strict=True)):
            line.append(" " * gap if j else "")
            line.append(*_coverage_cell(value, cell, low=low, color=color))
        lines.append(line)
    return lines


def _legend(*, color: bool, width: int) -> Text:
    """A colour bar (or ASCII ramp) from weight 0.0 to 1.0."""
    if not color:
        repeat = 2 if width >= 10 + 2 * len(SHADES) else 1  # halve the ramp on narrow terminals
        return Text("0.0 [" + "".join(shade * repeat for shade in SHADES) + "] 1.0")
    legend = Text("0.0 ")
    steps = max(2, min(24, width - 8))
    for k in range(steps):
        legend.append(" ", Style(bgcolor=_hex(_viridis(k / (steps - 1)))))
    legend.append(" 1.0")
    return legend


def _panels(
    src: list[str],
    tgt: list[str],
    weights: list[list[float]],
    *,
    label: int,
    width: int,
    color: bool,
    coverage: list[tuple[float, bool]] | None,
) -> list[Text]:
    """The tightest columns, split into blocks of source words that each fit the width."""
    cell, gap = COMPACT[-1]
    per_panel = max(1, (width - label - 1 + gap) // (cell + gap))
    lines: list[Text] = []
    for start in range(0, len(src), per_panel):
        stop = min(start + per_panel, len(src))
        if start:
            lines.append(Text(""))
        note = f"(source words {start + 1}-{stop} of {len(src)})"
        lines.append(Text(note, "dim" if color else ""))
        block = [row[start:stop] for row in weights]
        cells = [cell] * (stop - start)
        part = coverage[start:stop] if coverage is not None else None
        lines += _grid(
            tgt,
            src[start:stop],
            block,
            cells=cells,
            gap=gap,
            label=label,
            color=color,
            coverage=part,
        )
    return lines


def heatmap(
    src: list[str],
    tgt: list[str],
    weights: list[list[float]],
    *,
    color: bool = True,
    width: int = 80,
    title: str | None = None,
    coverage: list[tuple[float, bool]] | None = None,
) -> RenderableType:
    """Draw attention (rows target, columns source) in the widest layout that fits `width`.

    coverage: per source column, its attention summed over the output and whether the word
    may have been dropped; drawn as a last row.
    """
    check_shape(src, tgt, weights)
    lines = [Text(title, style="bold" if color else "")] if title else []
    if not src or not tgt:
        return finish([*lines, Text("(no attention to show: empty sentence)")], width)
    labels = tgt + ["coverage"] if coverage is not None else tgt
    label = min(label_width(labels), max(3, width // 3))  # row labels whole where there is room
    layouts = [(_wide_cells(src), 1)] + [([cell] * len(src), gap) for cell, gap in COMPACT]
    fitting = [(cells, gap) for cells, gap in layouts if _row_width(label, cells, gap) <= width]
    if fitting:
        cells, gap = fitting[0]
        lines += _grid(
            tgt, src, weights, cells=cells, gap=gap, label=label, color=color, coverage=coverage
        )
    else:
        lines += _panels(
            src, tgt, weights, label=label, width=width, color=color, coverage=coverage
        )
    lines += [Text(""), _legend(color=color, width=width)]
    return finish(lines, width)
