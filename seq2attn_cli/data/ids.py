"""SentencePiece ids kept compactly: many id sequences in one flat array, and the target side
renumbered into output indices (the rows of the model's output layer). Imports no torch."""

from __future__ import annotations

import operator
from array import array

from ..config import BOS, EOS, PAD, UNK


class IdStore:
    """Many id sequences in one flat array: 2 bytes an id instead of a Python int's 36."""

    def __init__(self, *, wide: bool) -> None:
        self.ids = array("I" if wide else "H")
        self.starts = array("Q", [0])

    def append(self, ids: list[int]) -> None:
        self.ids.extend(ids)
        self.starts.append(len(self.ids))

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, i: int) -> list[int]:
        return self.ids[self.starts[i] : self.starts[i + 1]].tolist()

    def lengths(self) -> array:
        """Length of every sequence, 4 bytes each (a list of tuples took 80)."""
        return array("I", map(operator.sub, self.starts[1:], self.starts[:-1]))


def to_output_indices(
    tgt_store: IdStore, output_ids: list[int] | None, vocab: int
) -> tuple[list[int], array]:
    """Renumber the target side into output indices, in place; the output ids (the
    SentencePiece id of each output index) and the table from SentencePiece id to index."""
    if output_ids is None:  # a new model: the pieces its training targets use
        seen = set(tgt_store.ids)
        output_ids = [PAD, UNK, BOS, EOS] + sorted(seen - {PAD, UNK, BOS, EOS})
    table = array(tgt_store.ids.typecode, [UNK] * vocab)  # SentencePiece id -> output index
    for index, piece_id in enumerate(output_ids):
        table[piece_id] = index
    ids, step = tgt_store.ids, 1 << 20  # in place, a slice at a time: no second copy
    for a in range(0, len(ids), step):
        ids[a : a + step] = array(ids.typecode, map(table.__getitem__, ids[a : a + step]))
    return output_ids, table
