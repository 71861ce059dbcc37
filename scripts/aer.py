"""Score word alignments against hand-made links: AER, precision and recall.

Usage: python scripts/aer.py GOLD ALIGNMENTS [--json]

GOLD: links in the HLT-NAACL 2003 format, `SENTENCE TARGET_POSITION SOURCE_POSITION [S|P]`
from 1 (the shared set's dev.wa: English, then French). ALIGNMENTS: one Pharaoh line per
sentence, `source-target` from 0, as `s2a align`, fast_align and eflomal write them (- for
stdin). For example, on the shared trial set:

    s2a align --src dev.fr --tgt dev.en | python scripts/aer.py dev.wa -
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import NoReturn

from seq2attn_cli.align.aer import read_gold, read_pharaoh, score


def fail(message: str) -> NoReturn:
    """One line on stderr and exit 2, as s2a does for bad input."""
    sys.stderr.write(f"aer.py: error: {message}\n")
    sys.exit(2)


def main(argv: list[str] | None = None) -> None:
    """Read the gold links and the alignments, print their scores."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("gold", type=Path)
    parser.add_argument("alignments")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args(argv)
    try:
        gold = read_gold(args.gold.read_text(encoding="utf-8").splitlines(), name=str(args.gold))
        name = "stdin" if args.alignments == "-" else args.alignments
        text = sys.stdin.read() if name == "stdin" else Path(name).read_text(encoding="utf-8")
        lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
        found = [read_pharaoh(line, place=f"{name}: line {n}") for n, line in enumerate(lines, 1)]
        result = score(found, gold)
    except (OSError, ValueError) as error:
        fail(str(error))
    if args.json:
        print(json.dumps(asdict(result)))
    else:
        print(
            f"AER {100 * result.aer:.1f}  precision {100 * result.precision:.1f}  "
            f"recall {100 * result.recall:.1f}  ({result.sentences} sentences, "
            f"{result.links} links, {result.sure} sure gold links)"
        )


if __name__ == "__main__":
    main()
