"""The docs name only tests that exist: a test file renamed or split, or a test renamed,
leaves no reference to it behind in README.md, docs/ or bench/README.md."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# `tests/test_x.py`, `test_x.py::test_y`, and `::test_z` for another test of the file before
NAMED = re.compile(r"(?:tests/)?(test_\w+\.py)(?:::(test_\w+))?|(?<![\w.])::(test_\w+)")


def named_tests(text: str) -> list[tuple[str, str | None]]:
    """(file, test or None) for every test a text names, in order."""
    found, last = [], None
    for m in NAMED.finditer(text):
        last = m.group(1) or last
        found.append((last, m.group(2) or m.group(3)))
    return found


def test_the_parser_reads_files_tests_and_continuations():
    text = "`tests/test_a.py`, `test_b.py::test_one`, `::test_two`; `test_c.py`"
    assert named_tests(text) == [
        ("test_a.py", None), ("test_b.py", "test_one"), ("test_b.py", "test_two"),
        ("test_c.py", None),
    ]  # fmt: skip


def test_every_test_the_docs_name_exists():
    for doc in DOCS:
        for file, test in named_tests(doc.read_text(encoding="utf-8")):
            path = ROOT / "tests" / file
            assert path.is_file(), f"{doc.name} names {file}, which is not in tests/"
            if test:
                assert re.search(rf"^(?:async )?def {test}\(", path.read_text(), re.M), (
                    f"{doc.name} names {file}::{test}, which {file} does not define"
                )
