"""An alignment head: a small scorer trained on word links, reading the frozen model's states.

For each target piece t it scores every source piece s (</s> included: the null link) from
q = [h_t; h_{t+1}; emb(y_t)] (the decoder states of the step that writes y_t and of the step
fed it, and y_t's embedding) and k = [enc_s; emb(x_s)], plus the log attention of both steps,
each with a learned scale; a softmax over the source gives its `probabilities`. The model is
never changed: the head lives beside it in align.safetensors (its tensors, and its settings
and provenance as the file's metadata: safetensors holds no code, so loading runs none).
Links are read off the word probabilities as `intersect` reads attention (methods.py): each
target word's best source word that also has it as its best target word. Trained with
scripts/fit_align_head.py; on the shared trial set its AER is in README's "Word alignment".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from ..config import ModelConfig
from ..errors import ModelError
from . import HEAD
from .forced import Forced
from .methods import Links, Matrix, intersect

FORMAT = "s2a-align-head/1"  # the metadata's "format": what this code reads
READING = "intersect"  # how links are read off the word probabilities (methods.py)


@dataclass(frozen=True)
class Batch:
    """Forced pairs padded into one batch of tensors."""

    states: torch.Tensor  # (batch, tgt + 1, hidden)
    fed: torch.Tensor  # (batch, tgt, embed)
    encoded: torch.Tensor  # (batch, src + 1, hidden)
    src_embedded: torch.Tensor  # (batch, src + 1, embed)
    weights: torch.Tensor  # (batch, tgt + 1, src + 1), 0 on padding
    src_mask: torch.Tensor  # (batch, src + 1): True on real source pieces (and </s>)
    tgt_mask: torch.Tensor  # (batch, tgt): True on real target pieces


def batch_of(pairs: list[Forced]) -> Batch:
    """Pad forced pairs (of any lengths) into one Batch."""
    src = max(p.encoded.size(0) for p in pairs)
    tgt = max(p.fed.size(0) for p in pairs)
    n, hidden, embed = len(pairs), pairs[0].states.size(1), pairs[0].fed.size(1)
    b = Batch(
        states=torch.zeros(n, tgt + 1, hidden),
        fed=torch.zeros(n, tgt, embed),
        encoded=torch.zeros(n, src, pairs[0].encoded.size(1)),
        src_embedded=torch.zeros(n, src, pairs[0].src_embedded.size(1)),
        weights=torch.zeros(n, tgt + 1, src),
        src_mask=torch.zeros(n, src, dtype=torch.bool),
        tgt_mask=torch.zeros(n, tgt, dtype=torch.bool),
    )
    for r, p in enumerate(pairs):
        s, t = p.encoded.size(0), p.fed.size(0)
        b.states[r, : t + 1], b.fed[r, :t], b.weights[r, : t + 1, :s] = p.states, p.fed, p.weights
        b.encoded[r, :s], b.src_embedded[r, :s] = p.encoded, p.src_embedded
        b.src_mask[r, :s], b.tgt_mask[r, :t] = True, True
    return b


class AlignHead(nn.Module):
    """Scores source pieces for each target piece: a scaled dot product of two small MLPs,
    plus scaled log attention of the writing and the reading steps."""

    def __init__(self, *, hidden: int, embed: int, dim: int) -> None:
        super().__init__()
        self.q = nn.Sequential(nn.Linear(2 * hidden + embed, dim), nn.Tanh(), nn.Linear(dim, dim))
        self.k = nn.Sequential(nn.Linear(hidden + embed, dim), nn.Tanh(), nn.Linear(dim, dim))
        self.scale = nn.Parameter(torch.tensor([1.0, 1.0]))  # on log attention: writing, reading
        self.dim = dim

    @classmethod
    def for_model(cls, config: ModelConfig, *, dim: int) -> AlignHead:
        """A new head for a model of this architecture."""
        return cls(hidden=config.hidden, embed=config.embed, dim=dim)

    def forward(self, b: Batch) -> torch.Tensor:
        """Scores (batch, tgt, src + 1), -inf past each source."""
        q_in = torch.cat([b.states[:, :-1], b.states[:, 1:], b.fed], -1)  # (batch, tgt, 2H+E)
        k_in = torch.cat([b.encoded, b.src_embedded], -1)  # (batch, src + 1, H + E)
        # (batch, tgt, dim) @ (batch, dim, src + 1) -> (batch, tgt, src + 1)
        scores = self.q(q_in) @ self.k(k_in).transpose(1, 2) / math.sqrt(self.dim)
        log_weights = b.weights.clamp(min=1e-6).log()  # (batch, tgt + 1, src + 1)
        scores = scores + self.scale[0] * log_weights[:, :-1] + self.scale[1] * log_weights[:, 1:]
        return scores.masked_fill(~b.src_mask[:, None, :], float("-inf"))

    @torch.inference_mode()
    def probabilities(self, pair: Forced) -> torch.Tensor:
        """One pair's probabilities (tgt, src + 1): each target piece's distribution over the
        source pieces and </s>. Scored alone, so never depending on the pairs beside it."""
        return self(batch_of([pair]))[0].softmax(-1)  # (1, tgt, src + 1) -> (tgt, src + 1)


def links(probabilities: Matrix) -> Links:
    """The head's links off its word probabilities (rows: target words, </s> left out)."""
    return intersect(probabilities, probabilities)


def save_head(path: Path, head: AlignHead, provenance: dict[str, str]) -> None:
    """Write the head's tensors and metadata (dim, reading, format and `provenance`) to
    `path` atomically: a reader never sees half a file."""
    from safetensors.torch import save

    from ..checkpoint import write_atomic

    tensors = {name: t.detach().float().contiguous() for name, t in head.state_dict().items()}
    metadata = {"format": FORMAT, "dim": str(head.dim), "reading": READING} | provenance
    write_atomic(path, save(tensors, metadata=metadata))


def load_head(directory: str | Path, config: ModelConfig) -> AlignHead | None:
    """The model directory's head, checked against the model; None when it has none. A file
    that is not a head for this model: ModelError naming it."""
    from safetensors import SafetensorError, safe_open

    path = Path(directory) / HEAD
    if not path.exists():
        return None
    try:
        with safe_open(str(path), framework="pt") as f:
            metadata = f.metadata() or {}
            tensors = {name: f.get_tensor(name) for name in f.keys()}  # noqa: SIM118
    except (SafetensorError, OSError, ValueError) as error:
        raise ModelError(f"{path}: not an alignment head ({error})") from None
    if metadata.get("format") != FORMAT or metadata.get("reading") != READING:
        raise ModelError(f"{path}: not an alignment head of format {FORMAT} (its metadata)")
    dim = metadata.get("dim", "")
    head = AlignHead.for_model(config, dim=int(dim) if dim.isdigit() else 1)
    expected = {name: tuple(t.shape) for name, t in head.state_dict().items()}
    found = {name: tuple(t.shape) for name, t in tensors.items()}
    if found != expected:
        raise ModelError(
            f"{path}: its tensors do not fit this model (hidden {config.hidden}, embed "
            f"{config.embed}, dim {dim}): fit a head for it with scripts/fit_align_head.py"
        )
    head.load_state_dict(tensors)
    return head.eval()


def metadata_of(path: Path) -> dict[str, str]:
    """A head file's metadata (its settings and provenance)."""
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        return dict(f.metadata() or {})
