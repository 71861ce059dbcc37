"""Average the weights of model directories that share one architecture and one spm.model.

Usage: python scripts/average.py RUN_A RUN_B [...] --out DIR

Checkpoint averaging (the average_models.py of OpenNMT-py and Marian): runs fine-tuned from the
same starting weights stay close enough that their mean is a model too, often a better one
than either (Wortsman et al. 2022, "Model soups"). DIR gets the first run's config.json and
spm.model and the mean of the model.safetensors weights (float16, as training saves them).
Whether the mean wins is for the dev sets to say: `s2a evaluate FILE --model DIR --model RUN_A`.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import torch
from safetensors.torch import save

from seq2attn_cli.checkpoint import CONFIG, SPM, WEIGHTS, read_tensors, write_atomic
from seq2attn_cli.config import FORMAT_VERSION


def average(runs: list[Path]) -> dict[str, torch.Tensor]:
    """The mean of each weight tensor over the runs (integers must agree and are kept)."""
    first = read_tensors(runs[0] / WEIGHTS)
    total = {name: t.double() if t.is_floating_point() else t for name, t in first.items()}
    for run in runs[1:]:
        tensors = read_tensors(run / WEIGHTS)
        if tensors.keys() != total.keys() or any(tensors[n].shape != total[n].shape for n in total):
            sys.exit(f"{run / WEIGHTS}: not the architecture of {runs[0]}")
        for name, t in tensors.items():
            if t.is_floating_point():
                total[name] += t.double()
            elif not torch.equal(t, total[name]):
                sys.exit(f"{run / WEIGHTS}: {name} differs from {runs[0]}")
    return {
        name: (t / len(runs)).half() if t.is_floating_point() else t for name, t in total.items()
    }


def main() -> None:
    """Check the runs share their pieces, average them and write the model directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+", help="model directories")
    parser.add_argument("--out", type=Path, required=True, help="new model directory")
    args = parser.parse_args()
    if len(args.runs) < 2:
        sys.exit("give at least two model directories")
    spm = (args.runs[0] / SPM).read_bytes()
    for run in args.runs[1:]:
        if (run / SPM).read_bytes() != spm:
            sys.exit(f"{run / SPM}: not the subword model of {args.runs[0]}")
    if args.out.exists():
        sys.exit(f"{args.out}: exists; give a new directory")
    tensors = average(args.runs)
    args.out.mkdir(parents=True)
    shutil.copyfile(args.runs[0] / CONFIG, args.out / CONFIG)
    shutil.copyfile(args.runs[0] / SPM, args.out / SPM)
    metadata = {"format_version": str(FORMAT_VERSION)}
    write_atomic(args.out / WEIGHTS, save(tensors, metadata=metadata))
    print(f"{args.out}: mean of {len(args.runs)} runs", file=sys.stderr)


if __name__ == "__main__":
    main()
