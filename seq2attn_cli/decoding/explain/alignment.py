"""From piece-level attention to words: merged weights and Pharaoh word alignments.

Plain lists in, plain lists out: no torch and no terminal, so the translator, the command line
and the pictures share one definition of a word.
"""

from __future__ import annotations

from typing import NamedTuple

WORD_START = "\u2581"  # SentencePiece marks the first piece of every word with "▁"
UNK_PIECE = "<unk>"  # what SentencePiece writes for characters it has no piece for


def is_special(piece: str) -> bool:
    """Whether a piece is a control token such as </s>, <unk> or <pad>."""
    return len(piece) > 2 and piece.startswith("<") and piece.endswith(">")


class Words(NamedTuple):
    """Pieces merged into words: each word, and the indices of the pieces that spell it."""

    words: list[str]
    groups: list[list[int]]


class WordAttention(NamedTuple):
    """Attention between words: rows the target words, columns the source words."""

    src: list[str]  # source words, </s> last
    tgt: list[str]  # target words, </s> last
    weights: list[list[float]]  # (len(tgt), len(src)), each row summing to 1


def group_pieces(pieces: list[str]) -> Words:
    """Merge SentencePiece pieces into words; return the words and each word's piece indices.

    <unk> stands for characters inside a word ("▁", "<unk>" for "😀"; "▁caf", "<unk>"), so it
    joins its word, as the reader sees it; control tokens such as </s> stand alone.
    """
    words: list[str] = []
    groups: list[list[int]] = []
    opens_word = True  # the first piece, and any piece after a control token, starts a word
    for i, piece in enumerate(pieces):
        control = is_special(piece) and piece != UNK_PIECE
        if control or opens_word or piece.startswith(WORD_START):
            words.append(piece if control else piece.removeprefix(WORD_START))
            groups.append([i])
        else:
            words[-1] += piece
            groups[-1].append(i)
        opens_word = control
    # a lone "▁" piece would otherwise become an invisible, empty word
    return Words([word or WORD_START for word in words], groups)


def check_shape(src: list[str], tgt: list[str], weights: list[list[float]]) -> None:
    """Raise ValueError unless weights has one row per target piece and one column per source."""
    if len(weights) != len(tgt) or any(len(row) != len(src) for row in weights):
        raise ValueError(
            f"attention weights must be {len(tgt)} target rows x {len(src)} source columns"
        )


def word_level(
    src_pieces: list[str], tgt_pieces: list[str], weights: list[list[float]]
) -> WordAttention:
    """Merge piece-level attention (rows target, columns source) into word-level attention."""
    check_shape(src_pieces, tgt_pieces, weights)
    src_words, src_groups = group_pieces(src_pieces)
    tgt_words, tgt_groups = group_pieces(tgt_pieces)
    merged = []
    for rows in tgt_groups:
        # summing over source pieces keeps each row a distribution; averaging target pieces too
        summed = [[sum(weights[i][j] for j in cols) for cols in src_groups] for i in rows]
        merged.append([sum(column) / len(rows) for column in zip(*summed, strict=True)])
    return WordAttention(src_words, tgt_words, merged)


def word_alignment(
    src_pieces: list[str], tgt_pieces: list[str], weights: list[list[float]]
) -> list[tuple[int, int]]:
    """Each target word with its most-attended source word, as (source, target) word indices.

    Both sides end with </s>, which is left out, so the indices are those of the words a user
    sees; the order is Pharaoh's, as fast_align writes it.
    """
    _, _, merged = word_level(src_pieces, tgt_pieces, weights)
    pairs = []
    for j, row in enumerate(merged[:-1]):  # last row: </s>
        scores = row[:-1]  # last column: </s>
        if scores:
            pairs.append((max(range(len(scores)), key=scores.__getitem__), j))
    return pairs


def pharaoh(pairs: list[tuple[int, int]]) -> str:
    """Alignment pairs as Pharaoh text: '0-0 1-1 2-3'."""
    return " ".join(f"{i}-{j}" for i, j in pairs)
