"""The longest functions of a package, and its longest files: what a reader faces in one go.

Usage: python scripts/longest.py [PACKAGE_DIR] [-n 10]
(default: seq2attn_cli; to compare with a commit: `git archive REV seq2attn_cli | tar -x -C DIR`).
A function's lines run from its `def` to its last line, signature and docstring included;
`body` counts from its first statement after the docstring.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path


def functions(path: Path) -> list[tuple[int, int, str]]:
    """(lines, body lines, file:qualified name) of every function and method in one file."""
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                body = child.body
                if len(body) > 1 and isinstance(body[0], ast.Expr):
                    if isinstance(body[0].value, ast.Constant):  # the docstring
                        body = body[1:]
                end = child.end_lineno or child.lineno
                name = f"{path.name}:{prefix}{child.name}"
                found.append((end - child.lineno + 1, end - body[0].lineno + 1, name))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def main() -> None:
    """Print the n longest functions and the n longest files of the package."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", nargs="?", type=Path, default=Path("seq2attn_cli"))
    parser.add_argument("-n", type=int, default=10)
    args = parser.parse_args()
    files = sorted(args.package.glob("*.py"))
    found = sorted((f for p in files for f in functions(p)), reverse=True)
    print(f"{'lines':>5} {'body':>5}  function")
    for lines, body, name in found[: args.n]:
        print(f"{lines:5} {body:5}  {name}")
    print(f"\n{'lines':>5}  file")
    sizes = sorted((len(p.read_text(encoding="utf-8").splitlines()), p.name) for p in files)
    for lines, name in sizes[::-1][: args.n]:
        print(f"{lines:5}  {name}")


if __name__ == "__main__":
    main()
