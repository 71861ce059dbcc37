"""The layers of the package, as its imports draw them (every import, lazy ones included).

Run as a script to print the graph: `.venv/bin/python tests/test_imports.py [PACKAGE_DIR]`.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "seq2attn_cli"
CLI_SHARED = "cli_common"  # what the commands share: options, checks, one-line failures
# what may print or draw; everything else is the core, which returns values
DRAWING = {"__main__", "views", "heatmap", "charts", "export", "progress"}
TORCH_FREE = {"errors", "languages", "alignment", "heatmap", "charts", "export", "views", "config"}
ENTRY_POINTS = {"__main__"}  # and pyproject's [project.scripts]
THIRD_PARTY = {"torch", "rich", "typer"}


def imports(path: Path) -> set[str]:
    """The package modules and watched libraries one file imports, wherever in the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
            found |= {
                a.name.split(".")[1] for a in node.names if a.name.startswith("seq2attn_cli.")
            }
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 0 and module.startswith("seq2attn_cli"):
                module, level = module.removeprefix("seq2attn_cli").lstrip("."), 1
            else:
                level = node.level
            if level and not module:  # from . import checkpoint
                found |= {alias.name for alias in node.names}
            elif level:
                found.add(module.split(".")[0])
            else:
                found.add(module.split(".")[0])
    return found


def graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package modules and watched libraries (torch, rich, typer) it imports."""
    modules = {p.stem for p in package.glob("*.py")}
    return {
        p.stem: {m for m in imports(p) if m in modules or m in THIRD_PARTY}
        for p in sorted(package.glob("*.py"))
    }


def reach(edges: dict[str, set[str]], start: str) -> set[str]:
    """Everything `start` imports, directly or through other modules."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for name in edges.get(todo.pop(), set()):
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


EDGES = graph()
CLI = {m for m in EDGES if m == "cli" or m.startswith("cli_")}  # the app, its commands, shared
COMMANDS = sorted(CLI - {"cli", CLI_SHARED})  # one module per command: cli_train, cli_serve...
TERMINAL = DRAWING | CLI
CORE = sorted(set(EDGES) - TERMINAL)


@pytest.mark.parametrize("module", CORE)
def test_the_core_never_reaches_the_terminal(module):
    assert not reach(EDGES, module) & (TERMINAL | {"rich", "typer"}), sorted(reach(EDGES, module))


@pytest.mark.parametrize("module", sorted(TORCH_FREE & set(EDGES)))
def test_drawing_and_plain_data_modules_never_import_torch(module):
    assert "torch" not in reach(EDGES, module), sorted(reach(EDGES, module))


def test_only_the_entry_points_import_the_cli():
    assert {m for m, names in EDGES.items() if "cli" in names} <= ENTRY_POINTS
    assert {m for m, names in EDGES.items() if names & set(COMMANDS)} == {"cli"}
    assert {m for m, names in EDGES.items() if CLI_SHARED in names} <= CLI


@pytest.mark.parametrize("module", COMMANDS)
def test_each_command_stands_alone_on_what_commands_share(module):
    assert EDGES[module] & CLI == {CLI_SHARED}, sorted(EDGES[module])


def test_only_terminal_modules_import_rich():
    assert {m for m, names in EDGES.items() if "rich" in names} <= TERMINAL


if __name__ == "__main__":
    package = Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE
    for name, names in graph(package).items():
        print(f"{name:14} -> {' '.join(sorted(names)) or '-'}")
