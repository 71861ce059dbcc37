"""Reading corpora: every skipped line is counted by reason, nothing usable -> a clear error;
compressed corpora stream; text is normalised as training saw it; lines are cut into chunks
without losing one."""

from __future__ import annotations

import gzip
import io
import lzma
import os
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2attn_cli.data.reading import join_quotes, normalize, read_pairs, space_quotes
from seq2attn_cli.data.streams import line_chunks
from seq2attn_cli.errors import CorpusError


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


@pytest.mark.parametrize(
    "content, says",
    [
        (b"", "no usable sentence pairs"),
        (b"\n\n", "no usable sentence pairs"),
        (b"\x00\x01\x02" * 100, "not text: 300 of its first 300 characters"),  # as translate
        (b"one column\n", "no usable sentence pairs"),
    ],
)
def test_nothing_usable_is_one_clear_error(tmp_path, content, says):
    path = tmp_path / "c.tsv"
    path.write_bytes(content)
    with pytest.raises(CorpusError, match=rf"c\.tsv: {says}"):
        read_pairs(path)


def test_a_corpus_from_a_pipe_is_read_whole(tmp_path):
    fifo = tmp_path / "corpus.tsv"  # as bash's <(xzcat corpus.tsv.xz) gives it
    os.mkfifo(fifo)
    lines = b"".join(f"phrase {n}\tsentence {n}\n".encode() for n in range(5000))
    writer = threading.Thread(target=fifo.write_bytes, args=(lines,))
    writer.start()
    pairs, _ = read_pairs(fifo)  # looking for a binary first had taken its first 64 KB
    writer.join()
    assert len(pairs) == 5000 and pairs[0] == ("phrase 0", "sentence 0")


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


@pytest.mark.parametrize("suffix, opener", [(".gz", gzip.open), (".xz", lzma.open)])
def test_compressed_corpora_read_like_plain_ones(tmp_path, suffix, opener):
    with opener(tmp_path / f"c.tsv{suffix}", "wb") as f:
        f.write(b"bonjour\thello\nno tab\nmerci\tthanks\n")
    pairs, report = read_pairs(tmp_path / f"c.tsv{suffix}")
    assert pairs == [("bonjour", "hello"), ("merci", "thanks")]
    assert report.skipped == {"no tab": 1}


def test_a_damaged_xz_corpus_is_one_clear_error(tmp_path):
    path = tmp_path / "c.tsv.xz"
    path.write_bytes(lzma.compress(b"a\tb\n" * 1000)[:60])
    with pytest.raises(CorpusError, match=r"c\.tsv\.xz: line \d+: cannot decompress"):
        read_pairs(path)


@pytest.mark.parametrize(
    "typed_text, normal",
    [
        ("J’ai faim !", "J'ai faim!"),
        ("« Oui », dit-il .", '"Oui", dit-il.'),
        ("Il est 7 h 45 ?", "Il est 7 h 45?"),
        ("“Hello”", '"Hello"'),
        ("Il fait −4 °C.", "Il fait -4 °C."),  # the minus sign
    ],
)
def test_input_is_normalised_the_way_training_saw_it(typed_text, normal):
    assert normalize(typed_text) == normal


@pytest.mark.parametrize(
    ("text", "spaced"),
    [
        ('Il a dit "bonjour".', 'Il a dit " bonjour".'),
        ('"Non!" "Oui."', '" Non!" " Oui."'),
        ('la loi ("C-38") et "2019"', 'la loi (" C-38") et " 2019"'),
        ('un "..." et ""', 'un "..." et ""'),  # no word after the quote: nothing to keep whole
        ("rien à citer", "rien à citer"),
    ],
)
def test_opening_quotes_are_spaced_off_and_glued_back(text, spaced):
    assert space_quotes(normalize(text)) == spaced
    assert join_quotes(spaced) == normalize(text)


@given(st.text(alphabet='ab "(.', max_size=30))
@settings(max_examples=200, deadline=None)
def test_spacing_quotes_is_undone_exactly_on_normalised_text(text):
    text = normalize(text)
    if '" ' not in text:  # a text with a spaced quote already cannot tell which was added
        assert join_quotes(space_quotes(text)) == text
    assert normalize(space_quotes(text)) == space_quotes(text)  # training normalises again


def test_line_chunks_keep_every_line_and_cut_endless_ones():
    data = b"a\n\n   \n" + b"x" * 5000 + b"\nlast"
    lines = [
        line for chunk in line_chunks(io.BytesIO(data), chunk=2, max_bytes=1000) for line in chunk
    ]
    assert lines == [b"a", b"", b"   ", b"x" * 1000, b"last"]


def test_a_long_line_is_cut_between_characters_not_inside_one():
    for data in ("a" + "é" * 600 + "\nb", "a" + "é" * 600):  # é is 2 bytes: 1000 falls inside
        lines = [line for chunk in line_chunks(io.BytesIO(data.encode()), chunk=4, max_bytes=1000)
                 for line in chunk]  # fmt: skip
        assert lines[0] == ("a" + "é" * 499).encode()  # 999 bytes, and valid UTF-8
        lines[0].decode("utf-8")


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
