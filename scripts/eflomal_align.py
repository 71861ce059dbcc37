"""Word-align parallel corpora with eflomal for `fit_align_head.py --links`: Pharaoh lines.

Usage: python scripts/eflomal_align.py CORPUS... --out-dir DIR [--src-col 1] [--tgt-col 2]

Each CORPUS is a TSV file as `s2a train` reads it (plain, .gz or .xz; columns one for all or
one per corpus, as `s2a train` takes them). All corpora are aligned together (more text, better
statistics) and DIR/NAME.align is written for each (NAME: the file name without .tsv, .gz,
.xz): line N holds the links of the corpus's line N, `source-target` over the
whitespace-separated words of the two columns as given, from 0; a line `s2a train` skips
(no tab, an empty side...) gets an empty line. Inside, each word is split into lower-case
tokens (`l'homme` -> `l'` `homme`, `étudiant.` -> `étudiant` `.`), eflomal aligns the tokens
both ways, grow-diag-final-and joins the two directions, and a word is linked to every word
one of its tokens is linked to.

eflomal (Östling & Tiedemann 2016, GPLv3) is a development tool here, never a dependency
of s2a: `pip install eflomal` (an sdist; it builds with gcc) into any environment, or
`pip install --target DIR eflomal` and PYTHONPATH=DIR. To measure it on the shared trial
set, align the trial pairs together with a larger corpus and score them:

    paste dev.fr dev.en > trial.tsv
    python scripts/eflomal_align.py trial.tsv big.tsv --src-col 1,2 --tgt-col 2,1 --out-dir a
    python scripts/aer.py dev.wa a/trial.align
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import NoReturn

from seq2attn_cli.align.aer import read_pharaoh
from seq2attn_cli.align.methods import Links, grow_diag
from seq2attn_cli.data.reading import ReadReport, iter_pairs, normalize
from seq2attn_cli.errors import CorpusError

TOKEN = re.compile(r"\w+'|\w+|[^\w\s]")  # a French elision keeps its apostrophe: l' homme


def fail(message: str) -> NoReturn:
    """One line on stderr and exit 2, as s2a does for bad input."""
    sys.stderr.write(f"eflomal_align.py: error: {message}\n")
    sys.exit(2)


def tokens(text: str) -> tuple[list[str], list[int]]:
    """The lower-case tokens of a line's whitespace-separated words, and the word of each."""
    out: list[str] = []
    word_of: list[int] = []
    for w, word in enumerate(text.split()):
        found = TOKEN.findall(normalize(word).lower()) or [word.lower()]
        out += found
        word_of += [w] * len(found)
    return out, word_of


def grow_diag_final_and(forward: Links, backward: Links) -> Links:
    """Koehn et al.'s grow-diag-final-and: the links both directions agree on, grown towards
    their neighbours in either, then a link of one direction whose two words are both unaligned."""
    links = grow_diag(forward & backward, forward | backward, final=False)
    src, tgt = {i for i, _ in links}, {j for _, j in links}
    for direction in (forward, backward):
        for i, j in sorted(direction - links):
            if i not in src and j not in tgt:
                links.add((i, j))
                src.add(i)
                tgt.add(j)
    return links


def word_links(links: Iterable[tuple[int, int]], src_of: list[int], tgt_of: list[int]) -> Links:
    """Token links as links between the words the tokens come from."""
    return {(src_of[i], tgt_of[j]) for i, j in links}


def pharaoh(links: Links) -> str:
    """'0-0 1-2': the links in order."""
    return " ".join(f"{i}-{j}" for i, j in sorted(links))


def read_corpus(path: str, src_col: int, tgt_col: int) -> tuple[list[tuple[int, str, str]], int]:
    """The (line number, source, target) of each pair `s2a train` reads, and the file's lines."""
    report = ReadReport(path=path)
    pairs = [
        (report.lines, s, t) for s, t in iter_pairs(path, report, src_col=src_col, tgt_col=tgt_col)
    ]
    return pairs, report.lines


def eflomal_links(src: list[list[str]], tgt: list[list[str]]) -> tuple[list[str], list[str]]:
    """eflomal's forward and backward Pharaoh lines for the tokenized sentence pairs."""
    try:
        from eflomal import Aligner
    except ImportError:
        fail("eflomal is not installed: pip install eflomal (see this script's docstring)")
    with tempfile.TemporaryDirectory(prefix="eflomal-") as folder:
        forward, backward = Path(folder, "fwd"), Path(folder, "rev")
        Aligner().align(
            [" ".join(s) + "\n" for s in src], [" ".join(t) + "\n" for t in tgt],
            links_filename_fwd=str(forward), links_filename_rev=str(backward), quiet=True,
        )  # fmt: skip
        return forward.read_text().splitlines(), backward.read_text().splitlines()


def per_corpus(text: str, count: int, option: str) -> list[int]:
    """One column per corpus from '1' or '1,2,1'."""
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        fail(f"{option} {text!r}: expected numbers separated by commas")
    if len(values) not in (1, count):
        fail(f"{option} {text!r}: give one value, or one per corpus ({count})")
    return values * count if len(values) == 1 else values


def main(argv: list[str] | None = None) -> None:
    """Align the corpora together and write one .align file per corpus."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpora", nargs="+")
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--src-col", default="1")
    parser.add_argument("--tgt-col", default="2")
    args = parser.parse_args(argv)
    names = [re.sub(r"(\.tsv)?(\.gz|\.xz)?$", "", Path(c).name) for c in args.corpora]
    if len(set(names)) < len(names):
        fail("two corpora have the same name: their .align files would overwrite each other")
    srcs = per_corpus(args.src_col, len(names), "--src-col")
    tgts = per_corpus(args.tgt_col, len(names), "--tgt-col")
    try:
        corpora = [read_corpus(c, s, t) for c, s, t in zip(args.corpora, srcs, tgts, strict=True)]
    except CorpusError as error:
        fail(str(error))
    pairs = [(tokens(s), tokens(t)) for found, _ in corpora for _, s, t in found]
    sys.stderr.write(f"aligning {len(pairs):,} pairs with eflomal\n")
    forward, backward = eflomal_links([s[0] for s, _ in pairs], [t[0] for _, t in pairs])
    args.out_dir.mkdir(parents=True, exist_ok=True)
    at = 0
    for name, (found, lines) in zip(names, corpora, strict=True):
        by_line = {}
        for n, _, _ in found:
            (_, src_of), (_, tgt_of) = pairs[at]
            links = grow_diag_final_and(read_pharaoh(forward[at]), read_pharaoh(backward[at]))
            by_line[n] = pharaoh(word_links(links, src_of, tgt_of))
            at += 1
        text = "".join(by_line.get(n, "") + "\n" for n in range(1, lines + 1))
        (args.out_dir / f"{name}.align").write_text(text, encoding="utf-8")
        sys.stderr.write(f"{args.out_dir / name}.align: {lines:,} lines, {len(found):,} aligned\n")


if __name__ == "__main__":
    main()
