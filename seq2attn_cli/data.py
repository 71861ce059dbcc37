"""Read sentence pairs from a TSV file, split them, and cut them into padded batches."""

from __future__ import annotations

import io
import random
import select
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import torch

from .config import PAD

# source-length buckets in words, as in Bahdanau et al. (2015), Fig. 2
BUCKETS: list[tuple[str, int, int]] = [
    ("1-5", 1, 5), ("6-10", 6, 10), ("11-15", 11, 15), ("16-20", 16, 20), ("21-30", 21, 30),
    ("31+", 31, 10**9),
]  # fmt: skip


def bucket_of(source: str) -> str:
    """Name of the length bucket a source sentence falls in."""
    n = max(len(source.split()), 1)
    return next(name for name, lo, hi in BUCKETS if lo <= n <= hi)


class CorpusError(ValueError):
    """A corpus that cannot be used at all; the message names the file (and line)."""


@dataclass
class ReadReport:
    """What reading a corpus kept and skipped: skipped lines are counted, never hidden."""

    path: str
    lines: int = 0
    kept: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count
    first_line: dict[str, int] = field(default_factory=dict)  # reason -> first line number

    def skip(self, reason: str, line_no: int) -> None:
        """Count one skipped line under its reason."""
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        self.first_line.setdefault(reason, line_no)

    def summary(self) -> str:
        """One line per reason, e.g. 'no tab: 3 lines (first: line 7)'."""
        return "; ".join(
            f"{reason}: {n} line{'s' * (n != 1)} (first: line {self.first_line[reason]})"
            for reason, n in sorted(self.skipped.items())
        )


def clean(text: str) -> str:
    """NFC-normalise and fold runs of whitespace (and control characters) into one space."""
    text = "".join(" " if unicodedata.category(c)[0] == "C" else c for c in text)
    return " ".join(unicodedata.normalize("NFC", text).split())


def read_pairs(
    path: str | Path, *, src_col: int = 1, tgt_col: int = 2, max_chars: int = 1000
) -> tuple[list[tuple[str, str]], ReadReport]:
    """Read (src, tgt) pairs from a TSV file, streaming, counting every line it skips."""
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"{path}: no such file")
    if path.is_dir():
        raise CorpusError(f"{path}: is a directory, expected a tab-separated file")
    report = ReadReport(path=str(path))
    pairs: list[tuple[str, str]] = []
    need = max(src_col, tgt_col)
    try:
        handle = path.open("rb")
    except OSError as err:
        raise CorpusError(f"{path}: {err.strerror}") from None
    cap = max(1 << 20, 8 * max_chars * need)  # bytes: longer lines are never held in memory
    with handle:
        for line_no, raw in enumerate(_bounded_lines(handle, cap), start=1):
            report.lines = line_no
            if raw is None:
                report.skip("too long", line_no)
                continue
            pair, reason = _parse_line(raw, line_no, need, src_col, tgt_col, max_chars)
            if reason:
                report.skip(reason, line_no)
            elif pair:
                pairs.append(pair)
    report.kept = len(pairs)
    if not pairs:
        detail = f" ({report.summary()})" if report.skipped else ""
        raise CorpusError(f"{path}: no usable sentence pairs{detail}")
    return pairs, report


def _bounded_lines(handle: BinaryIO, cap: int) -> Iterator[bytes | None]:
    """The lines of a file; None for a line longer than `cap` bytes, read through in pieces."""
    while raw := handle.readline(cap):
        if len(raw) == cap and not raw.endswith(b"\n"):
            while (rest := handle.readline(cap)) and not rest.endswith(b"\n"):
                pass
            yield None
        else:
            yield raw


def _parse_line(
    raw: bytes, line_no: int, need: int, src_col: int, tgt_col: int, max_chars: int
) -> tuple[tuple[str, str] | None, str]:
    """Parse one raw line into a pair, or name the reason it is skipped."""
    if line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):  # UTF-8 byte order mark
        raw = raw[3:]
    raw = raw.rstrip(b"\r\n")
    if not raw.strip():
        return None, "empty line"
    if b"\x00" in raw:
        return None, "NUL byte"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "invalid UTF-8"
    if "\t" not in text:
        return None, "no tab"
    cols = text.split("\t")
    if len(cols) < need:
        return None, "missing column"
    src, tgt = clean(cols[src_col - 1]), clean(cols[tgt_col - 1])
    if not src or not tgt:
        return None, "empty side"
    if len(src) > max_chars or len(tgt) > max_chars:
        return None, "too long"
    return (src, tgt), ""


def split_held_out(
    pairs: list[tuple[str, str]], *, size: int, seed: int
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Hold out `size` pairs, then drop from training every pair sharing a sentence with them.

    Tatoeba-like corpora repeat a sentence with alternative translations; a plain random
    split would leak them into both sides, so held-out sentences are removed from training.
    """
    if size <= 0:
        return pairs, []
    if size >= len(pairs):
        raise CorpusError(f"--valid-size {size} leaves nothing to train on ({len(pairs)} pairs)")
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    held_index = set(order[:size])
    held = [pairs[i] for i in sorted(held_index)]
    seen_src = {s for s, _ in held}
    seen_tgt = {t for _, t in held}
    train = [p for i, p in enumerate(pairs) if i not in held_index]
    train = [(s, t) for s, t in train if s not in seen_src and t not in seen_tgt]
    return train, held


def casual_variants(
    pairs: list[tuple[str, str]], *, share: float, seed: int
) -> list[tuple[str, str]]:
    """Extra copies of a share of the pairs with the source typed casually, as at a prompt.

    Corpora like Tatoeba hold only well-formed sentences ("Je suis étudiant."), so a model
    trained on them alone stumbles on "je suis étudiant": the copies start in lower case and
    drop the final full stop, or set it off with a space. Targets stay as they are.
    """
    rng = random.Random(seed)
    variants = []
    for src, tgt in pairs:
        if rng.random() >= share:
            continue
        casual = src[:1].lower() + src[1:]
        if casual.endswith(".") and len(casual) > 1:
            casual = casual[:-1].rstrip() + (" ." if rng.random() < 0.3 else "")
        if casual != src:
            variants.append((casual, tgt))
    return variants


@dataclass(frozen=True)
class Batch:
    """Padded id tensors of one batch; `index` says which examples they came from."""

    src: torch.Tensor  # (batch, src_len)
    src_lengths: torch.Tensor  # (batch,)
    tgt_in: torch.Tensor  # (batch, tgt_len)  BOS y1 .. yn
    tgt_out: torch.Tensor  # (batch, tgt_len)  y1 .. yn EOS
    index: list[int]

    @property
    def tgt_tokens(self) -> int:
        """Number of real (non-pad) target tokens: what tokens/s counts."""
        return int((self.tgt_out != PAD).sum())


def batch_plan(
    lengths: list[tuple[int, int]], *, batch_tokens: int, seed: int, epoch: int
) -> list[list[int]]:
    """Group example indices into length-bucketed batches of about `batch_tokens` target tokens.

    The plan depends only on (seed, epoch), so a resumed run sees the very same batches.
    """
    rng = random.Random(seed * 100_003 + epoch)
    # Bucket by *target* length: the decoder, attention and output layer run over padded
    # target positions, while the packed encoder skips source padding (on Tatoeba, sorting
    # by source length left 37% of target positions as padding). A little noise makes the
    # buckets differ from epoch to epoch.
    order = sorted(
        range(len(lengths)), key=lambda i: (lengths[i][1] + rng.random() * 2, lengths[i][0])
    )
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for i in order:  # budget: padded target positions (target + EOS) per batch
        longest_if_added = max(longest, lengths[i][1] + 1)
        if current and longest_if_added * (len(current) + 1) > batch_tokens:
            batches.append(current)
            current, longest_if_added = [], lengths[i][1] + 1
        current.append(i)
        longest = longest_if_added
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def make_batch(
    src_ids: list[list[int]], tgt_ids: list[list[int]], index: list[int], *, bos: int, eos: int
) -> Batch:
    """Pad the chosen examples into tensors; targets get BOS in and EOS out."""
    src = [src_ids[i] + [eos] for i in index]
    tgt = [tgt_ids[i] for i in index]
    src_len = max(len(s) for s in src)
    tgt_len = max(len(t) for t in tgt) + 1
    src_t = torch.full((len(index), src_len), PAD, dtype=torch.long)  # (batch, src_len)
    tgt_in = torch.full((len(index), tgt_len), PAD, dtype=torch.long)  # (batch, tgt_len)
    tgt_out = torch.full((len(index), tgt_len), PAD, dtype=torch.long)  # (batch, tgt_len)
    for row, (s, t) in enumerate(zip(src, tgt, strict=True)):
        src_t[row, : len(s)] = torch.tensor(s)
        tgt_in[row, : len(t) + 1] = torch.tensor([bos] + t)
        tgt_out[row, : len(t) + 1] = torch.tensor(t + [eos])
    lengths = torch.tensor([len(s) for s in src])
    return Batch(src=src_t, src_lengths=lengths, tgt_in=tgt_in, tgt_out=tgt_out, index=index)


def line_chunks(
    stream: BinaryIO, *, chunk: int, max_bytes: int = 1 << 20, chunk_bytes: int = 1 << 24
) -> Iterator[list[bytes]]:
    """Yield lists of up to `chunk` input lines, early when no more input is ready yet.

    Yielding early is what lets a slow pipe (`tail -f | s2a translate`) get each line's
    translation before the next line arrives. A line longer than `max_bytes` is cut there,
    and a chunk holding `chunk_bytes` is yielded at once, so memory stays bounded even on
    an endless line or a run of long ones.
    """
    pending = b""
    cut = False  # the pending line was cut at max_bytes: drop its bytes until the newline
    lines: list[bytes] = []
    size = 0  # bytes in `lines`
    while data := stream.read1(1 << 16):
        if cut:
            newline = data.find(b"\n")
            if newline < 0:
                continue
            data, cut = data[newline:], False  # the newline completes the cut line below
        *complete, pending = (pending + data).split(b"\n")
        for line in complete:
            lines.append(line[:max_bytes])
            size += len(lines[-1])
            if len(lines) >= chunk or size >= chunk_bytes:
                yield lines
                lines, size = [], 0
        if len(pending) > max_bytes:
            pending, cut = pending[:max_bytes], True
        if lines and not _ready(stream):
            yield lines
            lines, size = [], 0
    if pending:
        lines.append(pending)
    if lines:
        yield lines


def _ready(stream: BinaryIO) -> bool:
    """True when more input can be read right now without blocking."""
    try:
        ready, _, _ = select.select([stream], [], [], 0)
    except (ValueError, OSError, TypeError, io.UnsupportedOperation):  # no file descriptor
        return True
    return bool(ready)
