"""From piece-level attention to words: the merged weights and the Pharaoh word alignments."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2attn_cli.decoding.explain.alignment import pharaoh, word_alignment, word_level

SRC = ["▁je", "▁suis", "▁étud", "iant", "</s>"]
TGT = ["▁I", "▁am", "▁a", "▁stud", "ent", "</s>"]
WEIGHTS = [
    [0.7, 0.1, 0.1, 0.05, 0.05],
    [0.1, 0.6, 0.1, 0.1, 0.1],
    [0.2, 0.2, 0.3, 0.2, 0.1],
    [0.0, 0.1, 0.6, 0.2, 0.1],
    [0.1, 0.1, 0.2, 0.4, 0.2],
    [0.0, 0.0, 0.0, 0.1, 0.9],
]


def test_word_level_sums_source_pieces_and_averages_target_pieces() -> None:
    src_words, tgt_words, merged = word_level(SRC, TGT, WEIGHTS)
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


def test_control_tokens_stand_alone_and_unknown_characters_stay_in_their_word() -> None:
    pieces = ["hel", "lo", "</s>", "x", "▁world", "<unk>", "▁", "<unk>", "▁a", "</s>"]
    words, _, _ = word_level(pieces, ["▁a"], [[1 / 10] * 10])
    assert words == ["hello", "</s>", "x", "world<unk>", "<unk>", "a", "</s>"]  # "world😀 😀 a"


def test_a_lone_word_start_piece_stays_visible() -> None:
    words, _, _ = word_level(["▁", "▁x"], ["▁a"], [[0.5, 0.5]])
    assert words == ["▁", "x"]


def test_weights_of_the_wrong_shape_are_refused() -> None:
    with pytest.raises(ValueError, match="2 target rows x 1 source"):
        word_level(["▁a"], ["▁b", "▁c"], [[1.0]])
    with pytest.raises(ValueError, match="2 target rows x 1 source"):
        word_alignment(["▁a"], ["▁b", "▁c"], [[1.0], [1.0, 0.0]])


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


def test_each_target_word_is_aligned_to_its_most_attended_source_word() -> None:
    # "student" (pieces stud + ent) looks most at "étudiant" (pieces étud + iant)
    assert word_alignment(SRC, TGT, WEIGHTS) == [(0, 0), (1, 1), (2, 2), (2, 3)]
    assert pharaoh(word_alignment(SRC, TGT, WEIGHTS)) == "0-0 1-1 2-2 2-3"


def test_end_of_sentence_is_never_aligned() -> None:
    # every word looks mostly at </s>: still each is aligned to a real source word, and the
    # </s> row gets no pair of its own
    src, tgt = ["▁a", "▁b", "</s>"], ["▁x", "▁y", "</s>"]
    weights = [[0.2, 0.1, 0.7], [0.1, 0.3, 0.6], [0.0, 0.0, 1.0]]
    assert word_alignment(src, tgt, weights) == [(0, 0), (1, 1)]
    assert word_alignment(["</s>"], ["▁x", "</s>"], [[1.0], [1.0]]) == []
    assert pharaoh([]) == ""
