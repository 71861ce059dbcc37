"""Multi-process training through torch.distributed (torchrun): gloo on CPU, NCCL on GPUs.

A single process needs none of this: every helper falls back to rank 0 of a world of 1.
"""

from __future__ import annotations

import gc
import os
from typing import Any

import torch
import torch.distributed as dist


def launched() -> bool:
    """True when torchrun (or another torch launcher) started this process as one of several."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def init(device: torch.device) -> torch.device:
    """Join the process group torchrun set up; returns this rank's device."""
    if not launched() or dist.is_initialized():
        return device
    if device.type == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return device


def rank() -> int:
    """This process's rank (0 when not distributed)."""
    return dist.get_rank() if dist.is_initialized() else 0


def world() -> int:
    """Number of processes training together (1 when not distributed)."""
    return dist.get_world_size() if dist.is_initialized() else 1


def barrier() -> None:
    """Wait for every rank (no-op alone)."""
    if dist.is_initialized():
        dist.barrier()


def broadcast(value: Any) -> Any:
    """Rank 0's value, on every rank."""
    if not dist.is_initialized():
        return value
    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def all_sum(values: list[float], device: torch.device) -> list[float]:
    """Sum a few numbers over all ranks."""
    if not dist.is_initialized():
        return values
    tensor = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(tensor)
    return tensor.tolist()


def finish(*, ok: bool) -> None:
    """Leave the process group cleanly: together after success, at once after a failure."""
    if not dist.is_initialized():
        return
    # DDP's reducer holds the group through reference cycles: free it first. Ranks that
    # tear gloo down while a peer is still writing files were seen to abort (1 run in 16).
    gc.collect()
    if ok:
        dist.barrier()
    dist.destroy_process_group()
