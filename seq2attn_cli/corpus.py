"""A training corpus made ready: read, split, tokenised into subwords, filtered by length."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import BOS, EOS, PAD, UNK, TrainConfig
from .data import BUCKETS, CorpusError, casual_variants, read_pairs, split_held_out
from .subwords import Subwords, train_subwords

Report = Callable[[str, dict[str, Any]], None]


@dataclass
class Prepared:
    """A corpus turned into ids, ready for batching."""

    subwords: Subwords
    train_src: list[list[int]]
    train_tgt: list[list[int]]  # output-vocabulary indices
    valid_pairs: list[tuple[str, str]]
    valid_src: list[list[int]]
    valid_tgt: list[list[int]]
    tgt_pieces: list[int]  # output index -> SentencePiece id
    stats: dict[str, Any]


def prepare(
    corpus: Path,
    cfg: TrainConfig,
    *,
    valid: Path | None,
    subwords: Subwords | None,
    tgt_pieces: list[int] | None,
    report: Report,
) -> Prepared:
    """Read and split the corpus, train (or reuse) subwords, encode and filter the pairs."""
    pairs, read = read_pairs(
        corpus, src_col=cfg.src_col, tgt_col=cfg.tgt_col, max_chars=cfg.max_chars
    )
    report("read", {"report": read})
    if valid is not None:
        held, valid_read = read_pairs(valid, src_col=cfg.src_col, tgt_col=cfg.tgt_col)
        report("read", {"report": valid_read})
        seen_src, seen_tgt = {s for s, _ in held}, {t for _, t in held}
        train = [(s, t) for s, t in pairs if s not in seen_src and t not in seen_tgt]
    else:
        train, held = split_held_out(
            pairs, size=min(cfg.valid_size, len(pairs) // 10), seed=cfg.seed
        )
    if not held or not train:
        raise CorpusError(
            f"{corpus}: {len(pairs)} usable pairs leave "
            + ("no validation set (give --valid FILE)" if not held else "nothing to train on")
        )
    if subwords is None:
        report("stage", {"message": f"training SentencePiece ({cfg.vocab_size} pieces)"})
        subwords = train_subwords(
            [s for s, _ in train] + [t for _, t in train], vocab_size=cfg.vocab_size, seed=cfg.seed
        )
    overlapping = len(pairs) - len(train) - (len(held) if valid is None else 0)
    lengths = _histogram([len(s.split()) for s, _ in train])
    casual = casual_variants(train, share=cfg.casual_share, seed=cfg.seed)
    train = train + casual
    src_ids = subwords.encode([s for s, _ in train])
    tgt_ids = subwords.encode([t for _, t in train])
    keep = [
        i
        for i in range(len(train))
        if len(src_ids[i]) < cfg.max_pieces and len(tgt_ids[i]) < cfg.max_pieces
    ]
    too_long = len(train) - len(keep)
    src_ids, tgt_ids = [src_ids[i] for i in keep], [tgt_ids[i] for i in keep]
    if not src_ids:
        raise CorpusError(f"{corpus}: no pair is shorter than {cfg.max_pieces} pieces")
    if tgt_pieces is None:
        tgt_pieces = [PAD, UNK, BOS, EOS] + sorted({p for t in tgt_ids for p in t} - {0, 1, 2, 3})
    to_out = {p: i for i, p in enumerate(tgt_pieces)}
    valid_src = subwords.encode([s[: cfg.max_chars] for s, _ in held])
    valid_tgt = [[to_out.get(p, UNK) for p in t] for t in subwords.encode([t for _, t in held])]
    stats = {
        "corpus": str(corpus),
        "lines": read.lines,
        "pairs_read": read.kept,
        "skipped": dict(read.skipped),
        "skipped_first_line": dict(read.first_line),
        "held_out": len(held),
        "dropped_overlapping_held_out": overlapping,
        "dropped_too_many_pieces": too_long,
        "casual_variants": len(casual),
        "train_pairs": len(src_ids),
        "src_pieces_mean": sum(map(len, src_ids)) / len(src_ids),
        "tgt_pieces_mean": sum(map(len, tgt_ids)) / len(tgt_ids),
        "length_histogram": lengths,
    }
    return Prepared(
        subwords=subwords,
        train_src=src_ids,
        train_tgt=[[to_out.get(p, UNK) for p in t] for t in tgt_ids],  # UNK: resumed, new text
        valid_pairs=held,
        valid_src=valid_src,
        valid_tgt=valid_tgt,
        tgt_pieces=tgt_pieces,
        stats=stats,
    )


def _histogram(lengths: list[int]) -> dict[str, int]:
    """Count source sentences per word-length bucket (the buckets of `s2a evaluate`)."""
    return {name: sum(lo <= n <= hi for n in lengths) for name, lo, hi in BUCKETS}
