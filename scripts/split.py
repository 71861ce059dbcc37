"""Split a TSV corpus into train/valid/test files that share no sentence on either side.

Usage: python scripts/split.py CORPUS OUT_DIR [--test 2000] [--valid 1000] [--seed 1]
(the default fr-en model was trained on this split of the shared Tatoeba corpus).
"""

import argparse
from pathlib import Path

from seq2attn_cli.data import read_pairs, split_held_out


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
