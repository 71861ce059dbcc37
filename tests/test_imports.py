"""The rooms of the package and what each may import (every import, lazy ones included).

A broken rule fails naming the import: `serve.server imports model.seq2seq`.
Run as a script to print the graph: `.venv/bin/python tests/test_imports.py [PACKAGE_DIR]`.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "seq2attn_cli"
THIRD_PARTY = {"torch", "rich", "typer"}
ROOMS = {"model", "decoding", "data", "training", "views", "cli", "serve", "documents", "align"}
# decoding's own rooms: its top (translator.py, translation.py) uses all three
SUBROOMS = {"decoding.search", "decoding.rules", "decoding.explain"}
# per room, the rooms it must never import ("decoding": all of it but the importer's own room):
# the model knows no data, training or terminal; serve reaches the model only through
# decoding; nothing but the CLI's own modules imports it
FORBIDDEN = {
    "model": {"data", "decoding", "training", "views", "cli", "serve"},
    "data": {"model", "decoding", "training", "views", "cli", "serve"},
    "decoding": {"training", "views", "cli", "serve"},  # documents: lazily, translate_document
    # the search knows the model, never text: ids in, hypotheses out
    "decoding.search": {"data", "decoding", "documents", "training", "views", "cli", "serve"},
    # the rules know text and pieces, never the model or its search (alignment: word groups)
    "decoding.rules": {
        "model",
        "decoding.search",
        "documents",
        "training",
        "views",
        "cli",
        "serve",
    },
    "decoding.explain": {"documents", "training", "views", "cli", "serve"},
    "documents": {"model", "decoding.search", "training", "views", "cli", "serve"},
    # validation decodes as translate does: the search, then the rules it names
    # s2a align: forced decoding, as inspect does; nothing in the core imports it
    "align": {"training", "views", "cli", "serve", "documents"},
    "training": {"decoding.explain", "documents", "views", "cli", "serve"},
    "views": {"model", "decoding.search", "decoding.rules", "training", "cli", "serve"},
    "serve": {"model", "decoding.search", "training", "views", "cli"},
    # config, card, checkpoint, errors, evaluation
    "": {"decoding.search", "training", "views", "cli", "serve", "documents"},
    "__main__": {"training", "views", "serve"},  # the entry point: it runs the CLI
}
TORCH_FREE = {
    "errors",
    "config",
    "data.languages",
    "data.reading",
    "data.streams",
    "data.noise",
    "align",  # its HEAD file name, which `s2a align --help` reads
    "align.words",
    "align.methods",
    "align.aer",
}
TORCH_FREE_ROOMS = {"views", "documents", "decoding.rules"}  # plain lists; documents: a translator
RICH_ROOMS = {"cli", "views"}  # only these print or draw
TYPER_ROOMS = {"cli"}


def module_name(path: Path, package: Path) -> str:
    """`model/encoder.py` -> `model.encoder`; a room's `__init__.py` -> the room."""
    parts = path.relative_to(package).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts) or "__init__"


def imports(path: Path, package: Path) -> set[str]:
    """The package modules (dotted, as in `module_name`) and watched libraries a file imports."""
    here = module_name(path, package).split(".")
    base = here if path.name == "__init__.py" else here[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                found.add(name.removeprefix("seq2attn_cli.") if "seq2attn_cli." in name else name)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and (node.module or "").startswith("seq2attn_cli"):
                parent = (node.module or "").removeprefix("seq2attn_cli").lstrip(".")
            elif node.level:
                up = base[: len(base) - node.level + 1] if node.level > 1 else base
                parent = ".".join([*up, node.module] if node.module else up)
            else:
                found.add((node.module or "").split(".")[0])
                continue
            for alias in node.names:  # `from ..data import languages` names a module
                found.add(f"{parent}.{alias.name}" if parent else alias.name)
                if parent:
                    found.add(parent)
    return found


def graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package modules and watched libraries (torch, rich, typer) it imports."""
    files = sorted(package.rglob("*.py"))
    modules = {module_name(p, package) for p in files}
    return {
        module_name(p, package): {
            m for m in imports(p, package) if m in modules or m.split(".")[0] in THIRD_PARTY
        }
        - {module_name(p, package)}
        for p in files
    }


def room(module: str) -> str:
    """The subpackage a module lives in (`decoding.search`); "" for the top-level modules but
    the entry point."""
    first, second = module.split(".")[0], ".".join(module.split(".")[:2])
    if second in SUBROOMS:
        return second
    return first if first in ROOMS or first == "__main__" else ""


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


def broken(edges: dict[str, set[str]]) -> list[str]:
    """Every import that breaks a room's rule, as `importer imports imported`."""
    found = []
    for module, names in sorted(edges.items()):
        mine = room(module)
        for name in sorted(names):
            lib = name.split(".")[0]
            other, rule = room(name), FORBIDDEN.get(mine, set())
            bad = (
                (lib in ROOMS and other != mine and (other in rule or lib in rule))
                or (lib == "rich" and mine not in RICH_ROOMS)
                or (lib == "typer" and mine not in TYPER_ROOMS)
            )
            if bad:
                found.append(f"{module} imports {name}")
    return found


EDGES = graph()
# what every command shares, and a command's own module, which no other command imports
SHARED = {"cli.common", "cli.streams"}
PARTS = {"cli.launch": "cli.train", "cli.inputs": "cli.translate", "cli.prompt": "cli.translate"}
COMMANDS = sorted(
    m for m in EDGES if room(m) == "cli" and m not in {"cli", "cli.app", *SHARED, *PARTS}
)


def test_each_room_imports_only_what_its_rule_allows():
    assert broken(EDGES) == []


def test_a_planted_bad_import_is_named(tmp_path):
    planted = tmp_path / "seq2attn_cli"
    for path in PACKAGE.rglob("*.py"):
        (planted / path.relative_to(PACKAGE)).parent.mkdir(parents=True, exist_ok=True)
        (planted / path.relative_to(PACKAGE)).write_text(path.read_text(encoding="utf-8"))
    seq2seq = planted / "model" / "seq2seq.py"
    seq2seq.write_text(seq2seq.read_text() + "\nfrom ..views.heatmap import heatmap\n")
    assert broken(graph(planted)) == ["model.seq2seq imports views.heatmap"]


def test_nothing_imports_the_cli_but_the_entry_point():
    importers = {m for m, names in EDGES.items() if any(n.startswith("cli") for n in names)}
    assert {m for m in importers if room(m) != "cli"} == {"__main__"}


@pytest.mark.parametrize(
    "module", sorted(m for m in EDGES if room(m) not in {"cli", "views", "__main__"})
)
def test_the_core_never_reaches_the_terminal(module):
    terminal = {m for m in EDGES if room(m) in {"cli", "views"}} | {"rich", "typer"}
    assert not reach(EDGES, module) & terminal, sorted(reach(EDGES, module) & terminal)


@pytest.mark.parametrize(
    "module", sorted(m for m in EDGES if m in TORCH_FREE or room(m) in TORCH_FREE_ROOMS)
)
def test_drawing_and_plain_data_modules_never_import_torch(module):
    assert "torch" not in {n.split(".")[0] for n in reach(EDGES, module)}, sorted(
        reach(EDGES, module)
    )


@pytest.mark.parametrize("module", COMMANDS)
def test_each_command_stands_alone_on_what_commands_share(module):
    own = {part for part, command in PARTS.items() if command == module}
    shared = {n for n in EDGES[module] if room(n) == "cli"} - own
    assert "cli.common" in shared and shared <= SHARED, sorted(EDGES[module])


if __name__ == "__main__":
    package = Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE
    for name, names in graph(package).items():
        print(f"{name:22} -> {' '.join(sorted(names)) or '-'}")
