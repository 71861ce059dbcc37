"""Where a model runs: the device a user names, or the best one present ("auto")."""

from __future__ import annotations

import torch


def pick_device(name: str) -> torch.device:
    """`name` as a torch device; "auto" prefers CUDA, then MPS, then the CPU. A device that is
    not there is a ValueError naming it (torch's own is an AssertionError on first use)."""
    if name == "auto":
        cuda, mps = torch.cuda.is_available(), torch.backends.mps.is_available()
        name = "cuda" if cuda else "mps" if mps else "cpu"
    if name not in ("cpu", "cuda", "mps") and not name.startswith("cuda:"):
        raise ValueError(f"device must be auto, cpu, cuda or mps, not {name!r}")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {name}: no CUDA device is available")
    if name == "mps" and not torch.backends.mps.is_available():
        raise ValueError("device mps: MPS is not available")
    return torch.device(name)
