"""Tests for the terminal charts: bar charts and line charts."""

import io

import pytest
from rich.cells import cell_len
from rich.console import Console, RenderableType

from seq2attn_cli.views.charts import bar_chart, line_chart


def render(renderable: RenderableType) -> list[str]:
    """Plain text lines, on a console far wider than any chart so rich never crops for us."""
    console = Console(width=500, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text().splitlines()


def raw_terminal_output(renderable: RenderableType) -> str:
    """What a truecolor terminal receives, escape codes included."""
    file = io.StringIO()
    console = Console(width=120, color_system="truecolor", force_terminal=True, file=file)
    console.print(renderable)
    return file.getvalue()


BUCKETS = ["1-5", "6-10", "11-20"]
BLEU = {"general": [31.5, 24.0, None], "none": [12.25, 20.0, 8.0]}


def test_bar_chart_shows_missing_values_as_na_without_a_bar() -> None:
    lines = render(bar_chart(BUCKETS, BLEU, color=False, width=60))
    missing = next(line for line in lines if line.startswith("11-20"))
    assert missing.split() == ["11-20", "general", "n/a"]
    assert any(line.rstrip().endswith("#### 12.2") for line in lines)  # one decimal


def test_bar_chart_draws_a_longer_bar_for_a_larger_value() -> None:
    lines = render(bar_chart(BUCKETS, BLEU, color=False, width=60))
    general, none = lines[0], lines[1]
    assert general.count("#") > none.count("#") > 0
    assert general.count("#") == 60 - len("1-5   general  31.5")  # the maximum fills the width


@pytest.mark.parametrize("width", [30, 60, 100])
def test_bar_chart_fits_width(width: int) -> None:
    lines = render(bar_chart(BUCKETS, BLEU, color=True, width=width, title="BLEU by length"))
    assert max(cell_len(line) for line in lines) <= width
    assert "█" in "\n".join(lines)


def test_bar_chart_gives_each_series_its_own_colour() -> None:
    out = raw_terminal_output(bar_chart(["1-5"], {"a": [1.0], "b": [2.0]}, color=True))
    assert "\x1b[36m" in out and "\x1b[35m" in out  # cyan and magenta


@pytest.mark.parametrize("n_values", [5, 200])
def test_line_chart_fits_width(n_values: int) -> None:
    values = [10.0 + (i % 7) for i in range(n_values - 2)] + [16.0, 12.0]
    lines = render(line_chart(values, width=40, height=6, title="BLEU per epoch"))
    assert max(cell_len(line) for line in lines) <= 40
    assert lines[1].startswith("16.00") and lines[6].startswith("10.00")  # max on top, min below
    assert "•" in "\n".join(lines)


def test_line_chart_handles_no_values_and_a_single_value() -> None:
    assert render(line_chart([])) == ["no data"]
    lines = render(line_chart([1.0], color=False))
    assert "\n".join(lines).count("*") == 1


def test_a_count_of_one_is_singular_and_others_plural() -> None:
    from seq2attn_cli.views.charts import counted

    assert [counted(n, "line") for n in (0, 1, 2, 3000)] == [
        "0 lines", "1 line", "2 lines", "3,000 lines"
    ]  # fmt: skip
