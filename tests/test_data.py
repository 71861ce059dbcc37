"""Reading corpora: every skipped line is counted by reason, nothing usable -> a clear error."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2attn_cli.data import (
    CorpusError,
    batch_plan,
    casual_variants,
    line_chunks,
    read_pairs,
    split_held_out,
)


def test_bad_lines_are_counted_by_reason_with_first_line(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_bytes(
        b"\xef\xbb\xbfbonjour\thello\r\n"  # BOM and CRLF: kept
        b"no tab here\n"  # 2
        b"\n"  # 3 empty
        b"only\t\n"  # 4 empty side
        b"bad \xff utf8\tx\n"  # 5
        b"nul\x00byte\tx\n" + b"long " * 300 + b"\tx\n"  # 6  # 7 too long (max_chars 1000)
        b"merci\tthanks\textra\n"  # 8: three columns are fine with cols 1 and 2
        b"no tab again\n"  # 9
    )
    pairs, report = read_pairs(path, max_chars=1000)
    assert pairs == [("bonjour", "hello"), ("merci", "thanks")]
    assert report.skipped == {
        "no tab": 2,
        "empty line": 1,
        "empty side": 1,
        "invalid UTF-8": 1,
        "NUL byte": 1,
        "too long": 1,
    }
    assert report.first_line["no tab"] == 2 and report.first_line["too long"] == 7
    assert report.lines == 9 and report.kept == 2
    assert "no tab: 2 lines (first: line 2)" in report.summary()


def test_missing_column_is_counted(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("a\tb\nc\td\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="missing column: 2 lines"):
        read_pairs(path, src_col=1, tgt_col=3)


@pytest.mark.parametrize("content", [b"", b"\n\n", b"\x00\x01\x02" * 100, b"one column\n"])
def test_nothing_usable_is_one_clear_error(tmp_path, content):
    path = tmp_path / "c.tsv"
    path.write_bytes(content)
    with pytest.raises(CorpusError, match=r"c\.tsv: no usable sentence pairs"):
        read_pairs(path)


def test_missing_file_and_directory_are_named(tmp_path):
    with pytest.raises(CorpusError, match="no such file"):
        read_pairs(tmp_path / "nope.tsv")
    with pytest.raises(CorpusError, match="is a directory"):
        read_pairs(tmp_path)


def test_text_is_nfc_normalised_and_whitespace_folded(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("e\u0301te\u0301   chaud\tsummer\n", encoding="utf-8")
    pairs, _ = read_pairs(path)
    assert pairs == [("\u00e9t\u00e9 chaud", "summer")]


def test_held_out_pairs_share_no_sentence_with_training():
    pairs = [(f"s{i % 50}", f"t{i % 70}") for i in range(400)]  # many repeats, like Tatoeba
    train, held = split_held_out(pairs, size=30, seed=3)
    assert len(held) == 30
    assert not {s for s, _ in train} & {s for s, _ in held}
    assert not {t for _, t in train} & {t for _, t in held}


@given(st.lists(st.tuples(st.integers(1, 40), st.integers(1, 40)), min_size=1, max_size=300))
@settings(max_examples=50, deadline=None)
def test_batch_plan_uses_every_example_once_and_is_reproducible(lengths):
    plan = batch_plan(lengths, batch_tokens=100, seed=1, epoch=2)
    assert sorted(i for b in plan for i in b) == list(range(len(lengths)))
    assert plan == batch_plan(lengths, batch_tokens=100, seed=1, epoch=2)


def test_line_chunks_keep_every_line_and_cut_endless_ones():
    data = b"a\n\n   \n" + b"x" * 5000 + b"\nlast"
    lines = [
        line for chunk in line_chunks(io.BytesIO(data), chunk=2, max_bytes=1000) for line in chunk
    ]
    assert lines == [b"a", b"", b"   ", b"x" * 1000, b"last"]


def test_line_chunks_hold_at_most_chunk_bytes_of_long_lines():
    data = b"".join(b"y" * 300 + b"\n" for _ in range(10))
    chunks = list(line_chunks(io.BytesIO(data), chunk=100, chunk_bytes=1000))
    assert [len(c) for c in chunks] == [4, 4, 2]  # a chunk ends once it holds 1,000 bytes
    assert sum(chunks, []) == [b"y" * 300] * 10


@given(
    st.lists(st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=30), max_size=40)
)
@settings(max_examples=60, deadline=None)
def test_line_chunks_round_trip_any_text(lines):
    data = "".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass")
    got = [line for chunk in line_chunks(io.BytesIO(data), chunk=7) for line in chunk]
    assert got == [line.encode("utf-8", "surrogatepass") for line in lines]


def test_casual_variants_lower_the_first_letter_and_drop_the_stop():
    pairs = [("Je suis étudiant.", "I'm a student."), ("Va !", "Go!"), ("je", "I")] * 50
    variants = casual_variants(pairs, share=1.0, seed=0)
    sources = {s for s, _ in variants}
    assert sources == {"je suis étudiant", "je suis étudiant .", "va !"}
    assert {t for s, t in variants if s.startswith("je suis")} == {"I'm a student."}
    assert casual_variants(pairs, share=0.0, seed=0) == []
