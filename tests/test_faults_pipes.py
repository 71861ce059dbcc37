"""`s2a translate` in pipes: N lines in, N lines out, whatever the lines hold; quiet ends
on `| head`, Ctrl-C and endless input; memory bounded however long a line or a stream is.

test_translate_cli.py has empty lines, a 5,000-character line, `| head -1` on a finite
input and slow pipes; these add what a hostile or broken input can do.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from faults_util import ENV, s2a, start
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from seq2attn_cli.cli.app import app
from seq2attn_cli.data.reading import clean
from seq2attn_cli.data.streams import line_chunks
from seq2attn_cli.decoding.rules.clean import LINE_LIMIT
from seq2attn_cli.decoding.translator import Translator

LONG = ("je mange pain " * 7200)[:100_000]
NASTY = [
    LONG.encode(),  # 100,000 characters
    b"je mange\x00pain",  # NUL byte
    b"\x01\x02\x07\x08\x1b[31mrouge\x1b[0m\x7f",  # control characters, terminal escapes
    b"bad \xff\xfe utf8 \xc3",  # invalid UTF-8
    b"il voit chat\r",  # a CRLF line end
    b"\r",  # a lone carriage return
    "nous\u2028aime\u0085chien\u000b\u000cpain".encode(),  # Unicode line separators
    "مرحبا \u202eبالعالم\u202c שלום".encode(),  # right-to-left, with a bidi override
    "👨‍👩‍👧 😀 🇫🇷 chat".encode(),  # emoji, ZWJ sequences, flags
    "e\u0301te\u0301 \u200b\ufeff".encode(),  # combining marks, zero-width characters
    b" \t \t ",  # only blanks
    b"",  # empty
    b"\x00" * 50,  # only NULs
]


def _lines(stdout: bytes) -> list[str]:
    text = stdout.decode("utf-8")
    assert text.endswith("\n"), text[-100:]
    return text[:-1].split("\n")


@pytest.mark.parametrize("fmt", ["text", "jsonl"])
def test_n_lines_in_n_lines_out_whatever_they_hold(tiny_model, fmt):
    data = "\ufeff".encode() + b"\n".join(NASTY)  # a BOM first, and no final newline
    args = ["translate", "--model", str(tiny_model), "--beam", "1", "--format", fmt]
    if fmt == "text":
        result = s2a(*args, stdin=data)
        err, stdout, code = result.stderr.decode(), result.stdout, result.returncode
    else:  # the same command in this process (faster)
        got = CliRunner().invoke(app, args, input=data)
        err, stdout, code = got.stderr, got.stdout_bytes, got.exit_code
    assert code == 0 and "Traceback" not in err, err
    out = _lines(stdout)
    assert len(out) == len(NASTY)
    warnings = [line for line in err.splitlines() if "longer than s2a translates" in line]
    assert warnings == [
        "warning: input line 1: longer than s2a translates; translated its first 10,000 "
        "characters only"
    ]
    if fmt == "jsonl":
        records = [json.loads(line) for line in out]
        assert len(records[0]["source"]) == 10_000  # cut: 10 times what the model takes
        assert records[0]["parts"] > 10  # each part translated, not only the first 1,000
        out = [r["translation"] for r in records]
        assert all("\x00" not in r["source"] and "\x1b" not in r["source"] for r in records)
    assert out[0]  # the first 10,000 characters were translated
    assert out[1] == "I eats bread"  # the NUL is a space
    assert out[5] == out[10] == out[11] == out[12] == ""  # nothing to translate: empty line
    assert all("\r" not in line and "\x1b" not in line for line in out)


def test_endless_input_into_head_ends_quietly(tiny_model):
    proc = subprocess.run(
        f"yes 'je mange pain' | {sys.executable} -m seq2attn_cli translate "
        f"--model {tiny_model} --beam 1 | head -n 3",
        shell=True, capture_output=True, timeout=120, env=ENV,
    )  # fmt: skip
    assert proc.stdout == b"I eats bread\n" * 3
    assert b"Traceback" not in proc.stderr and b"BrokenPipe" not in proc.stderr, proc.stderr


def test_inspect_into_a_closed_pipe_ends_quietly_with_exit_0(tiny_model):
    # `true` reads nothing and exits at once: every write of s2a meets a closed pipe
    proc = subprocess.run(
        ["bash", "-o", "pipefail", "-c",
         f"{sys.executable} -m seq2attn_cli inspect 'je mange pain' --model {tiny_model} | true"],
        capture_output=True, timeout=120, env=ENV,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr and b"BrokenPipe" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("args", [["inspect", "je mange pain"], ["evaluate", "TEST"]])
def test_piped_tables_end_each_line_at_its_last_character(tiny_model, tmp_path, args):
    # rich pads a table's cells to the column; `grep 'pain$'` or a diff must not meet the padding
    test = tmp_path / "test.tsv"
    test.write_text("je mange pain\tI eat bread\nil voit chat\tHe sees a cat\n", encoding="utf-8")
    args = [str(test) if a == "TEST" else a for a in args]
    proc = subprocess.run(
        [sys.executable, "-m", "seq2attn_cli", *args, "--model", str(tiny_model)],
        capture_output=True, timeout=120, env=ENV, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) > 5 and [line for line in lines if line.endswith(" ")] == [], proc.stdout


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize(
    "args",
    [
        ["translate", "je mange pain"],
        ["inspect", "je mange pain"],
        ["evaluate", "TEST"],
        ["--help"],
    ],
)
def test_a_full_disk_under_stdout_is_one_line_naming_it(tiny_model, tmp_path, args):
    test = tmp_path / "test.tsv"
    test.write_text("je mange pain\tI eat bread\n", encoding="utf-8")
    args = [str(test) if a == "TEST" else a for a in args]
    model = ["--model", str(tiny_model)] if args[0] != "--help" else []
    with open("/dev/full", "w") as full:  # every write fails: ENOSPC
        proc = subprocess.run(
            [sys.executable, "-m", "seq2attn_cli", *args, *model],
            stdout=full, stderr=subprocess.PIPE, timeout=120, env=ENV,
        )  # fmt: skip
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in err and "Exception ignored" not in err, err
    assert err.splitlines()[-1] == "s2a: error: standard output: No space left on device", err


@pytest.mark.parametrize(
    "closed, args, said",
    [
        (1, ["translate", "je mange pain"], "standard output: Bad file descriptor"),  # `>&-`
        (1, ["--help"], "standard output: Bad file descriptor"),  # as `cat --help >&-` says
        (0, ["translate"], "s2a: error: standard input: Bad file descriptor"),  # `<&-`
    ],
)
def test_a_closed_stdout_or_stdin_is_one_line_naming_it(tiny_model, closed, args, said):
    model = ["--model", str(tiny_model)] if args[0] != "--help" else []
    proc = subprocess.run(
        [sys.executable, "-m", "seq2attn_cli", *args, *model], stderr=subprocess.PIPE,
        preexec_fn=lambda: os.close(closed), timeout=120, env=ENV,
    )  # fmt: skip
    err = proc.stderr.decode()
    assert proc.returncode == 2 and err.count("\n") == 1 and said in err, err


def test_a_closed_stdin_does_not_matter_to_text_given_as_an_argument(tiny_model):
    proc = subprocess.run(
        [sys.executable, "-m", "seq2attn_cli", "translate", "je mange pain", "-m", tiny_model],
        capture_output=True, preexec_fn=lambda: os.close(0), timeout=120, env=ENV,
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stdout.strip() and not proc.stderr, proc.stderr


def test_ctrl_c_ends_cleanly_at_any_moment(tiny_model, tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(b"je mange pain\nil voit chat\n" * 20_000)
    args = ["translate", "--model", str(tiny_model), "--beam", "1"]
    # while starting up, while waiting for input, in the middle of a long input
    for moment in ("startup", "waiting", "busy"):
        stdin = big.open("rb") if moment == "busy" else subprocess.PIPE
        proc = start(*args, stdin=stdin)
        if moment == "startup":  # importing torch: s2a is up, still seconds from reading
            maps = Path(f"/proc/{proc.pid}/maps")  # not a fixed delay: on a loaded machine,
            while "libtorch" not in maps.read_text():  # Python itself may be starting then
                assert proc.poll() is None
                time.sleep(0.01)
        elif moment == "waiting":
            proc.stdin.write(b"je mange pain\n")
            proc.stdin.flush()
            assert proc.stdout.readline() == b"I eats bread\n"
        else:
            assert proc.stdout.readline() == b"I eats bread\n"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        if moment == "busy":
            stdin.close()
        err = err.decode()
        assert proc.returncode == 130, (moment, err)
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
        assert out == b"" or out.endswith(b"\n")  # only whole lines reached the pipe
        assert "s2a: interrupted" in err


IGNORED = """
import signal, faults_util
proc = faults_util.start("--version")  # the way every Ctrl-C test starts s2a
status = open(f"/proc/{proc.pid}/status").read()
proc.kill()
proc.wait()
ignored = int(status.split("SigIgn:")[1].split()[0], 16)  # a bit per signal, SIGINT = 2
print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN, bool(ignored >> (signal.SIGINT - 1) & 1))
"""


def test_ctrl_c_tests_hold_when_the_suite_runs_in_the_background():
    # a shell starts `make test &` (and nohup) with SIGINT ignored, and children inherit it:
    # a Python started so never raises KeyboardInterrupt, and every Ctrl-C test failed
    background = ["bash", "-c", "trap '' INT; exec \"$@\"", "bash", sys.executable, "-c", IGNORED]
    result = subprocess.run(background, capture_output=True, text=True, timeout=60,
                            cwd=Path(__file__).parent)  # fmt: skip
    assert result.stdout.split() == ["True", "False"], result.stderr  # ignored here, not there


MEASURE = """
import resource, subprocess, sys
chunk = b"x" * (1 << 20)
proc = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
for _ in range(int(sys.argv[1])):  # one line of that many MB, then two short lines
    proc.stdin.write(chunk)
proc.stdin.write(b"\\nje mange pain\\n")
out, _ = proc.communicate()
print(out.count(b"\\n"), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def test_memory_stays_bounded_on_an_endless_line(tiny_model):
    def peak_kb(megabytes: int) -> int:
        command = [sys.executable, "-m", "seq2attn_cli", "translate", "--model", str(tiny_model),
                   "--beam", "1"]  # fmt: skip
        result = subprocess.run([sys.executable, "-c", MEASURE, str(megabytes), *command],
                                capture_output=True, timeout=120, env=ENV)  # fmt: skip
        lines, peak = map(int, result.stdout.split())
        assert lines == 2, result.stderr.decode()
        return peak

    grown = peak_kb(256) - peak_kb(1)
    assert grown < 64 * 1024, f"a 256 MB line took {grown / 1024:.0f} MB more"


def test_line_chunks_stream_an_endless_input_chunk_by_chunk():
    class Endless(io.RawIOBase):
        """Lines for ever; counts what was read."""

        consumed = 0

        def read1(self, size: int = -1) -> bytes:
            data = b"je mange pain\n" * 1000
            self.consumed += len(data)
            return data

    stream = Endless()
    chunks = line_chunks(stream, chunk=256)
    for _ in range(50):
        assert len(next(chunks)) == 256
    assert stream.consumed <= 50 * 256 * 14 + 14_000  # read as needed, never ahead


# ---- fuzzing translate's line handling -----------------------------------------------------

SPECIALS = [
    b"\n",
    b"\r",
    b"\r\n",
    b"\x00",
    b"\t",
    b"\xff",
    b"\xc3",
    b"\x1b[2J",
    b" ",
    b"je ",
    b"chat ",
    "\u2028".encode(),
    "\u202e".encode(),
    "🇫🇷".encode(),
    "é".encode(),
]
PAYLOAD = st.lists(st.one_of(st.sampled_from(SPECIALS), st.binary(max_size=12)), max_size=40)


class Trickle(io.RawIOBase):
    """A pipe that hands over its bytes in pieces of the given sizes."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self.data, self.sizes = data, sizes or [1]
        self.calls = 0

    def read1(self, size: int = -1) -> bytes:
        take = self.sizes[self.calls % len(self.sizes)]
        self.calls += 1
        piece, self.data = self.data[:take], self.data[take:]
        return piece


@given(
    parts=PAYLOAD, sizes=st.lists(st.integers(1, 50), max_size=5),
    chunk=st.integers(1, 9), max_bytes=st.integers(1, 40),
)  # fmt: skip
@example(  # stray continuation bytes after a character were backed over: cut 4 bytes short
    parts=[b"\r", b"\x00" * 11, b"\xe2\x80\xa8", b"\x80\x80"], sizes=[], chunk=1, max_bytes=16
)
@settings(max_examples=25, deadline=None)
def test_line_chunks_fuzz_one_line_per_newline_each_cut_to_max_bytes(
    parts, sizes, chunk, max_bytes
):
    data = b"".join(parts)
    got = list(line_chunks(Trickle(data, sizes), chunk=chunk, max_bytes=max_bytes))
    assert all(1 <= len(c) <= chunk for c in got)
    expected = data.split(b"\n")
    if expected[-1] == b"":
        expected.pop()
    lines = [line for c in got for line in c]
    assert len(lines) == len(expected)
    for line, whole in zip(lines, expected, strict=True):  # cut between UTF-8 characters
        assert whole.startswith(line) and (
            line == whole or max_bytes - 3 <= len(line) <= max_bytes + 3
        )
        assert bool(line) == bool(whole)


@pytest.fixture(scope="module")
def translator(tiny_model) -> Translator:
    return Translator.load(tiny_model)


@given(parts=PAYLOAD, repeat=st.integers(1, 400))
@settings(max_examples=25, deadline=None)
def test_translate_fuzz_n_lines_in_n_lines_out(translator, parts, repeat):
    data = b"".join(parts)
    data = data.replace(b"je ", b"je " * repeat, 1)  # now and then a line past the limits
    lines = [raw.decode("utf-8", errors="replace")
             for c in line_chunks(io.BytesIO(data), chunk=7) for raw in c]  # fmt: skip
    assert len(lines) == data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))
    if not lines:
        return
    results = translator.translate(lines, beam=1)
    assert len(results) == len(lines)
    for line, t in zip(lines, results, strict=True):
        assert "\n" not in t.text and "\r" not in t.text
        longest = LINE_LIMIT * translator.max_chars  # a line past that is cut and says so
        assert t.text == "" if not clean(line) else len(t.source) <= longest
        assert t.truncated == (len(clean(line)) > longest)
