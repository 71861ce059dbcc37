"""Fit an alignment head for a model on word links, and write it to DIR/align.safetensors.

    python scripts/fit_align_head.py --model DIR --corpus A.tsv --links A.align \\
        [--corpus B.tsv --links B.align ...] [--src-col 1 --tgt-col 2 (once, or per corpus)] \\
        [--share F (per corpus)] [--pairs N] [--minutes M] [--seed S] [--dim D] [--trial DIR]

Each --links file holds one Pharaoh line (source-target word indices, from 0) per line of
its --corpus (as eflomal or fast_align write them). `--pairs` pairs with links are drawn at
random from all the corpora together (or `--share` of them from each corpus), force-decoded
as `s2a align` does (int8 on a CPU), and the head (align/head.py) is trained on them, the
model frozen.
With --trial DIR (dev.fr, dev.en, dev.wa: hand links, never trained on), its AER there is
measured and kept in the file's metadata beside the settings and where the links came from.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import torch

from seq2attn_cli.align import HEAD
from seq2attn_cli.align.aer import read_gold, read_pharaoh, score
from seq2attn_cli.align.aligner import align
from seq2attn_cli.align.fitting import Example, fit, piece_links
from seq2attn_cli.align.forced import Forced, forced, read
from seq2attn_cli.align.head import AlignHead, save_head
from seq2attn_cli.align.words import groups
from seq2attn_cli.data.reading import ReadReport, iter_pairs
from seq2attn_cli.decoding.translator import Translator

Pair = tuple[str, str, set[tuple[int, int]]]  # source, target, (source word, target word)


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def linked_pairs(corpus: Path, links: Path, *, src_col: int, tgt_col: int) -> list[Pair]:
    """The pairs of a corpus that have links, each link within its words."""
    lines = links.read_text(encoding="utf-8").split("\n")
    report, found, bad = ReadReport(path=str(corpus)), [], 0
    for src, tgt in iter_pairs(corpus, report, src_col=src_col, tgt_col=tgt_col):
        pair_links = read_pharaoh(lines[report.lines - 1]) if report.lines <= len(lines) else set()
        ns, nt = len(src.split()), len(tgt.split())
        if any(i >= ns or j >= nt for i, j in pair_links):
            bad += 1
        elif pair_links:
            found.append((src, tgt, pair_links))
    say(f"{corpus.name}: {len(found):,} pairs with links ({bad:,} with links past their words)")
    return found


def examples_of(translator: Translator, pairs: list[Pair], chunk: int = 2000) -> list[Example]:
    """Force-decode the pairs (kept in float16: half the memory) with their piece links."""
    out, started = [], time.monotonic()
    for at in range(0, len(pairs), chunk):
        part = pairs[at : at + chunk]
        src = read(translator, [s for s, _, _ in part])
        tgt = read(translator, [t for _, t, _ in part])
        keep = [n for n in range(len(part)) if src[n].ids and tgt[n].ids]
        decoded = forced(
            translator, [src[n].ids for n in keep], [tgt[n].ids for n in keep], batch_size=32
        )
        for n, pair in zip(keep, decoded, strict=True):
            s, t, links = part[n]
            half = Forced(**{k: v.half() for k, v in vars(pair).items()})
            found = piece_links(links, groups(s, src[n].pieces), groups(t, tgt[n].pieces))
            out.append(Example(half, found))
        rate = (at + len(part)) / (time.monotonic() - started)
        say(f"forced decoding: {at + len(part):,} of {len(pairs):,} pairs, {rate:.0f}/s")
    return out


def trial_aer(translator: Translator, head: AlignHead, trial: Path) -> float:
    """The head's AER on a hand-aligned set (dev.fr, dev.en, dev.wa)."""
    fr = (trial / "dev.fr").read_text(encoding="utf-8").splitlines()
    en = (trial / "dev.en").read_text(encoding="utf-8").splitlines()
    gold = read_gold((trial / "dev.wa").read_text(encoding="utf-8").splitlines())
    found = align(translator, list(zip(fr, en, strict=True)), head=head)
    return score([set(a.links) for a in found], gold).aer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, action="append", required=True)
    parser.add_argument("--links", type=Path, action="append", required=True)
    parser.add_argument("--src-col", type=int, action="append")
    parser.add_argument("--tgt-col", type=int, action="append")
    parser.add_argument("--share", type=float, action="append", help="of --pairs, per corpus")
    parser.add_argument("--pairs", type=int, default=50_000)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--trial", type=Path, help="dev.fr, dev.en, dev.wa: AER after fitting")
    args = parser.parse_args()
    n = len(args.corpus)
    src_cols, tgt_cols = args.src_col or [1], args.tgt_col or [2]
    if len(args.links) != n or len(src_cols) not in (1, n) or len(tgt_cols) not in (1, n):
        parser.error("one --links per --corpus, and --src-col/--tgt-col once or per corpus")
    if args.share and len(args.share) != n:
        parser.error("--share: one per --corpus, or none")
    torch.set_num_threads(1)
    translator = Translator.load(args.model, device=torch.device("cpu"), quantized=True)
    rng, pools = random.Random(args.seed), []
    for k, (corpus, links) in enumerate(zip(args.corpus, args.links, strict=True)):
        cols = {"src_col": src_cols[k % len(src_cols)], "tgt_col": tgt_cols[k % len(tgt_cols)]}
        pools.append(linked_pairs(corpus, links, **cols))
    if args.share:
        pairs = [p for pool, share in zip(pools, args.share, strict=True)
                 for p in rng.sample(pool, min(len(pool), round(args.pairs * share)))]  # fmt: skip
    else:
        pool = [p for pool in pools for p in pool]
        pairs = rng.sample(pool, min(args.pairs, len(pool)))
    rng.shuffle(pairs)
    examples = examples_of(translator, pairs)
    head = AlignHead.for_model(translator.config.model, dim=args.dim)
    seen = fit(
        head, examples, minutes=args.minutes, seed=args.seed,
        progress=lambda seen, loss: say(f"fit: {seen:,} pairs seen, loss {loss:.3f}"),
    )  # fmt: skip
    provenance = {
        "pairs": str(len(examples)),
        "pairs_seen": str(seen),
        "minutes": str(args.minutes),
        "seed": str(args.seed),
        "links": " ".join(p.name for p in args.links),
        "shares": " ".join(map(str, args.share or [])),
    }
    if args.trial:
        aer = trial_aer(translator, head, args.trial)
        provenance |= {"trial": str(args.trial), "trial_aer": f"{100 * aer:.1f}"}
        say(f"trial AER {100 * aer:.1f} ({args.trial})")
    save_head(args.model / HEAD, head, provenance)
    say(f"wrote {args.model / HEAD}: {len(examples):,} pairs, {seen:,} seen")


if __name__ == "__main__":
    main()
