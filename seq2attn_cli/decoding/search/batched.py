"""Many sentences at once: sorted into batches of one attention width each, then searched.

A sentence's translation never depends on the sentences batched with it: its attention
width depends on its own length alone (`width`), and each batch is searched independently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TypeVar

import torch
from torch import nn

from ...config import EOS, PAD
from ...model.seq2seq import Encoded, Seq2Seq
from .beam import beam_search
from .constraints import NO_REPEAT, max_lengths
from .greedy import greedy
from .hypothesis import Hypothesis

# A batch's memory grows with its sentences times their width (encoder states, attention
# history), so wider sources decode in proportionally smaller batches: 2,000 newstest2013
# lines peaked at 394 MB instead of 416 in the same CPU time (6,736 target pieces, beam 5)
FULL_WIDTH = 32
# torch's thread count before side_by_side first sets it: `--threads 0` means this many
TORCH_THREADS = torch.get_num_threads()

Done = TypeVar("Done")


def width(length: int) -> int:
    """Attention width for a source of `length` pieces: the next power of two, at least 8.

    Matmuls and softmaxes over rows of different widths round differently, so a sentence
    padded to the longest of its batch got attention that changed with its neighbours.
    """
    return max(8, 1 << (length - 1).bit_length())


def batches(lengths: list[int], batch_size: int) -> list[list[int]]:
    """Indices by increasing length, cut into batches of one attention width each, with
    `batch_size` sentences of up to FULL_WIDTH pieces and proportionally fewer wider ones."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    out: list[list[int]] = []
    for i in order:
        room = max(1, batch_size * FULL_WIDTH // max(FULL_WIDTH, width(lengths[i])))
        if not out or len(out[-1]) >= room or width(lengths[out[-1][0]]) != width(lengths[i]):
            out.append([])
        out[-1].append(i)
    return out


def padded(encoded: Encoded, size: int) -> Encoded:
    """Encoder states and mask padded with zeros and False to `size` source positions."""
    extra = size - encoded.mask.size(1)
    if extra <= 0:
        return encoded
    states = nn.functional.pad(encoded.states, (0, 0, 0, extra))  # (batch, size, hidden)
    mask = nn.functional.pad(encoded.mask, (0, extra), value=False)  # (batch, size)
    return Encoded(states=states, mask=mask, init=encoded.init)


def translate_ids(
    model: Seq2Seq,
    src_ids: list[list[int]],
    *,
    beam: int,
    batch_size: int,
    threads: int = 1,
    eos: int = EOS,
    no_repeat: int = NO_REPEAT,
) -> list[Hypothesis]:
    """Translate id sequences, returning hypotheses in input order, each with its runners-up.

    A sentence's hypothesis does not depend on the others: batches are sorted by length (for
    speed) and padded to a width that depends on the sentence alone (see `width`). On a CPU,
    `threads` batches are searched side by side, each on one thread (see `side_by_side`),
    with `batch_size` sentences between them: two batches of 32 in flight peaked at 434-458
    MB where one took 377, two of 16 at 366 (1,000 newstest2013 lines, beam 5, int8).
    """
    threads = threads if model.output_ids.device.type == "cpu" else 1
    size = max(1, batch_size // threads)
    plan = batches([len(ids) + 1 for ids in src_ids], size)

    def search(index: list[int]) -> list[Hypothesis]:
        rows = [src_ids[i] + [eos] for i in index]
        return _search_batch(model, rows, beam=beam, no_repeat=no_repeat)

    found = each_batch(search, plan, threads=threads)
    results: list[Hypothesis | None] = [None] * len(src_ids)
    for index, hyps in zip(plan, found, strict=True):
        for i, hyp in zip(index, hyps, strict=True):
            results[i] = hyp
    return results  # type: ignore[return-value]


def side_by_side(threads: int) -> int:
    """Batches to search side by side for `threads` CPU threads (0: torch's own count at
    import, the cores), setting torch's threads to match: one each side by side, all in one.

    Not on a CPU with AMX: there one batch split inside the ops is faster (400 newstest2013
    lines, int8, beam 5, 2 threads, idle: one thread 4.15 s, side by side 3.52, inside the
    ops 2.86; whole process, 1,000 lines: side by side 11.7 s at a42a5cf, inside the ops 9.5 s
    at faf0597, 9.2 s at a0c5499 before searches went side by side). AMX is the mark of that
    Intel host, not the reason: with its kernels held to AVX-512 or AVX2 (bench/README.md),
    inside the ops still won (medians 2.96 / 4.43 s against 3.80 / 4.82), while on the AMD EPYC host
    (AVX-512 BF16) side by side won (README, Performance). No real AVX2 host was measured.
    """
    count = threads or TORCH_THREADS  # not torch's count now: a first call may have set it to 1
    if _has_amx():
        torch.set_num_threads(count)
        return 1
    torch.set_num_threads(1)
    return count


def _has_amx() -> bool:
    """True on a CPU with AMX tiles (Intel Sapphire Rapids and later)."""
    check = getattr(torch.cpu, "_is_amx_tile_supported", None)
    return bool(check is not None and check())


def each_batch(
    work: Callable[[list[int]], list[Done]], plan: list[list[int]], *, threads: int
) -> Iterator[list[Done]]:
    """`work` done on each batch of the plan, `threads` batches side by side, one thread
    each; the results in plan order.

    A search step is ~100 small ops: split over two cores inside each op (torch's threads)
    beam 5 took longer than on one, while two batches side by side, one core each, took
    half the time (1,000 newstest2013 lines, int8, AVX-512 BF16 host, idle: 1 thread
    14.3 s, 2 threads 7.9 s). The ops release the GIL, so Python threads are enough.
    """
    if threads <= 1:
        yield from map(work, plan)
        return
    pool = ThreadPoolExecutor(threads, thread_name_prefix="s2a-batch")
    try:
        yield from pool.map(work, plan)
    finally:  # Ctrl-C: the batches not started are dropped, not worked on first
        pool.shutdown(wait=False, cancel_futures=True)


def _search_batch(
    model: Seq2Seq, rows: list[list[int]], *, beam: int, no_repeat: int
) -> list[Hypothesis]:
    """One batch of source id rows (each ending in </s>) searched: its hypotheses, in order."""
    device = model.output_ids.device
    lengths = torch.tensor([len(r) for r in rows], device=device)
    src = torch.full((len(rows), int(lengths.max())), PAD, dtype=torch.long, device=device)
    for r, ids in enumerate(rows):
        src[r, : len(ids)] = torch.tensor(ids, device=device)  # (batch, src_len)
    with torch.inference_mode():
        encoded = model.encode(src, lengths)
        if model.config.attends:  # else one state, the context vector: nothing to pad
            encoded = padded(encoded, width(int(lengths.max())))
        limits = max_lengths(lengths)
        if beam <= 1:
            return greedy(model, encoded, limits, no_repeat=no_repeat)
        found = beam_search(model, encoded, limits, beam=beam, no_repeat=no_repeat)
    return [replace(beams[0], runners_up=beams[1:]) for beams in found]
