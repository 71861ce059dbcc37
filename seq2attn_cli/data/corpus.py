"""Training data made ready: corpora read (streaming), validation held out, subwords trained,
pairs and their noisy copies encoded into compact id arrays. Imports no torch.

Each corpus is read up to three times, never held as text: to pick the validation pairs
(when no --valid file is given), to sample text for SentencePiece, and to encode.
"""

from __future__ import annotations

import random
import time
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from ..config import MIN_VALID, CorpusSpec, TrainConfig
from ..errors import CorpusError
from . import languages
from .ids import IdStore, to_output_indices
from .noise import noisy_copies
from .reading import BUCKETS, ReadReport, bucket_of, iter_pairs, normalize, read_pairs, space_quotes
from .subwords import Subwords, train_subwords

Report = Callable[[str, dict[str, Any]], None]
Encode = Callable[[list[str]], list[list[int]]]  # texts -> their ids, as the model reads them
SPM_SENTENCES = 1_000_000  # text sampled for SentencePiece: plenty for 8-16k pieces
PIECE_LIMITS = (100, 150, 200, 250, 300)  # --max-pieces values whose losses each run records
PROGRESS_EVERY = 10_000  # pairs between reports of how far reading a corpus is


@dataclass
class ValidSet:
    """One validation set: its text pairs and their ids."""

    name: str
    pairs: list[tuple[str, str]]
    src: list[list[int]]  # SentencePiece ids
    tgt: list[list[int]]  # output indices
    read: dict[str, Any] = field(default_factory=dict)  # its file's lines, skipped ones by reason


@dataclass
class Prepared:
    """Corpora turned into ids, ready for batching."""

    subwords: Subwords
    train_src: IdStore  # SentencePiece ids
    train_tgt: IdStore  # output indices
    sizes: list[int]  # examples per corpus, in order: corpus k follows corpora 0..k-1
    valid: list[ValidSet]
    output_ids: list[int]  # output index -> SentencePiece id
    stats: dict[str, Any]
    spaced_quotes: bool = False  # the model reads and writes opening quotes spaced off


def prepare(
    corpora: list[CorpusSpec],
    cfg: TrainConfig,
    *,
    valid: list[CorpusSpec],
    subwords: Subwords | None,
    output_ids: list[int] | None,
    report: Report,
    subword_trainer: Callable[..., Subwords] = train_subwords,
    expected: tuple[str | None, str | None] = (None, None),
    spaced_quotes: bool = False,
) -> Prepared:
    """Hold out validation pairs, train (or reuse) subwords, encode and filter every corpus.

    `expected` is the (source, target) language the run must keep (that of --init's model);
    `spaced_quotes`: texts are read, and new subwords trained, with opening quotes spaced off.
    """
    direction, guessed = _direction(corpora, cfg, expected)
    valid_sets = _read_valid(valid, corpora[0], cfg, report)
    held_src = {s for _, pairs, _ in valid_sets for s, _ in pairs}
    held_tgt = {t for _, pairs, _ in valid_sets for _, t in pairs}
    held_pairs = set() if valid else set(valid_sets[0][1])  # taken out of corpora[0]
    trained = subwords is None
    if trained:
        report("stage", {"message": f"training SentencePiece ({cfg.vocab_size:,} pieces)"})
        texts = _subword_sample(corpora, cfg, held_src, held_tgt, report)
        subwords = subword_trainer(
            texts, vocab_size=cfg.vocab_size, seed=cfg.seed, spaced_quotes=spaced_quotes
        )
    encode = _encoder(subwords, spaced_quotes=spaced_quotes)
    wide = len(subwords) > 65_535
    src_store, tgt_store = IdStore(wide=wide), IdStore(wide=wide)
    stats, sizes = [], []
    for k, spec in enumerate(corpora):
        before = len(src_store)
        held = (held_src, held_tgt, held_pairs if k == 0 else set())
        info = _encode_corpus(k, spec, cfg, encode, held, src_store, tgt_store, report)
        sizes.append(len(src_store) - before)
        stats.append(info)
        report("corpus", {"stats": info})
    if not len(src_store):
        raise CorpusError(f"{corpora[0].path}: no pair left to train on")
    output_ids, table = to_output_indices(tgt_store, output_ids, len(subwords))
    sets = [_valid_set(name, pairs, read, encode, table, cfg) for name, pairs, read in valid_sets]
    summary = {
        "languages": {"source": direction[0], "target": direction[1], "guessed": guessed},
        "corpora": stats,
        "valid": [{"name": v.name, "pairs": len(v.pairs), **v.read} for v in sets],
        "vocabulary": {
            "asked": cfg.vocab_size if trained else None,  # None: the pieces of --init/resume
            "pieces": len(subwords),
            "target": len(output_ids),
        },
        "train_examples": len(src_store),
    }
    report("data", summary)
    return Prepared(
        subwords=subwords,
        train_src=src_store,
        train_tgt=tgt_store,
        sizes=sizes,
        valid=sets,
        output_ids=output_ids,
        stats=summary,
        spaced_quotes=spaced_quotes,
    )


def _encoder(subwords: Subwords, *, spaced_quotes: bool) -> Encode:
    """The ids of texts as the model reads them: opening quotes spaced off if it was so trained."""
    if not spaced_quotes:
        return subwords.encode
    return lambda texts: subwords.encode([space_quotes(t) for t in texts])


def _valid_set(
    name: str,
    pairs: list[tuple[str, str]],
    read: dict[str, Any],
    encode: Encode,
    table: array,
    cfg: TrainConfig,
) -> ValidSet:
    """A validation set encoded: source SentencePiece ids, target output indices (`table`)."""
    return ValidSet(
        name=name,
        pairs=pairs,
        read=read,
        src=encode([s[: cfg.max_chars] for s, _ in pairs]),
        tgt=[[table[p] for p in t] for t in encode([t for _, t in pairs])],
    )


def _direction(
    corpora: list[CorpusSpec], cfg: TrainConfig, expected: tuple[str | None, str | None]
) -> tuple[tuple[str | None, str | None], bool]:
    """The (source, target) languages the corpora's columns look like, and whether the text
    named them (else they are `expected`'s); a corpus whose columns look the other way round
    from the rest (or from `expected`) is an error, even where only one column is sure."""
    direction, guessed = expected, False
    for spec in corpora:
        head = list(islice(_pairs(spec, cfg, ReadReport(path=spec.path)), 2000))
        seen = (
            languages.guess_language(languages.sample([s for s, _ in head])),
            languages.guess_language(languages.sample([t for _, t in head])),
        )
        if None in direction and None not in seen:
            direction = seen
        elif None not in direction and _swapped(seen, direction) and cfg.check_columns:
            raise CorpusError(
                f"{spec.path}: column {spec.src_col} looks {languages.name(seen[0])} and column "
                f"{spec.tgt_col} {languages.name(seen[1])}, the other way round from "
                f"{languages.name(direction[0])} -> {languages.name(direction[1])}: give this "
                f"corpus --src-col {spec.tgt_col} --tgt-col {spec.src_col} "
                "(or --no-check-columns)"
            )
        guessed = guessed or (None not in seen and seen == direction)
    return direction, guessed


def _swapped(seen: tuple[str | None, str | None], direction: tuple[str, str]) -> bool:
    """Whether columns look the other way round from `direction`: one sure column is enough
    (a user's English<TAB>French corpus on a French -> English --init model went unchecked
    when its French was unsure: as common Italian words, at 48% against 25%)."""
    if seen[0] == seen[1] or direction[0] == direction[1]:
        return False
    return seen[0] == direction[1] or seen[1] == direction[0]


def _pairs(
    spec: CorpusSpec,
    cfg: TrainConfig,
    report: ReadReport,
    progress: Report | None = None,
    why: str = "",
) -> Iterator[tuple[str, str]]:
    """The normalised pairs of one corpus, streamed; `progress` hears how far reading is."""
    started = time.monotonic()
    pairs = iter_pairs(
        spec.path, report, src_col=spec.src_col, tgt_col=spec.tgt_col, max_chars=cfg.max_chars
    )
    for n, (src, tgt) in enumerate(pairs, start=1):
        if progress and n % PROGRESS_EVERY == 0:
            seconds = time.monotonic() - started
            progress("reading", {"path": spec.path, "why": why, "lines": report.lines,
                                 "seconds": seconds})  # fmt: skip
        yield normalize(src), normalize(tgt)


def _read_valid(
    valid: list[CorpusSpec], first: CorpusSpec, cfg: TrainConfig, progress: Report
) -> list[tuple[str, list[tuple[str, str]], dict[str, Any]]]:
    """The validation sets, with what reading their files skipped: the --valid files, or
    pairs held out of the first corpus (whose skipped lines that corpus's figures count)."""
    if valid:
        return [_read_valid_file(spec, progress) for spec in valid]
    rng = random.Random(cfg.seed)
    reservoir: list[tuple[str, str]] = []  # a uniform sample of the corpus, in one pass
    report = ReadReport(path=first.path)
    for n, pair in enumerate(_pairs(first, cfg, report, progress, "holding out validation")):
        if n < cfg.valid_size:
            reservoir.append(pair)
        elif (j := rng.randrange(n + 1)) < cfg.valid_size:
            reservoir[j] = pair
    _refuse_empty(report)
    size = min(cfg.valid_size, report.kept // 10)
    if size < MIN_VALID:
        raise CorpusError(
            f"{first.path}: {report.kept:,} usable pairs are too few to hold out a validation "
            f"set (a tenth of them, at most, and at least {MIN_VALID}); give --valid FILE or "
            "more pairs"
        )
    held = sorted(rng.sample(range(len(reservoir)), size))
    return [(f"{first.path} (held out)", [reservoir[i] for i in held], {})]


def _read_valid_file(
    spec: CorpusSpec, progress: Report
) -> tuple[str, list[tuple[str, str]], dict[str, Any]]:
    """One --valid file's pairs and its lines and skipped lines, reported as a corpus's are."""
    pairs, read = read_pairs(spec.path, src_col=spec.src_col, tgt_col=spec.tgt_col)
    figures = read.figures()
    progress("valid", {"stats": {"name": spec.path, "pairs": len(pairs), **figures}})
    return spec.path, [(normalize(s), normalize(t)) for s, t in pairs], figures


def _refuse_empty(report: ReadReport) -> None:
    """A corpus with no usable pair is an error, with the reasons its lines were skipped."""
    if not report.kept:
        detail = f" ({report.summary()})" if report.skipped else ""
        raise CorpusError(f"{report.path}: no usable sentence pairs{detail}")


def _subword_sample(
    corpora: list[CorpusSpec],
    cfg: TrainConfig,
    held_src: set[str],
    held_tgt: set[str],
    progress: Report,
) -> list[str]:
    """Source and target text to train SentencePiece on, each corpus at its rate: a
    uniform sample of at most SPM_SENTENCES, so memory stays bounded however big the corpora."""
    room, seen = SPM_SENTENCES // 2, 0  # pairs
    sample: list[tuple[str, str]] = []
    pick = random.Random(cfg.seed)
    for k, spec in enumerate(corpora):
        rng = random.Random(cfg.seed * 31 + k)
        share = min(1.0, spec.rate)
        read = ReadReport(path=spec.path)
        for pair in _pairs(spec, cfg, read, progress, "sampling text for SentencePiece"):
            if pair[0] not in held_src and pair[1] not in held_tgt and rng.random() < share:
                if len(sample) < room:
                    sample.append(pair)
                elif (j := pick.randrange(seen + 1)) < room:  # reservoir sampling
                    sample[j] = pair
                seen += 1
    return [text for pair in sample for text in pair]


def _encode_corpus(
    k: int,
    spec: CorpusSpec,
    cfg: TrainConfig,
    encode: Encode,
    held: tuple[set[str], set[str], set[tuple[str, str]]],
    src_store: IdStore,
    tgt_store: IdStore,
    progress: Report,
) -> dict[str, Any]:
    """Encode one corpus (and noisy copies of its sources) into the stores; return its counts."""
    held_src, held_tgt, held_pairs = held  # validation sentences, pairs held out of this corpus
    report = ReadReport(path=spec.path)
    rng = random.Random(cfg.seed * 1_000_003 + k)
    held_out = overlap = copies = too_long = kept = 0
    counted: set[tuple[str, str]] = set()
    histogram = dict.fromkeys((name for name, _, _ in BUCKETS), 0)  # source words
    reached = [0] * (len(PIECE_LIMITS) + 1)  # examples by how many of the limits they reach
    chunk: list[tuple[str, str]] = []
    pairs = _pairs(spec, cfg, report, progress, "encoding")
    while True:
        chunk = list(islice(pairs, 20_000))
        if not chunk:
            break
        fresh = [(s, t) for s, t in chunk if s not in held_src and t not in held_tgt]
        first_seen = {p for p in chunk if p in held_pairs} - counted if held_pairs else set()
        counted |= first_seen
        held_out += len(first_seen)  # repeats of a held-out pair count as overlapping
        overlap += len(chunk) - len(fresh) - len(first_seen)
        for s, _ in fresh:
            histogram[bucket_of(s)] += 1
        noisy = noisy_copies([s for s, _ in fresh], share=cfg.noise_share, rng=rng)
        copies += len(noisy)
        src_ids = encode([s for s, _ in fresh] + [s for _, s in noisy])
        tgt_ids = encode([t for _, t in fresh])
        tgt_ids += [tgt_ids[i] for i, _ in noisy]  # a noisy copy keeps its pair's target
        for s, t in zip(src_ids, tgt_ids, strict=True):
            reached[bisect_right(PIECE_LIMITS, max(len(s), len(t)))] += 1
            if len(s) < cfg.max_pieces and len(t) < cfg.max_pieces:
                src_store.append(s)
                tgt_store.append(t)
                kept += 1
            else:
                too_long += 1
    _refuse_empty(report)
    return {
        "corpus": spec.path,
        "weight": spec.rate,  # config.json's name, after --weights
        **report.figures(),
        "pairs_read": report.kept,
        "held_out": held_out,
        "dropped_overlapping_valid": overlap,
        "noisy_copies": copies,
        "dropped_too_many_pieces": too_long,
        "dropped_at_max_pieces": {  # what other --max-pieces would have dropped
            str(limit): sum(reached[i + 1 :]) for i, limit in enumerate(PIECE_LIMITS)
        },
        "train_examples": kept,
        "per_epoch": round(kept * spec.rate),
        "length_histogram": histogram,
    }
