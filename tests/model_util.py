"""Small random networks for the tests of the model and of the search."""

from __future__ import annotations

import torch

from seq2attn_cli.config import ModelConfig


def small(**architecture) -> ModelConfig:
    """A small random model's config: 50 source pieces, 40 target, embeddings 8, states 16."""
    return ModelConfig(src_vocab=50, tgt_vocab=40, embed=8, hidden=16, dropout=0.0, **architecture)


def sources() -> tuple[torch.Tensor, torch.Tensor]:
    """Three random source rows of 7, 5 and 3 pieces: (src, lengths)."""
    return torch.randint(4, 50, (3, 7)), torch.tensor([7, 5, 3])
