"""README's code map stays true: every package folder and every module in it is named there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "seq2attn_cli"


def code_map() -> dict[str, str]:
    """The rows of README's code map table: folder (as written, `model/`) -> what it says."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("Code map", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `?([^`|]+?)`? \| (.+) \|$", table, flags=re.M)
    return {folder.strip(): text for folder, text in rows}


def test_the_readme_code_map_names_every_package_folder_and_its_modules():
    rows = code_map()
    for init in sorted(PACKAGE.glob("*/**/__init__.py")):  # rooms, and rooms in rooms
        folder = init.parent.relative_to(PACKAGE).as_posix()
        assert f"{folder}/" in rows, f"README's code map has no row for {folder}/"
        for module in sorted(init.parent.glob("*.py")):
            if module.name != "__init__.py":
                assert f"`{module.name}`" in rows[f"{folder}/"], (
                    f"{folder}/{module.name} is not in its row"
                )
    top = rows["top level"]
    for module in sorted(PACKAGE.glob("*.py")):
        if not module.name.startswith("__"):
            assert f"`{module.name}`" in top, f"{module.name} is not in the top-level row"
