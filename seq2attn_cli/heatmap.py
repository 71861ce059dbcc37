"""Terminal pictures for s2a: attention heatmaps, bar charts and line charts (torch-free)."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text

WORD_START = "\u2581"  # SentencePiece marks the first piece of every word with "▁"
SHADES = " .:-=+*#%@"  # ASCII ramp for weight 0 -> 1 when there is no colour
PARTIAL_BLOCKS = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
SERIES_COLORS = ["cyan", "magenta", "green", "yellow", "blue", "red"]
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
MIN_CELL, MAX_CELL, MAX_LABEL = 4, 8, 12  # a cell must hold ".42"; wider cells waste the screen


# -----------------------------------------------------------------------------
# subword pieces -> words


def _is_special(piece: str) -> bool:
    """Whether a piece is a control token such as </s>, <unk> or <pad>."""
    return len(piece) > 2 and piece.startswith("<") and piece.endswith(">")


def _group_pieces(pieces: list[str]) -> tuple[list[str], list[list[int]]]:
    """Merge SentencePiece pieces into words; return the words and each word's piece indices."""
    words: list[str] = []
    groups: list[list[int]] = []
    opens_word = True  # the first piece, and any piece after a special token, starts a word
    for i, piece in enumerate(pieces):
        special = _is_special(piece)
        if special or opens_word or piece.startswith(WORD_START):
            words.append(piece if special else piece.removeprefix(WORD_START))
            groups.append([i])
        else:
            words[-1] += piece
            groups[-1].append(i)
        opens_word = special
    # a lone "▁" piece would otherwise become an invisible, empty word
    return [word or WORD_START for word in words], groups


def _check_shape(src: list[str], tgt: list[str], weights: list[list[float]]) -> None:
    """Raise ValueError unless weights has one row per target token and one column per source."""
    if len(weights) != len(tgt) or any(len(row) != len(src) for row in weights):
        raise ValueError(
            f"attention weights must be {len(tgt)} target rows x {len(src)} source columns"
        )


def word_level(
    src_pieces: list[str], tgt_pieces: list[str], weights: list[list[float]]
) -> tuple[list[str], list[str], list[list[float]]]:
    """Merge piece-level attention (rows target, columns source) into word-level attention."""
    _check_shape(src_pieces, tgt_pieces, weights)
    src_words, src_groups = _group_pieces(src_pieces)
    tgt_words, tgt_groups = _group_pieces(tgt_pieces)
    merged = []
    for rows in tgt_groups:
        # summing over source pieces keeps each row a distribution; averaging target pieces too
        summed = [[sum(weights[i][j] for j in cols) for cols in src_groups] for i in rows]
        merged.append([sum(column) / len(rows) for column in zip(*summed, strict=True)])
    return src_words, tgt_words, merged


# -----------------------------------------------------------------------------
# small layout helpers


def _fit(word: str, size: int, *, center: bool = False) -> str:
    """Pad or cut a word to exactly `size` cells, marking a cut with an ellipsis."""
    if cell_len(word) > size:
        cut = Text(word)
        cut.truncate(size, overflow="ellipsis")
        word = cut.plain
    gap = size - cell_len(word)
    left = gap // 2 if center else 0
    return " " * left + word + " " * (gap - left)


def _finish(lines: list[Text], width: int) -> Group:
    """Stack lines into one renderable, each cropped so rich can never wrap it."""
    for line in lines:
        line.no_wrap = True
        line.overflow = "crop"
        line.truncate(width)
    return Group(*lines)


def _label_width(labels: list[str]) -> int:
    """Width of the label column: the longest label, capped."""
    return min(max((cell_len(label) for label in labels), default=1), MAX_LABEL)


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
    """Text and style of one heatmap cell: digits on viridis, or an ASCII shade."""
    weight = min(max(weight, 0.0), 1.0)
    if not color:
        return SHADES[round(weight * (len(SHADES) - 1))] * size, ""
    digits = "1.0" if weight >= 0.995 else f"{weight:.2f}"[1:]  # ".42" keeps cells narrow
    rgb = _viridis(weight)
    luminance = (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255
    ink = "#000000" if luminance > 0.5 else "#ffffff"  # dark text on the bright yellow end
    text = "" if digits == ".00" else digits  # blank near-zero cells so the peaks stand out
    return _fit(text, size, center=True), Style(color=ink, bgcolor=_hex(rgb))


# -----------------------------------------------------------------------------
# attention heatmap


def _grid_lines(
    rows: list[str], cols: list[str], grid: list[list[float]], *, cell: int, label: int, color: bool
) -> list[Text]:
    """Lay out one block of the grid: a header of column words, then one line per row word."""
    header = Text(" " * label)
    for name in cols:
        header.append(" " + _fit(name, cell, center=True), style="bold" if color else "")
    lines = [header]
    for name, weights in zip(rows, grid, strict=True):
        line = Text()
        line.append(_fit(name, label), "bold" if color else "")
        for weight in weights:
            line.append(" ")
            line.append(*_cell(weight, cell, color=color))
        lines.append(line)
    return lines


def _largest_fitting_cell(rows: list[str], cols: list[str], width: int) -> int:
    """The widest cell (down to MIN_CELL) that fits all columns in `width`, or 0 if none does."""
    preferred = max(MIN_CELL, min(MAX_CELL, max(cell_len(name) for name in cols)))
    for cell in range(preferred, MIN_CELL - 1, -1):
        if _label_width(rows) + len(cols) * (cell + 1) <= width:
            return cell
    return 0


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


def heatmap(
    src: list[str],
    tgt: list[str],
    weights: list[list[float]],
    *,
    color: bool = True,
    width: int = 80,
    title: str | None = None,
) -> RenderableType:
    """Draw attention (rows target, columns source) as a grid that fits `width`, with a legend."""
    _check_shape(src, tgt, weights)
    note = "dim" if color else ""
    lines = [Text(title, style="bold" if color else "")] if title else []
    if not src or not tgt:
        return _finish([*lines, Text("(no attention to show: empty sentence)")], width)
    flipped = [list(column) for column in zip(*weights, strict=True)]
    # pick the orientation that truncates column headers least; ties keep rows = target
    best = None
    for rows, cols, grid, transposed in ((tgt, src, weights, False), (src, tgt, flipped, True)):
        cell = _largest_fitting_cell(rows, cols, width)
        if cell and (best is None or cell > best[0]):
            best = (cell, rows, cols, grid, transposed)
    if best is not None:
        cell, rows, cols, grid, transposed = best
        lines += _grid_lines(rows, cols, grid, cell=cell, label=_label_width(rows), color=color)
        if transposed:
            notice = "(transposed to fit the terminal: rows are source words)"
            short = "(transposed: rows are source words)"
            lines.append(Text(notice if len(notice) <= width else short, note))
    else:
        cell = max(MIN_CELL, min(MAX_CELL, max(cell_len(name) for name in src)))
        label = max(1, min(_label_width(tgt), width - cell - 1))
        per_block = max(1, (width - label) // (cell + 1))
        for start in range(0, len(src), per_block):
            stop = min(start + per_block, len(src))
            if start:
                lines.append(Text(""))
            lines.append(Text(f"(wrapped: columns {start + 1}-{stop})", note))
            block = [row[start:stop] for row in weights]
            lines += _grid_lines(tgt, src[start:stop], block, cell=cell, label=label, color=color)
    lines += [Text(""), _legend(color=color, width=width)]
    return _finish(lines, width)


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
        return _finish([*lines, Text("no data")], width)
    known = [value for values in series.values() for value in values if value is not None]
    top = maximum if maximum is not None else max(known, default=0.0)
    shown = {name: [_one_decimal(v) for v in values] for name, values in series.items()}
    label_w, name_w = _label_width(labels), _label_width(list(series))
    value_w = max(len(text) for texts in shown.values() for text in texts)
    bar_w = max(1, width - label_w - name_w - value_w - 3)
    for row, label in enumerate(labels):
        if row and len(series) > 1:
            lines.append(Text(""))  # a gap keeps each label's bars visibly together
        for k, (name, values) in enumerate(series.items()):
            line = Text(_fit(label if k == 0 else "", label_w) + " " + _fit(name, name_w) + " ")
            value = values[row]
            if value is not None and top > 0:
                bar = _bar(value / top, bar_w, color=color)
                line.append(bar, SERIES_COLORS[k % len(SERIES_COLORS)] if color else "")
                line.append(" " if bar else "")
            line.append(shown[name][row])
            lines.append(line)
    return _finish(lines, width)


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
        return _finish([*lines, Text("no data")], width)
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
    return _finish(lines, width)
