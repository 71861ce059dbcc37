"""Attention heatmaps: what a user reads in the terminal and in a saved picture."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import xml.dom.minidom
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console, RenderableType
from typer.testing import CliRunner

from seq2attn_cli.cli.app import app
from seq2attn_cli.views.heatmap import heatmap

SRC12 = "der Ausschuss hat nach langen Debatten den umfassenden Haushalt für 2025 gebilligt".split()
TGT10 = "after long debates the committee approved the comprehensive budget </s>".split()
LONG_SRC = (
    "Le comité a approuvé hier soir, après de longues discussions avec les représentants des "
    "syndicats et des entreprises, un budget qui prévoit des investissements importants dans "
    "les écoles, les hôpitaux et les transports de la région, ainsi que de nouvelles aides "
    "pour les familles."
).split() + ["</s>"]  # 44 words and </s>
LONG_TGT = (
    "Last night, after long discussions with the representatives of the unions and of the "
    "companies, the committee approved a budget that provides for major investments in the "
    "schools, the hospitals and the transport of the region, as well as new support for "
    "families."
).split() + ["</s>"]
LEGEND = "0.0 ["  # the ASCII legend, last line of every heatmap without colour


def alignment(n_rows: int, n_cols: int) -> list[list[float]]:
    """A row-stochastic matrix peaked on a slanted diagonal, like a real alignment."""
    rows = []
    for i in range(n_rows):
        peak = i * n_cols // n_rows
        raw = [1.0 / (1 + 4 * abs(j - peak)) for j in range(n_cols)]
        rows.append([x / sum(raw) for x in raw])
    return rows


def render(renderable: RenderableType) -> list[str]:
    """Plain text lines, on a console far wider than any chart so rich never crops for us."""
    console = Console(width=500, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return [line.rstrip() for line in console.export_text().splitlines()]


def draw(src: list[str], tgt: list[str], *, width: int, color: bool = False) -> list[str]:
    """The lines of a heatmap of a diagonal alignment between src and tgt."""
    return render(heatmap(src, tgt, alignment(len(tgt), len(src)), color=color, width=width))


def raw_terminal_output(renderable: RenderableType) -> str:
    """What a truecolor terminal receives, escape codes included."""
    file = io.StringIO()
    console = Console(width=120, color_system="truecolor", force_terminal=True, file=file)
    console.print(renderable)
    return file.getvalue()


def row_labels(lines: list[str]) -> list[str]:
    """The labels of the heatmap's rows: lines that start with a word (not a note or legend)."""
    return [
        line.split()[0]
        for line in lines
        if line and not line.startswith((" ", "(", LEGEND, "0.0 "))
    ]


def header(lines: list[str]) -> list[str]:
    """The column-label lines at the top of a heatmap (they start with spaces)."""
    top = []
    for line in lines:
        if line and not line.startswith(" "):
            break
        top.append(line)
    return top


def columns_top_to_bottom(lines: list[str]) -> list[str]:
    """The words of a header written top to bottom, one letter a line."""
    width = max(len(line) for line in lines)
    padded = [line.ljust(width) for line in lines]
    words = ["".join(line[x] for line in padded).strip() for x in range(width)]
    return [word for word in words if word]


# -----------------------------------------------------------------------------
# layout


def test_a_short_sentence_shows_every_word_whole_with_its_weight() -> None:
    src = "Elle lit un livre intéressant dans le jardin. </s>".split()
    tgt = "She reads an interesting book in the garden. </s>".split()
    lines = draw(src, tgt, width=80)
    assert lines[0].split() == src  # one line of whole source words: no "intér…"
    assert row_labels(lines) == tgt
    assert "…" not in "\n".join(lines)
    colour = raw_terminal_output(heatmap(src, tgt, alignment(9, 9), color=True, width=80))
    assert re.search(r"\.\d\d", colour)  # each cell prints its weight, ".42"


def test_long_row_labels_are_whole_where_there_is_room() -> None:
    lines = draw(["a", "b", "</s>"], ["representatives", "x", "</s>"], width=80)
    assert row_labels(lines) == ["representatives", "x", "</s>"]


def test_a_long_sentence_fits_80_columns_in_compact_cells() -> None:
    lines = draw(LONG_SRC, LONG_TGT, width=80)
    assert max(cell_len(line) for line in lines) <= 80
    assert not any(line.startswith("(source words") for line in lines)  # one panel only
    top = header(lines)
    assert row_labels(lines) == LONG_TGT  # every target word once, as a row
    assert columns_top_to_bottom(top) == LONG_SRC  # every source word whole, top to bottom
    assert len(lines) == len(top) + len(LONG_TGT) + 2  # + a blank line and the legend


def test_compact_cells_are_as_wide_as_the_width_allows() -> None:
    assert draw(SRC12, TGT10, width=100)[0].split() == SRC12  # room for whole words in a line
    for width in (30, 40, 50, 60, 70):
        lines = draw(SRC12, TGT10, width=width)
        assert columns_top_to_bottom(header(lines)) == SRC12
        # cells one character wider would not fit: less than a character per column is unused
        assert width - len(SRC12) < max(cell_len(line) for line in lines) <= width


def test_panels_only_when_the_tightest_cells_do_not_fit() -> None:
    lines = draw(LONG_SRC, LONG_TGT, width=40)
    assert max(cell_len(line) for line in lines) <= 40
    notes = [line for line in lines if line.startswith("(source words ")]
    spans = [tuple(map(int, re.findall(r"\d+", note)[:2])) for note in notes]
    assert len(spans) > 1 and spans[0][0] == 1 and spans[-1][1] == len(LONG_SRC)
    assert all(b[0] == a[1] + 1 for a, b in zip(spans, spans[1:], strict=False))  # no gap
    labels = row_labels(lines)
    assert len(labels) == len(LONG_TGT) * len(notes)  # each panel repeats the rows
    assert labels == labels[: len(LONG_TGT)] * len(notes)


@pytest.mark.parametrize("color", [True, False])
@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_heatmap_fits_every_terminal_width(width: int, color: bool) -> None:
    lines = render(heatmap(SRC12, TGT10, alignment(10, 12), color=color, width=width, title="t"))
    assert max(cell_len(line) for line in lines) <= width
    assert lines[0] == "t"


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 150), st.integers(1, 50), st.integers(1, 16), st.booleans())
def test_heatmap_never_draws_past_the_width(
    width: int, n_src: int, n_tgt: int, color: bool
) -> None:
    src, tgt = (LONG_SRC * 2)[:n_src], (TGT10 * 2)[:n_tgt]
    lines = render(heatmap(src, tgt, alignment(n_tgt, n_src), color=color, width=width))
    assert max(cell_len(line) for line in lines) <= width


@settings(max_examples=60, deadline=None)
@given(st.integers(30, 150), st.integers(1, 45), st.integers(1, 12))
def test_rows_are_always_target_words(width: int, n_src: int, n_tgt: int) -> None:
    src, tgt = LONG_SRC[-n_src:], ["w" * (k % 5 + 1) for k in range(n_tgt)]
    labels = row_labels(draw(src, tgt, width=width))
    assert labels[:n_tgt] == tgt and len(labels) % n_tgt == 0


def test_no_color_heatmap_has_no_escape_codes_and_uses_shades() -> None:
    src, tgt = ["je", "suis", "</s>"], ["I", "am", "</s>"]
    weights = [[0.9, 0.1, 0.0], [0.2, 0.8, 0.0], [0.0, 0.0, 1.0]]
    renderable = heatmap(src, tgt, weights, color=False, width=60, title="attention")
    assert "\x1b[" not in raw_terminal_output(renderable)
    lines = render(renderable)
    eos_row = next(line for line in lines if line.startswith("</s>"))
    assert eos_row.rstrip().endswith("@@@@")  # the strongest cell is the densest shade
    assert any("0.0 [" in line and "@] 1.0" in line for line in lines)  # ASCII legend


def test_color_heatmap_uses_background_colours() -> None:
    out = raw_terminal_output(heatmap(["a", "b"], ["c"], [[0.25, 0.75]], color=True, width=60))
    assert "\x1b[" in out and "48;2;" in out
    assert ".75" in out  # cells print their weight


# -----------------------------------------------------------------------------
# the command line


runner = CliRunner()


def s2a(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run the real CLI as a process, its output piped (not a terminal)."""
    base = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    return subprocess.run(
        [sys.executable, "-m", "seq2attn_cli", *args],
        capture_output=True,
        text=True,
        timeout=300,  # generous: the machine may be busy
        env={**base, "OMP_NUM_THREADS": "1", "COLUMNS": "80", **(env or {})},
    )


def heatmaps(stderr: str) -> list[list[str]]:
    """The heatmaps in a command's stderr, each as its lines up to its legend."""
    blocks, block = [], []
    for line in stderr.splitlines():
        if line.startswith(LEGEND):
            blocks.append([x for x in block if x.strip()])
            block = []
        else:
            block.append(line.rstrip())
    return blocks


def test_sentences_of_one_call_share_an_orientation(tiny_model: Path) -> None:
    # one sentence has the longer words on the source side, the other on the target side
    sentences = ["maison chien", "eau pain", "je mange pain"]
    result = s2a("translate", "--model", str(tiny_model), "--heatmap", *sentences)
    assert result.returncode == 0, result.stderr
    translations = result.stdout.splitlines()
    pictures = heatmaps(result.stderr)
    assert len(pictures) == len(sentences) == len(translations)
    for source, translation, lines in zip(sentences, translations, pictures, strict=True):
        assert lines[0].split() == source.split() + ["</s>"]  # columns: the source
        # rows: the translation, then how much attention each source word got in all
        assert row_labels(lines) == translation.split() + ["</s>", "coverage"]
    assert "transposed" not in result.stderr
    # stderr is a pipe, not a terminal: shades, and not one escape code
    assert "\x1b[" not in result.stderr and "@" in result.stderr


def test_inspect_draws_a_44_word_sentence_in_one_panel_at_80_columns(tiny_model: Path) -> None:
    words = ["je", "tu", "il", "elle", "nous", "mange", "voit", "aime", "pain", "eau", "chat"]
    source = " ".join(words[k % len(words)] for k in range(44))
    args = ["inspect", "--model", str(tiny_model), source, "--target", source]
    result = runner.invoke(app, args, env={"COLUMNS": "80", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(cell_len(line) for line in lines) <= 80
    (picture,) = heatmaps("\n".join(lines))
    rows = row_labels(picture[next(i for i, line in enumerate(picture) if line[0] == " ") :])
    assert rows == [*source.split(), "</s>", "coverage"]  # a target word a row: no panels


# -----------------------------------------------------------------------------
# saved pictures


@pytest.fixture(scope="module")
def saved(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """`s2a inspect --save` as .svg and as .html: the text of each file."""
    texts = {}
    for suffix in (".svg", ".html"):
        path = tmp_path_factory.mktemp("pictures") / f"heat{suffix}"
        args = ["inspect", "--model", str(tiny_model), "je mange pain", "--save", str(path)]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        texts[suffix] = path.read_text(encoding="utf-8")
    return texts


def test_saved_svg_is_valid_and_shows_the_sentence(saved: dict[str, str]) -> None:
    document = xml.dom.minidom.parseString(saved[".svg"])
    assert document.documentElement.tagName == "svg"
    assert "mange" in saved[".svg"]


def test_saved_svg_loads_nothing_from_the_network(saved: dict[str, str]) -> None:
    for text in saved.values():
        text = text.replace('xmlns="http://www.w3.org/2000/svg"', "")  # a name, never fetched
        # no address, web font, stylesheet, script or link; url(#id) points inside the file
        fetches = re.findall(r"[a-z]+://|url\((?!#)|@import|@font-face|href|src=|<script", text)
        assert fetches == []


def test_saved_pictures_draw_no_window_buttons(saved: dict[str, str]) -> None:
    assert "<circle" not in saved[".svg"]  # the red, yellow and green dots of a fake window
    assert not re.search(r"#ff5f57|#febc2e|#28c840", saved[".svg"])


def test_saved_pictures_have_a_title(saved: dict[str, str]) -> None:
    for text in saved.values():
        title = re.search(r"<title>([^<]*)</title>", text)
        assert title and "je mange pain" in title.group(1)
