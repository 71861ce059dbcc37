"""Average the weights of model directories and resume checkpoints of one architecture.

Usage: python scripts/average.py RUN_A RUN_B [RUN_A/checkpoint.safetensors ...] --out DIR

Checkpoint averaging (the average_models.py of OpenNMT-py and Marian): runs fine-tuned from the
same starting weights, or one run's checkpoints, stay close enough that their mean is a model
too, often a better one than either (Wortsman et al. 2022, "Model soups"). Each input is a
model directory (its best weights, model.safetensors) or a resume checkpoint file (a run's
latest weights: checkpoint.safetensors, or a copy kept from earlier in the run). One
checkpoint alone writes that checkpoint out as a model directory. DIR gets config.json and
spm.model from the first directory given (else from the first checkpoint's folder) and the
mean of the weights (float16, as training saves them). Whether the mean wins is for the dev
sets to say: `s2a evaluate FILE --model DIR --model RUN_A`.
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
from seq2attn_cli.errors import ModelError


def weights(path: Path) -> dict[str, torch.Tensor]:
    """A model directory's best weights, or the model part of a resume checkpoint file."""
    if path.is_dir():
        return read_tensors(path / WEIGHTS)
    model = {k[len("model.") :]: t for k, t in read_tensors(path).items() if k.startswith("model.")}
    if not model:
        sys.exit(f"{path}: not a resume checkpoint (no model.* tensors)")
    return model


def average(inputs: list[Path]) -> dict[str, torch.Tensor]:
    """The mean of each weight tensor over the inputs (integers must agree and are kept)."""
    first = weights(inputs[0])
    total = {name: t.double() if t.is_floating_point() else t for name, t in first.items()}
    for path in inputs[1:]:
        tensors = weights(path)
        if tensors.keys() != total.keys() or any(tensors[n].shape != total[n].shape for n in total):
            sys.exit(f"{path}: not the architecture of {inputs[0]}")
        for name, t in tensors.items():
            if t.is_floating_point():
                total[name] += t.double()
            elif not torch.equal(t, total[name]):
                sys.exit(f"{path}: {name} differs from {inputs[0]}")
    return {
        name: (t / len(inputs)).half() if t.is_floating_point() else t for name, t in total.items()
    }


def main() -> None:
    """Check the inputs share their pieces, average them and write the model directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", type=Path, nargs="+", help="model directories, checkpoints")
    parser.add_argument("--out", type=Path, required=True, help="new model directory")
    args = parser.parse_args()
    for path in args.inputs:
        if not path.exists():
            sys.exit(f"{path}: no such model directory or checkpoint")
    if len(args.inputs) < 2 and args.inputs[0].is_dir():
        sys.exit("give at least two inputs, or one resume checkpoint to write out")
    home = next((p for p in args.inputs if p.is_dir()), args.inputs[0].parent)
    if not (home / CONFIG).exists() or not (home / SPM).exists():
        sys.exit(f"{home}: no {CONFIG} and {SPM} for the new model; give its run directory too")
    if args.out.exists():
        sys.exit(f"{args.out}: exists; give a new directory")
    spm = (home / SPM).read_bytes()
    for path in args.inputs:
        if path.is_dir() and (path / SPM).read_bytes() != spm:
            sys.exit(f"{path / SPM}: not the subword model of {home}")
    try:
        tensors = average(args.inputs)
    except ModelError as err:
        sys.exit(str(err))
    args.out.mkdir(parents=True)
    shutil.copyfile(home / CONFIG, args.out / CONFIG)
    shutil.copyfile(home / SPM, args.out / SPM)
    metadata = {"format_version": str(FORMAT_VERSION)}
    write_atomic(args.out / WEIGHTS, save(tensors, metadata=metadata))
    print(f"{args.out}: mean of {len(args.inputs)} inputs", file=sys.stderr)


if __name__ == "__main__":
    main()
