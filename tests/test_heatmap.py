"""Tests for the terminal pictures: attention heatmaps, bar charts and line charts."""

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console, RenderableType

from seq2attn_cli.heatmap import bar_chart, heatmap, line_chart, word_level

SRC12 = "der Ausschuss hat nach langen Debatten den umfassenden Haushalt für 2025 gebilligt".split()
TGT10 = "after long debates the committee approved the comprehensive budget </s>".split()


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
    return console.export_text().splitlines()


def raw_terminal_output(renderable: RenderableType) -> str:
    """What a truecolor terminal receives, escape codes included."""
    file = io.StringIO()
    console = Console(width=120, color_system="truecolor", force_terminal=True, file=file)
    console.print(renderable)
    return file.getvalue()


def appears(word: str, text: str) -> bool:
    """Whether a word is in text whole or cut short with an ellipsis."""
    return word in text or any(word[:k] + "…" in text for k in range(1, len(word)))


# -----------------------------------------------------------------------------
# word_level


def test_word_level_sums_source_pieces_and_averages_target_pieces() -> None:
    src = ["▁je", "▁suis", "▁étud", "iant", "</s>"]
    tgt = ["▁I", "▁am", "▁a", "▁stud", "ent", "</s>"]
    weights = [
        [0.7, 0.1, 0.1, 0.05, 0.05],
        [0.1, 0.6, 0.1, 0.1, 0.1],
        [0.2, 0.2, 0.3, 0.2, 0.1],
        [0.0, 0.1, 0.6, 0.2, 0.1],
        [0.1, 0.1, 0.2, 0.4, 0.2],
        [0.0, 0.0, 0.0, 0.1, 0.9],
    ]
    src_words, tgt_words, merged = word_level(src, tgt, weights)
    assert src_words == ["je", "suis", "étudiant", "</s>"]
    assert tgt_words == ["I", "am", "a", "student", "</s>"]
    expected = [
        [0.7, 0.1, 0.15, 0.05],
        [0.1, 0.6, 0.2, 0.1],
        [0.2, 0.2, 0.5, 0.1],
        [0.05, 0.1, 0.7, 0.15],  # "stud" and "ent" averaged
        [0.0, 0.0, 0.1, 0.9],
    ]
    for row, want in zip(merged, expected, strict=True):
        assert row == pytest.approx(want)


def test_word_level_keeps_special_tokens_as_their_own_words() -> None:
    pieces = ["hel", "lo", "</s>", "x", "▁world", "<unk>"]
    words, _, _ = word_level(pieces, ["▁a"], [[1 / 6] * 6])
    assert words == ["hello", "</s>", "x", "world", "<unk>"]


def test_word_level_rejects_weights_of_the_wrong_shape() -> None:
    with pytest.raises(ValueError, match="2 target rows x 1 source"):
        word_level(["▁a"], ["▁b", "▁c"], [[1.0]])


@st.composite
def sentences(draw: st.DrawFn) -> tuple[list[str], int]:
    """Random SentencePiece splits of a sentence, with the number of words they make."""
    pieces: list[str] = []
    n_words = draw(st.integers(1, 5))
    for _ in range(n_words):
        pieces += ["▁w"] + ["x"] * draw(st.integers(0, 2))
    if draw(st.booleans()):
        pieces[0] = pieces[0].removeprefix("▁")  # a first piece without ▁ still starts a word
    if draw(st.booleans()):
        pieces.append("</s>")
        n_words += 1
    return pieces, n_words


@settings(max_examples=60, deadline=None)
@given(sentences(), sentences(), st.data())
def test_word_level_rows_still_sum_to_one(
    src: tuple[list[str], int], tgt: tuple[list[str], int], data: st.DataObject
) -> None:
    (src_pieces, n_src), (tgt_pieces, n_tgt) = src, tgt
    positive = st.floats(0.01, 1.0)
    raw = data.draw(
        st.lists(
            st.lists(positive, min_size=len(src_pieces), max_size=len(src_pieces)),
            min_size=len(tgt_pieces),
            max_size=len(tgt_pieces),
        )
    )
    weights = [[x / sum(row) for x in row] for row in raw]
    src_words, tgt_words, merged = word_level(src_pieces, tgt_pieces, weights)
    assert (len(src_words), len(tgt_words)) == (n_src, n_tgt)
    assert len(merged) == n_tgt
    for row in merged:
        assert len(row) == n_src
        assert sum(row) == pytest.approx(1.0)


# -----------------------------------------------------------------------------
# heatmap


@pytest.mark.parametrize("color", [True, False])
@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_heatmap_fits_every_terminal_width(width: int, color: bool) -> None:
    lines = render(heatmap(SRC12, TGT10, alignment(10, 12), color=color, width=width, title="t"))
    assert max(cell_len(line) for line in lines) <= width
    text = "\n".join(lines)
    assert all(appears(word, text) for word in TGT10)
    assert all(appears(word, text) for word in SRC12)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 150), st.integers(1, 16), st.integers(1, 16), st.booleans())
def test_heatmap_never_draws_past_the_width(
    width: int, n_src: int, n_tgt: int, color: bool
) -> None:
    src, tgt = (SRC12 * 2)[:n_src], (TGT10 * 2)[:n_tgt]
    lines = render(heatmap(src, tgt, alignment(n_tgt, n_src), color=color, width=width))
    assert max(cell_len(line) for line in lines) <= width


def test_heatmap_keeps_the_natural_layout_when_it_fits() -> None:
    lines = render(heatmap(SRC12[:4], TGT10[:3], alignment(3, 4), color=False, width=80))
    assert lines[0].split() == ["der", "Ausschu…", "hat", "nach"]  # headers: source words, cut
    assert [line.split()[0] for line in lines[1:4]] == TGT10[:3]  # row labels: target words
    assert "transposed" not in "\n".join(lines) and "wrapped" not in "\n".join(lines)


def test_heatmap_transposes_or_wraps_when_too_wide_and_says_so() -> None:
    # a long source and a short output fit once rows and columns swap
    tgt = ["the", "budget", "</s>"]
    lines = render(heatmap(SRC12, tgt, alignment(3, 12), color=False, width=60))
    assert "(transposed to fit the terminal: rows are source words)" in lines
    assert lines[0].split() == tgt
    assert [line.split()[0] for line in lines[1:13]] == SRC12
    # long on both sides: split the source columns into blocks that repeat the row labels
    lines = render(heatmap(SRC12, SRC12, alignment(12, 12), color=False, width=40))
    notices = [line for line in lines if line.startswith("(wrapped: columns ")]
    assert notices[0].startswith("(wrapped: columns 1-") and notices[-1].endswith("-12)")
    assert len(notices) > 1
    assert sum(line.startswith("der ") for line in lines) == len(notices)
    assert max(cell_len(line) for line in lines) <= 40


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
# bar chart and line chart

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
