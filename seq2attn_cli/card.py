"""A model directory as `s2a inspect` shows it: its card, and its probe's attention per epoch."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import torch

from .checkpoint import load_model, read_config, read_json
from .config import CONFIG, HISTORY
from .errors import ModelError


def parameter_counts(model: torch.nn.Module) -> dict[str, int]:
    """Parameters per section of the architecture; the sections add up to the whole model."""
    sections = {
        "embeddings": ("encoder.embedding.", "decoder.embedding."),
        "encoder": ("encoder.rnn.", "bridge."),
        "attention": ("decoder.attention.",),
        "decoder": ("decoder.rnn.", "decoder.combine."),
        "output": ("decoder.out.",),
    }
    counts = dict.fromkeys(sections, 0)
    for name, param in model.named_parameters():
        section = next(s for s, prefixes in sections.items() if name.startswith(prefixes))
        counts[section] += param.numel()
    return counts


def model_card(directory: Path) -> dict[str, Any]:
    """Everything `s2a inspect` shows about a model, as plain data (its float weights, on CPU)."""
    model, sub, config = load_model(directory)
    written = config.raw
    sample = [sub.pieces([i])[0] for i in range(4, len(sub), max(len(sub) // 12, 1))][:12]
    return {
        "directory": str(directory),
        "model": dataclasses.asdict(config.model),
        "parameters": parameter_counts(model),
        "vocabulary": {
            "pieces": len(sub),
            "target_pieces": len(model.output_ids),
            "sample": sample,
        },
        "corpus": written.get("corpus", {}),
        "init": (written.get("data") or {}).get("init"),  # the model it started from, if any
        "training": dataclasses.asdict(config.training),
        "epochs": written.get("epochs", []),
        "best_valid_bleu": written.get("best_valid_bleu"),
        "train_seconds": written.get("train_seconds"),
        "steps": written.get("steps"),
        "files": {p.name: p.stat().st_size for p in sorted(directory.iterdir()) if p.is_file()},
    }


def read_history(directory: Path) -> dict[str, Any]:
    """The probe sentence's attention after every epoch, as training kept it (history.json),
    and whether the model attends (`attends`: ModelConfig.attends)."""
    path = directory / HISTORY
    if not path.exists():
        raise ModelError(f"{path}: missing (the model was trained without a probe sentence)")
    history = read_json(path)
    history["attends"] = read_config(directory / CONFIG).model.attends
    for epoch in history.get("epochs", []):
        # before 2026-11-30 a probe cut at the length limit had its </s> but no attention row
        if len(epoch["weights"]) == len(epoch["target"]) - 1:
            epoch["target"] = epoch["target"][:-1]
    return history
