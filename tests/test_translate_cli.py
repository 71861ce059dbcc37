"""`s2a translate` in pipes and on arguments: one line out per line in, always, in order."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from faults_util import default_sigint
from typer.testing import CliRunner

from seq2attn_cli.cli.app import app
from seq2attn_cli.decoding.translator import Translator

runner = CliRunner()


def s2a(
    *args: str, stdin: bytes = b"", env: dict | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """Run the real CLI as a process."""
    return subprocess.run(
        [sys.executable, "-m", "seq2attn_cli", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})},
        cwd=cwd,
    )


def test_pipe_keeps_one_line_per_input(tiny_model):
    lines = [
        "je mange pain",
        "",
        "   ",
        "x" * 12_000,
        "il voit chat",
        "猫が好きです",
        "مرحبا بالعالم 👋",
        "elle\x01aime\x00eau",
    ]
    result = s2a("translate", "--model", str(tiny_model), stdin="\n".join(lines).encode() + b"\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode().split("\n")
    assert out[-1] == "" and len(out) - 1 == len(lines)
    assert out[1] == "" and out[2] == ""  # empty and blank lines give empty lines
    assert out[0] == "I eats bread" and out[4] == "he sees cat"
    assert b"longer than s2a translates" in result.stderr  # the 12,000-character line


def test_a_tab_s_columns_and_a_line_s_indentation_come_out_as_given(tiny_model):
    lines = ["je mange pain\til voit chat", "    elle aime eau", "7\t\t  il voit chat\t"]
    result = s2a("translate", "--model", str(tiny_model), stdin="\n".join(lines).encode() + b"\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().splitlines() == [
        "I eats bread\the sees cat",
        "    she loves water",
        "7\t\t  he sees cat\t",
    ]
    jsonl = s2a(
        "translate",
        "--model",
        str(tiny_model),
        "--format",
        "jsonl",
        stdin=b"je mange pain\til voit chat\n",
    )
    t = json.loads(jsonl.stdout)
    assert t["source"] == "je mange pain\til voit chat" and t["parts"] == 2
    assert len(t["attention"]) == len(t["tgt_tokens"]) and all(
        len(row) == len(t["src_tokens"]) for row in t["attention"]
    )


def test_a_file_s_byte_order_mark_starts_its_translation_too(tiny_model, tmp_path):
    bom = "\ufeff".encode()
    piped = s2a("translate", "--model", str(tiny_model), stdin=bom + b"je mange pain\n")
    assert piped.stdout == bom + b"I eats bread\n", piped.stderr
    (tmp_path / "a.txt").write_bytes(bom + b"je mange pain\n")
    as_text = s2a(
        "translate",
        "--model",
        str(tiny_model),
        "-i",
        str(tmp_path / "a.txt"),
        "--input-format",
        "text",
    )
    assert as_text.stdout == bom + b"I eats bread\n", as_text.stderr
    jsonl = s2a(
        "translate", "--model", str(tiny_model), "--format", "jsonl", stdin=bom + b"je mange pain\n"
    )
    assert json.loads(jsonl.stdout)["translation"] == "I eats bread"


def test_arguments_are_translated_one_each_greedy_and_beam(tiny_model):
    for beam in ("1", "5"):
        result = runner.invoke(
            app,
            [
                "translate",
                "--model",
                str(tiny_model),
                "--beam",
                beam,
                "je mange pain",
                "nous aime chien",
            ],
        )
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines() == ["I eats bread", "we loves dog"]


def test_an_argument_of_several_lines_gives_a_line_out_for_each_as_a_pipe_does(tiny_model):
    args = ["translate", "--model", str(tiny_model), "--beam", "1"]
    given = runner.invoke(app, [*args, "je mange pain\r\n\nnous aime chien", "il voit chat\n"])
    piped = runner.invoke(app, args, input="je mange pain\r\n\nnous aime chien\nil voit chat\n")
    assert given.exit_code == 0, given.output
    assert given.stdout == piped.stdout == "I eats bread\n\nwe loves dog\nhe sees cat\n"


@pytest.mark.parametrize(
    ("piped", "hint"),
    [
        ("1\n00:00:01,000 --> 00:00:02,000\nje mange pain\n", "SubRip subtitles"),
        ("WEBVTT\n\n00:01.000 --> 00:02.000\nje mange pain\n", "WebVTT subtitles"),
        ("<!DOCTYPE html>\n<p>je mange pain</p>\n", "an HTML page"),
        ("2\nje mange pain\n", ""),  # a number on a line is a line
    ],
)
def test_a_document_piped_without_its_format_is_said_to_look_like_one(tiny_model, piped, hint):
    args = ["translate", "--model", str(tiny_model), "--beam", "1"]
    result = runner.invoke(app, args, input=piped)
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == len(piped.splitlines())
    said = [line for line in result.stderr.splitlines() if "looks like" in line]
    format = {"SubRip subtitles": "srt", "WebVTT subtitles": "vtt", "an HTML page": "html"}
    assert said == (
        [f"warning: stdin looks like {hint}: read line by line; --input-format "
         f"{format[hint]} keeps its structure"] if hint else []
    )  # fmt: skip
    if hint == "an HTML page":  # the flag as a user may type it
        upper = runner.invoke(app, [*args, "-i", "-", "--input-format", "HTML"], input=piped)
        assert upper.exit_code == 0 and upper.stdout.startswith("<!DOCTYPE html>\n<p>")


def test_jsonl_carries_tokens_scores_and_attention(tiny_model):
    result = runner.invoke(
        app,
        ["translate", "--model", str(tiny_model), "--format", "jsonl", "--align", "je mange pain"],
    )
    record = json.loads(result.stdout)
    assert record["translation"] == "I eats bread"
    assert record["src_tokens"][-1] == "</s>" and record["tgt_tokens"][-1] == "</s>"
    assert len(record["attention"]) == len(record["tgt_tokens"])
    assert all(len(row) == len(record["src_tokens"]) for row in record["attention"])
    assert record["score"] <= 0 and record["alignment"] == "0-0 1-1 2-2"


@pytest.mark.parametrize(
    "text",  # characters the model has no piece for are <unk> inside a word, not words of their own
    ["il voit grand chat rouge", "il voit 😀 grand chat rouge", "il 😀😀 voit chat😀 ."],
)
def test_alignments_are_pharaoh_pairs_within_range(tiny_model, text):
    result = runner.invoke(app, ["translate", "--model", str(tiny_model), "--align", text])
    translation, pairs = result.stdout.rstrip("\n").split("\t")
    for pair in pairs.split():
        i, j = map(int, pair.split("-"))
        assert 0 <= i < len(text.split()) and 0 <= j < len(translation.split())


def test_heatmap_goes_to_stderr_and_stdout_stays_plain(tiny_model):
    result = s2a(
        "translate", "--model", str(tiny_model), "--heatmap", "je mange pain", env={"NO_COLOR": "1"}
    )
    assert result.stdout.decode() == "I eats bread\n"
    assert "mange" in result.stderr.decode() and "\x1b[" not in result.stderr.decode()


def test_slow_pipe_gets_each_translation_before_the_next_line(tiny_model):
    proc = subprocess.Popen(
        [sys.executable, "-m", "seq2attn_cli", "translate", "--model", str(tiny_model)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        for line, expected in (("je mange pain", "I eats bread"), ("nous", "we")):
            proc.stdin.write(line.encode() + b"\n")
            proc.stdin.flush()
            start = time.monotonic()
            assert proc.stdout.readline().decode().rstrip("\n") == expected
            assert time.monotonic() - start < 60
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert proc.returncode == 0


def test_head_closing_the_pipe_ends_quietly(tiny_model):
    big = b"je mange pain\n" * 3000
    proc = subprocess.run(
        f"{sys.executable} -m seq2attn_cli translate --model {tiny_model} --beam 1 | head -1",
        shell=True,
        input=big,
        capture_output=True,
        timeout=120,
    )
    assert proc.stdout == b"I eats bread\n"
    assert b"Traceback" not in proc.stderr and b"BrokenPipe" not in proc.stderr


def test_missing_model_is_one_line_and_exit_2(tmp_path):
    result = s2a("translate", "--model", str(tmp_path / "nope"), "bonjour")
    assert result.returncode == 2
    assert result.stderr.decode().strip().count("\n") == 0 and b"nope" in result.stderr


def test_help_does_not_import_torch():
    code = (
        "import sys\n"
        "from seq2attn_cli import cli\n"
        "for argv in (['s2a', '--help'], ['s2a', 'translate', '--help'], ['s2a', 'align', '-h']):\n"
        "    sys.argv = argv\n"
        "    try:\n"
        "        cli.main()\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print('torch' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip().endswith("False"), result.stdout[-500:]


def test_input_file_and_dash_read_lines_as_stdin_does(tiny_model, tmp_path):
    source = tmp_path / "book.fr"
    source.write_text("je mange pain\n\nil voit chat\n", encoding="utf-8")
    expected = s2a("translate", "--model", str(tiny_model), stdin=source.read_bytes()).stdout
    assert expected.decode().splitlines() == ["I eats bread", "", "he sees cat"]
    from_file = s2a("translate", "--model", str(tiny_model), "-i", str(source))
    dash = s2a("translate", "--model", str(tiny_model), "-", stdin=source.read_bytes())
    i_dash = s2a("translate", "--model", str(tiny_model), "-i", "-", stdin=source.read_bytes())
    assert from_file.stdout == dash.stdout == i_dash.stdout == expected


def test_an_argument_naming_a_file_warns_how_to_translate_the_file(tiny_model, tmp_path):
    (tmp_path / "book.fr").write_text("je mange pain\n", encoding="utf-8")
    result = s2a("translate", "--model", str(tiny_model), "book.fr", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.decode().count("\n") == 1
    assert "s2a translate -i book.fr" in result.stderr.decode()


def test_input_problems_are_one_line_before_the_model_loads(tiny_model, tmp_path):
    cases = [
        (["-i", str(tmp_path / "gone.txt")], "gone.txt: No such file"),
        (["-i", str(tmp_path)], "is a directory"),
        (["-i", str(tmp_path), "bonjour"], "not both"),
        (["bonjour", "-"], "'-'"),
        (["--pieces", "bonjour"], "give --heatmap too"),  # was ignored without a word
    ]
    for args, says in cases:
        result = runner.invoke(app, ["translate", "--model", str(tiny_model), *args])
        assert result.exit_code == 2 and result.stdout == "", args
        assert result.stderr.count("\n") == 1 and says in result.stderr, result.stderr


def test_interactive_prompt_edits_recalls_and_ctrl_c_cancels_and_ends(tiny_model, tmp_path):
    """On a terminal: Up recalls the last line, Ctrl-C drops the line typed, Ctrl-D ends."""
    out = tmp_path / "out.txt"
    command = f'exec "{sys.executable}" -m seq2attn_cli translate --model "{tiny_model}" > "{out}"'
    pid, fd = pty.fork()
    if pid == 0:  # the child: stdin and stderr are the terminal, stdout the file
        default_sigint()  # else `make test &` makes Ctrl-C do nothing (waited out 60 s)
        env = {**os.environ, "OMP_NUM_THREADS": "1", "TERM": "xterm"}
        os.execvpe("sh", ["sh", "-c", command], env)
    seen = b""

    def read_until(done: Callable[[], bool]) -> None:
        nonlocal seen
        deadline = time.monotonic() + 60
        while not done() and time.monotonic() < deadline:
            if select.select([fd], [], [], 1)[0]:
                seen += os.read(fd, 4096)
        assert done(), f"no answer in 60 s: {seen!r}"

    def type_and_wait(keys: bytes) -> None:
        nonlocal seen
        os.write(fd, keys)
        prompts = seen.count(b"> ") + 1
        read_until(lambda: seen.count(b"> ") >= prompts)
        # then until the terminal is quiet, so no late output of this step is taken for the
        # next one's prompt (under load, the line typed after Ctrl-C was lost now and then)
        while select.select([fd], [], [], 0.3)[0]:
            seen += os.read(fd, 4096)

    try:
        type_and_wait(b"")  # the first prompt
        type_and_wait(b"je mange pain\r")
        type_and_wait(b"\x1b[A\r")  # Up: the line before, again
        # Ctrl-C drops the line typed, typed as a person does: after the line's echo, so the
        # line is readline's to drop (in one burst the terminal flushed the keys itself)
        os.write(fd, b"il voit chat")
        read_until(lambda: seen.endswith(b"il voit chat"))
        # and after a pause, as a person's: CPython's readline loop checks for signals only
        # when its select() is interrupted, so a Ctrl-C that lands between the echo's write
        # and that select() waits for the next key (CI, under load: no prompt in 60 s)
        while select.select([fd], [], [], 0.5)[0]:
            seen += os.read(fd, 4096)
        type_and_wait(b"\x03")
        type_and_wait(b"nous\r")
        os.write(fd, b"\x04")  # Ctrl-D
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, seen
    assert out.read_text().splitlines() == ["I eats bread", "I eats bread", "we"]
    assert b"^[[A" not in seen  # the arrow key edited the line, it was not typed into it


def _refusal(result, *says: str) -> None:
    """Exit 2, nothing translated, one error line saying all of `says`."""
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert all(s in result.stderr for s in says), result.stderr


def test_a_utf16_file_is_refused_in_one_line(tiny_model, tmp_path):
    text = "je mange pain\nil voit chat\n"
    (tmp_path / "u16.txt").write_bytes(text.encode("utf-16"))
    (tmp_path / "u32.txt").write_bytes(text.encode("utf-32"))
    args = ["translate", "--model", str(tiny_model), "--beam", "1"]
    u16 = str(tmp_path / "u16.txt")
    _refusal(runner.invoke(app, [*args, "-i", u16]), "u16.txt: ", "UTF-16 byte-order mark")
    _refusal(runner.invoke(app, [*args, "-i", str(tmp_path / "u32.txt")]), "u32.txt: ", "UTF-32")
    _refusal(runner.invoke(app, args, input=text.encode("utf-16")), "stdin: ", "UTF-16")


def test_a_binary_input_is_refused_but_a_stray_nul_is_a_space(tiny_model, tmp_path):
    binary = tmp_path / "program"
    binary.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 64)
    args = ["translate", "--model", str(tiny_model), "--beam", "1"]
    _refusal(runner.invoke(app, [*args, "-i", str(binary)]), "program: not text")
    no_mark = "je mange pain\nil voit chat\n".encode("utf-16-le")
    _refusal(runner.invoke(app, args, input=no_mark), "stdin: not text")
    for text, size in ((b"je\x00mange\x00pain\n", 64), (b"je mange\x00pain\n" * 9 + b"je\n", 1)):
        stray = runner.invoke(app, [*args, "--batch-size", str(size)], input=text)
        assert stray.exit_code == 0, stray.output  # whatever the first chunk holds
        assert stray.stdout.splitlines()[0] == "I eats bread"


def test_threads_change_the_speed_not_the_translations(tiny_model):
    lines = "".join(f"{s}\n" for s in ["je mange pain", "il voit chat", "je", "chat"] * 6)
    args = ["translate", "--model", str(tiny_model), "--format", "jsonl", "--batch-size", "4"]
    outputs = [runner.invoke(app, [*args, "--threads", t], input=lines) for t in ("1", "3")]
    assert [r.exit_code for r in outputs] == [0, 0], [r.output for r in outputs]
    assert len(outputs[0].stdout.splitlines()) == 24
    assert outputs[1].stdout == outputs[0].stdout


def test_characters_the_model_has_no_piece_for_are_named_in_a_warning(tiny_model):
    # a word of them among words it reads is copied (rules/urls.py): no warning
    texts = ["je man☃ge pain", "Привет мир", "il voit chat", "je mange 東京 pain"]
    result = runner.invoke(app, ["translate", "--model", str(tiny_model), "--beam", "1", *texts])
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 4, result.output
    assert result.stdout.splitlines()[1:] == ["Привет мир", "he sees cat", "I eats bread 東京"]
    assert result.stderr.splitlines() == [
        'warning: input line 1: the model knows no piece for "☃"; translated without them',
        'warning: input line 2: the model knows no piece for "Привет", "мир"; written as given',
    ]


def test_a_line_the_model_cannot_read_at_all_comes_back_as_given_not_invented(tiny_model):
    translator = Translator.load(tiny_model)
    alone = translator.translate("🍕 🍕", beam=1)
    assert alone.text == "🍕 🍕" and alone.confidence == 0.0 and alone.tgt_tokens == []
    among = translator.translate(
        ["je mange pain", "🍕 🍕", "", "😂😂 !", "- 🎵 -", "\ufffd"], beam=1
    )
    assert [t.text for t in among] == ["I eats bread", "🍕 🍕", "", "😂😂!", "- 🎵 -", "\ufffd"]


def test_warnings_name_the_file_and_line(tiny_model, tmp_path):
    book = tmp_path / "book.fr"
    book.write_text("je mange pain\n" + "je mange " * 1200 + "\nil v☃oit\n", encoding="utf-8")
    args = ["translate", "--model", str(tiny_model), "--beam", "1", "--format", "jsonl"]
    result = runner.invoke(app, [*args, "-i", str(book)])
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 3, result.output
    assert [line.split(";")[0] for line in result.stderr.splitlines()] == [
        f"warning: {book}: line 2: longer than s2a translates",
        f'warning: {book}: line 3: the model knows no piece for "☃"',
    ]


def test_a_latin1_letter_in_a_utf8_file_is_named_with_its_line_not_passed_over(
    tiny_model, tmp_path
):
    book = tmp_path / "book.fr"
    book.write_bytes(b"je mange pain\nil voit chat\nle caf\xe9 chaud\n")  # Latin-1 é
    result = s2a("translate", "--model", str(tiny_model), "--beam", "1", "-i", str(book))
    assert result.returncode == 0 and len(result.stdout.decode().splitlines()) == 3
    assert f"{book}: line 3: not UTF-8 (byte e9 at byte 7)" in result.stderr.decode()
    assert "line 1" not in result.stderr.decode() and "line 2" not in result.stderr.decode()
    book.write_bytes(b"le caf\xe9 chaud\n" * 5)  # a Latin-1 file: three named, then a count
    warned = s2a("translate", "--model", str(tiny_model), "--beam", "1", "-i", str(book))
    named = [w for w in warned.stderr.decode().splitlines() if "not UTF-8" in w]
    assert [w.split(": not")[0] for w in named] == [
        f"warning: {book}: line {n}" for n in (1, 2, 3)
    ] + [f"warning: {book}: 2 more lines not UTF-8 (Latin-1? iconv -f latin1 -t utf-8 converts it)"]
    page = tmp_path / "page.md"
    page.write_bytes(b"je mange pain\n\nle caf\xe9 chaud\n")
    document = s2a("translate", "--model", str(tiny_model), "--beam", "1", "-i", str(page))
    assert f"{page}: not UTF-8 (line 3, byte e9 at byte 7)" in document.stderr.decode()


def test_a_line_in_capitals_is_not_warned_of_capitals_the_model_lacks(tiny_model):
    # the capitals rule reads it in lower case: its capitals were named as missing pieces
    args = ["translate", "--model", str(tiny_model), "--beam", "1", "JE MANGE PAIN"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0 and result.stdout.isupper(), result.output
    assert result.stderr == ""
