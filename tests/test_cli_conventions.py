"""What users bring from other CLIs: --version, -h, completion, flags shown as flags, and a
README whose options and defaults are the command line's own."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from seq2attn_cli.cli.app import app

runner = CliRunner()
COMMANDS = ["translate", "inspect", "evaluate", "train", "align"]
README = Path(__file__).parent.parent / "README.md"


def test_version_and_short_help():
    for flag in ("--version", "-V"):
        result = runner.invoke(app, [flag])
        assert result.exit_code == 0 and result.stdout == f"s2a {version('seq2attn-cli')}\n"
    for args in (["-h"], ["translate", "-h"], ["evaluate", "-h"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0 and "Usage:" in result.stdout


@pytest.mark.parametrize(
    "command, usage", [("translate", "[TEXT]..."), ("inspect", "[TEXT]"), ("evaluate", "TEST")]
)
def test_help_shows_flags_as_flags_and_arguments_by_name(command, usage):
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert f"[OPTIONS] {usage}" in result.stdout and "{" not in result.stdout.splitlines()[1]
    assert "<bool>" not in result.stdout and "--debug" in result.stdout


def complete(words: str) -> list[str]:
    """What bash completion offers after `words` (the last one being typed)."""
    env = {"_S2A_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": ""}
    env["COMP_CWORD"] = str(len(words.split(" ")) - 1)
    result = runner.invoke(app, [], env=env, prog_name="s2a")
    assert result.exit_code == 0, result.output
    return result.stdout.split()


def test_shell_completion_completes_commands_options_and_values():
    assert complete("s2a tr") == ["train", "translate"]
    assert complete("s2a evaluate --skip") == ["--skip-bad"]
    assert complete("s2a evaluate --format ") == ["text", "json"]
    assert complete("s2a translate --device c") == ["cpu", "cuda"]
    assert "--install-completion" in runner.invoke(app, ["--help"]).stdout


def documented_options(command: str) -> dict[str, str | None]:
    """The options the README lists for a command ('Options: `--beam 5`, ...'): name -> value."""
    text = README.read_text(encoding="utf-8")
    section = text.split(f"### `s2a {command}", 1)[1].split("\n#", 1)[0]
    paragraph = section.split("Options: ", 1)[1].split("\n\n", 1)[0]
    options: dict[str, str | None] = {}
    for item in re.findall(r"`([^`]+)`", paragraph):
        names, _, value = item.partition(" ")
        for name in names.split("/"):
            options[name] = value or None
    return options


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_lists_every_option_with_the_default_the_command_has(command):
    cli = typer.main.get_command(app).commands[command]
    params = {}
    for param in cli.params:
        for name in [*param.opts, *getattr(param, "secondary_opts", [])]:
            params[name] = param
    documented = documented_options(command)
    for name, value in documented.items():
        assert name in params, f"README lists {name}, which `s2a {command}` does not have"
        default = params[name].default
        if value and re.fullmatch(r"[0-9.e-]+", value):
            assert float(value) == float(default), f"{name}: README {value}, code {default}"
        elif value and "|" in value:
            assert value.split("|")[0] == default, f"{name}: README {value}, code {default}"
    hidden = {"--debug", "--help", "-h"}
    for param in cli.params:
        if param.param_type_name == "option" and not set(param.opts) & hidden:
            assert set(param.opts) & set(documented), f"README omits {param.opts[0]}"


@pytest.mark.parametrize(
    "args, message",
    [
        (["translate", "--beam", "0", "x"], "Invalid value for '--beam'"),
        (["translate", "--threads", "-1", "x"], "Invalid value for '--threads'"),
        (["translate", "--bogus"], "No such option: --bogus (see 's2a translate --help')"),
        (["bogus"], "No such command 'bogus'. (see 's2a --help')"),
        (["evaluate"], "Missing argument 'TEST'."),
    ],
)
def test_a_usage_error_is_one_plain_line_and_exit_2(args, message):
    result = runner.invoke(app, args, env={"NO_COLOR": "1"}, prog_name="s2a")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("s2a: error: ")
    assert message in result.stderr and "\x1b" not in result.stderr and "╭" not in result.stderr


def test_a_log_keeps_each_line_whole_however_long_its_path(tiny_model, tmp_path):
    """stderr into a file or pipe is not wrapped at 80 columns: a path stays copyable."""
    folder = tmp_path / ("a-folder-whose-name-is-long-enough-to-pass-eighty-columns-" * 2)
    folder.mkdir()
    picture = folder / "heatmap.svg"
    result = runner.invoke(
        app, ["inspect", "je mange pain", "--model", str(tiny_model), "--save", str(picture)]
    )
    assert result.exit_code == 0 and picture.exists(), result.output
    assert f"saved {picture}\n" in result.stderr
