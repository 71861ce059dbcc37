"""`s2a align`: one Pharaoh line per pair, indices of the words as given, whatever the batch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from seq2attn_cli.align.aligner import align
from seq2attn_cli.align.methods import METHODS
from seq2attn_cli.cli.app import app
from seq2attn_cli.decoding.translator import Translator

runner = CliRunner()

PAIRS = [
    ("je mange pain", "I eats bread"),
    ("", ""),  # a blank line: an empty line out
    ("il   voit  chat", "he   sees cat"),  # extra spaces
    ("elle aime eau .", "she loves water ."),  # punctuation, which cleaning glues back
    ("il voit https://example.com/chat?x=1 .", "he sees https://example.com/chat?x=1 ."),
    ("nous voit chien", ""),  # nothing to align to
    ("😀😀", "👍"),  # nothing the model can read
    ("le « chat » rouge ?", "the “red” cat ?"),
]


def s2a(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    """Run the real CLI as a process."""
    return subprocess.run(
        [sys.executable, "-m", "seq2attn_cli", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def tsv(pairs: list[tuple[str, str]]) -> str:
    """Pairs as source<TAB>target lines (a blank pair as a blank line)."""
    return "".join(f"{s}\t{t}\n" if s or t else "\n" for s, t in pairs)


def links(line: str) -> list[tuple[int, int]]:
    """A Pharaoh line's links."""
    return [(int(a), int(b)) for a, b in (pair.split("-") for pair in line.split())]


@pytest.fixture(scope="module")
def translator(tiny_model: Path) -> Translator:
    """The tiny model, as `s2a align` loads it."""
    return Translator.load(tiny_model)


def test_one_pharaoh_line_per_pair_counting_the_words_as_given(tiny_model, tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text(tsv(PAIRS), encoding="utf-8")
    result = runner.invoke(app, ["align", str(path), "--model", str(tiny_model)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.split("\n")
    assert lines[-1] == "" and len(lines) - 1 == len(PAIRS)
    for line, (src, tgt) in zip(lines, PAIRS, strict=False):
        for i, j in links(line):
            assert 0 <= i < len(src.split()) and 0 <= j < len(tgt.split()), (line, src, tgt)
    assert lines[1] == "" and lines[5] == ""  # blank pair, empty side
    assert links(lines[0]) and links(lines[3]) and links(lines[4])
    # the URL is one word on each side, and the full stop after it another
    assert {j for _, j in links(lines[4])} <= {0, 1, 2, 3}


def test_extra_spaces_change_no_link(translator):
    plain, spaced = align(
        translator, [("il voit chat", "he sees cat"), ("  il   voit\tchat ", "he  sees   cat  ")]
    )
    assert plain.links == spaced.links and plain.links


def test_jsonl_holds_the_words_the_weights_and_the_same_links(tiny_model, tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text(tsv(PAIRS), encoding="utf-8")
    text = runner.invoke(app, ["align", str(path), "-m", str(tiny_model)]).stdout.splitlines()
    result = runner.invoke(app, ["align", str(path), "-m", str(tiny_model), "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["alignment"] for r in records] == text
    for record, (src, tgt) in zip(records, PAIRS, strict=True):
        assert record["src"] == src.split() and record["tgt"] == tgt.split()
        assert len(record["weights"]) == len(record["tgt"])
        assert all(len(row) == len(record["src"]) for row in record["weights"])
    row = records[0]["weights"][0]
    assert 0.5 < sum(row) <= 1.0001  # a distribution, less what went to </s>


def test_stdin_dash_and_two_files_give_what_a_pairs_file_gives(tiny_model, tmp_path):
    pairs = [p for p in PAIRS if p != ("", "")]
    path = tmp_path / "pairs.tsv"
    path.write_text(tsv(pairs), encoding="utf-8")
    (tmp_path / "src").write_text("".join(s + "\n" for s, _ in pairs), encoding="utf-8")
    (tmp_path / "tgt").write_text("".join(t + "\n" for _, t in pairs), encoding="utf-8")
    model = ["-m", str(tiny_model)]
    from_file = s2a("align", str(path), *model)
    assert from_file.returncode == 0, from_file.stderr
    assert from_file.stdout.count(b"\n") == len(pairs) and from_file.stderr == b""
    assert s2a("align", *model, stdin=path.read_bytes()).stdout == from_file.stdout
    assert s2a("align", "-", *model, stdin=path.read_bytes()).stdout == from_file.stdout
    two = s2a("align", "--src", str(tmp_path / "src"), "--tgt", str(tmp_path / "tgt"), *model)
    assert two.stdout == from_file.stdout


def test_a_pair_aligns_the_same_whatever_the_batch(translator):
    pairs = [p for p in PAIRS if p[0] and p[1]] * 3
    alone = [align(translator, [p])[0] for p in pairs]
    for batch_size in (1, 3, 32):
        for a, b in zip(align(translator, pairs, batch_size=batch_size), alone, strict=True):
            assert a == b


def test_threads_change_the_speed_not_the_alignments(tiny_model, tmp_path):
    # on a CPU, --threads 2 force-decodes two batches side by side, one thread each
    path = tmp_path / "pairs.tsv"
    path.write_text(tsv(PAIRS * 5), encoding="utf-8")
    args = ["align", str(path), "-m", str(tiny_model), "--format", "jsonl", "--batch-size", "3"]
    one, two = s2a(*args, "--threads", "1"), s2a(*args, "--threads", "2")
    assert one.returncode == two.returncode == 0, two.stderr
    assert one.stdout.count(b"\n") == len(PAIRS) * 5 and two.stdout == one.stdout


def test_every_method_gives_links_between_the_given_words(translator):
    for method in METHODS:
        for found, (src, tgt) in zip(align(translator, PAIRS, method=method), PAIRS, strict=True):
            assert all(i < len(src.split()) and j < len(tgt.split()) for i, j in found.links)


def test_a_line_without_its_columns_is_one_error_line_naming_it(tiny_model, tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("je mange pain\tI eats bread\nil voit chat\n", encoding="utf-8")
    result = s2a("align", str(path), "-m", str(tiny_model))
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr.decode().count("\n") == 1
    assert f"{path}: line 2: 1 column" in result.stderr.decode()
    debug = s2a("align", str(path), "-m", str(tiny_model), "--debug")
    assert debug.returncode == 2 and b"Traceback" in debug.stderr  # and the same line, code
    assert debug.stderr.decode().endswith(result.stderr.decode())


@pytest.mark.parametrize(
    "args, message",
    [
        (["{dir}/missing.tsv"], "missing.tsv: No such file or directory"),
        (["--src", "{pairs}"], "--src and --tgt go together"),
        (["{pairs}", "--format", "xml"], "--format must be text or jsonl"),
        (["{pairs}", "--method", "best"], "--method must be one of"),
        (["{pairs}", "--src-col", "3"], "line 1: 2 columns, expected source<TAB>target"),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(tiny_model, tmp_path, args, message):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("je mange\tI eat\n", encoding="utf-8")
    args = [a.format(dir=tmp_path, pairs=pairs) for a in args]
    result = runner.invoke(
        app, ["align", *args, "-m", str(tiny_model)], env={"NO_COLOR": "1", "COLUMNS": "300"}
    )
    assert result.exit_code == 2 and result.stdout == ""
    assert message in result.stderr and result.stderr.count("\n") == 1


def test_a_pairs_file_whose_columns_look_swapped_is_refused_as_evaluate_refuses_it(
    tiny_model, tmp_path
):
    pairs = tmp_path / "swapped.tsv"
    pairs.write_text(
        "I am a student.\tJe suis étudiant.\nThe weather is nice today.\tIl fait beau aujourd'hui."
        "\nWhere is the station?\tOù est la gare ?\n",
        encoding="utf-8",
    )
    args = ["align", str(pairs), "-m", str(tiny_model)]
    result = runner.invoke(app, args, env={"NO_COLOR": "1", "COLUMNS": "300"})
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert "swapped.tsv: column 1 looks English" in result.stderr
    assert "--src-col 2 --tgt-col 1" in result.stderr and result.stderr.count("\n") == 1
    assert runner.invoke(app, [*args, "--no-check-columns"]).stdout.count("\n") == 3
    same = runner.invoke(app, [*args, "--src-col", "2", "--tgt-col", "2"])  # one column twice
    assert same.exit_code == 2 and same.stdout == ""  # it advised "--src-col 2 --tgt-col 2"
    assert same.stderr == (
        f"s2a: error: {pairs}: columns must be two different numbers from 1 up (--src-col 2, "
        "--tgt-col 2)\n"
    )


def test_two_files_of_different_lengths_are_refused(tiny_model, tmp_path):
    (tmp_path / "a.fr").write_text("je mange\nil voit\n", encoding="utf-8")
    (tmp_path / "a.en").write_text("I eat\n", encoding="utf-8")
    result = s2a("align", "--src", str(tmp_path / "a.fr"), "--tgt", str(tmp_path / "a.en"),
                 "-m", str(tiny_model))  # fmt: skip
    assert result.returncode == 2 and b"has 2 lines and --tgt" in result.stderr


def test_a_binary_input_and_a_model_without_attention_are_refused(tiny_model, tiny_none_model):
    binary = s2a("align", "-m", str(tiny_model), stdin=bytes(range(256)) * 8)
    assert binary.returncode == 2 and b"stdin: not text" in binary.stderr
    none = s2a("align", "-m", str(tiny_none_model), stdin=b"je mange\tI eat\n")
    assert none.returncode == 2 and b"no attention" in none.stderr


def test_crlf_a_bom_control_characters_and_line_separators_keep_one_line_per_pair(tiny_model):
    raw = (
        "\ufeffje mange pain\tI eats bread\r\n"
        "il\x00voit chat\the sees\x01cat\r\n"
        "elle aime\u2028eau\tshe loves\u2028water\n"
        "nous voit chien\twe sees dog"  # no final newline
    ).encode()
    result = s2a("align", "-m", str(tiny_model), stdin=raw)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().split("\n")
    assert len(lines) == 5 and lines[-1] == ""
    for line, pair in zip(lines, raw.decode().split("\n"), strict=False):
        src, tgt = pair.split("\t")
        assert all(i < len(src.split()) and j < len(tgt.split()) for i, j in links(line))
        assert links(line)


def test_a_pair_is_read_as_given_markers_and_telephone_numbers_included(shipped):
    pairs = [
        ("- Ouvrez le fichier .", "- Open the file ."),  # the dash is a word of both sides
        ("Appelez le 01 23 45 67 89 .", "Call 01 23 45 67 89 ."),  # each group its own word
    ]
    dash, phone = align(shipped, pairs, method="shared")
    assert (0, 0) in dash.links
    assert {(2, 1), (3, 2), (4, 3), (5, 4), (6, 5)} <= set(phone.links)
