"""Word links from attention: the ways of reading an alignment off the same weights.

Each method takes two matrices over the given words (rows: target words, columns: source
words, </s> left out): `writing`, the attention of the steps that write each target word,
and `reading`, that of the steps right after, which have just been fed it. It returns the
links as (source word, target word) pairs, in Pharaoh's order. Their AER on the shared
trial set is in README's "Word alignment" section (bench/alignment_methods.py measures it).
Plain lists: no torch.
"""

from __future__ import annotations

from collections.abc import Callable

Matrix = list[list[float]]  # rows: target words; columns: source words
Links = set[tuple[int, int]]  # (source word, target word)
Method = Callable[[Matrix, Matrix], Links]
NEIGHBOURS = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]


def _best(row: list[float]) -> int | None:
    """The index of the highest score of a row; None for an empty or all-zero row."""
    if not row or not any(row):
        return None
    return max(range(len(row)), key=row.__getitem__)


def row_best(scores: Matrix) -> Links:
    """Each target word linked to the source word it scores highest (the argmax)."""
    return {(i, j) for j, row in enumerate(scores) if (i := _best(row)) is not None}


def column_best(scores: Matrix) -> Links:
    """Each source word linked to the target word that scores it highest."""
    columns = [list(column) for column in zip(*scores, strict=True)] if scores else []
    return {(i, j) for i, column in enumerate(columns) if (j := _best(column)) is not None}


def mean(a: Matrix, b: Matrix) -> Matrix:
    """The average of two matrices of one shape."""
    return [[(x + y) / 2 for x, y in zip(ra, rb, strict=True)] for ra, rb in zip(a, b, strict=True)]


def grow_diag(sure: Links, candidates: Links, *, final: bool = True) -> Links:
    """Koehn et al.'s grow-diag(-final): from the links of both directions (`sure`), add
    neighbouring `candidates` of an unaligned word, then (final) any left of one."""
    links = set(sure)
    src = {i for i, _ in links}
    tgt = {j for _, j in links}
    grown = True
    while grown:
        grown = False
        for i, j in sorted(links):
            for di, dj in NEIGHBOURS:
                link = (i + di, j + dj)
                if (
                    link in candidates
                    and link not in links
                    and (link[0] not in src or link[1] not in tgt)
                ):
                    links.add(link)
                    src.add(link[0])
                    tgt.add(link[1])
                    grown = True
    if final:
        for i, j in sorted(candidates - links):
            if i not in src or j not in tgt:
                links.add((i, j))
                src.add(i)
                tgt.add(j)
    return links


def by_share(scores: Matrix) -> Matrix:
    """Each score divided by its column's sum: the share of the attention a source word gets
    over the whole sentence that goes to each target word."""
    totals = [sum(column) for column in zip(*scores, strict=True)] if scores else []
    return [[x / t if t else 0.0 for x, t in zip(row, totals, strict=True)] for row in scores]


def argmax(writing: Matrix, reading: Matrix) -> Links:
    """Each target word to the source word its steps attend to most (translate --align)."""
    return row_best(writing)


def next_step(writing: Matrix, reading: Matrix) -> Links:
    """The same argmax over the attention of the steps that read each target word."""
    return row_best(reading)


def both_steps(writing: Matrix, reading: Matrix) -> Links:
    """The argmax of the writing and the reading steps' attention, averaged."""
    return row_best(mean(writing, reading))


def source_best(writing: Matrix, reading: Matrix) -> Links:
    """Each source word to the target word whose step attends to it most."""
    return column_best(writing)


def union(writing: Matrix, reading: Matrix) -> Links:
    """The argmax and each source word's best target word, together."""
    return row_best(writing) | column_best(writing)


def intersect(writing: Matrix, reading: Matrix) -> Links:
    """The links that are both a target word's argmax and a source word's best target word."""
    return row_best(writing) & column_best(writing)


def grow_diag_final(writing: Matrix, reading: Matrix) -> Links:
    """Koehn et al.'s grow-diag-final of the argmax and each source word's best target."""
    rows, columns = row_best(writing), column_best(writing)
    return grow_diag(rows & columns, rows | columns)


def shared(writing: Matrix, reading: Matrix) -> Links:
    """Both directions' best again, but each target word's best source word by the share of
    that source word's attention it takes (by_share): a word that soaks up attention at
    every step (a full stop, a frequent article) no longer wins every row."""
    return row_best(by_share(writing)) & column_best(writing)


METHODS: dict[str, Method] = {
    "argmax": argmax,
    "next-step": next_step,
    "both-steps": both_steps,
    "source-best": source_best,
    "union": union,
    "intersect": intersect,
    "grow-diag-final": grow_diag_final,
    "shared": shared,
}
DEFAULT = "shared"
