"""The runnable commands of the guide: shared by tests/test_docs.py and docs/capture.sh.

A runnable block is a ```console block right after `<!-- runnable -->`; its commands are the
lines starting with "$ ". A line ending in a backslash continues on the next line, as in bash;
a here-document (`python - <<'EOF'`) takes the lines up to its delimiter. Other lines are the
captured output.
"""

import re

RUNNABLE = re.compile(r"^<!-- runnable -->[ \t]*\n```console[ \t]*\n(.*?)^```", re.M | re.S)
HEREDOC = re.compile(r"<<-?\s*'?(\w+)'?")


def block_commands(block: str) -> list[str]:
    """The commands of one runnable block, in order, as typed (without the "$ ")."""
    commands, lines, i = [], block.splitlines(), 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            i += 1  # captured output
            continue
        command = [lines[i][2:]]
        while command[-1].endswith("\\"):
            i += 1
            command.append(lines[i])
        heredoc = HEREDOC.search(command[0])
        if heredoc:
            while lines[i] != heredoc.group(1):
                i += 1
                command.append(lines[i])
        commands.append("\n".join(command))
        i += 1
    return commands
