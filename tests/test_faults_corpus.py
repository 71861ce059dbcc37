"""Faulty training corpora: a clean run that counts what it skipped, or one line and exit 2.

The reader's per-reason counting is in test_reading.py; here: the real `s2a train` process on
each kind of broken file, bounded memory on huge lines, and fuzzing of the reader.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import tracemalloc
import unicodedata
from pathlib import Path

import pytest
from conftest import toy_pairs
from faults_util import TINY, error_line, s2a
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from seq2attn_cli.cli.app import app
from seq2attn_cli.data.reading import read_pairs
from seq2attn_cli.data.streams import not_text
from seq2attn_cli.data.subwords import Subwords
from seq2attn_cli.errors import CorpusError

GOOD = b"".join(f"{s}\t{t}\n".encode() for s, t in toy_pairs(300, seed=7))


def _corpus(tmp_path: Path, kind: str) -> tuple[Path, list[str]]:
    """A broken corpus of the given kind, and the extra CLI arguments that go with it."""
    path = tmp_path / f"{kind}.tsv"
    contents = {
        "empty": b"",
        "blank-lines": b"\n \n\t\n\r\n",
        "binary": bytes(range(256)) * 64,
        "elf": b"\x7fELF\x02\x01\x01" + bytes(4000),
        "nul-bytes": b"je\x00mange\tI eat\n" * 20,
        "invalid-utf8": b"le caf\xe9 est tr\xe8s bon\tthe coffee is good\n" * 20,  # Latin-1
        "latin1-short": b"caf\xe9\tcaf\xc3\n" * 20,  # a tenth of it not UTF-8: the whole file
        "utf16": "bonjour\thello\n".encode("utf-16"),
        "one-column": b"je mange pain\n" * 20,
        "only-huge-line": b"x" * (3 << 20) + b"\ty\n",
        "too-few-pairs": GOOD[: GOOD.index(b"\n", 100) + 1],  # a few pairs: no validation set
    }
    if kind == "directory":
        path.mkdir()
    elif kind == "missing":
        pass
    elif kind == "three-columns-want-4th":
        path.write_bytes(b"a\tb\tc\n" * 20)
        return path, ["--tgt-col", "4"]
    else:
        path.write_bytes(contents[kind])
    return path, []


FAILING = {  # kind -> what the one error line must say (beside the file name)
    "empty": "no usable sentence pairs",
    "blank-lines": "empty line: 4 lines (first: line 1)",
    # as `s2a translate` names it: not lines to skip, a file that is no text
    "binary": "not text: ",
    "elf": "not text: ",
    "nul-bytes": "NUL byte: 20 lines (first: line 1)",
    "invalid-utf8": "invalid UTF-8: 20 lines (first: line 1)",
    "latin1-short": "not UTF-8: 40 of its first 200 characters are invalid UTF-8 (Latin-1? iconv",
    "utf16": "starts with a UTF-16 byte-order mark",
    "one-column": "no tab: 20 lines (first: line 1)",
    "only-huge-line": "too long (over 1,000 characters): 1 line (first: line 1)",
    "too-few-pairs": "too few to hold out a validation set",
    "directory": "is a directory",
    "missing": "no such file",
    "three-columns-want-4th": "missing column: 20 lines (first: line 1)",
}


PROCESS = ("binary", "directory", "too-few-pairs")  # the rest run in-process: same code, faster


@pytest.mark.parametrize("kind", list(FAILING))
def test_unusable_corpus_is_one_line_naming_the_file_and_exit_2(tmp_path, kind):
    corpus, extra = _corpus(tmp_path, kind)
    args = ["train", str(corpus), "--out", str(tmp_path / "out"), *TINY, *extra]
    if kind in PROCESS:
        result = s2a(*args)
    else:  # the CLI in this process: same exit code and stderr, without a torch import each
        got = CliRunner().invoke(app, args)
        result = subprocess.CompletedProcess(args, got.exit_code, b"", got.stderr.encode())
    error_line(result, str(corpus), FAILING[kind])
    assert not (tmp_path / "out" / "config.json").exists()


def test_messy_corpus_trains_and_reports_every_skipped_line(tmp_path):
    bad = [
        b"just one column",  # no tab
        b"nul\x00inside\tx",  # NUL byte
        b"caf\xe9\tcoffee",  # invalid UTF-8
        b"x" * (3 << 20) + b"\ty",  # huge: 3 MB on one line
        b"long " * 400 + b"\tshort",  # too long (over max_chars)
        b"",  # empty line
        b" \tx",  # an empty side
        b"il voit chat\the sees cat\tfrom tatoeba",  # three columns: kept
    ]
    body = GOOD.replace(b"\n", b"\r\n")  # Windows line ends throughout
    corpus = tmp_path / "messy.tsv"
    corpus.write_bytes(b"\xef\xbb\xbf" + body + b"\r\n".join(bad))  # BOM; no final newline
    out = tmp_path / "model"
    result = s2a(
        "train", str(corpus), "--out", str(out), *TINY, "--epochs", "1", "--max-steps", "2"
    )
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert "Traceback" not in err
    first_bad = 301
    expected = {
        "no tab": (1, first_bad), "NUL byte": (1, first_bad + 1),
        "invalid UTF-8": (1, first_bad + 2), "too long": (2, first_bad + 3),
        "empty line": (1, first_bad + 5), "empty side": (1, first_bad + 6),
    }  # fmt: skip
    lines = err.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(str(corpus)))
    summary, skipped = lines[at], lines[at + 1]
    assert f"{300 + len(bad)} lines, 301 pairs read" in summary, summary
    assert skipped.startswith("  skipped 7: "), skipped
    for reason, (n, first) in expected.items():
        assert f"{reason}: {n} (first: line {first})" in skipped, skipped
    stats = json.loads((out / "config.json").read_text())["corpus"]["corpora"][0]
    assert stats["pairs_read"] == 301
    assert stats["skipped"] == {reason: n for reason, (n, _) in expected.items()}
    subwords = Subwords.load(out / "spm.model")
    pieces = subwords.pieces(list(range(4, len(subwords))))
    assert not any(c in piece for piece in pieces for c in "\ufeff\r\t")  # never learnt


def test_a_messy_valid_file_reports_every_skipped_line_as_a_corpus_does(tmp_path):
    corpus = tmp_path / "corpus.tsv"
    corpus.write_bytes(GOOD)
    valid = tmp_path / "valid.tsv"
    good = "".join(f"{s}\t{t}\n" for s, t in toy_pairs(12, seed=8)).encode()
    valid.write_bytes(good + b"\n\tx\ncaf\xe9\tx\nfoo\n\n")  # ends in a blank line too
    out = tmp_path / "model"
    args = ["train", str(corpus), "--valid", str(valid), *TINY]
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--max-steps", "1"])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    at = lines.index(f"{valid} (validation): 17 lines, 12 pairs read")
    assert lines[at + 1] == (
        "  skipped 5: empty line: 2 (first: line 13); empty side: 1 (first: line 14); "
        "invalid UTF-8: 1 (first: line 15); no tab: 1 (first: line 16)"
    )
    assert lines[at + 2] == (  # a Latin-1 file's lines are those with accents: said so
        "  warning: lines not UTF-8 are left out, and with them words the model never sees "
        "(Latin-1? iconv -f latin1 -t utf-8 converts it)"
    )
    stats = json.loads((out / "config.json").read_text())["corpus"]["valid"][0]
    assert (stats["pairs"], stats["lines"]) == (12, 17)
    assert stats["skipped"] == {"empty line": 2, "empty side": 1, "invalid UTF-8": 1, "no tab": 1}
    assert stats["skipped_first_line"]["invalid UTF-8"] == 15
    card = CliRunner().invoke(app, ["inspect", "--model", str(out)], env={"COLUMNS": "400"})
    assert "(12, 5 lines skipped)" in card.stdout
    valid.write_bytes(b"\n\tx\nfoo\n")  # nothing usable left: refused, naming why
    refused = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "x")])
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1, refused.stderr
    said = "no usable sentence pairs (empty line: 1 line (first: line 1);"
    assert f"{valid}: {said}" in refused.stderr


def test_a_huge_line_is_never_held_in_memory(tmp_path):
    corpus = tmp_path / "huge.tsv"
    with corpus.open("wb") as f:
        f.write(GOOD)
        f.write(b"\t")
        for _ in range(48):  # one 48 MB line
            f.write(b"word " * 200_000)
        f.write(b"\nje mange\tI eat\n")
    tracemalloc.start()
    try:
        pairs, report = read_pairs(corpus)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"peak {peak / 1e6:.0f} MB for a 48 MB line"
    assert report.skipped == {"too long": 1} and report.first_line["too long"] == 301
    assert report.lines == 302 and pairs[-1] == ("je mange", "I eat")


# ---- fuzzing the reader -------------------------------------------------------------------

WORDS = st.text(st.characters(codec="utf-8", exclude_categories=("C", "Z")), min_size=1, max_size=8)
SIDE = st.lists(WORDS, min_size=1, max_size=4).map(" ".join)
GOOD_LINE = st.tuples(SIDE, SIDE).map(lambda p: ("good", p))
JUNK_LINE = st.one_of(
    st.binary(max_size=40),
    st.lists(st.sampled_from([b"\t", b"\x00", b"\r", b"\xff", b"\xef\xbb\xbf", b" ", b"a",
                              "é".encode(), "\u2028".encode(), b"\x1b[1m"]), max_size=12)
    .map(b"".join),
).map(lambda b: ("junk", b.replace(b"\n", b"")))  # fmt: skip


@given(
    lines=st.lists(st.one_of(GOOD_LINE, JUNK_LINE), max_size=30),
    crlf=st.booleans(), bom=st.booleans(), final_newline=st.booleans(),
    max_chars=st.integers(5, 60),
)  # fmt: skip
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(lines=[("junk", b"\xfe\xff")], crlf=False, bom=False, final_newline=False, max_chars=5)
def test_reader_fuzz_counts_every_line_and_keeps_only_clean_pairs(
    lines, crlf, bom, final_newline, max_chars
):
    raw = [f"{body[0]}\t{body[1]}".encode() if kind == "good" else body for kind, body in lines]
    data = (b"\r\n" if crlf else b"\n").join(raw)
    if raw and final_newline:
        data += b"\n"
    if bom:
        data = b"\xef\xbb\xbf" + data
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.tsv"
        path.write_bytes(data)
        try:
            pairs, report = read_pairs(path, max_chars=max_chars)
        except CorpusError as error:  # no pair, or bytes that are no text (as translate says)
            text = not_text([data[: 1 << 16]])
            assert str(error).startswith(f"{path}: no usable sentence pairs") or (
                text is not None and str(error) == f"{path}: {text}"
            )
            return
    n_lines = data.count(b"\n") + (not data.endswith(b"\n"))
    assert report.lines == n_lines
    assert report.kept == len(pairs) and report.kept + sum(report.skipped.values()) == n_lines
    assert all(1 <= report.first_line[r] <= n_lines for r in report.skipped)
    for pair in pairs:
        for side in pair:
            assert side and len(side) <= max_chars and side == " ".join(side.split())
            assert unicodedata.is_normalized("NFC", side)
            assert not any(unicodedata.category(c)[0] == "C" for c in side)  # no tab, CR, NUL
    wanted = [  # every well-formed short pair is kept, in order
        tuple(unicodedata.normalize("NFC", side) for side in body)
        for kind, body in lines
        if kind == "good" and all(len(unicodedata.normalize("NFC", s)) <= max_chars for s in body)
    ]
    kept = iter(pairs)
    assert all(any(p == w for p in kept) for w in wanted), (wanted, pairs)
