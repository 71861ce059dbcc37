"""Split a TSV corpus into train/valid/test files that share no sentence on either side.

Usage: python scripts/split.py CORPUS OUT_DIR [--test 2000] [--valid 1000] [--seed 1]
(the default fr-en model was trained on this split of the shared Tatoeba corpus).
"""

import argparse
import random
from pathlib import Path

from seq2attn_cli.data.reading import read_pairs
from seq2attn_cli.errors import CorpusError


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


def main() -> None:
    """Write OUT_DIR/{train,valid,test}.tsv as source<TAB>target lines, in corpus order."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("out_dir")
    parser.add_argument("--test", type=int, default=2000)
    parser.add_argument("--valid", type=int, default=1000)
    parser.add_argument("--src-col", type=int, default=1)
    parser.add_argument("--tgt-col", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    pairs, report = read_pairs(args.corpus, src_col=args.src_col, tgt_col=args.tgt_col)
    rest, test = split_held_out(pairs, size=args.test, seed=args.seed)
    train, valid = split_held_out(rest, size=args.valid, seed=args.seed + 1)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, part in (("train", train), ("valid", valid), ("test", test)):
        (out / f"{name}.tsv").write_text("".join(f"{s}\t{t}\n" for s, t in part), encoding="utf-8")
    print(
        f"read {report.kept} pairs ({report.summary() or 'none skipped'}); "
        f"train {len(train)}, valid {len(valid)}, test {len(test)}"
    )


if __name__ == "__main__":
    main()
