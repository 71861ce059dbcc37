"""Average the weights of model directories and resume checkpoints of one architecture.

Usage: python scripts/average.py INPUT [INPUT ...] --out DIR [--like RUN]

Checkpoint averaging (the average_models.py of OpenNMT-py and Marian): runs fine-tuned from the
same starting weights, or one run's checkpoints, stay close enough that their mean is a model
too, often a better one than either (Wortsman et al. 2022, "Model soups"). Each INPUT is a
model directory (its best weights, model.safetensors) or a weights file: a resume checkpoint
(a run's latest weights, checkpoint.safetensors, or a copy kept from earlier in the run) or a
model.safetensors. One file alone is written out as a model directory. DIR gets config.json
and spm.model from --like, else from the first directory given, else from the first file's
folder, and the mean of the weights (float16, as training saves them). Whether the mean wins
is for the dev sets to say: `s2a evaluate FILE --model DIR --model RUN`.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import NoReturn

import torch
from safetensors.torch import save

from seq2attn_cli.checkpoint import CONFIG, PARAMETERS, SPM, read_tensors, write_atomic
from seq2attn_cli.config import FORMAT_VERSION
from seq2attn_cli.errors import ModelError


def parameters(path: Path) -> dict[str, torch.Tensor]:
    """A model directory's best parameters, or those in a file (a checkpoint's model.*)."""
    tensors = read_tensors(path / PARAMETERS if path.is_dir() else path)
    model = {k[len("model.") :]: t for k, t in tensors.items() if k.startswith("model.")}
    return model or tensors


def fail(message: str) -> NoReturn:
    """One line on stderr and exit 2, as s2a does for bad input."""
    print(f"average.py: {message}", file=sys.stderr)
    sys.exit(2)


def average(inputs: list[Path]) -> dict[str, torch.Tensor]:
    """The mean of each parameter tensor over the inputs (integers must agree and are kept)."""
    first = parameters(inputs[0])
    total = {name: t.double() if t.is_floating_point() else t for name, t in first.items()}
    for path in inputs[1:]:
        tensors = parameters(path)
        if tensors.keys() != total.keys() or any(tensors[n].shape != total[n].shape for n in total):
            fail(f"{path}: not the architecture of {inputs[0]}")
        for name, t in tensors.items():
            if t.is_floating_point():
                total[name] += t.double()
            elif not torch.equal(t, total[name]):
                fail(f"{path}: {name} differs from {inputs[0]}")
    return {
        name: (t / len(inputs)).half() if t.is_floating_point() else t for name, t in total.items()
    }


def check(inputs: list[Path], like: Path | None, out: Path) -> Path:
    """Exit with one line unless the inputs can be averaged into `out`; return the model home."""
    for path in inputs:
        if not path.exists():
            fail(f"{path}: no such model directory or weights file")
    if len(inputs) < 2 and inputs[0].is_dir():
        fail("give at least two inputs, or one weights file to write out")
    home = like or next((p for p in inputs if p.is_dir()), inputs[0].parent)
    for name in (CONFIG, SPM):
        if not (home / name).is_file():
            fail(f"{home}: no {name}; name the run it came from with --like RUN")
    spm = (home / SPM).read_bytes()
    for path in inputs:  # a file beside a subword model (its run directory) must match it too
        folder = path if path.is_dir() else path.parent
        if not (folder / SPM).is_file():
            if path.is_dir():
                fail(f"{path}: no {SPM}; not a model directory")
        elif (folder / SPM).read_bytes() != spm:
            fail(f"{folder / SPM}: not the subword model of {home}")
    if out.exists():
        fail(f"{out}: exists; give a new directory")
    return home


def main() -> None:
    """Check the inputs share their pieces, average them and write the model directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", type=Path, nargs="+", help="model directories, weights files")
    parser.add_argument("--out", type=Path, required=True, help="new model directory")
    parser.add_argument("--like", type=Path, help="the run whose config.json and spm.model to use")
    args = parser.parse_args()
    home = check(args.inputs, args.like, args.out)
    try:
        tensors = average(args.inputs)
    except ModelError as err:
        fail(str(err))
    args.out.mkdir(parents=True)
    shutil.copyfile(home / CONFIG, args.out / CONFIG)
    shutil.copyfile(home / SPM, args.out / SPM)
    metadata = {"format_version": str(FORMAT_VERSION)}
    write_atomic(args.out / PARAMETERS, save(tensors, metadata=metadata))
    print(f"{args.out}: mean of {len(args.inputs)} inputs", file=sys.stderr)


if __name__ == "__main__":
    main()
